"""Every numba kernel of the core link against its slow NumPy reference (tests/naive.py)."""

import numpy as np
import pytest

import naive
from serdes.kernels import adc as kadc
from serdes.kernels import fir as kfir
from serdes.kernels import slicer as ksl

LEVELS = np.array([-1.0, -1 / 3, 1 / 3, 1.0])
THRESH = np.array([-2 / 3, 0.0, 2 / 3])


@pytest.mark.parametrize("seed", range(5))
def test_fir_valid(seed):
    rng = np.random.default_rng(seed)
    taps = rng.normal(size=rng.integers(1, 40))
    x = rng.normal(size=rng.integers(len(taps), 500))
    np.testing.assert_allclose(kfir.fir_valid(x, taps), naive.fir_valid(x, taps), atol=1e-12)


@pytest.mark.parametrize("seed", range(3))
def test_pulse_sum_jitter(seed):
    rng = np.random.default_rng(seed)
    m, n_ui = 8, 6
    pad = 3 * m
    p = np.concatenate([np.zeros(pad), rng.normal(size=n_ui * m), np.zeros(pad)])
    a = rng.choice(LEVELS, size=60)
    off = rng.uniform(-1.5 * m, 1.5 * m, size=len(a) - n_ui + 1)
    got = kfir.pulse_sum_jitter(a, p, m, float(pad + 3), off, n_ui)
    ref = naive.pulse_sum_jitter(a, p, m, pad + 3, off, n_ui)
    np.testing.assert_allclose(got, ref, atol=1e-12)


def test_pulse_sum_jitter_without_offsets_is_the_fir():
    rng = np.random.default_rng(1)
    m, n_ui = 16, 10
    p = np.concatenate([np.zeros(2 * m), rng.normal(size=n_ui * m), np.zeros(2 * m)])
    a = rng.choice(LEVELS, size=200)
    phase = 2 * m + 5
    taps = p[phase::m][:n_ui]
    got = kfir.pulse_sum_jitter(a, p, m, float(phase), np.zeros(len(a) - n_ui + 1), n_ui)
    np.testing.assert_allclose(got, naive.fir_valid(a, taps), atol=1e-12)


def test_interp_cubic_is_exact_for_cubics():
    x = np.arange(40, dtype=float)
    p = 0.3 * x ** 3 - 2 * x ** 2 + x - 4
    pos = np.random.default_rng(0).uniform(2, 36, size=100)
    np.testing.assert_allclose(kfir.interp_cubic(p, pos),
                               0.3 * pos ** 3 - 2 * pos ** 2 + pos - 4, rtol=1e-10)


@pytest.mark.parametrize("seed", range(3))
def test_upsample_pulse_sum(seed):
    rng = np.random.default_rng(seed)
    m, n_ui = 8, 5
    p = rng.normal(size=n_ui * m)
    a = rng.choice(LEVELS, size=50)
    np.testing.assert_allclose(kfir.upsample_pulse_sum(a, p, m, n_ui),
                               naive.upsample_pulse_sum(a, p, m, n_ui), atol=1e-12)


@pytest.mark.parametrize("bits", [1, 4, 7, 10])
def test_quantize(bits):
    rng = np.random.default_rng(bits)
    x = rng.normal(scale=0.4, size=1000)
    lsb = 1.0 / 2 ** bits
    np.testing.assert_array_equal(kadc.quantize(x, lsb, bits), naive.quantize(x, lsb, bits))


@pytest.mark.parametrize("ntaps", [0, 1, 3])
def test_dfe_run(ntaps):
    rng = np.random.default_rng(ntaps)
    taps = rng.uniform(-0.5, 0.5, size=ntaps)
    z = rng.choice(LEVELS, size=500) + rng.normal(scale=0.3, size=500)
    hist = rng.choice(LEVELS, size=ntaps)
    ref_dec, ref_v, ref_hist = naive.dfe_run(z, taps, LEVELS, THRESH, hist)
    h = hist.copy()
    dec, v = ksl.dfe_run(z, taps, LEVELS, THRESH, h)
    np.testing.assert_array_equal(dec, ref_dec)
    np.testing.assert_allclose(v, ref_v, atol=1e-12)
    np.testing.assert_allclose(h, ref_hist)


@pytest.mark.parametrize("nb", [0, 2])
def test_ffe_dfe_lms(nb):
    rng = np.random.default_rng(10 + nb)
    x = rng.normal(size=400)
    w = rng.normal(scale=0.1, size=5)
    b = rng.normal(scale=0.1, size=nb)
    hist = rng.choice(LEVELS, size=nb)
    ref = rng.choice(LEVELS, size=396)
    args = (LEVELS, THRESH)
    r_dec, r_v, r_w, r_b = naive.ffe_dfe_lms(x, w, b, *args, hist, ref, 200, 1e-2, 0.3)
    w2, b2, h2 = w.copy(), b.copy(), hist.copy()
    dec, v = ksl.ffe_dfe_lms(x, w2, b2, *args, h2, ref, 200, 1e-2, 1e-2, 0.3)
    np.testing.assert_array_equal(dec, r_dec)
    np.testing.assert_allclose(v, r_v, atol=1e-10)
    np.testing.assert_allclose(w2, r_w, atol=1e-10)
    np.testing.assert_allclose(b2, r_b, atol=1e-10)
