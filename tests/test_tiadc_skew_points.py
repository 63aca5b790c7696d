"""The Gauss-Hermite points of the calibrated lanes' skew residual follow its size
(serdes.tiadc.skew_points): the rule's error bound against direct integration, the
fewest points within the tolerance, and the engine's BER with those points against a
21-point reference."""

import dataclasses

import numpy as np
import pytest
from scipy import integrate, stats

import serdes.tiadc.stat as ts
from serdes.build import build
from serdes.config import Config
from serdes.engines.run import design_equalizer
from serdes.tiadc import skew_points as sp


def _direct(n, rho, t):
    """|GH_n / exact - 1| for E[Q(t - rho z)], the mean by adaptive quadrature."""
    exact, _ = integrate.quad(lambda z: stats.norm.sf(t - rho * z) * stats.norm.pdf(z),
                              -12, 12, epsabs=0, epsrel=1e-12, limit=400)
    x, w = np.polynomial.hermite_e.hermegauss(n)
    rule = float(stats.norm.sf(t - rho * x) @ (w / w.sum()))
    return abs(rule / exact - 1.0)


@pytest.mark.parametrize("n, rho", [(3, 0.05), (5, 0.1), (7, 0.2), (9, 0.3), (9, 0.8)])
def test_rule_error_bounds_the_directly_integrated_error(n, rho):
    bound = sp.rule_error(n, rho)
    for t in (0.0, 3.0, 5.0, 7.0, 8.9):
        assert _direct(n, rho, t) <= bound * (1 + 1e-6) + 1e-12
    # and it is the error at some depth: not loose by more than the depth grid
    worst = max(_direct(n, rho, t) for t in sp.DEPTHS[::4])
    assert worst > 0.5 * sp._error_at(n, rho)


def test_points_are_the_fewest_within_the_tolerance():
    rhos = [0.0, 0.02, 0.08, 0.18, 0.3, 0.6, 1.2, np.inf]
    ns = [sp.points_for(r) for r in rhos]
    assert ns == sorted(ns)                       # more points for a larger offset
    assert ns[0] == sp.MIN_POINTS and ns[-1] == sp.MAX_POINTS
    for r, n in zip(rhos[1:-1], ns[1:-1]):
        if n < sp.MAX_POINTS:
            assert sp.rule_error(n, r) <= sp.TOLERANCE
        if n > sp.MIN_POINTS:                      # two fewer would not do
            assert sp.rule_error(n - 2, r) > sp.TOLERANCE


# 16 calibrated lanes, no link RJ (the rows' distributions then have no other
# offset-dependent grid), noise for a BER of about 1e-15
LINK16 = ["adc.lanes=16", "adc.gain_rms=0.02", "adc_cal.enabled=true", "noise.rj_ui=0",
          "noise.eta0_v2_per_ghz=3e-8"]


@pytest.fixture(scope="module")
def link16():
    system = build(Config.default().with_overrides(LINK16))
    d = design_equalizer(system)
    return system, dataclasses.replace(d, ffe=np.asarray(d.ffe, dtype=np.float64),
                                       dfe=np.asarray(d.dfe, dtype=np.float64))


def _ber(system, taps, monkeypatch, points=None):
    if points is not None:
        monkeypatch.setattr(ts, "points_for", lambda rho: points)
    eng = ts.statistical_engine(system, taps)
    eng.rj_screen = 0.0
    sb = eng.ber(0.0)
    monkeypatch.undo()
    return eng, np.append(sb.ber_per_eye, sb.ber)


def test_engine_ber_with_the_chosen_points_matches_many_points(link16, monkeypatch):
    system, taps = link16
    eng, got = _ber(system, taps, monkeypatch)
    # the common offset is small against the noise, the rest's direction is not
    assert eng.skew_rho[0] < 0.1 < eng.skew_rho[1]
    assert eng.skew_points == tuple(sp.points_for(r) for r in eng.skew_rho)
    assert eng.skew_points[0] < eng.skew_points[1] <= sp.MAX_POINTS
    assert eng.jitter.weights.shape[0] == np.prod(eng.skew_points)
    _, ref = _ber(system, taps, monkeypatch, 21)
    _, ref15 = _ber(system, taps, monkeypatch, 15)
    # the rule's bound (two directions: 2e-4) plus the reference's own spread (15 against
    # 21 points: the rows' other discretizations move with the points)
    spread = float(np.max(np.abs(ref15 / ref - 1)))
    assert spread < 1e-3
    assert np.all(np.abs(got / ref - 1) <= 2 * sp.TOLERANCE + spread)
    # too few points for the rest's direction miss by far more
    _, few = _ber(system, taps, monkeypatch, 3)
    assert np.max(np.abs(few / ref - 1)) > 10 * (2 * sp.TOLERANCE + spread)


def test_the_report_states_the_rule_and_its_bound():
    """`serdes run`'s stat object gives each direction's points, rho and error bound:
    within the tolerance on 8 calibrated lanes; on 64 the cap of 9 points binds and the
    bound says how far above the tolerance it is (the rule's bound, loose there: 9
    against 21 points moved the BER by 1e-3)."""
    from serdes.report import run_report

    rep = run_report(build(Config.default().with_overrides(
        ["adc.lanes=8", "adc.gain_rms=0.02", "adc_cal.enabled=true", "link.symbols=20000",
         "link.target_errors=0"])), eye=False)
    q = rep.stat["skew_quadrature"]
    assert q["points"] == [5, 7] and q["tolerance"] == sp.TOLERANCE
    assert all(b <= sp.TOLERANCE for b in q["error_bound"])
    assert q["error_bound"] == [sp.rule_error(n, r) for n, r in zip(q["points"], q["rho"])]
    from serdes.report import _stat_parts

    system = build(Config.default().with_overrides(
        ["adc.lanes=64", "adc.gain_rms=0.02", "adc_cal.enabled=true"]))
    d = design_equalizer(system)
    q = _stat_parts(system, d, detail=False)["quad"]
    assert q["points"] == [sp.MAX_POINTS, sp.MAX_POINTS]
    assert min(q["error_bound"]) > sp.TOLERANCE
    # a link without the calibrated lanes has none
    rep = run_report(build(Config.default().with_overrides(
        ["link.symbols=20000", "link.target_errors=0"])), eye=False)
    assert "skew_quadrature" not in rep.stat
