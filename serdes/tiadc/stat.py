"""The statistical engine for a time-interleaved ADC: the BER averaged over the lanes.

FFE output k with k mod N = l sums samples of lanes (l - i) mod N, each through its own
gain, pulse (T/H) and skewed instant, plus its offset:

    z_k = sum_i w_i [g_{l-i} sum_j a_{k-i-j} p_{l-i}(jT + tau_{l-i}) + o_{l-i}] + noise

so output phase l has its own combined response f_l (ISI, treated exactly by the
engine's convolution of per-cursor distributions) and a fixed offset
d_l = sum_i w_i o_{l-i} (a point mass added to the ISI distribution); the BER is the
mean over the N phases (all of them up to 64 lanes; beyond, a systematic sample of 64,
an estimate with its standard error; one phase when the lanes are alike). The sampling
clock's extra random jitter (aperture, broadband supply noise) adds in quadrature to
the link's RJ; the supply's ripple tones (with the link's SJ) are sinusoidal jitter of
the ADC clock, averaged over their phases (:mod:`serdes.tiadc.multitone`). A calibrated
ADC keeps the residual mismatch of :mod:`serdes.tiadc.cal_residual` (its lanes
otherwise alike). The front end's supply gain modulation is a Gaussian term of
variance k_g^2 <v^2> E[x^2] |w|^2. Random jitter takes the one-converter engine's
variance classes joint with each phase's residual ISI (:mod:`serdes.engines.stat.rj_joint`;
the classes per level alone read the tail 2-3x low off the pulse peak, where lane skews
and the supply's tones put the samples); the rows that together carry at most 1e-4 of a
phase's BER keep the level-only classes (:mod:`serdes.tiadc.rows`, bound 1e-3 relative;
the joint classes' samples linear between the offsets of the classes' grid).
Approximations: the RJ classes' shape comes from
the common pulse at each jitter row's common offset (their per-level mean is each lane's
exactly; 8 lanes with 3 ps rms skew read 1.22x [1.09, 1.36] below a count,
tests/test_tiadc_held_state.py); RX noise is scaled by each lane's gain, not filtered by
its T/H mismatch.
"""

from __future__ import annotations

import time
from contextlib import closing, contextmanager
from dataclasses import replace

import numpy as np
from scipy.linalg import toeplitz

from serdes.engines.stat import views
from serdes.engines.stat.engine import StatisticalEngine
from serdes.engines.stat.results import Bathtub, StatBer
from serdes.engines.stat.rj import CLASS_GRID_UI, RandomJitterModel, resample
from serdes.impairments import rx_thermal_autocorr
from serdes.tiadc.lanes import lane_fine_pulses
from serdes.tiadc.rows import RJ_SCREEN, row_blocks, screened_any, screened_rows
from serdes.tiadc.skew_points import offset_rho, points_for


# output phases evaluated at most (each costs one single-lane statistical BER): every
# phase, so the BER is exact, up to 64 lanes (a systematic sample of 8 was off by 2x
# at 64 lanes: a few lanes' phases carry most errors)
MAX_PHASES = 64


def statistical_engine(system, taps=None, **kw) -> StatisticalEngine:
    """The engine that fits the link's ADC: :class:`InterleavedStatistics` for an
    interleaved one, else :class:`StatisticalEngine`."""
    if getattr(system.link.adc, "interleaved", False):
        return InterleavedStatistics(system, taps, **kw)
    return StatisticalEngine(system, taps, **kw)


def clock_rj_ui(link) -> float:
    """Random jitter of the ADC clock beyond the link's RJ (UI rms): aperture and the
    supply's broadband noise."""
    adc = link.adc
    s2 = adc.aperture_jitter_s ** 2
    if adc.supply is not None and adc.supply.jitter_active:
        s2 += adc.supply.rj_s ** 2
    return float(np.sqrt(s2)) / link.ui_s


