"""Pulse engine: ADC-input samples straight from the symbols and the pulse response.

x_k = sum_j a_{k-j} p(jT + phi + j_k) + n_k. No oversampled waveform is formed: without
jitter this is a symbol-spaced FIR over the sampled pulse. With jitter the exact sum
interpolates each tap (4-point Lagrange) from the fine-grid pulse at the jittered
instant (``serdes.kernels.jitter.pulse_sum_rows``); when the error bound of a 2nd-order
Taylor expansion around the sampling phase is small against the noise
(:data:`TAYLOR_TOL`), the engine runs the expansion instead: three symbol FIRs (p, p',
p''), the slow jitter (SJ, dual-Dirac) removed per block of :data:`TAYLOR_BLOCK` UI by
re-sampling the three tap sets at the block's slow offset. The coloured RX noise n_k is
unit white noise through the symbol-rate FIR of :class:`serdes.pulse_response.Noise`. Histories
are carried between chunks.
"""

from __future__ import annotations

import numpy as np

from serdes import rng
from serdes.kernels import jitter as kj
from serdes.engines.taylor_rule import TAYLOR_TOL, taylor_scales
from serdes.kernels.fir import fir_valid

# slow-jitter block (UI): divides the dual-Dirac hold and the RNG block
TAYLOR_BLOCK = 1024


class Jitter:
    """RX sampling-time offsets in UI for absolute sample indices: random (Gaussian, rms
    ``rj_ui``, independent per sample), sinusoidal (``sj_ui`` at ``sj_hz``) and
    dual-Dirac (+-``dd_ui`` with probability 1/2 each; the sign is held for
    ``DD_HOLD_UI`` UI, slow against the equalizer span, which is how the statistical
    engine treats it)."""

    DD_HOLD_UI = 4096

    def __init__(self, link, seed: int):
        n = link.impairments
        self.rj_ui = n.rj_ui
        self.sj_ui = n.sj_ui
        self.dd_ui = n.dd_ui
        self.sj_rad_per_ui = 2 * np.pi * n.sj_hz * link.ui_s
        self._rj = rng.BlockRNG(seed, rng.RJ)
        self._dd = rng.BlockRNG(seed, rng.DUAL_DIRAC)
        self._sj_phase = 2 * np.pi * rng.BlockRNG(seed, rng.SJ_PHASE).uniform_scalar()

    @property
    def active(self) -> bool:
        return self.rj_ui > 0 or self.sj_ui > 0 or self.dd_ui > 0

    @property
    def max_ui(self) -> float:
        """A bound on |offset| (RJ taken to 8 sigma; beyond is clipped)."""
        return 8 * self.rj_ui + self.sj_ui + self.dd_ui

    @property
    def slow(self) -> bool:
        return self.sj_ui > 0 or self.dd_ui > 0

    def slow_max_ui(self) -> float:
        """A bound on |slow offset| (SJ + dual-Dirac)."""
        return self.sj_ui + self.dd_ui

    def slow_residual_ui(self, block: int) -> float:
        """A bound on |SJ(k) - SJ(block centre)| inside a block of ``block`` UI."""
        return self.sj_ui * min(self.sj_rad_per_ui * block / 2, 2.0) if self.sj_ui > 0 else 0.0

    def block_slow_ui(self, b0: int, nb: int, block: int) -> np.ndarray:
        """The slow offset (dual-Dirac + SJ at the block centre) of blocks b0..b0+nb-1 of
        ``block`` UI; ``block`` divides DD_HOLD_UI, so the dual-Dirac sign is that of the
        whole block (zero before the first symbol, like the per-sample offsets)."""
        b = b0 + np.arange(nb)
        out = np.zeros(nb)
        if self.dd_ui > 0:
            held = (b * block) // self.DD_HOLD_UI
            pos = held >= 0
            if pos.any():
                first = int(held[pos][0])
                signs = self._dd.integers(first, int(held[-1]) - first + 1, 2)
                out[pos] += self.dd_ui * (2.0 * signs[held[pos] - first] - 1.0)
        if self.sj_ui > 0:
            c = (b * block + block / 2).astype(np.float64)
            out += self.sj_ui * np.sin(self.sj_rad_per_ui * c + self._sj_phase)
        return out

    def offsets_fine(self, k0: int, n: int, m: int) -> np.ndarray:
        """``offsets_ui(k0, n) * m`` (fine samples, m per UI), the same values; random
        jitter alone (the default) in one compiled pass instead of five NumPy passes."""
        if self.slow or self.rj_ui <= 0:
            return self.offsets_ui(k0, n) * m
        neg = min(max(-k0, 0), n)
        return kj.rj_offsets(self._rj.normal(k0 + neg, n - neg), self.rj_ui, m, neg)

    def offsets_ui(self, k0: int, n: int) -> np.ndarray:
        out = np.zeros(n)
        if self.rj_ui > 0:
            neg = min(max(-k0, 0), n)  # instants before the first symbol have no jitter
            out[neg:] += np.clip(self.rj_ui * self._rj.normal(k0 + neg, n - neg),
                                 -8 * self.rj_ui, 8 * self.rj_ui)
        if self.dd_ui > 0:
            out += self.dd_offsets_ui(k0, n)
        if self.sj_ui > 0:
            k = k0 + np.arange(n, dtype=np.float64)
            out += self.sj_ui * np.sin(self.sj_rad_per_ui * k + self._sj_phase)
        return out

    def dd_offsets_ui(self, k0: int, n: int) -> np.ndarray:
        """The dual-Dirac part of :meth:`offsets_ui` (+-dd_ui, each sign held for
        DD_HOLD_UI UI; zeros without it): the same values, from the same stream."""
        out = np.zeros(n)
        if self.dd_ui > 0:
            neg = min(max(-k0, 0), n)
            held = (k0 + neg + np.arange(n - neg)) // self.DD_HOLD_UI
            first = int(held[0]) if held.size else 0
            signs = self._dd.integers(first, int(held[-1]) - first + 1 if held.size else 0, 2)
            out[neg:] += self.dd_ui * (2.0 * signs[held - first] - 1.0)
        return out


