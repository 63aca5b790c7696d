"""Statistical jitter tolerance with several lock points (serdes/engines/cdr_stat_points.py):
on the default link with a two-zero detector S-curve put in place of the measured one,
the tolerance's BER against the occupancy-weighted engine BER combined by hand, each
point's loop state against slow references (the swing-averaged S-curve's zero on a dense
grid, the describing-function gain by a dense quadrature), the answer bracketed; with
one zero the single-point row unchanged."""

import math

import numpy as np
import pytest

from serdes import cdr as loop
from serdes.build import build
from serdes.config import Config
from serdes.engines.cdr_stat import LoopResponse
from serdes.jtol import Jtol

FIXED_CTLE = ["ctle.auto=false", "ctle.g_dc_db=-18", "ctle.g_dc2_db=-1"]
GRID = np.arange(-0.45, 0.4501, 0.01)
F_HZ = 10e6  # above the loop's bandwidth: the linear loop model at every point


@pytest.fixture(scope="module")
def jt():
    # a 12-tap FFE and no RX RJ: the engine evaluations are what the test costs
    system = build(Config.default().with_overrides(["cdr.mode=mm", "ffe.taps=12",
                                                    "noise.rj_ui=0", *FIXED_CTLE]))
    return Jtol(system)


def _install(jt, s, lr=0.3, keep_solves=False):
    """Put the S-curve ``s`` (on GRID, from the lock point) with a constant long-run
    noise ``lr`` in place of the front end's measured detector (``keep_solves``: the
    single-point solves of the same curve stay cached)."""
    imp, txj = jt.system.link.impairments, jt.system.tx_jitter
    key = (round(imp.rj_ui, 12), round(float(np.hypot(txj.rj_ui, txj.buj_ui / np.sqrt(3))),
                                       12))
    jt.front._loop_response = (key, LoopResponse(grid=GRID, s=s, noise_lr=lr))
    if not keep_solves:
        jt._ustar.clear()
    jt._points = None


def _two_zeros(kpd, a=-0.12, b=-0.06):
    """Stable zeros at 0 and ``a``, the unstable one at ``b``; slope -kpd at 0."""
    return -kpd / (a * b) * GRID * (GRID - a) * (GRID - b)


def _avg_s_slow(s, mu, u, dither, n_theta=2000, n_x=801):
    """E over the SJ phase (dense uniform) and the Gaussian dither (dense grid out to
    8 sigma) of the piecewise-linear S, and the fundamental's gain."""
    th = 2 * np.pi * (np.arange(n_theta) + 0.5) / n_theta
    x = np.linspace(-8, 8, n_x)
    w = np.exp(-x ** 2 / 2)
    w /= w.sum()
    sv = np.interp(mu + u * np.sin(th)[:, None] + dither * x[None, :], GRID, s) @ w
    return sv.mean(), 2 * np.mean(sv * np.sin(th)) / u