class InterleavedStatistics(StatisticalEngine):
    """:class:`StatisticalEngine` averaged over the lanes of ``system.link.adc`` (a
    :class:`serdes.tiadc.model.TiAdc`); see the module for the model."""

    def __init__(self, system, taps=None, **kw):
        super().__init__(system, taps, **kw)
        link, adc = self.link, self.link.adc
        self.adc = adc
        self.lanes = adc.lanes
        self.gains = adc.gains
        self.offsets_v = adc.offsets_v
        self.skew_ui = adc.skews_s / link.ui_s
        self.cal_var = {}
        self.cal_skew = None
        self._skew_var = 0.0
        if adc.calibration is not None:   # corrected lanes plus the calibration's noise
            from serdes.tiadc.cal_residual import SkewTerm, ffe_variance

            cal = adc.calibration
            if cal.mu_gain > 0:
                self.gains = np.ones(self.lanes)
            if cal.mu_offset > 0:
                self.offsets_v = np.zeros(self.lanes)
            self.cal_var = ffe_variance(link, self.w, cal)
            if cal.skew_gain > 0 and self.lanes > 1:
                self.skew_ui = np.zeros(self.lanes)
                self.cal_skew = SkewTerm(link, self.w, self.d, cal, system.run.chunk_symbols)
        p = self.pulse
        fines = lane_fine_pulses(adc, p.fine, p.m, link.ui_s / p.m)
        self.lane_pulses = [replace(p, fine=f) for f in fines]
        rj = float(np.hypot(link.impairments.rj_ui, clock_rj_ui(link)))
        if rj != self.rj_ui:
            self.rj_ui = rj
            self.rj = (RandomJitterModel(self.pulse, self.w, self.d, self.levels, rj)
                       if rj > 0 else None)
        # the rows that carry little of the error rate keep the level-only RJ classes,
        # on the grid of offsets (serdes.tiadc.rows); 0: every row the joint classes
        self.rj_screen = RJ_SCREEN
        self.rj_level_only = False
        if self.rj is not None:   # the classes' samples on the grid too (both kinds)
            self.rj.class_grid_ui = self.rj.joint_grid_ui = CLASS_GRID_UI
        sup = adc.supply
        if sup is not None and sup.jitter_active and np.any(sup.sj_s > 0):
            # every supply tone, with the link's own SJ: one multi-tone quadrature
            from serdes.tiadc.multitone import multitone_quadrature

            amps = [self.sj_ui] + list(sup.sj_s / link.ui_s)
            rads = [self.sj_rad_per_ui] + list(2 * np.pi * np.asarray(sup.ripple_hz, dtype=np.float64) * link.ui_s)
            self.jitter = multitone_quadrature(self.w.shape[0], p.n_ui, amps_ui=amps,
                                               rad_per_ui=rads, dd_ui=self.dd_ui,
                                               points=self.jitter_points)
        # Gauss-Hermite points of each skew direction, and its rho (skew_points.py)
        self.skew_points: tuple = ()
        self.skew_rho: tuple = ()
        if self.cal_skew is not None and self.cal_skew.common_var > 0:
            # each direction's points from its size against the noise (skew_points.py)
            reach = 0.5 + self.jitter.span_ui   # a bathtub's offsets, a row's jitter
            dirs = [(self.cal_skew.common_var, self.cal_skew.profile)]   # (UI^2, per tap)
            if np.any(self.cal_skew.mode != 0):   # the rest's costliest direction, exactly
                dirs.append((1.0, self.cal_skew.mode))
            sigma_v = float(np.sqrt(self.rx_var + self.enob_var))
            for var, prof in dirs:
                rho = offset_rho(p, self.w, prof, float(np.sqrt(var)), self.levels, sigma_v,
                                 reach)
                n = points_for(rho)
                self.skew_points += (n,)
                self.skew_rho += (rho,)
                self.jitter = _with_gaussian_offset(self.jitter, var, prof, n)
        self._r = toeplitz(rx_thermal_autocorr(link, self.w.shape[0]))
        self.gain_mod_var = 0.0
        if sup is not None and sup.gain_active:
            x_ms = (link.noise.variance + link.level_power * float(p.taps @ p.taps))
            self.gain_mod_var = sup.gain_mod_variance() * x_ms * float(self.w @ self.w)
        self._phase = 0
        self._rows_kept: tuple = (None, None)
        self._rows_held: list = []   # (key, rows) kept inside holding_rows()
        self._hold_depth = 0         # inside holding_rows(): rows formed are kept
        self._held_bytes = 0
        self.sampling_rel_error = 0.0
        self._set_phase(0)

    def _set_phase(self, l: int) -> None:
        self._phase = int(l) % self.lanes
        i = np.arange(self.w.shape[0])
        self._lane_of_tap = (self._phase - i) % self.lanes
        wl = self.w * self.gains[self._lane_of_tap]
        self.rx_var = float(wl @ self._r @ wl) + self.gain_mod_var + sum(self.cal_var.values())
        self._offset = float(self.w @ self.offsets_v[self._lane_of_tap])

    def _lane_pulse_at(self, lane: int, offset_ui: float):
        key = (lane, round(float(offset_ui), 12))
        hit = self._cache.get(key)
        if hit is None:
            lp = self.lane_pulses[lane]
            h = lp.at_offset(offset_ui * lp.m)
            jv = np.zeros_like(h)
            if self.rj is not None:   # the jitter's mean shift and variance: common pulse
                pbar, _, _, jv = self.rj.moments(offset_ui)
                h = h + (pbar - self.pulse.at_offset(offset_ui * self.pulse.m))
            if len(self._cache) > 1 << 16:
                self._cache.clear()
            hit = self._cache[key] = (h, jv)
        return hit

    def _prefetch_lanes(self, lanes, offsets_ui) -> None:
        """Put :meth:`_lane_pulse_at` of every (lane, offset) pair in its cache, each lane's
        re-sampling (and the RJ moments) in one kernel call: the same numbers as one at a
        time (same positions, same interpolation)."""
        wanted: dict = {}
        for lane, o in zip(lanes, offsets_ui):
            wanted.setdefault((int(lane), round(float(o), 12)), float(o))  # the first, as there
        need = [(k, o) for k, o in wanted.items() if k not in self._cache]
        if not need:
            return
        if len(self._cache) + len(need) > 1 << 16:
            self._cache.clear()
        offs = [o for _, o in need]
        if self.rj is not None:
            moments = self.rj.moments_many(offs)
            common = resample(self.pulse, [o * self.pulse.m for o in offs])
        by_lane: dict = {}
        for j, ((lane, _), _) in enumerate(need):
            by_lane.setdefault(lane, []).append(j)
        for lane, idx in by_lane.items():
            lp = self.lane_pulses[lane]
            rows = resample(lp, [offs[j] * lp.m for j in idx])
            for j, h in zip(idx, rows):
                if self.rj is not None:
                    pbar, _, _, jv = moments[j]
                    h = h + (pbar - common[j])
                else:
                    jv = np.zeros_like(h)
                self._cache[need[j][0]] = (h, jv)

    def response(self, offset_ui: float = 0.0, tap_offsets_ui=None):
        if self.cal_skew is not None:   # the skew residual's cost at these instants
            self._skew_var = self.cal_skew.variance(offset_ui, tap_offsets_ui)
        n, L = self.w.shape[0], self.pulse.n_ui
        f = np.zeros(n + L - 1)
        jvar = np.empty((n, L))
        lanes = self._lane_of_tap
        extra = np.zeros(n) if tap_offsets_ui is None else tap_offsets_ui
        offs = [offset_ui + float(extra[i]) + self.skew_ui[lanes[i]] for i in range(n)]
        self._prefetch_lanes(lanes, offs)
        for i in range(n):
            lane = int(lanes[i])
            h, jv = self._lane_pulse_at(lane, offs[i])
            g = self.gains[lane]
            f[i:i + L] += self.w[i] * g * h
            jvar[i] = jv * g * g
        return f, jvar

    def row_distributions(self, offset_ui: float = 0.0, grid_step: float | None = None):
        """:meth:`StatisticalEngine.row_distributions` at the current output phase, its
        rows' lane pulses (and RJ moments) re-sampled in blocks, the RJ classes joint with
        the ISI in the rows that carry the error rate (:mod:`serdes.tiadc.rows`); the
        last phase's rows are kept (the BER's nominal-phase rows serve the vertical
        bathtub and the horizontal walk's centre). With ``rj_screen`` 0 the same
        numbers as row by row."""
        key = self._rows_key(offset_ui, grid_step)
        if self._rows_kept[0] == key:
            return self._rows_kept[1]
        for k, rows in self._rows_held:   # (keys hold models: compared, not hashed)
            if k == key:
                return rows
        self._rows_kept = (None, None)   # one phase's rows alive at a time
        if not self._rows_in_blocks():
            isi: list = []      # each row's ISI parts (two with DCD), formed once
            rows = screened_any(self, lambda: self._rows_one_by_one(offset_ui, grid_step, isi),
                                lambda k: self._joint_again(isi[k]), self.rj_screen)
        else:
            rows = screened_rows(self, offset_ui, grid_step, self.rj_screen)
        self._rows_kept = (key, rows)
        if self._hold_depth:   # kept for the scope while they fit (else one phase's only)
            size = sum(_nbytes(d) for _, d in rows)
            if self._held_bytes + size <= WALK_ROWS_BYTES:
                self._rows_held.append((key, rows))
                self._held_bytes += size
        return rows

    def _rows_in_blocks(self) -> bool:
        """The phase's jitter rows are formed in blocks (:func:`screened_rows`), not one
        by one through the base engine (TX jitter, the aggressors' SJ points,
        quasi-static rows: :meth:`_rows_one_by_one`)."""
        from serdes.crosstalk import sj_points

        return not (self.jitter.quasi_static or self.tx is not None
                    or sj_points(self.link) is not None)

    @contextmanager
    def precursors_apart(self, n: int):
        """:meth:`StatisticalEngine.precursors_apart` at every output phase: each phase's
        rows leave the first ``n`` pre-cursor positions of that phase's response out of
        their ISI and note them (``precursor_values``; the lanes' own ISI components,
        :meth:`_components`, are formed on that residual too). The rows kept for reuse
        (the current phase's and those held by :meth:`holding_rows`) are set aside and
        come back after the scope; the rows formed in it are not held (one pass over
        the phases reads them: holding them would add up to :data:`WALK_ROWS_BYTES`)."""
        saved = (self._rows_kept, self._rows_held, self._held_bytes, self._hold_depth)
        self._rows_kept, self._rows_held, self._held_bytes = (None, None), [], 0
        self._hold_depth = 0
        try:
            with super().precursors_apart(n) as eng:
                yield eng
        finally:
            (self._rows_kept, self._rows_held, self._held_bytes,
             self._hold_depth) = saved

    @contextmanager
    def holding_rows(self):
        """A scope in which every row set formed is kept (while together they hold at
        most :data:`WALK_ROWS_BYTES`), so the BER's rows at each output phase serve the
        error propagation model and the eye's vertical walk after it instead of being
        formed again; released when the scope ends."""
        self._hold_depth += 1
        try:
            yield self
        finally:
            self._hold_depth -= 1
            if not self._hold_depth:
                self._rows_held, self._held_bytes = [], 0

    def skew_quadrature(self) -> dict | None:
        """The calibrated lanes' skew residual's Gauss-Hermite rule per direction (common
        offset, then the rest's costliest direction): points, rho and the bound on the
        relative error it may add to every rate (:mod:`serdes.tiadc.skew_points`; above
        its tolerance where rho asks for more than the most points); None without it."""
        if not self.skew_points:
            return None
        from serdes.tiadc.skew_points import TOLERANCE, rule_error

        return {"points": list(self.skew_points), "rho": [float(r) for r in self.skew_rho],
                "error_bound": [rule_error(n, r) for n, r in zip(self.skew_points,
                                                                 self.skew_rho)],
                "tolerance": TOLERANCE}

    def _rows_one_by_one(self, offset_ui, grid_step, isi: list) -> list:
        """The engine's rows row by row (serdes.engines.stat.rows.xtalk_sj_rows: TX
        jitter, the aggressors' SJ points, quasi-static rows), not kept by it (a pass
        with the level-only classes is not the answer); ``isi`` gets each row's ISI
        parts (:meth:`_isi_part`, one per DCD parity) in the level-only pass, through the
        engine's ``isi_log``."""
        log = [] if self.rj_level_only else None
        self.isi_log = log
        try:
            rows = super().row_distributions(offset_ui, grid_step)
        finally:
            self.isi_log = None
            self._xt_sj_rows = (None, None)
        if log is not None:   # every row is one distribution(): its parities' parts
            per = 1 if self.tx is None else len(self.tx.parities)
            if len(log) != per * len(rows):
                raise RuntimeError(f"{len(log)} ISI parts for {len(rows)} rows")
            isi.extend(log[i:i + per] for i in range(0, len(log), per))
        return rows

    def _joint_again(self, parts: list):
        """A row of :meth:`_rows_one_by_one` from its ISI parts with the classes the
        engine takes now (the DCD parities' average as :meth:`distribution` forms it)."""
        if len(parts) == 1:
            return self._from_isi(parts[0])
        from serdes.engines.stat.txjitter import ParityMixture

        return ParityMixture([self._from_isi(p) for p in parts])

    def _block_responses(self, offs):
        """:meth:`response` of every row of a block, (R, n + L - 1) and (R, n, L), from the
        rows' sampling offsets ``offs`` (R, n) (skew included), in one kernel call
        (:func:`serdes.kernels.stat_rows.lane_row_responses`: the same arithmetic,
        equal to rounding)."""
        from serdes.engines.stat.rj import hermite_points
        from serdes.kernels.stat_rows import lane_row_responses

        lanes = self._lane_of_tap
        uniq, tap_fine = [], np.empty(lanes.shape[0], dtype=np.int64)
        for i, lane in enumerate(lanes):   # one row per distinct lane pulse array
            fine = self.lane_pulses[int(lane)].fine
            for k, u in enumerate(uniq):
                if u is fine:
                    tap_fine[i] = k
                    break
            else:
                tap_fine[i] = len(uniq)
                uniq.append(fine)
        p = self.pulse
        x, gw = hermite_points(self.rj.points) if self.rj is not None else ((0.0,), (1.0,))
        return lane_row_responses(np.stack(uniq), tap_fine, self.gains[lanes], p.fine,
                                  p.phase, p.m, p.n_ui, offs, self.w,
                                  self.rj.rj_ui if self.rj is not None else 0.0, x, gw)

    def _rows_key(self, offset_ui, grid_step) -> tuple:
        """What the rows depend on: the phase, the offset, the lanes' values and (by
        identity; the key holds them, so their ids stay theirs) the models in use."""
        held = (self.jitter, self.rj, self.cal_skew, self.w, self.taps, self.lane_pulses)
        return (self._phase, round(float(offset_ui), 12), grid_step, self.rj_screen,
                self.rj_level_only, self._pre_apart, self.rx_var, self._offset,
                self.gains.tobytes(), self.offsets_v.tobytes(), self.skew_ui.tobytes(),
                tuple(id(o) for o in held), held)

    def _noise_var_per_level(self, f, jvar):
        var, rj = super()._noise_var_per_level(f, jvar)
        return var + self._skew_var, rj

    def _components(self, f, sigma_min, delta):
        values, p, var, extra_gauss, resid = super()._components(f, sigma_min, delta)
        if self._offset != 0.0:   # the lanes' offsets through the FFE: a point mass
            row_v = np.zeros((1, values.shape[1]))
            row_p = np.zeros((1, values.shape[1]))
            row_v[0, 0], row_p[0, 0] = self._offset, 1.0
            values = np.ascontiguousarray(np.vstack([values, row_v]))
            p = np.ascontiguousarray(np.vstack([p, row_p]))
        return values, p, var, extra_gauss, resid

    def _joint_rj_shift(self) -> float | None:
        """The RJ classes joint with the ISI (serdes.engines.stat.rj_joint) on this
        phase's residual ISI; the lanes' offsets, a point mass in the discrete part, move
        the ISI bins. None (the level-only classes) while ``rj_level_only``."""
        return None if self.rj_level_only else self._offset

    def _lanes_alike(self) -> bool:
        """Every lane has the same gain, offset, skew and T/H (calibrated lanes): the
        output phases are all alike."""
        return bool(np.ptp(self.gains) == 0 and np.ptp(self.offsets_v) == 0
                    and np.ptp(self.skew_ui) == 0 and not self.adc.bw_mismatch)

    @property
    def phases(self) -> np.ndarray:
        """The output phases evaluated: one when the lanes are alike, all N up to
        :data:`MAX_PHASES`, else every (N / MAX_PHASES)-th (a systematic sample: the
        BER is then an estimate, its relative standard error in
        :attr:`sampling_rel_error`)."""
        if self._lanes_alike():
            return np.zeros(1, dtype=np.int64)
        if self.lanes <= MAX_PHASES:
            return np.arange(self.lanes)
        return np.unique((np.arange(MAX_PHASES) * self.lanes) // MAX_PHASES)

    def weighted_rows(self, offset_ui: float = 0.0, wanted=None):
        """(weight, distribution) of every row of every output phase (:attr:`phases`),
        each phase's rows weighted 1 / phases, as :meth:`ber` averages them; one phase's
        rows alive at a time. ``wanted`` (indices over all phases' rows, in this order):
        inside :meth:`precursors_apart`, where a phase's jitter rows are formed in blocks,
        only those are formed, the others given as (weight, None) (the propagation model
        chains about a quarter of the rows of the README's 64-lane example)."""
        phases = self.phases
        try:
            start = 0
            for l in phases:
                self._set_phase(l)
                rows = None if wanted is None else self._wanted_rows(offset_ui, wanted, start)
                if rows is None:
                    rows = self.row_distributions(offset_ui)
                for wq, d in rows:
                    yield wq / len(phases), d
                start += len(rows)
        finally:
            self._set_phase(0)

    def _wanted_rows(self, offset_ui: float, wanted, start: int) -> list | None:
        """The current phase's rows [(weight, distribution or None)], only those of
        ``wanted`` (less ``start``, the rows of the phases before) formed, with the joint
        RJ classes; None where the rows are not formed in blocks (TX jitter, the
        aggressors' SJ points, quasi-static rows) or outside :meth:`precursors_apart`."""
        if not self._pre_apart or not self._rows_in_blocks():
            return None
        J = self.jitter
        n = J.weights.shape[0]
        idx = np.array(sorted(i - start for i in wanted if start <= i < start + n),
                       dtype=np.int64)
        out: list = [(float(w), None) for w in J.weights]
        for k, row in zip(idx, row_blocks(self, offset_ui, None, idx)):
            out[int(k)] = row
        return out

    # -- views over the lanes: the eye of the ADC output overlays every lane's samples
    def _over_phases(self, make) -> list:
        outs = []
        for l in self.phases:
            self._set_phase(l)
            outs.append(make())
        self._set_phase(0)
        return outs

    def bathtub_horizontal(self, n_phases: int = 64, span_ui: float = 1.0):
        """The horizontal bathtub averaged over the output phases (lanes)."""
        outs = self._over_phases(lambda: views.bathtub_horizontal(self, n_phases, span_ui))
        return replace(outs[0], ber_per_eye=np.mean([b.ber_per_eye for b in outs], axis=0),
                       ber=np.mean([b.ber for b in outs], axis=0))

    def bathtub_vertical(self, offset_ui: float = 0.0, n_points: int = 401,
                         span: float | None = None):
        """The vertical bathtub averaged over the output phases (lanes)."""
        outs = self._over_phases(lambda: views.bathtub_vertical(self, offset_ui, n_points,
                                                                span))
        return replace(outs[0], ber_per_eye=np.mean([b.ber_per_eye for b in outs], axis=0))

    def eye_opening(self, targets=None, offset_ui: float = 0.0, n_phases: int = 64,
                    vertical=None, horizontal=None):
        """The openings of the eye of all lanes' samples: from the vertical (801 points)
        and horizontal bathtubs averaged over the output phases, as the bathtubs and the
        eye are (the one-phase walk would read output phase 0 alone), each only at the
        points the openings read (:meth:`_walked_vertical`, :meth:`_walked_horizontal`);
        lanes alike: the walk of the one phase."""
        from serdes.engines.stat.results import DEFAULT_TARGETS

        targets = DEFAULT_TARGETS if targets is None else targets
        if not self._lanes_alike():
            with self.holding_rows():   # the vertical walk's rows serve the horizontal centre
                if vertical is None:
                    vertical = self._walked_vertical(offset_ui, targets)
                if horizontal is None:
                    horizontal = self._walked_horizontal(n_phases, offset_ui,
                                                         max(float(t) for t in targets))
        return super().eye_opening(targets, offset_ui, n_phases, vertical, horizontal)

    def _walked_vertical(self, offset_ui: float, targets) -> Bathtub:
        """:meth:`bathtub_vertical` (801 points) at the points the eye heights at
        ``targets`` read: views' vertical walk on the rows of every output phase at
        once, each weighted by 1 / phases (their sum is the average over the output
        phases of the phases' bathtubs, equal to it to rounding); the whole bathtub,
        phase by phase, when those rows together would hold more than
        :data:`WALK_ROWS_BYTES` (:meth:`eye_opening`'s :meth:`holding_rows` scope keeps
        them for the horizontal walk's centre)."""
        rows, held = [], 0
        with closing(self.weighted_rows(offset_ui)) as every:
            for wq, d in every:
                held += _nbytes(d)
                if held > WALK_ROWS_BYTES:
                    rows = None
                    break
                rows.append((wq, d))
        if rows is None:
            return self.bathtub_vertical(offset_ui, 801)
        dy, vals = views.vertical_walk(self, offset_ui, 801, targets, rows)
        return Bathtub(x=dy, ber_per_eye=vals, ber=None, eye_names=self.eye_names,
                       kind="vertical", ui_s=self.ui_s, volts_per_unit=self.volts_per_unit)

    def _walked_horizontal(self, n_phases: int, offset_ui: float, limit: float) -> Bathtub:
        """:meth:`bathtub_horizontal` at the phases the eye widths up to BER ``limit``
        read (views' walk from the centre outwards, each step's per-eye values averaged
        over the output phases as the whole bathtub averages them; the phases not read
        +inf): the widths of the whole bathtub at the cost of the phases they read, the
        centre alone for an eye closed there (each phase a whole set of jitter rows per
        output phase)."""
        def per_eye(ph):
            return np.mean(self._over_phases(lambda: views.horizontal_per_eye(self, ph)),
                           axis=0)

        x, vals = views.horizontal_walk(self, n_phases, offset_ui, limit, per_eye)
        return Bathtub(x=x, ber_per_eye=vals, ber=None, eye_names=self.eye_names,
                       kind="horizontal", ui_s=self.ui_s, volts_per_unit=self.volts_per_unit)

    def eye(self, n_phases: int = 64, n_bins: int = 256, y_range: float = 1.3):
        """The statistical eye of all lanes' samples: each lane's eye map (error rate
        per phase and slicer voltage) averaged over the output phases."""
        t0 = time.perf_counter()
        outs = self._over_phases(lambda: views.eye(self, n_phases, n_bins, y_range))
        return replace(outs[0], ber=np.mean([e.ber for e in outs], axis=0),
                       means=np.mean([e.means for e in outs], axis=0),
                       elapsed_s=time.perf_counter() - t0)

    def ber(self, offset_ui: float = 0.0, *, error_estimate: bool = False) -> StatBer:
        """The mean over the output phases (:attr:`phases`) of
        :meth:`StatisticalEngine.ber`."""
        parts = []
        phases = self.phases
        for l in phases:
            self._set_phase(l)
            parts.append(super().ber(offset_ui, error_estimate=False))
        self._set_phase(0)
        # a sample of k of the N phases: the mean's standard error (finite population)
        k = len(phases)
        b = np.array([x.ber for x in parts])
        self.sampling_rel_error = 0.0
        if k < self.lanes and not self._lanes_alike() and b.mean() > 0:
            self.sampling_rel_error = float(b.std(ddof=1) / np.sqrt(k)
                                            * np.sqrt(1 - k / self.lanes) / b.mean())
        mse = np.mean([10 ** (-b.sndr_db / 10) for b in parts])
        return StatBer(offset_ui=float(offset_ui), ber=float(np.mean([b.ber for b in parts])),
                       ser=float(np.mean([b.ser for b in parts])),
                       ber_per_eye=np.mean([b.ber_per_eye for b in parts], axis=0),
                       eye_names=parts[0].eye_names, sndr_db=float(-10 * np.log10(mse)),
                       sigma=np.sqrt(np.mean([b.sigma ** 2 for b in parts], axis=0)),
                       isi_rms=float(np.sqrt(np.mean([b.isi_rms ** 2 for b in parts]))))


# the eye heights of mismatched lanes walk the rows of all output phases at once while
# those hold at most this many bytes of arrays (else each phase's whole bathtub, one
# phase's rows alive at a time)
WALK_ROWS_BYTES = 256 * 2 ** 20


def _nbytes(d) -> int:
    """Bytes of the arrays a row distribution holds (a mixture: its parts')."""
    parts = getattr(d, "parts", None)
    if parts is not None:
        return sum(_nbytes(p) for p in parts)
    return sum(v.nbytes for v in getattr(d, "__dict__", {}).values()
               if isinstance(v, np.ndarray))


def _with_gaussian_offset(jitter, var_ui2: float, profile, points: int):
    """The jitter quadrature with a Gaussian offset x of variance ``var_ui2`` (UI^2)
    added to every row, FFE tap i moved by profile_i x: ``points`` Gauss-Hermite points
    each (:func:`serdes.tiadc.skew_points.points_for`)."""
    from numpy.polynomial.hermite_e import hermegauss

    from serdes.engines.stat.jitter import Jitter

    x, wx = hermegauss(int(points))
    wx = wx / wx.sum()
    prof = np.asarray(profile, dtype=np.float64)
    offs = (jitter.offsets[:, None, :]
            + np.sqrt(var_ui2) * x[None, :, None] * prof[None, None, :])
    wts = jitter.weights[:, None] * wx[None, :]
    return Jitter(offsets=offs.reshape(-1, jitter.offsets.shape[1]), weights=wts.reshape(-1),
                  quasi_static=jitter.quasi_static and bool(np.all(prof == prof[0])))
