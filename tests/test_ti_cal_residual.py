"""The skew-trim loop's residual in closed form (serdes.tiadc.cal_residual) against the
calibration block (serdes.dsp.ti_cal.TiCalibration) run on lanes sampled one dot product
at a time (tests/naive.py: the pulse at each lane's own instant, skew minus trim), PAM4
symbols, TX and RX noise: the loop's R'(T) estimate, and the lanes' residual mean square
after settling within the statistics of the time average (each lane-mode an AR(1) of
coefficient 1 - g rho_q: the variance of its power's mean is v^2 (1 + |phi|^2) /
(1 - |phi|^2) / T). With the gain LMS held (mu_gain = 0) the closed form is the skew loop
alone; with it running, the joint loop of the trims and the gain LMS per lane mode
(cal_residual.skew_gain_modes): the lane mean square and the lowest mode's lag-1
correlation against it, and against the skew loop alone, which they must miss."""

from dataclasses import replace

import numpy as np
import pytest

import naive
from serdes.build import build
from serdes.config import Config
from serdes.dsp.ti_cal import TiCalibration
from serdes.tiadc import cal_residual as cr

LANES, CHUNK = 8, 2048
OVER = [f"adc.lanes={LANES}", "adc.skew_rms_s=1e-12", "adc_cal.enabled=true", "adc.bits=0",
        "adc.enob=0", f"link.chunk_symbols={CHUNK}"]


@pytest.fixture(scope="module")
def link():
    return build(Config.default().with_overrides(OVER)).link


def _loop(link, settings, chunks, skip, seed):
    """Run the calibration over ``chunks`` chunks; the lanes' residual (UI, common part
    removed) after each of the last ``chunks - skip`` trims, and the R'(T) estimates."""
    adc, p = link.adc, link.pulse
    cal = TiCalibration(adc, settings, link.ui_s)
    rng = np.random.default_rng(seed)
    span = p.n_ui
    n = chunks * CHUNK
    a = rng.choice(np.asarray(link.levels), n + span - 1)
    a = a + link.tx_noise_sigma * rng.standard_normal(a.shape[0])
    fir = link.noise.fir
    noise = np.convolve(rng.standard_normal(n + fir.shape[0] - 1), fir, mode="valid")
    res, r_est = [], []
    for c in range(chunks):
        k0 = c * CHUNK
        off_ui = (adc.skews_s - adc.skew_trim_s) / link.ui_s
        taps = np.stack([p.at_offset(o * p.m) for o in off_ui])
        y = naive.ti_skewed_samples(a[k0:k0 + CHUNK + span - 1], taps, k0) \
            + noise[k0:k0 + CHUNK]
        cal(y, k0)
        if c >= skip:
            e = (adc.skews_s - adc.skew_trim_s) / link.ui_s
            res.append(e - e.mean())
            r_est.append(cal._scal[1])
    return np.array(res), np.array(r_est)


def _lag_cov(link, settings, lags):
    """c_q(k) = E[eps_q(n + k) conj(eps_q(n))], k < lags, of lane modes q = 1 .. N-1 (per
    lane, UI^2): the skew loop alone (AR(1), mu_gain = 0) or the joint loop's
    (F^k X)[0, 0]."""
    k = np.arange(lags)
    if settings.mu_gain == 0:
        g = settings.skew_gain * settings.fine_ratio
        rho = cr._skew_modes(link, settings, CHUNK)[3]
        v = cr.skew_mode_variance(link, settings, CHUNK)
        return v[:, None] * (1 - g * rho)[:, None] ** k[None, :]
    f, x = cr.skew_gain_modes(link, settings, CHUNK)
    out = np.empty((f.shape[0], lags), dtype=complex)
    for q in range(f.shape[0]):
        m = x[q]
        for i in range(lags):
            out[q, i] = m[0, 0]
            m = f[q] @ m
    return out


def _bounds(link, settings, ms, z=4.0):
    """The model's lane mean square and ``z`` standard errors of a time mean of ``T``
    records of it (a mode's power |eps_q|^2 has the autocovariance |c_q(k)|^2; a
    complex mode and its conjugate: power 2 |eps_q|^2; the real mode at N / 2: 2 c^2)."""
    t = ms.shape[0]
    c = _lag_cov(link, settings, 400)
    var = 0.0
    for i, qq in enumerate(range(1, LANES)):
        s2 = np.abs(c[i]) ** 2
        tau = s2[0] + 2 * np.sum(s2[1:])
        if qq < LANES - qq:
            var += 4 * tau / t
        elif qq == LANES - qq:
            var += 2 * tau / t
    return float(np.sum(c[:, 0].real)), z * np.sqrt(var)


