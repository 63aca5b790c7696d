"""Statistical jitter tolerance when the clock-recovery loop has more than one lock point.

:mod:`serdes.engines.cdr_false_lock` finds every stable zero of the (lane-averaged)
measured S-curve and each one's occupancy from the stationary density of the loop's
phase chain. ``serdes run`` weighs the engine's BER by that occupancy without SJ; here
the same weighting is done under a TX SJ of amplitude A at f, for ``serdes jtol --method
stat``:

    BER(A) = sum_i occupancy_i BER_i(A)

where BER_i is the statistical engine's BER with the loop held at lock point i under the
SJ: the same linear loop model as at a single lock point (:mod:`serdes.engines.cdr_stat`),
taken about zero i instead of the calibrated lock point. At each point the untracked
swing u_i = A |1 - H(f; N_i)| with N_i the detector's describing-function gain there, the
static shift mu_i where the S-curve averaged over the swing and the dither falls through
zero inside the point's basin (:func:`serdes.engines.cdr_stat.operating_point` searched
between the basin's edges), and the quasi-static wander there
(:func:`serdes.engines.cdr_stat.wander`), solved together by fixed-point steps. Under a
swing that approaches the basin's width there is no such state: the zero moves toward
the hump, where the slope and so the loop's pull vanish, the wander grows and the steps
do not settle (a synthetic well 0.06 UI wide: settled to 1e-4 at 0.01 UI of swing, not
at 0.03; the loop would leave that point). The point's entry then says
``"unsettled"`` and its BER is that of the last step (no occupancy moves). The
tolerance is the largest A with BER(A) at or below the target (bracketed in A from the
one-point answer, then Illinois regula falsi in log A, as :mod:`serdes.jtol`).

What this leaves out (stated in the JSON's warning too): the occupancy is the one
without SJ (an SJ swing that approaches a hump makes hopping more likely, which is not
modelled), and below the loop bandwidth the simulated tracking error
(:mod:`serdes.engines.cdr_track`) is not used with several lock points: every point is
the linear loop model (``"model": "lock_points"``). The engine is the run's
(:func:`serdes.tiadc.stat.statistical_engine`: the interleaved one for an interleaved
ADC, whose lanes are what give the default link its second lock point).

With one stable zero nothing changes: :meth:`LockPointJtol.several` is False and
:mod:`serdes.jtol` keeps its single-point answer bit for bit, adding only the lock point's
description (``"lock_points"``, and ``"lock_warning"`` when its hump is low).
"""

from __future__ import annotations

import copy
import dataclasses
import math

import numpy as np

from serdes import cdr as loop

EDGE = 1e-4      # the zero search stays this far (UI) inside a basin's edges
ITERS = 40       # at most this many fixed-point steps of (u, mu, dither, N) per point
MAX_UI = 1e4     # the bracket stops widening here (as the counted search)
SCAN = 0.005     # the zero search's scan step (UI) across a basin
# the solve leaves out lock points whose whole occupancy, at BER 0.5, is at most this
# share of the weighted BER of the points taken (a point the loop never holds: the C2C
# thru's false lock 0.25 UI out, occupancy 0, cost half of its jtol run)
SKIP_REL = 1e-6


@dataclasses.dataclass
class PointState:
    """The loop held at one lock point under an SJ: untracked amplitude, static phase
    (UI from the calibrated lock point), Gaussian wander, describing-function gain, and
    whether that state exists (a zero in the basin, the fixed point settled)."""

    u: float
    mu: float
    dither: float
    kpd_eff: float
    held: bool


def _zero_near(front, resp, a: float, b: float, u: float, dither: float, z: float):
    """(mu, N, found): the falling zero of the swing- and dither-averaged S-curve in
    (a, b) nearest ``z`` (scanned on SCAN, then refined by
    :func:`serdes.engines.cdr_stat.operating_point` between the two scan points) and the
    detector's gain there; (z, its gain, False) when there is none."""
    from serdes.engines import cdr_stat

    xs = np.append(np.arange(a, b, SCAN), b)
    f = np.array([cdr_stat._avg_s(resp, float(x), u, dither)[0] for x in xs])
    j = np.nonzero((f[:-1] > 0) & (f[1:] <= 0))[0]
    if j.size == 0:
        return (*cdr_stat.operating_point(front, resp, u, dither, z, z, z), False)
    k = int(j[np.argmin(np.abs(0.5 * (xs[j] + xs[j + 1]) - z))])
    mu, n = cdr_stat.operating_point(front, resp, u, dither, float(xs[k]),
                                     float(xs[k + 1]), float(xs[k + 1]))
    return mu, n, True


