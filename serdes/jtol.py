"""Jitter tolerance and jitter transfer of a system with clock recovery.

Jitter tolerance: for each SJ frequency, the largest TX SJ amplitude (UI, peak) that
keeps the BER at or below a target.

- ``stat``: the statistical engine with the SJ the loop leaves untracked, the loop's
  static shift and Gaussian wander under that swing (:mod:`serdes.engines.cdr_stat`).
  BER grows with the untracked amplitude u, so the largest u* is solved once per
  frequency (Illinois regula falsi on log10 BER, to 12 % in BER or 1 % in u) and the
  tolerance is u* / |1 - H(f)|, H with the detector's describing-function gain at u*.
  Below
  ``f_floor`` (where the SJ moves by less than 0.01 rad across the FFE and pulse span)
  the engine's answer no longer depends on f, and the solve at ``f_floor`` is reused.
  From 10 kHz (:data:`serdes.engines.cdr_track.F_MIN`) up to the loop's bandwidth, where the untracked swing is quasi-static
  across the equalizer, the point is solved again in the SJ amplitude with the
  simulated tracking error of :mod:`serdes.engines.cdr_track` (row ``"model"``:
  ``"tracking"``, with the linear answer as ``"linear_sj_ui"``). With more than one
  stable zero of the detector's S-curve the BER is the occupancy-weighted one over the
  lock points (:mod:`serdes.engines.cdr_stat_points`, ``"model": "lock_points"``).
- ``counted``: counted runs of the pulse engine with the CDR in the loop; one amplitude
  passes when a run of ``symbols`` symbols ends with at most target x bits errors (the
  run stops, failing, as soon as it has more: the stopping rule). The amplitude is
  bisected in log scale inside a bracket around the statistical answer (widened until it
  brackets), to a ratio of ``rtol``.

Jitter transfer: a small TX SJ drives the CDR front end alone (random PAM levels, the
link's noise); the recovered phase's component at the SJ frequency over whole periods
after lock, divided by the SJ's, is H(f).

The jitter tolerance template (:func:`template_ui`), as published for the PAM4
electrical interfaces: peak-to-peak SJ 5 fb / (664000 f) UI for fb/664000 < f <=
fb/6640, 0.05 UI for fb/6640 < f <= 10 fb/6640 (ten times the reference loop bandwidth
fb/6640), unspecified outside (fb: symbol rate); given here as a peak amplitude (half).
Source checked: Intel AN 835 "PAM4 Signaling Fundamentals", section 4.4.4 "Receiver
Jitter Tolerance" (CEI-56G-MR-PAM4, the OIF interface), table and figure 26
(https://www.intel.com/content/www/us/en/docs/programmable/683852/current/receiver-jitter-tolerance.html).
The 802.3ck/dj clause tables (162.9.4, 163.9, 120F/120G) themselves were not found in
a public source; 802.3 uses the same corner fb/6640 (~8 MHz at 53.125 GBd) and 0.05 UI
pp above it, but its tests are a few discrete (frequency, amplitude) cases, which
this continuous mask only approximates.
"""

from __future__ import annotations

import dataclasses
import math

import numpy as np

from serdes import cdr as loop
from serdes.rootfind import illinois


# the counted search stops widening here: the default loop tolerates ~2000 UI at 10 kHz
# (BER 1e-6) once it starts in the SJ's steady state (serdes.cdr.sj_integrator)
MAX_COUNTED_UI = 1e4
# the tracking model's search starts here where the linear model fails without SJ
TRACKING_START_UI = 1e-3


def template_ui(f_hz, symbol_rate_hz: float):
    """The JTOL mask as a peak SJ amplitude (UI); NaN where unspecified (see the
    module notes for the source)."""
    f = np.asarray(f_hz, dtype=np.float64)
    fb = float(symbol_rate_hz)
    pp = np.where(f <= fb / 6640, 5 * fb / (664000 * f), 0.05)
    return np.where((f < fb / 664000) | (f > 10 * fb / 6640), np.nan, pp / 2)


