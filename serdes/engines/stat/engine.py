"""The statistical engine: the slicer-input distribution of each PAM level, hence BER to 1e-15
and below, bathtubs and statistical eyes, from the same Link as the pulse engine.

Model at the slicer (normalised symbol units: levels ``link.levels``, main cursor 1)::

    v_k = f_d(phi) a_{k-d} + sum_{j != d} r_j(phi) a_{k-j} + n_k

* ``f(phi) = w * p(phi)`` is the pulse response sampled ``phi`` UI after the nominal
  phase, through the DSP FFE ``w`` (taps fixed at their design phase, as in a
  receiver whose sampling phase moves); ``r_j = f_j - b_{j-d}`` for the DFE
  positions (correct decisions, taps as designed: clipped to the tap limit), ``f_j``
  elsewhere.
* The ISI term is the exact convolution of the per-cursor distributions (each cursor
  takes ``r_j a`` for the M equiprobable levels). Points are put on a grid of spacing
  ``delta = sigma / resolution`` by the mean-preserving linear split; the variance
  that the split adds is known exactly and taken off the Gaussian noise, so the
  first two moments of the total are exact and the grid error is of third order.
* Gaussian noise with the variance of: the coloured RX noise after the FFE
  (``w^T R w``), TX noise through the whole response (``sigma_tx^2 |f|^2``), ADC ENOB
  noise (``sigma_e^2 |w|^2``).
* Random jitter (an independent sampling offset per ADC sample): given the symbols, a
  Gaussian at the slicer whose variance ``V = sum_i w_i^2 var_{k-i}`` depends on the
  data (``var_m ~ sigma_RJ^2 (sum_n a_{m-n} p'_n)^2`` plus the curvature terms), so the
  noise of each level is a Gaussian mixture over the classes of V given the decided
  level, and the pulse is the one averaged over the jitter (the curvature's mean
  shift); :mod:`serdes.engines.stat.rj`.
* ADC quantization: per FFE tap an independent uniform error of one LSB times
  ``|w_i|``, convolved like a cursor (taps too small to matter go to the Gaussian).
* Sinusoidal jitter (``noise.sj_ui``, ``noise.sj_hz``) and dual-Dirac deterministic
  jitter (``dd_ui``: offsets +-A_DD, probability 1/2 each) move the sampling instant;
  the pulse response is re-sampled at the moved instant (the exact form of the
  slope model) and the error rates are averaged over the jitter distribution. For SJ
  of any frequency the instant of each FFE tap's sample is moved by its own phase of
  the sine; SJ slow against the equalizer span and DD are quasi-static.

Per-eye error rate at a threshold y in eye e (between levels e and e+1): the
probability that a symbol lands on the wrong side of y, divided by the bits per
symbol, ``(1/(M log2 M)) [sum_{i<=e} P(v_i > y) + sum_{i>e} P(v_i < y)]``. At the slicer
thresholds the three eyes add up to the BER when errors go to the adjacent level.
The same quantity over (phase, y) is the statistical eye map.
"""

from __future__ import annotations

import math
from contextlib import contextmanager, nullcontext

import numpy as np

from serdes.dsp.linalg import toeplitz
from serdes.engines.stat.components import discrete_components
from serdes.engines.stat.distribution import SlicerDistribution, eye_names, gray_bit_errors
from serdes.engines.stat.jitter import jitter_quadrature
from serdes.engines.stat.rows import xtalk_sj_rows
from serdes.engines.stat.results import DEFAULT_TARGETS, Bathtub, EyeOpening, StatBer, StatEye
from serdes.engines.stat.rj import (MERGE_REL, RandomJitterModel, resample,
                                    skewed_components)
from serdes.engines.stat.rj_joint import rj_joint_distribution
from serdes.engines.stat.txjitter import ParityMixture, TxJitterModel
from serdes.impairments import (adc_enob_variance, adc_quantization_variance,
                                rx_thermal_autocorr, tx_sigma)
from serdes.kernels.stat import isi_pmf
from serdes.kernels.stat_joint import merge_close_rows


