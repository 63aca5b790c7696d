"""Pulse engine: ADC-input samples straight from the symbols and the pulse response.

x_k = sum_j a_{k-j} p(jT + phi + j_k) + n_k. No oversampled waveform is formed: without
jitter this is a symbol-spaced FIR over the sampled pulse, with jitter each tap is
interpolated (4-point Lagrange) from the fine-grid pulse at the jittered instant. The
coloured RX noise n_k is unit white noise through the symbol-rate FIR of
:class:`serdes.link.Noise`. Histories are carried between chunks.
"""

from __future__ import annotations

import numpy as np

from serdes import rng
from serdes.kernels.fir import fir_valid, pulse_sum_jitter


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

    def offsets_ui(self, k0: int, n: int) -> np.ndarray:
        out = np.zeros(n)
        if self.rj_ui > 0:
            neg = min(max(-k0, 0), n)  # instants before the first symbol have no jitter
            out[neg:] += np.clip(self.rj_ui * self._rj.normal(k0 + neg, n - neg),
                                 -8 * self.rj_ui, 8 * self.rj_ui)
        if self.dd_ui > 0:
            neg = min(max(-k0, 0), n)
            held = (k0 + neg + np.arange(n - neg)) // self.DD_HOLD_UI
            first = int(held[0]) if held.size else 0
            signs = self._dd.integers(first, int(held[-1]) - first + 1 if held.size else 0, 2)
            out[neg:] += self.dd_ui * (2.0 * signs[held - first] - 1.0)
        if self.sj_ui > 0:
            k = k0 + np.arange(n, dtype=np.float64)
            out += self.sj_ui * np.sin(self.sj_rad_per_ui * k + self._sj_phase)
        return out


class PulseFrontEnd:
    """Symbols (levels incl. TX noise) of UIs k0..k0+n-1 -> ADC-input samples of the same
    UIs (latency 0)."""

    latency = 0

    def __init__(self, link, seed: int):
        self.pulse = link.pulse
        self.h = link.pulse.taps
        self.noise_fir = link.noise.fir
        self.jitter = Jitter(link, seed)
        self._noise_rng = rng.BlockRNG(seed, rng.RX_NOISE)
        self._a_hist = np.zeros(self.h.shape[0] - 1)
        pad = (int(np.ceil(self.jitter.max_ui)) + 2) * self.pulse.m
        self._p_padded = np.concatenate([np.zeros(pad), self.pulse.fine, np.zeros(pad)])
        self._phase_padded = float(self.pulse.phase + pad)
        self._w_hist = np.zeros(self.noise_fir.shape[0] - 1)

    def __call__(self, a: np.ndarray, k0: int) -> np.ndarray:
        n = a.shape[0]
        a_ext = np.concatenate([self._a_hist, a])
        self._a_hist = a_ext[a_ext.shape[0] - self._a_hist.shape[0]:].copy()
        if self.jitter.active:
            off = self.jitter.offsets_ui(k0, n) * self.pulse.m
            x = pulse_sum_jitter(a_ext, self._p_padded, self.pulse.m, self._phase_padded,
                                 off, self.pulse.n_ui)
        else:
            x = fir_valid(a_ext, self.h)
        if self.noise_fir.shape[0] > 1 or self.noise_fir[0] != 0:
            w_ext = np.concatenate([self._w_hist, self._noise_rng.normal(k0, n)])
            self._w_hist = w_ext[w_ext.shape[0] - self._w_hist.shape[0]:].copy()
            x += fir_valid(w_ext, self.noise_fir)
        return x
