"""Clock recovery with crosstalk aggressors (serdes/engines/cdr.py, serdes/kernels/cdr.py,
CrosstalkFrontEnd.streams): the kernel's aggressor term against the plain loop, the open
loop against the fixed-phase engine's aggressor sum (with and without RX jitter, direct
and FFT paths), chunk and seed invariance, and a tracked ppm offset whose slicer error
grows by the crosstalk power the noise budget predicts."""

import numpy as np
import pytest

import naive
from serdes.build import build
from serdes.config import Config
from serdes.engines import crosstalk as engine_xt
from serdes.engines.cdr import LOOKAHEAD, CdrFrontEnd
from serdes.engines.pulse import PulseFrontEnd
from serdes.engines.run import design_equalizer, front_end, simulate
from serdes.errors import ConfigError
from serdes.impairments import slicer_powers
from serdes.kernels import cdr as kc

LEVELS = np.array([-1.0, -1 / 3, 1 / 3, 1.0])
AGGS = [dict(kind="next", model="copy", coupling_db=-20),
        dict(model="copy", coupling_db=-24, ppm=300, pattern="prbs11"),
        dict(model="copy", coupling_db=-30, delay_ui=40)]


def _systems(*sets, aggs=AGGS):
    cfg = Config.default().with_overrides(["cdr.mode=mm", "link.target_errors=0", *sets])
    return build(cfg.with_aggressors(aggs)), build(cfg)


def _drive(fe, a, chunk):
    return np.concatenate([fe(a[k:k + chunk], k) for k in range(0, a.shape[0], chunk)])


def test_kernel_aggressor_term_is_the_plain_loop():
    rng = np.random.default_rng(7)
    n_ui, q, big_p, lat, n = 6, 16, 2, 3, 400
    table = rng.normal(size=(q + 3, n_ui))
    none = np.zeros((0, n_ui))
    a = rng.choice(LEVELS, size=n + n_ui - 1 + 2 * big_p)
    tau = rng.normal(scale=0.6, size=a.shape[0])   # shifts of +-1 UI occur
    drx = rng.normal(scale=0.2, size=n)
    w = rng.normal(scale=0.05, size=n)
    xv, xs = rng.normal(size=n + 2 * big_p), rng.normal(size=n + 2 * big_p)
    args = (a, tau, drx, w, table, none, none, q, big_p, LEVELS, 1.3, 1, 0.01, 0.05, 0.002,
            8.0, 5)
    got = kc.cdr_sampler(*args, np.array([0.3, 0, 0, 0, 0.0]), np.zeros(lat + 1), xv, xs)
    ref = naive.cdr_sampler(*args, 0.3, lat, xv, xs)
    for g, r in zip(got, ref):
        np.testing.assert_allclose(g, r, rtol=1e-12, atol=1e-12)
    plain = kc.cdr_sampler(*args, np.array([0.3, 0, 0, 0, 0.0]), np.zeros(lat + 1))
    assert not np.allclose(plain[0], got[0])
    with pytest.raises(ConfigError, match="xv/xs"):
        kc.cdr_sampler(*args, np.zeros(5), np.zeros(lat + 1), xv[1:], xs)


@pytest.mark.parametrize("sets, fft", [((), False), (("noise.rj_ui=0.02",), False),
                                       (("noise.rj_ui=0.02",), True)])
def test_open_loop_adds_the_fixed_phase_aggressor_sum(sets, fft, monkeypatch):
    """The loop held at the peak (gains zero): the samples with aggressors minus those
    without are the fixed-phase engine's aggressor sum, RX jitter moving the aggressors
    to first order in both, to rounding."""
    if fft:
        monkeypatch.setattr(engine_xt, "DIRECT_MAX_TAPS", 4)
        monkeypatch.setattr(engine_xt, "FFT_MIN", 1 << 12)
    sx, s0 = _systems(*sets)
    n = 30_000
    a = np.random.default_rng(1).choice(sx.link.levels, n)
    x, cal = {}, None
    for name, s in (("x", sx), ("0", s0)):
        fe = CdrFrontEnd(s.link, 3, s.cdr, calibration=cal)
        cal = fe.cal
        fe.kp = fe.ki = 0.0
        x[name] = _drive(fe, a, 7001)
    assert fe.cal.lock_ui == 0.0 and fe.settings.initial_phase_ui == 0.0
    fixed = PulseFrontEnd(sx.link, 3)
    assert bool(fixed.crosstalk.fft) == fft
    xt = fixed.crosstalk(0, n - LOOKAHEAD)
    got = (x["x"] - x["0"])[LOOKAHEAD:]
    assert np.max(np.abs(got - xt)) < 1e-12 * np.max(np.abs(xt))


def test_chunks_and_seed_with_aggressors():
    sx, _ = _systems("tx_jitter.ppm=150", "noise.rj_ui=0.01")
    a = np.random.default_rng(2).choice(sx.link.levels, 60_000)
    runs = [_drive(front_end(sx, "pulse", 9), a, c) for c in (60_000, 4093)]
    np.testing.assert_array_equal(runs[0], runs[1])
    assert not np.array_equal(runs[0], _drive(front_end(sx, "pulse", 10), a, 60_000))


class _Errors:
    def __init__(self, levels):
        self.levels, self.e = np.asarray(levels), []

    def observe(self, rec):
        self.e.append(rec.soft - self.levels[rec.tx_line])


def test_tracked_ppm_with_aggressor_and_its_slicer_power():
    """200 ppm tracked with a -20 dB aggressor on: locked, no slips, the offset held by
    the integrator; on the same data, noise and taps, the slicer's mean squared error
    grows by the aggressor's power through the FFE that the noise budget predicts,
    within 4 standard errors (batch means over 2000 UI; the crosstalk and the loop's
    dither are correlated over far fewer)."""
    sx, s0 = _systems("tx_jitter.ppm=200", aggs=[dict(model="copy", coupling_db=-20)])
    taps = design_equalizer(sx)
    predicted = slicer_powers(sx.link, taps.ffe, taps.residual())["crosstalk"]
    err = {}
    for name, s in (("x", sx), ("0", s0)):
        ob = _Errors(s.link.levels)
        r = simulate(s, symbols=250_000, taps=taps, observers=[ob])
        err[name] = np.concatenate(ob.e)
        c = r.cdr
        assert r.bit_errors == 0 and c["lock_symbols"] is not None and c["cycle_slips"] == 0
        assert abs(c["tracked_ppm"] - 200) < 0.03 * 200, c["tracked_ppm"]
        assert abs(c["phase_mean_ui"]) < 0.02
    assert err["x"].shape == err["0"].shape
    d = err["x"] ** 2 - err["0"] ** 2
    nb = d.shape[0] // 2000
    means = d[:nb * 2000].reshape(nb, 2000).mean(axis=1)
    se = means.std(ddof=1) / np.sqrt(nb)
    assert abs(means.mean() - predicted) < 4 * se, (means.mean(), predicted, se)