class LockPointJtol:
    """The lock points of a :class:`serdes.jtol.Jtol`'s loop and the weighted BER under
    an SJ (module notes)."""

    def __init__(self, jt):
        from serdes.engines import cdr_false_lock as fl
        from serdes.engines import cdr_stat
        from serdes.engines.cdr_lanes import lanes_response

        self.jt = jt
        system, front = jt.system, jt.front
        resp = cdr_stat.response_for(system, front)
        if np.any(getattr(system.link.adc, "skews_s", 0.0)):
            resp = lanes_response(resp, system.link.adc.skews_s / system.link.ui_s)
        self.resp = resp
        self.lp = fl.analyse(resp, front.cal.kpd, front.kp, front.ki,
                             system.cdr.latency_ui, mu=0.0)
        self._ber: dict = {}

    @property
    def several(self) -> bool:
        return self.lp.several

    def describe(self) -> dict:
        """The lock points as ``serdes run``'s ``"cdr"`` gives them (phases from the
        pulse peak), and the warning when the loop can leave its main point."""
        lock = self.jt.front.cal.lock_ui
        lp = self.lp
        out = {"lock_points": [{"phase_ui": lock + z, "basin_ui": [lock + b[0], lock + b[1]],
                                "occupancy": o, "hump_sigma": hs}
                               for z, b, o, hs in zip(lp.zeros, lp.basins, lp.occupancy,
                                                      lp.hump_sigma)]}
        warn = lp.warning()
        if lp.several:
            warn += ("; the tolerance weighs the points by their occupancy without SJ "
                     "(the SJ's effect on hopping is not modelled), each under the linear "
                     "loop model")
        if warn:
            out["lock_warning"] = warn
        return out

    def state(self, i: int, amp: float, f_hz: float) -> PointState:
        """The loop at lock point ``i`` under a TX SJ ``amp`` (UI) at ``f_hz``."""
        from serdes.engines import cdr_stat

        front, s = self.jt.front, self.jt.system.cdr
        resp = self.resp
        z = self.lp.zeros[i]
        lo, hi = self.lp.basins[i]
        a, b = lo + EDGE, hi - EDGE
        kpd = front.cal.kpd
        dither = cdr_stat.dither_rms(front, resp, kpd)
        dither = cdr_stat.wander(front, resp, z, 0.0, dither)
        mu, kpd_eff, held = _zero_near(front, resp, a, b, 0.0, dither, z)
        u = amp * float(loop.untracked(f_hz, kpd_eff, front.kp, front.ki, s.latency_ui,
                                       front.ui_s))
        settled = False
        for _ in range(ITERS):
            mu, kpd_eff, held = _zero_near(front, resp, a, b, u, dither, z)
            dither = cdr_stat.wander(front, resp, mu, u, dither)
            u_new = amp * float(loop.untracked(f_hz, kpd_eff, front.kp, front.ki,
                                               s.latency_ui, front.ui_s))
            done = abs(u_new - u) < 1e-4 * max(u, 1e-6)
            u = 0.5 * (u + u_new)
            if done:
                settled = True
                break
        # the shift and gain of the final (u, dither), so the state is one fixed point
        mu, kpd_eff, held = _zero_near(front, resp, a, b, u, dither, z)
        return PointState(float(u), float(mu), float(dither), float(kpd_eff),
                          bool(held and settled))

    def point_ber(self, st: PointState, f_hz: float) -> float:
        """The engine's BER with the loop held in ``st`` (the SJ at ``f_hz``, below the
        Jtol's ``f_floor`` taken at ``f_floor``, as its single-point solve)."""
        from serdes.tiadc.stat import statistical_engine

        system = self.jt.system
        lk = copy.copy(system.link)
        lk.impairments = dataclasses.replace(
            lk.impairments, sj_ui=st.u, sj_hz=float(max(f_hz, self.jt.f_floor)),
            offset_ui=self.jt.front.cal.lock_ui + st.mu, wander_ui=st.dither)
        return float(statistical_engine(dataclasses.replace(system, link=lk),
                                        self.jt.taps).ber(0.0).ber)

    def ber(self, amp: float, f_hz: float, full: bool = True):
        """(the occupancy-weighted BER, [(PointState, BER) per lock point]) under a TX SJ
        ``amp`` at ``f_hz``. ``full=False`` (the solve): the points are taken in
        descending occupancy and the rest left out (None in the list) once their whole
        occupancy, at BER 0.5, is at most :data:`SKIP_REL` of the sum so far (or zero);
        the sum then stands for the full one to that relative error."""
        key = (float(amp), float(f_hz))
        per = self._ber.get(key)
        occ = self.lp.occupancy
        if per is None:
            per = self._ber[key] = [None] * len(occ)
        total = 0.0
        for n, i in enumerate(sorted(range(len(occ)), key=lambda j: -occ[j])):
            rest = 0.5 * sum(occ[j] for j in range(len(occ)) if per[j] is None)
            if not full and (rest == 0.0 or rest <= SKIP_REL * total):
                break
            if per[i] is None:
                st = self.state(i, amp, f_hz)
                per[i] = (st, self.point_ber(st, f_hz))
            total += occ[i] * per[i][1]
        # in index order: with every point evaluated, the sum as before, to the bit
        total = float(sum(o * p[1] for o, p in zip(occ, per) if p is not None))
        return total, list(per)

    def solve(self, f_hz: float, target: float, start_ui: float) -> tuple[float, int]:
        """(the largest TX SJ amplitude with the weighted BER at or below ``target``,
        evaluations): bracketed from ``start_ui`` (0 when the loop fails without SJ)."""
        from serdes.rootfind import illinois

        evals = 0

        def g(a):
            nonlocal evals
            evals += 1
            return (math.log10(max(self.ber(a, f_hz, full=False)[0], 1e-300))
                    - math.log10(target))

        if g(0.0) > 0:
            return 0.0, evals
        a = max(float(start_ui), 1e-3)
        ga = g(a)
        if ga > 0:
            hi, g_hi = a, ga
            while ga > 0 and a > 1e-4:
                hi, g_hi, a = a, ga, a / 2
                ga = g(a)
            if ga > 0:
                return 0.0, evals
            lo, g_lo = a, ga
        else:
            lo, g_lo = a, ga
            hi, g_hi = 2 * a, g(2 * a)
            while g_hi <= 0 and hi < MAX_UI:
                lo, g_lo, hi = hi, g_hi, hi * 2
                g_hi = g(hi)
            if g_hi <= 0:
                return hi, evals
        return illinois(g, lo, g_lo, hi, g_hi, log=True), evals

    def point(self, f_hz: float, target: float, one_point: dict) -> dict:
        """The jitter tolerance row at ``f_hz`` with the lock points weighed
        (``one_point``: the single-point row, kept as ``"main_point_sj_ui"``)."""
        amp, evals = self.solve(f_hz, target, one_point["sj_ui"])
        total, per = self.ber(amp, f_hz)
        m = self.lp.main
        lock = self.jt.front.cal.lock_ui
        st_m = per[m][0]
        row = {"sj_hz": float(f_hz), "sj_ui": float(amp), "untracked_ui": st_m.u,
               "one_minus_h": st_m.u / amp if amp > 0 else float(
                   loop.untracked(f_hz, st_m.kpd_eff, self.jt.front.kp, self.jt.front.ki,
                                  self.jt.system.cdr.latency_ui, self.jt.front.ui_s)),
               "loop_shift_ui": lock + st_m.mu, "wander_ui": st_m.dither,
               "evaluations": one_point["evaluations"] + evals, "model": "lock_points",
               "ber": total, "main_point_sj_ui": one_point["sj_ui"],
               "main_point_model": one_point["model"]}
        desc = self.describe()
        for d, (st, b) in zip(desc["lock_points"], per):
            d.update(untracked_ui=st.u, stat_offset_ui=lock + st.mu, wander_ui=st.dither,
                     ber=b)
            if not st.held:
                d["unsettled"] = True
        row.update(desc)
        return row
