"""Why PRBS31 makes the background calibration's estimates heavy-tailed
(benchmarks/tiadc_cal_tails.py): a lane of a 64-way interleaved ADC sees every 64th
symbol, and the Gray-coded MSBs of those symbols are PRBS31 again (decimating an
m-sequence by a power of two keeps its recurrence: g(x)^(2^i) = g(x^(2^i)) over GF(2)),
so a lane's MSB stream obeys b_k + b_(k + 3 2^i) + b_(k + 31 2^i) = 0 (mod 2) for every i.
Each such relation makes a product of three of the lane's signs m = 1 - 2 b constant, so
a sum of W consecutive lane signs, the core of a lane mean (the offset LMS) or power (the
gain LMS), has the third moment

    E[S^3] = 6 sum_(i: 31 2^i < W) (W - 31 2^i)

(ordered triples inside the window; any other triple's product is the m-sequence again,
of mean -1 / (2^31 - 1)), where independent bits give 0. Checked on the generator's
symbols against that count, with random data as the control; the tolerance is the
sample mean's own standard error over independent windows."""

import numpy as np

from serdes.signal.pam import symbols_to_bits
from serdes.signal.source import SymbolSource

LANES, W, WINDOWS = 64, 256, 60     # 60 windows per lane, 64 lanes: 3840 windows


def _window_sums(pattern: str, start: int) -> np.ndarray:
    src = SymbolSource(pattern=pattern, m=4, precoding=False, seed=1)
    src.seek(start)
    msb = symbols_to_bits(src.next(LANES * W * WINDOWS)[1], 4)[0::2]
    m = 1.0 - 2.0 * msb.reshape(W * WINDOWS, LANES)        # column l: lane l's signs
    return m.reshape(WINDOWS, W, LANES).sum(axis=1).ravel()


def third_moment_closed_form(w: int) -> float:
    spans = [31 << i for i in range(32) if (31 << i) < w]
    return 6.0 * sum(w - s for s in spans)


def test_lane_relations_of_prbs31():
    src = SymbolSource(pattern="prbs31", m=4, precoding=False, seed=1)
    src.seek(12345)
    lane = symbols_to_bits(src.next(LANES * 4096)[1], 4)[0::2][5::LANES]
    for i in range(4):
        a, s = 3 << i, 31 << i
        k = np.arange(lane.shape[0] - s)
        assert np.all((lane[k] ^ lane[k + a] ^ lane[k + s]) == 0)


def test_lane_window_sums_of_prbs31_are_skewed_as_their_relations_say():
    expect = third_moment_closed_form(W)           # 3354: skewness 0.82 at W = 256
    se = {}
    for pattern, target in (("prbs31", expect), ("random", 0.0)):
        s = _window_sums(pattern, 1_000_003)
        m3 = s ** 3
        se[pattern] = m3.std(ddof=1) / np.sqrt(m3.shape[0])
        assert abs(np.mean(s ** 2) / W - 1) < 5 * np.sqrt(2 / s.shape[0])
        assert abs(m3.mean() - target) < 4.5 * se[pattern], (pattern, m3.mean(), target, se)
    # measured: 4227 +- 655 against 3354; random data 392 +- 254
    assert expect > 10 * se["random"]             # the two cases are far apart
