"""The one-pass slicer-SNR sums (serdes/kernels/tally.py) against NumPy's own sums: equal
to the bit (NumPy's pairwise summation), so the reported slicer SNR does not change."""

import numpy as np
import pytest

from serdes.errors import ConfigError
from serdes.kernels.tally import snr_sums

LEVELS = np.array([-1.0, -1 / 3, 1 / 3, 1.0])
# every leaf shape (n < 8, 8..128 with and without a rest of 8), the splits around
# powers of two, a chunk, and a length whose halves are not multiples of 8
LENGTHS = list(range(0, 140)) + [255, 256, 257, 1000, 1023, 1025, 4097, 65535, 65536,
                                 65537, 100003, 1 << 20]


def _numpy(levels, sent, soft):
    sig = levels[sent]
    d = soft - sig
    return float(np.sum(d * d)), float(np.sum(sig * sig))


@pytest.mark.parametrize("m", [2, 4])
def test_snr_sums_equal_numpy_to_the_bit(m):
    rng = np.random.default_rng(11)
    levels = np.linspace(-1, 1, m)
    for n in LENGTHS:
        sent = rng.integers(0, m, n).astype(np.uint8)
        soft = levels[sent] + 0.07 * rng.standard_normal(n)
        assert snr_sums(levels, sent, soft) == _numpy(levels, sent, soft), n
        lo, hi = n // 3, n - n // 5
        assert snr_sums(levels, sent, soft, lo, hi) == _numpy(levels, sent[lo:hi],
                                                              soft[lo:hi]), n


def test_snr_meter_keeps_numpy_numbers():
    from serdes.pipeline import Aligned, SnrMeter

    rng = np.random.default_rng(5)
    meter = SnrMeter(LEVELS)
    ref_e = ref_s = 0.0
    for n in (65536, 777, 65536):
        sent = rng.integers(0, 4, n).astype(np.uint8)
        soft = LEVELS[sent] + 0.05 * rng.standard_normal(n)
        rec = Aligned(first=0, tx_line=sent, tx_data=sent, rx_line=sent, rx_data=sent,
                      soft=soft, sym_err=np.zeros(n, bool), bit_err=np.zeros(n, np.uint8))
        meter.observe(rec)
        e, s = _numpy(LEVELS, sent, soft)
        ref_e, ref_s = ref_e + e, ref_s + s
    assert (meter.sq_err, meter.sq_sig) == (ref_e, ref_s)


def test_snr_sums_refuse_bad_input_in_one_line():
    sent = np.array([0, 1, 4], dtype=np.uint8)
    with pytest.raises(ConfigError, match="level index 4 for 4 levels"):
        snr_sums(LEVELS, sent, np.zeros(3))
    with pytest.raises(ConfigError, match="differ in length"):
        snr_sums(LEVELS, sent[:2], np.zeros(3))
    with pytest.raises(ConfigError, match="hi: must be in 0..3"):
        snr_sums(LEVELS, np.zeros(3, np.uint8), np.zeros(3), 0, 5)