def log_grid(f_min: float, f_max: float, points: int) -> np.ndarray:
    return np.logspace(math.log10(f_min), math.log10(f_max), int(points))


def with_tx_sj(system, sj_ui: float, sj_hz: float):
    return dataclasses.replace(system, tx_jitter=dataclasses.replace(
        system.tx_jitter, sj_ui=float(sj_ui), sj_hz=float(sj_hz)))


class Jtol:
    """The loop of a system (calibrated once) and the tolerance searches."""

    def __init__(self, system, taps=None):
        from serdes.engines.cdr import CdrFrontEnd
        from serdes.engines.run import design_equalizer

        self.system = system
        self.taps = taps if taps is not None else design_equalizer(system)
        s = system.cdr
        self.front = CdrFrontEnd(system.link, system.run.seed, s, system.tx_jitter) \
            if s.active else None
        span = len(self.taps.ffe) + system.link.pulse.n_ui
        self.f_floor = 0.01 / (2 * np.pi * span * system.link.ui_s)
        self._ustar: dict[float, tuple[float, int]] = {}

    def untracked(self, f_hz: float) -> float:
        if self.front is None:
            return 1.0
        c = self.front.cal
        return float(loop.untracked(f_hz, c.kpd, self.front.kp, self.front.ki,
                                    self.system.cdr.latency_ui, self.system.link.ui_s))

    def model(self) -> dict | None:
        return None if self.front is None else self.front.model()

    # ------------------------------------------------------------------ statistical
    def stat_ber(self, sj_ui: float, sj_hz: float) -> float:
        from serdes.engines.cdr_stat import stat_link
        from serdes.engines.stat import StatisticalEngine

        sys_ = with_tx_sj(self.system, sj_ui, sj_hz)
        sys_ = dataclasses.replace(sys_, link=stat_link(sys_, self.front))
        return float(StatisticalEngine(sys_, self.taps).ber(0.0).ber)

    def _untracked_link(self, u: float, f_hz: float):
        """(link, |1 - H(f)| of the loop under that swing) for an untracked SJ ``u``:
        the loop's shift, wander and describing-function gain
        (:mod:`serdes.engines.cdr_stat`); the fixed phase: u itself, |1 - H| = 1."""
        if self.front is None:
            import copy

            lk = copy.copy(self.system.link)
            lk.impairments = dataclasses.replace(lk.impairments, sj_ui=float(u),
                                                 sj_hz=float(f_hz))
            return lk, 1.0
        from serdes.engines.cdr_stat import link_with_untracked

        lk, kpd_eff = link_with_untracked(self.system, self.front, u, f_hz)
        return lk, float(loop.untracked(f_hz, kpd_eff, self.front.kp, self.front.ki,
                                        self.system.cdr.latency_ui, self.system.link.ui_s))

    def _stat_ber_untracked(self, u: float, f_hz: float) -> float:
        from serdes.engines.stat import StatisticalEngine

        lk, _ = self._untracked_link(u, f_hz)
        sys_ = dataclasses.replace(self.system, link=lk)
        return float(StatisticalEngine(sys_, self.taps).ber(0.0).ber)

    def _solve_untracked(self, f_hz: float, target: float) -> tuple[float, int]:
        """u*: the largest untracked SJ amplitude (UI) with stat BER <= target."""
        key = float(max(f_hz, self.f_floor))
        if key in self._ustar:
            return self._ustar[key]
        evals = 0

        def g(u):
            nonlocal evals
            evals += 1
            b = self._stat_ber_untracked(u, key)
            return math.log10(max(b, 1e-300)) - math.log10(target)

        u = 0.05
        gu = g(u)
        if gu > 0:  # bracket downwards
            hi, g_hi = u, gu
            while gu > 0 and u > 1e-3:
                hi, g_hi, u = u, gu, u / 2
                gu = g(u)
            if gu > 0:  # fails (almost) without SJ
                self._ustar[key] = (0.0, evals)
                return self._ustar[key]
            lo, g_lo = u, gu
        else:
            lo, g_lo = u, gu
            hi, g_hi = 2 * u, g(2 * u)
            while g_hi <= 0 and hi < 2.0:
                lo, g_lo, hi = hi, g_hi, hi * 2
                g_hi = g(hi)
            if g_hi <= 0:
                self._ustar[key] = (hi, evals)
                return self._ustar[key]
        u = illinois(g, lo, g_lo, hi, g_hi, log=False)
        self._ustar[key] = (u, evals)
        return self._ustar[key]

    def stat_point(self, f_hz: float, target: float) -> dict:
        u, evals = self._solve_untracked(f_hz, target)
        lk, keep = self._untracked_link(u, f_hz)
        imp = lk.impairments
        row = {"sj_hz": float(f_hz), "sj_ui": u / keep, "untracked_ui": u,
               "one_minus_h": keep, "loop_shift_ui": float(imp.offset_ui),
               "wander_ui": float(imp.wander_ui), "evaluations": evals, "model": "linear"}
        from serdes.engines import cdr_track

        if cdr_track.applies(self.system, self.front, self.taps, f_hz, u):
            row = self._tracking_point(f_hz, target, row)
        return self._lock_points(f_hz, target, row)

    def _lock_points(self, f_hz: float, target: float, row: dict) -> dict:
        """With the CDR on: the row with the loop's lock points; with more than one
        stable zero the tolerance of the occupancy-weighted BER
        (:mod:`serdes.engines.cdr_stat_points`), with one the row unchanged."""
        if self.front is None:
            return row
        if getattr(self, "_points", None) is None:
            from serdes.engines.cdr_stat_points import LockPointJtol

            self._points = LockPointJtol(self)
        if not self._points.several:
            return {**row, **self._points.describe()}
        return self._points.point(f_hz, target, row)

    def _tracking_point(self, f_hz: float, target: float, row: dict) -> dict:
        """Below the loop bandwidth: the largest TX SJ whose simulated tracking error
        (:mod:`serdes.engines.cdr_track`) keeps the averaged BER at or below the
        target, bisected in log amplitude from the linear model's answer (``row``)."""
        from serdes.engines import cdr_track
        from serdes.engines.cdr_stat import response_for
        from serdes.engines.cdr_stat_model import tracking_ber

        if getattr(self, "_offset_ber", None) is None:
            self._offset_ber = cdr_track.OffsetBer(self.system, self.taps)
        resp = response_for(self.system, self.front)
        runs = {}

        def g(a):  # the BER `serdes run` gives at this point (engines/cdr_stat_model.py)
            b, tr = tracking_ber(self.front, resp, self._offset_ber, a, f_hz, target * 1e-4)
            runs[a] = tr
            return math.log10(max(b, 1e-300)) - math.log10(target), tr

        # the linear model's answer, or where it fails without SJ (0 UI) a small SJ:
        # a search from 0 UI never moves (0 x 1.5 = 0)
        hi = max(row["sj_ui"], TRACKING_START_UI)
        g_hi, _ = g(hi)
        while g_hi <= 0 and hi < MAX_COUNTED_UI:  # the linear answer passes: go up
            hi *= 1.5
            g_hi, _ = g(hi)
        lo = hi / 1.5
        g_lo, _ = g(lo)
        while g_lo > 0 and lo > 1e-4:
            hi, g_hi, lo = lo, g_lo, lo / 1.5
            g_lo, _ = g(lo)
        if g_hi <= 0:      # passes at the search's cap
            a = at = hi
        elif g_lo > 0:     # fails down to 1e-4 UI: the loop does not hold its lock point
            a, at = 0.0, lo
        else:
            a = at = illinois(lambda x: g(x)[0], lo, g_lo, hi, g_hi, log=True)
        tr = runs[at]
        return {"sj_hz": float(f_hz), "sj_ui": a, "untracked_ui": tr.untracked,
                "one_minus_h": tr.untracked / at, "loop_shift_ui": tr.mean,
                "wander_ui": tr.wander, "evaluations": row["evaluations"] + len(runs),
                "model": "tracking", "linear_sj_ui": row["sj_ui"]}

    # ------------------------------------------------------------------ counted
    def counted_pass(self, sj_ui: float, f_hz: float, target: float, symbols: int) -> tuple:
        """(passed, bit errors, bits) of one counted run with the stopping rule."""
        from serdes.engines.run import simulate

        sys_ = with_tx_sj(self.system, sj_ui, f_hz)
        bps = 2 if sys_.link.modulation_order == 4 else 1
        allowed = int(math.floor(target * symbols * bps))
        r = simulate(sys_, symbols=symbols, target_errors=allowed + 1, taps=self.taps)
        ok = r.bits > 0 and r.bit_errors <= target * r.bits and r.stopped_by == "symbols"
        return ok, r.bit_errors, r.bits

    def counted_point(self, f_hz: float, target: float, symbols: int, start_ui: float,
                      rtol: float = 0.1) -> dict:
        """Bisection (log scale) for the largest passing amplitude around ``start_ui``."""
        runs = []

        def test(a):
            ok, e, b = self.counted_pass(a, f_hz, target, symbols)
            runs.append({"sj_ui": a, "bit_errors": e, "bits": b, "pass": bool(ok)})
            return ok

        start = max(start_ui, 1e-3)
        lo, hi = start / 1.5, start * 1.5
        while not test(lo):
            hi, lo = lo, lo / 2
            if lo < 1e-4:
                return {"sj_hz": float(f_hz), "sj_ui": 0.0, "runs": runs}
        while test(hi):
            lo, hi = hi, hi * 2
            if hi > MAX_COUNTED_UI:
                return {"sj_hz": float(f_hz), "sj_ui": lo, "runs": runs}
        while hi / lo > 1 + rtol:
            mid = math.sqrt(lo * hi)
            if test(mid):
                lo = mid
            else:
                hi = mid
        return {"sj_hz": float(f_hz), "sj_ui": lo, "sj_ui_fail": hi, "runs": runs}

    # ------------------------------------------------------------------ jitter transfer
    def measure_jtf(self, f_hz: float, sj_ui: float = 0.03, periods: int = 12,
                    min_symbols: int = 1 << 21, seed: int = 7) -> complex:
        """Measured H(f) (complex) with a TX SJ of ``sj_ui`` at ``f_hz``, over whole SJ
        periods (at least ``periods`` and ``min_symbols``: the loop dither is correlated
        over the loop's time constant, so the estimate needs many of those)."""
        from serdes.engines.cdr import CdrFrontEnd

        s = self.system
        txj = dataclasses.replace(s.tx_jitter, sj_ui=float(sj_ui), sj_hz=float(f_hz))
        fe = CdrFrontEnd(s.link, seed, s.cdr, txj, calibration=self.front.cal)
        fe.trace = []
        period = 1.0 / (f_hz * s.link.ui_s)
        settle = int(max(s.cdr.warmup_symbols, 20 * s.cdr.latency_ui))
        periods = max(periods, int(np.ceil(min_symbols / period)))
        n_meas = int(round(periods * period))
        total = settle + n_meas + fe.latency
        g = np.random.default_rng(seed)
        chunk = 1 << 16
        k = 0
        while k < total:
            n = min(chunk, total - k)
            fe(fe.levels[g.integers(0, fe.levels.shape[0], n)], k)
            k += n
        ph = np.concatenate(fe.trace)
        kn = np.arange(ph.shape[0]) - fe.latency  # nominal symbol of each output
        sel = kn >= settle
        sel &= kn < settle + n_meas
        tau = fe.tx_source.slow(int(kn[sel][0]), int(sel.sum()))
        w = np.exp(-2j * np.pi * f_hz * s.link.ui_s * kn[sel])
        ph_sel = ph[sel] - ph[sel].mean()
        return complex(np.sum(ph_sel * w) / np.sum((tau - tau.mean()) * w))

    def model_jtf(self, f_hz) -> np.ndarray:
        c = self.front.cal
        return loop.jitter_transfer(f_hz, c.kpd, self.front.kp, self.front.ki,
                                    self.system.cdr.latency_ui, self.system.link.ui_s)