def test_two_lock_points_weighted_tolerance(jt):
    from serdes.engines.cdr_stat_points import LockPointJtol
    from serdes.engines.stat import StatisticalEngine

    _install(jt, _two_zeros(jt.front.cal.kpd), lr=0.1)
    lpj = LockPointJtol(jt)
    assert lpj.several and len(lpj.lp.zeros) == 2
    occ = np.array(lpj.lp.occupancy)
    assert occ.sum() == pytest.approx(1.0, abs=1e-9) and occ.min() > 0.05
    w0, per0 = lpj.ber(0.0, F_HZ)
    # the far point (-0.15 UI from the lock) is the worse one; the target lies between
    # the weighted BER without SJ and the far point's alone
    assert per0[0][1] > 10 * per0[1][1]
    target = 1.5 * w0
    row = jt.stat_point(F_HZ, target)
    assert row["model"] == "lock_points" and len(row["lock_points"]) == 2
    assert "2 stable lock points" in row["lock_warning"]
    a = row["sj_ui"]
    assert a > 0
    # the BER by hand: the engine at each point's offset, untracked SJ and wander, weighed
    lock = jt.front.cal.lock_ui
    import copy
    import dataclasses

    total = 0.0
    for p in row["lock_points"]:
        lk = copy.copy(jt.system.link)
        lk.impairments = dataclasses.replace(lk.impairments, sj_ui=p["untracked_ui"],
                                             sj_hz=F_HZ, offset_ui=p["stat_offset_ui"],
                                             wander_ui=p["wander_ui"])
        b = float(StatisticalEngine(dataclasses.replace(jt.system, link=lk),
                                    jt.taps).ber(0.0).ber)
        assert b == pytest.approx(p["ber"], rel=1e-12)
        total += p["occupancy"] * b
        # each point's state against slow references: the averaged S-curve is zero at
        # its shift (dense grid), and u = A |1 - H(f; N)| with N by dense quadrature
        s = lpj.resp.s
        mu = p["stat_offset_ui"] - lock
        assert "unsettled" not in p
        f_mu, n = _avg_s_slow(s, mu, p["untracked_ui"], p["wander_ui"])
        f_lo = _avg_s_slow(s, mu - 2e-3, p["untracked_ui"], p["wander_ui"])[0]
        f_hi = _avg_s_slow(s, mu + 2e-3, p["untracked_ui"], p["wander_ui"])[0]
        # (the module's 9-point Gauss-Hermite and 64-phase rule against the dense one:
        # the zero within 2e-4 UI)
        assert f_lo > 0 > f_hi and abs(f_mu) / ((f_lo - f_hi) / 4e-3) < 2e-4
        one_minus_h = float(loop.untracked(F_HZ, -n, jt.front.kp, jt.front.ki,
                                           jt.system.cdr.latency_ui, jt.front.ui_s))
        assert p["untracked_ui"] == pytest.approx(a * one_minus_h, rel=2e-3)
    assert row["ber"] == pytest.approx(total, rel=1e-12)
    # the tolerance: within the solver's 12 % in BER of the target, or the bracket's
    # passing end with a failing amplitude 1 % above it
    if abs(math.log10(row["ber"] / target)) >= 0.05:
        assert row["ber"] <= target and lpj.ber(a * 1.011, F_HZ)[0] > target


def test_one_zero_keeps_the_single_point_row(jt):
    """One stable zero: the row is the single-point row bit for bit, plus the point."""
    kpd = jt.front.cal.kpd
    _install(jt, -kpd * GRID)
    saved = Jtol._lock_points
    try:
        Jtol._lock_points = lambda self, f, t, row: row
        before = jt.stat_point(F_HZ, 1e-6)
    finally:
        Jtol._lock_points = saved
    _install(jt, -kpd * GRID, keep_solves=True)
    after = jt.stat_point(F_HZ, 1e-6)
    assert {k: after[k] for k in before} == before
    assert set(after) - set(before) == {"lock_points"}
    assert len(after["lock_points"]) == 1 and after["lock_points"][0]["occupancy"] == 1.0


def test_a_point_the_loop_never_holds_is_left_out_of_the_solve(jt, monkeypatch):
    """A far lock point with occupancy 9e-12 adds at most 5e-12 to the weighted BER: the
    solve leaves it out wherever the main point's BER is above 5e-6 (SKIP_REL) and
    evaluates fewer point states; the tolerance is the same as with every point
    evaluated (to 1e-9), and the weighted BER at the answer (every point) too."""
    import copy

    from serdes.engines import cdr_stat_points as csp

    _install(jt, _two_zeros(jt.front.cal.kpd, a=-0.25, b=-0.2), lr=0.3)
    calls = []
    real = csp.LockPointJtol.state

    def counted(self, i, amp, f_hz):
        calls.append(i)
        return real(self, i, amp, f_hz)

    monkeypatch.setattr(csp.LockPointJtol, "state", counted)
    lazy = csp.LockPointJtol(jt)
    assert 0 < lazy.lp.occupancy[0] < 1e-10 and lazy.lp.main == 1
    full = copy.copy(lazy)          # the same lock points, its own BER cache
    full._ber = {}
    target = 1e-4
    a_lazy, _ = lazy.solve(F_HZ, target, 0.05)
    lazy_calls = list(calls)
    calls.clear()
    monkeypatch.setattr(csp, "SKIP_REL", 0.0)   # every point with any occupancy
    a_full, _ = full.solve(F_HZ, target, 0.05)
    assert a_lazy > 0 and a_lazy == pytest.approx(a_full, rel=1e-9)
    assert lazy.ber(a_lazy, F_HZ)[0] == pytest.approx(full.ber(a_full, F_HZ)[0], rel=1e-9)
    assert lazy_calls.count(1) == calls.count(1)      # the main point: every amplitude
    assert lazy_calls.count(0) < calls.count(0)       # the far one: where it could matter