class StatisticalEngine:
    """Statistical BER, bathtubs and eyes of a Link with a given equalizer (FFE, DFE and
    reflection-canceller taps; decisions assumed correct).

    ``system``: a :class:`~serdes.system.System`, sampled at its link's phase
    (``impairments.offset_ui`` from the pulse peak); with clock recovery or TX jitter
    give it :func:`serdes.metrics.eye.stat_view` of the system, which puts the loop's lock
    point, wander and tracked SJ there, as ``serdes run`` does. ``taps``: EqualizerTaps
    (default: ``design_equalizer(system)``, as the pulse engine). The noise contributions come from
    :mod:`serdes.impairments`, the same functions the equalizer design uses.
    ``resolution``: grid points per Gaussian std (the grid error falls as its cube).
    ``dd_ui``: dual-Dirac deterministic jitter amplitude A_DD (UI); default: the
    link's ``impairments.dd_ui``.
    ``jitter_points``: quadrature points over the SJ period.
    ``quantization``: "uniform" (per-tap uniform LSB error) or "gaussian".
    """

    def __init__(self, system, taps=None, *, resolution: float = 16.0,
                 dd_ui: float | None = None, jitter_points: int = 32,
                 quantization: str = "uniform", max_bins: int = 1 << 14):
        from serdes.engines.run import design_equalizer

        link = system.link
        if resolution <= 0:
            raise ValueError(f"resolution = {resolution!r}: expected a number > 0")
        if dd_ui is None:
            dd_ui = link.impairments.dd_ui
        if dd_ui < 0 or dd_ui > 0.5:
            raise ValueError(f"dd_ui = {dd_ui!r}: expected a number in [0, 0.5]")
        if quantization not in ("uniform", "gaussian"):
            raise ValueError(f"quantization = {quantization!r}: expected 'uniform' or "
                             "'gaussian'")
        self.system = system
        self.link = link
        self.taps = taps if taps is not None else design_equalizer(system)
        if getattr(self.taps, "detector", "dfe") != "dfe":
            raise ValueError("the statistical engine models FFE + DFE (+ reflection "
                             "canceller) receivers, not the MLSE detector")
        self.resolution = float(resolution)
        self.dd_ui = float(dd_ui)
        self.jitter_points = int(jitter_points)
        self.quantization = quantization
        self.max_bins = int(max_bins)
        imp = link.impairments
        self.m_levels = link.levels.shape[0]
        self.levels = np.asarray(link.levels, dtype=np.float64)
        self.thresholds = (self.levels[1:] + self.levels[:-1]) / 2.0
        self.bit_errors = gray_bit_errors(self.m_levels)
        self.eye_names = eye_names(self.m_levels)
        self.es = float(np.mean(self.levels ** 2))
        self.w = np.asarray(self.taps.ffe, dtype=np.float64)
        self.b = np.asarray(self.taps.dfe, dtype=np.float64)
        self.d = int(self.taps.delay)
        self.pulse = link.pulse
        self.ui_s = link.ui_s
        self.volts_per_unit = float(self.pulse.taps[self.pulse.cursor])
        n = self.w.shape[0]
        # the Gaussian terms of the shared budget (serdes.impairments) through the FFE
        r = rx_thermal_autocorr(link, n)
        self.rx_var = float(self.w @ toeplitz(r) @ self.w)
        self.sigma_tx = tx_sigma(link)
        ww = float(self.w @ self.w)
        self.enob_var = adc_enob_variance(link) * ww
        self.quant_var = adc_quantization_variance(link) * ww  # quantization="gaussian"
        self.lsb = link.adc.lsb_v                               # quantization="uniform"
        self.rj_ui = float(imp.rj_ui)
        self.rj = (RandomJitterModel(self.pulse, self.w, self.d, self.levels, self.rj_ui)
                   if self.rj_ui > 0 else None)
        self.sj_ui = float(imp.sj_ui)
        self.sj_rad_per_ui = 2 * np.pi * imp.sj_hz * link.ui_s
        self.jitter = jitter_quadrature(n, self.pulse.n_ui, sj_ui=self.sj_ui,
                                        sj_rad_per_ui=self.sj_rad_per_ui, dd_ui=self.dd_ui,
                                        points=self.jitter_points,
                                        offset_ui=getattr(imp, "offset_ui", 0.0),
                                        wander_ui=getattr(imp, "wander_ui", 0.0))
        self._cache: dict = {}
        self._xt_offsets = 0.0   # the sampling offsets of the current distribution (UI)
        self._rows_cache: tuple = (None, None)
        # inside precursors_apart(): the pre-cursor positions left out of the ISI, and
        # the values of the last response those positions held
        self._pre_apart = 0
        self._last_pre: np.ndarray | None = None
        # a list: every distribution formed gets its ISI part (_isi_part) appended,
        # in order (two per row with TX DCD), for a caller that finishes it again
        self.isi_log: list | None = None
        # per-symbol TX jitter (RJ, DCD, BUJ): serdes.engines.stat.txjitter
        self.tx = TxJitterModel.of(system, self.pulse, self.w, self.d, self.levels)
        self._crosstalk_spread = sum(  # the aggressors' largest excursion at the slicer
            float(np.max(np.abs(link.levels))) * max(float(np.sum(np.abs(np.convolve(
                self.w, p.taps(ph))))) for ph in p.stat_phases())
            for p in link.aggressor_pulses)


    # -- response and noise -------------------------------------------------------------
    def _pulse_at(self, offset_ui: float):
        """Symbol-spaced pulse samples at an offset (UI), averaged over the random jitter,
        and the jitter variance of each sample (0 without RJ)."""
        key = round(float(offset_ui), 12)
        hit = self._cache.get(key)
        if hit is None:
            if self.rj is None:
                h = self.pulse.at_offset(offset_ui * self.pulse.m)
                hit = (h, np.zeros_like(h))
            else:
                h, _, _, jv = self.rj.moments(offset_ui)
                hit = (h, jv)
            if len(self._cache) > 4096:
                self._cache.clear()
            self._cache[key] = hit
        return hit

    def response(self, offset_ui: float = 0.0, tap_offsets_ui=None):
        """Combined response f = FFE * pulse at a phase offset, with per-FFE-tap extra
        sampling offsets (SJ, DD). Returns (f, the RJ variance of each pulse sample per
        FFE tap (n_taps, n_ui))."""
        n = self.w.shape[0]
        L = self.pulse.n_ui
        if tap_offsets_ui is None or np.all(tap_offsets_ui == tap_offsets_ui[0]):
            extra = 0.0 if tap_offsets_ui is None else float(tap_offsets_ui[0])
            h, jv = self._pulse_at(offset_ui + extra)
            return np.convolve(self.w, h), np.broadcast_to(jv, (n, L))
        f = np.zeros(n + L - 1)
        jvar = np.empty((n, L))
        offs = [offset_ui + float(t) for t in tap_offsets_ui]
        self._prefetch(offs)
        for i in range(n):
            h, jv = self._pulse_at(offs[i])
            f[i:i + L] += self.w[i] * h
            jvar[i] = jv
        return f, jvar

    def _prefetch(self, offsets_ui) -> None:
        """Put the pulses at all these offsets (UI) in the cache of :meth:`_pulse_at`,
        the re-sampling of all of them (and of their RJ quadrature nodes) in one kernel
        call: the same numbers as one at a time."""
        wanted: dict = {}
        for o in offsets_ui:
            wanted.setdefault(round(float(o), 12), float(o))  # the first, as _pulse_at
        need = sorted((k, o) for k, o in wanted.items() if k not in self._cache)
        if not need:
            return
        if len(self._cache) + len(need) > 4096:
            self._cache.clear()
        if self.rj is None:
            rows = resample(self.pulse, [o * self.pulse.m for _, o in need])
            zero = np.zeros(rows.shape[1])
            zero.setflags(write=False)   # no RJ: one shared zero variance
            for (key, _), h in zip(need, rows):
                self._cache[key] = (h, zero)
        else:
            moments = self.rj.moments_many([o for _, o in need])
            for (key, _), (h, _, _, jv) in zip(need, moments):
                self._cache[key] = (h, jv)

    def _noise_var_per_level(self, f: np.ndarray, jvar: np.ndarray) -> tuple[np.ndarray,
                                                                             np.ndarray]:
        """Gaussian noise variance per level: everything but RJ, and the mean RJ part."""
        var = self.rx_var + self.sigma_tx ** 2 * float(f @ f) + self.enob_var
        if self.quantization == "gaussian":
            var += self.quant_var
        rj = self.rj.mean_var(jvar) if self.rj is not None else np.zeros(self.m_levels)
        return np.full(self.m_levels, var), rj

    def _residual(self, f: np.ndarray) -> np.ndarray:
        """ISI left at the slicer: f without the main cursor, DFE positions minus the
        DFE taps (correct decisions)."""
        resid = f.copy()      # (f may hold one response per row: the last axis)
        resid[..., self.d] = 0.0
        nb = self.b.shape[0]
        end = min(self.d + 1 + nb, f.shape[-1])
        resid[..., self.d + 1:end] -= self.b[: end - self.d - 1]
        # reflection-canceller taps (serdes.dsp.design.ReceiverTaps) are decision-fed too
        lags = np.asarray(getattr(self.taps, "rc_lags", ()), dtype=np.int64)
        if lags.size:
            rc = np.asarray(getattr(self.taps, "rc_taps"), dtype=np.float64)
            ok = self.d + lags < f.shape[-1]
            resid[..., self.d + lags[ok]] -= rc[ok]
        if self._pre_apart:   # precursors_apart(): kept out, their values noted
            lo = max(self.d - self._pre_apart, 0)
            self._last_pre = f[..., lo:self.d][..., ::-1].copy()
            resid[..., lo:self.d] = 0.0
        return resid

    def _components(self, f: np.ndarray, sigma_min: float, delta: float, tx_top=None):
        """Discrete components (values, probs) and their exact variance. ``tx_top``:
        (cursor indices, deviations (K, Q)) of the cursors whose TX jitter is convolved
        exactly (serdes.engines.stat.txjitter); :func:`components.discrete_components`."""
        return discrete_components(self, f, sigma_min, delta, tx_top)

    def _joint_rj_shift(self) -> float | None:
        """The constant that the discrete part (:meth:`_components`) adds to the residual
        ISI and the symbol-independent terms, for the RJ classes joint with the ISI
        (their ISI bins are moved by it); None: a discrete part the joint classes do
        not know, which takes the level-only classes."""
        return 0.0 if type(self)._components is StatisticalEngine._components else None

    def distribution(self, offset_ui: float = 0.0, tap_offsets_ui=None,
                     delta: float | None = None, grid_step: float | None = None
                     ) -> SlicerDistribution:
        """The slicer-input distribution at one sampling phase (one jitter point).

        delta: grid spacing (default sigma_min / resolution); grid_step: make delta an
        integer fraction of this (for eye maps on a voltage grid). With TX DCD: the
        average of the two parities' distributions on one grid (ParityMixture).
        """
        f, jvar = self.response(offset_ui, tap_offsets_ui)
        if self.tx is None or len(self.tx.parities) == 1:
            return self._distribution_of(f, jvar, offset_ui, tap_offsets_ui, delta,
                                         grid_step, 0)
        # the parities differ in the TX jitter's terms only (_isi_part): one response
        first = self._distribution_of(f, jvar, offset_ui, tap_offsets_ui, delta, grid_step, 1)
        return ParityMixture([first, self._distribution_of(f, jvar, offset_ui, tap_offsets_ui,
                                                           first.delta, None, -1)])

    def row_distributions(self, offset_ui: float = 0.0, grid_step: float | None = None):
        """[(weight, distribution)] over the jitter quadrature rows at a phase offset:
        :meth:`distribution` of every row, per-tap SJ rows batched
        (:func:`serdes.engines.stat.rows.row_distributions`)."""
        return xtalk_sj_rows(self, StatisticalEngine, offset_ui, grid_step)

    def holding_rows(self):
        """A scope in which the row sets formed are kept for reuse: the interleaved ADC's
        engine keeps its output phases' rows there; this one keeps nothing."""
        return nullcontext(self)

    @contextmanager
    def precursors_apart(self, n: int):
        """A scope in which the rows formed leave the first ``n`` pre-cursor positions
        out of their ISI: each row's distribution holds the values those positions had
        (``precursor_values``), f[d - 1], f[d - 2], .., which multiply the next symbols
        (the DFE error propagation model conditions on them). The rows kept for reuse
        outside the scope are set aside and come back after it."""
        saved = (self._rows_cache, getattr(self, "_xt_sj_rows", (None, None)))
        self._pre_apart, self._rows_cache, self._xt_sj_rows = int(n), (None, None), (None, None)
        try:
            yield self
        finally:
            self._pre_apart, self._last_pre = 0, None
            self._rows_cache, self._xt_sj_rows = saved

    def weighted_rows(self, offset_ui: float = 0.0, wanted=None):
        """(weight, distribution) of every row the BER averages, the weights summing to
        1: the jitter rows here (an interleaved ADC's engine adds its output phases).
        ``wanted``: the indices of the rows the caller will read; an engine may give the
        others as (weight, None) where it can leave them unformed (this one forms all)."""
        yield from self.row_distributions(offset_ui)

    def _distribution_of(self, f, jvar, offset_ui, tap_offsets_ui, delta, grid_step,
                         parity=0):
        part = self._isi_part(f, jvar, offset_ui, tap_offsets_ui, delta, grid_step, parity)
        if self.isi_log is not None:   # a caller keeps the parts (finished again later)
            self.isi_log.append(part)
        dist = self._from_isi(part)
        if self._pre_apart:
            dist.precursor_values = self._last_pre
        return dist

    def _isi_part(self, f, jvar, offset_ui, tap_offsets_ui, delta, grid_step, parity=0):
        """A row's distribution before its noise mixture (the ISI pmf, its grid and the
        Gaussian terms), which :meth:`_from_isi` finishes."""
        # the victim's sampling offsets move the aggressors' samples too (serdes.crosstalk)
        self._xt_offsets = offset_ui + (np.zeros(self.w.shape[0]) if tap_offsets_ui is None
                                        else np.asarray(tap_offsets_ui, dtype=np.float64))
        common = offset_ui + (float(np.mean(tap_offsets_ui))
                              if tap_offsets_ui is not None else 0.0)
        tx_mix = None
        if self.tx is not None:  # the TX jitter's mean response and its variance classes
            df, dev = self.tx.terms(common, parity)
            f = f + df
            # an engine with its own ISI components (the interleaved ADC's) gets the
            # TX jitter as Gaussian only
            own = type(self)._components is StatisticalEngine._components
            tx_mix = self.tx.split(dev, None if own else 0)
            if not own:
                tx_mix = None if tx_mix is None else (tx_mix[0], None, tx_mix[2])
        fd = float(f[self.d])
        nv_other, rj_mean = self._noise_var_per_level(f, jvar)
        nv = nv_other + rj_mean + (tx_mix[0] if tx_mix is not None else 0.0)
        sig_min = float(np.sqrt(max(nv.min(), 0.0)))
        floor = 1e-6 * max(abs(fd), 1e-3)
        sig_ref = max(sig_min, floor)
        if delta is None:
            delta = sig_ref / self.resolution
        resid = self._residual(f)
        spread = float(np.sum(np.abs(resid))) * float(np.max(np.abs(self.levels)))
        spread += (0.5 * self.lsb * float(np.sum(np.abs(self.w)))) if self.lsb else 0.0
        spread += self._crosstalk_spread
        if tx_mix is not None:
            spread += self.tx.spread(tx_mix[2])
        delta = max(delta, 2.0 * spread / self.max_bins)
        if grid_step is not None:
            delta = grid_step / max(1, math.ceil(grid_step / delta))
        if tx_mix is None or tx_mix[1] is None:
            values, probs, var_true, extra_gauss, _ = self._components(f, sig_ref, delta)
        else:  # the top TX-jitter cursors convolved with their data
            values, probs, var_true, extra_gauss, _ = self._components(f, sig_ref, delta,
                                                                       tx_mix[1:])
        pmf, k0 = isi_pmf(values, probs, delta)
        x = (k0 + np.arange(pmf.shape[0])) * delta
        mean = float(pmf @ x)
        var_grid = float(pmf @ (x - mean) ** 2)
        excess = var_grid - var_true   # what the linear split added
        gvar = nv + extra_gauss
        approx = False
        eff = gvar - excess
        lim = 0.25 * gvar
        if np.any(eff < lim):
            approx = True
            eff = np.maximum(eff, lim)
        eff = np.maximum(eff, floor ** 2)
        return (common, rj_mean, resid, pmf, k0, delta, eff, floor, fd, var_true, gvar,
                approx)

    def _from_isi(self, part) -> SlicerDistribution:
        """The distribution of an :meth:`_isi_part` with the RJ classes the engine takes
        now (joint with the ISI or per level, :meth:`_joint_rj_shift`)."""
        common, rj_mean, resid, pmf, k0, delta, eff, floor, fd, var_true, gvar, approx = part
        mix_s = mix_w = mix_b = None
        if self.rj is not None:
            shift = self._joint_rj_shift()
            if shift is not None:
                # V joint with the victim's ISI (serdes.engines.stat.rj_joint)
                return rj_joint_distribution(self, common, rj_mean, resid, pmf, k0, delta,
                                             eff, floor, fd, var_true, gvar, approx, shift)
            mix = self.rj.mixture(common, rj_mean)
            total = np.maximum((eff - rj_mean)[:, None] + mix.var, floor ** 2)
            mix_s, mix_b = skewed_components(total, mix.k3)
            mix_s, mix_b, mix_w = merge_close_rows(mix_s, mix_b, mix.weights, MERGE_REL)
        return SlicerDistribution(mix_sigmas=mix_s, mix_weights=mix_w, mix_betas=mix_b,
                                  pmf=pmf, k0=int(k0), delta=float(delta),
                                  means=fd * self.levels, sigmas=np.sqrt(eff),
                                  levels=self.levels, thresholds=self.thresholds,
                                  bit_errors=self.bit_errors, isi_var=var_true,
                                  noise_var=gvar, approximate=approx)

    # -- error rates ---------------------------------------------------------------------
    def ber(self, offset_ui: float = 0.0, *, error_estimate: bool = False) -> StatBer:
        """BER, SER and per-eye BER at a sampling-phase offset (UI), jitter-averaged."""
        tot = ser = mse = 0.0
        per_eye = np.zeros(self.m_levels - 1)
        for wq, dist in self.row_distributions(offset_ui):
            P = dist.decision_matrix()
            tot += wq * float((P * self.bit_errors).sum() / (dist.m * dist.bits_per_symbol))
            ser += wq * float(P.sum() / dist.m)
            per_eye += wq * dist.ber_per_eye()
            fd = float(dist.means[-1] / dist.levels[-1])
            # slicer error v - a: (f_d - 1) a + ISI + quantization + Gaussian noise
            mse += wq * (self.es * (fd - 1.0) ** 2 + dist.isi_var + float(np.mean(dist.noise_var)))
        d0 = self.distribution(offset_ui)
        isi_rms = float(np.sqrt(self.es * np.sum(self._residual(self.response(offset_ui)[0]) ** 2)))
        sndr = 10 * np.log10(self.es / mse)
        rel = float("nan")
        if error_estimate:
            coarse = StatisticalEngine(self.system, self.taps, resolution=self.resolution / 2,
                                       dd_ui=self.dd_ui, jitter_points=self.jitter_points,
                                       quantization=self.quantization,
                                       max_bins=self.max_bins).ber(offset_ui).ber
            # the error falls as resolution^-3: the fine one is ~1/8 of the difference
            rel = abs(coarse - tot) / 7.0 / tot if tot > 0 else 0.0
        return StatBer(offset_ui=float(offset_ui), ber=float(tot), ser=float(ser),
                       ber_per_eye=per_eye, eye_names=self.eye_names, sndr_db=float(sndr),
                       sigma=np.sqrt(d0.noise_var), isi_rms=isi_rms,
                       rel_error=rel)


    # -- views (serdes.engines.stat.views, serdes.engines.stat.clip; loaded when first
    # asked for: the statistical BER alone, the text summary's, needs neither) -------
    def bathtub_horizontal(self, n_phases: int = 64, span_ui: float = 1.0) -> Bathtub:
        """BER per eye (at its slicer threshold) and total BER vs sampling phase."""
        from serdes.engines.stat import views

        return views.bathtub_horizontal(self, n_phases, span_ui)

    def bathtub_vertical(self, offset_ui: float = 0.0, n_points: int = 401,
                         span: float | None = None) -> Bathtub:
        """Per-eye error rate vs threshold offset from each slicer threshold."""
        from serdes.engines.stat import views

        return views.bathtub_vertical(self, offset_ui, n_points, span)

    def eye(self, n_phases: int = 64, n_bins: int = 256, y_range: float = 1.3) -> StatEye:
        """Statistical eye: the eye map over one UI of phase x n_bins slicer voltages."""
        from serdes.engines.stat import views

        return views.eye(self, n_phases, n_bins, y_range)

    def eye_opening(self, targets=DEFAULT_TARGETS, offset_ui: float = 0.0,
                    n_phases: int = 64, vertical: Bathtub | None = None,
                    horizontal: Bathtub | None = None) -> EyeOpening:
        """Eye height (at the phase offset) and eye width (at the slicer threshold) of
        every eye at each target BER."""
        from serdes.engines.stat import views

        return views.eye_opening(self, targets, offset_ui, n_phases, vertical, horizontal)

    def clip_probability(self, offset_ui: float = 0.0) -> float:
        """P(|ADC input| > full scale / 2) at the phase (clipping is not modelled in the
        error rates; this says whether it matters)."""
        from serdes.engines.stat import clip

        return clip.clip_probability(self, offset_ui)