class PulseFrontEnd:
    """Symbols (levels incl. TX noise) of UIs k0..k0+n-1 -> ADC-input samples of the same
    UIs (latency 0). ``path``: "fir" (no jitter), "taylor" or "exact"; ``taylor_bound``
    and ``taylor_tol`` (volts) are what decided it."""

    latency = 0

    def __init__(self, link, seed: int):
        self.pulse = link.pulse
        self.h = link.pulse.taps
        self.noise_fir = link.noise.fir
        self.jitter = Jitter(link, seed)
        self._noise_rng = rng.BlockRNG(seed, rng.RX_NOISE)
        self._a_hist = np.zeros(self.h.shape[0] - 1)
        self._w_hist = np.zeros(self.noise_fir.shape[0] - 1)
        self.path = "fir"
        self.taylor_bound = self.taylor_tol = float("nan")
        # an interleaved ADC whose lanes sample differently: per-lane pulses (serdes.tiadc;
        # imported only for an analog ADC model, as the aggressors' module below)
        self.lanes = None
        if getattr(link.adc, "analog", False):
            from serdes.tiadc.lanes import lane_front_end

            self.lanes = lane_front_end(link, self.jitter, seed)
        if self.lanes is not None:
            self.path = self.lanes.path
        elif self.jitter.active:
            self._plan_jitter(link)
        self.crosstalk = None  # no aggressors
        if link.aggressor_pulses:
            from serdes.engines.crosstalk import crosstalk_front_end

            self.crosstalk = crosstalk_front_end(link, self.jitter)

    def _plan_jitter(self, link):
        m, n_ui, jit = self.pulse.m, self.pulse.n_ui, self.jitter
        pad = (int(np.ceil(jit.max_ui)) + 2) * m
        p_padded = np.concatenate([np.zeros(pad), self.pulse.fine, np.zeros(pad)])
        self._phase_padded = float(self.pulse.phase + pad)
        a_max, sigma = taylor_scales(link)
        delta_ui = 8 * jit.rj_ui + jit.slow_residual_ui(TAYLOR_BLOCK)
        self.taylor_bound = kj.taylor_error_bound(p_padded, m, self._phase_padded, n_ui,
                                                  delta_ui * m, jit.slow_max_ui() * m, a_max)
        self.taylor_tol = TAYLOR_TOL * sigma
        if self.taylor_bound <= self.taylor_tol:
            self.path = "taylor"
            self._derivs = kj.derivatives(p_padded)
            if not jit.slow:
                self._taps = kj.taylor_taps(self._derivs, self._phase_padded, m, n_ui,
                                            np.zeros(1))
        else:
            self.path = "exact"
            reach = jit.max_ui * m
            self._first = int(np.floor(self._phase_padded - reach)) - 1
            count = int(np.floor(self._phase_padded + reach)) + 2 - self._first + 1
            self._rows = kj.pulse_rows(p_padded, m, n_ui, self._first, count)

    def _jittered(self, a_ext, k0, n):
        off = self.jitter.offsets_fine(k0, n, self.pulse.m)
        if self.path == "exact":
            return kj.pulse_sum_rows(a_ext, self._rows, self._first, self._phase_padded, off)
        if not self.jitter.slow:
            return kj.pulse_sum_taylor(a_ext, self._taps, np.array([0, n]), off)
        B = TAYLOR_BLOCK
        b0, b1 = k0 // B, (k0 + n - 1) // B
        slow = self.jitter.block_slow_ui(b0, b1 - b0 + 1, B) * self.pulse.m
        seg = np.clip(np.arange(b0, b1 + 2) * B - k0, 0, n)
        seg[0], seg[-1] = 0, n
        taps = kj.taylor_taps(self._derivs, self._phase_padded, self.pulse.m,
                              self.pulse.n_ui, slow)
        delta = off - np.repeat(slow, np.diff(seg))
        return kj.pulse_sum_taylor(a_ext, taps, seg, delta)

    def __call__(self, a: np.ndarray, k0: int) -> np.ndarray:
        n = a.shape[0]
        a_ext = np.concatenate([self._a_hist, a])
        self._a_hist = a_ext[a_ext.shape[0] - self._a_hist.shape[0]:].copy()
        if self.lanes is not None:
            x = self.lanes(a_ext, k0, n)
        else:
            x = self._jittered(a_ext, k0, n) if self.path != "fir" else fir_valid(a_ext, self.h)
        if self.noise_fir.shape[0] > 1 or self.noise_fir[0] != 0:
            w_ext = np.concatenate([self._w_hist, self._noise_rng.normal(k0, n)])
            self._w_hist = w_ext[w_ext.shape[0] - self._w_hist.shape[0]:].copy()
            x += fir_valid(w_ext, self.noise_fir)
        if self.crosstalk is not None:
            x += self.crosstalk(k0, n)
        return x