@pytest.mark.parametrize("fine", [1.0, 1.0 / 8])
def test_skew_residual_matches_its_closed_form(link, fine):
    s = replace(link.adc.calibration, skew_gain=1.0, fine_ratio=fine, chunk_symbols=CHUNK,
                settle_symbols=2 * 40 * CHUNK, mu_gain=0.0)
    chunks = 2600 if fine == 1.0 else 3400
    skip = 100 if fine == 1.0 else 140         # (7/8)^100: the gear shift's transient gone
    res, r_est = _loop(link, s, chunks, skip, seed=11)
    ms = np.mean(res ** 2, axis=1)
    # the loop's own R'(T) estimate: its mean is the closed form on the samples, not the
    # pulse's slope a (~10 % apart); what is left is second order in the residual (its
    # rms here is ~0.06 UI at fine = 1)
    a, b, r = cr.loop_slopes(link, s)
    assert abs(r / a - 1) > 0.05
    assert abs(r_est.mean() - r) < 0.1 * abs(r - a), (r_est.mean(), r, a)
    mean, tol = _bounds(link, s, ms)
    assert abs(ms.mean() - mean) < tol, (ms.mean() / mean, tol / mean)
    if fine == 1.0:
        # the earlier form (g / (2 - g) S_z / (chunk a^2 lambda_q)) is ~20 % high here
        old = float(np.sum(cr._product_spectrum(link, 2 * np.pi * np.arange(1, LANES) / LANES)
                           / (CHUNK * a * a * (2 - 2 * np.cos(2 * np.pi * np.arange(1, LANES)
                                                              / LANES)))))
        assert abs(ms.mean() - old) > tol, (ms.mean() / old, tol / old)


def _lag1(res, batches=20):
    """The lowest lane mode's lag-1 correlation Re E[eps(n+1) eps(n)*] / E|eps|^2 and the
    standard error of its estimate from ``batches`` batch means (the loop forgets in ~10
    chunks, a batch holds > 100)."""
    z = np.fft.fft(res, axis=1)[:, 1]
    num = np.real(z[1:] * np.conj(z[:-1]))
    den = np.abs(z[:-1]) ** 2
    b = np.array([n.sum() / d.sum() for n, d in zip(np.array_split(num, batches),
                                                      np.array_split(den, batches))])
    return float(num.sum() / den.sum()), float(b.std(ddof=1) / np.sqrt(batches))


@pytest.mark.parametrize("fine", [1.0, 1.0 / 8])
def test_skew_residual_with_the_gain_lms_running(link, fine):
    """The gain LMS running (mu_gain 4e-3, at fine = 1/8 a 5e-4 step): the kept variance
    ~0.85x the skew loop alone's and a faster lowest mode (the detector's noise and the
    gain LMS's are correlated, and the detector reads the gain error); the skew loop
    alone's lane mean square and, at fine = 1, its lag-1 correlation must be missed."""
    s = replace(link.adc.calibration, skew_gain=1.0, fine_ratio=fine, chunk_symbols=CHUNK,
                settle_symbols=2 * 40 * CHUNK, mu_gain=4e-3)
    chunks = 3400
    skip = 100 if fine == 1.0 else 140
    res, _ = _loop(link, s, chunks, skip, seed=12)
    ms = np.mean(res ** 2, axis=1)
    mean, tol = _bounds(link, s, ms)
    assert abs(ms.mean() - mean) < tol, (ms.mean() / mean, tol / mean)
    alone = float(np.sum(cr.skew_mode_variance(link, replace(s, mu_gain=0.0), CHUNK)))
    assert abs(ms.mean() - alone) > tol, (ms.mean() / alone, tol / alone)
    lag1, se = _lag1(res)
    c = _lag_cov(link, s, 2)[0]
    model = float(c[1].real / c[0].real)
    assert abs(lag1 - model) < 4 * se, (lag1, model, se)
    if fine == 1.0:
        c0 = _lag_cov(link, replace(s, mu_gain=0.0), 2)[0]
        assert abs(lag1 - float(c0[1].real / c0[0].real)) > 4 * se, (lag1, c0, se)
