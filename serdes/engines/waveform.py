"""Waveform engine: the oversampled CTLE/AFE output and its jittered samples.

The waveform at the ADC input is formed on the fine grid (``samples_per_ui`` per UI):
w(t) = sum_n a_n p(t - nT) + n(t), with n(t) the RX-input white noise (one-sided PSD
eta0, i.e. variance eta0 fs/2 per fine sample) filtered by the front end's impulse
response. The ADC samples it at t = kT + phi + j_k, with the sampling jitter applied
where it happens: at the sampling instant, by interpolating the waveform. Samples come
out with a latency of ``latency`` UIs so that a late jittered instant never needs a
waveform sample that has not been formed yet.

The ADC samples (``__call__``) are that interpolation evaluated without forming the
whole fine grid: the signal as the symbols times the interpolated pulse, the noise only
at the fine offsets the instants reach (:mod:`serdes.kernels.wave`,
:mod:`serdes.engines.wave_noise`); ``waveform`` forms the full grid (analog eye).
"""

from __future__ import annotations

import numpy as np

from serdes import rng
from serdes.engines.crosstalk import crosstalk_front_end
from serdes.engines.pulse import Jitter
from serdes.engines.wave_noise import SampledNoise
from serdes.kernels.fir import upsample_pulse_sum
from serdes.kernels.wave import polyphase_rows, sample_waveform

WAVE_NOISE = 16  # stream id of the fine-rate noise
NOISE_BLOCK_UI = 2048  # the filtered noise is formed in fixed blocks of this many UIs


class WaveformFrontEnd:
    """Symbols of UIs k0..k0+n-1 -> ADC-input samples of UIs k0-G .. k0+n-1-G."""

    # a split run's ranges (serdes.parallel.plan): at most 16 blocks (1 M symbols, about
    # 1-2 s here against the pulse engine's 128 blocks in about 1 s), so a Ctrl-C is
    # answered within a range (128 blocks took 8-17 s); each range's warm-up (about 5500
    # UI and one 7168-UI noise block) is then about 1 % of it
    range_blocks_max = 16

    def __init__(self, link, seed: int, *, noise: bool = True, tx_jitter=None):
        self.pulse = link.pulse
        self.m = link.m
        # TX jitter (serdes.txjitter.TxJitter) moves each symbol's pulse in ``waveform``
        # (the analog eye); the ADC samples (``__call__``) do not model it
        self._tx = None
        if tx_jitter is not None and tx_jitter.active:
            from serdes.txjitter import TxJitterSource

            self._tx = TxJitterSource(tx_jitter, link.ui_s, seed)
            self._s_hist = np.zeros(self.pulse.n_ui - 1)
        self.jitter = Jitter(link, seed)
        self.latency = int(np.ceil(self.jitter.max_ui)) + 2
        # the aggressors' sums at the sampling instants (not part of waveform())
        self.crosstalk = crosstalk_front_end(link, self.jitter)
        eta0 = link.impairments.eta0_v2_per_hz
        self.noise_sigma = np.sqrt(eta0 / (2.0 * link.dt_s)) if noise else 0.0
        self.h_rx = link.h_rx_impulse
        # the noise filter as one FFT product per block, the filter's FFT computed once,
        # on first use (circular convolution of length >= the block with its history:
        # the valid part does not wrap)
        n_ext = NOISE_BLOCK_UI * self.m + self.h_rx.shape[0] - 1
        self._n_fft = 1 << int(np.ceil(np.log2(n_ext)))
        self._h_fft = None
        self._noise_rng = rng.BlockRNG(seed, WAVE_NOISE)
        self._a_hist = np.zeros(self.pulse.n_ui - 1)
        self._n_hist = np.zeros(self.h_rx.shape[0] - 1)
        self._nz = np.zeros(0)   # filtered noise formed but not used yet
        self._nz0 = 0            # fine index of its first sample
        self._noise_blocks = 0   # blocks formed so far
        # the ADC samples: fine offsets dmin..dmax of a UI reachable by the 4 points
        # around an instant (the bound on |offset| widened by the rounding of its sum)
        m, ph = self.m, self.pulse.phase
        if self.jitter.active:
            reach = self.jitter.max_ui * m * (1 + 1e-12)
            self._dmin, self._dmax = int(np.floor(ph - reach)) - 1, int(np.floor(ph + reach)) + 2
        else:
            self._dmin = self._dmax = ph
        self._rows, self._jhi = polyphase_rows(self.pulse.fine, m, self._dmin, self._dmax)
        self._sym = np.zeros(self.latency + self._jhi + 1)
        self._sampled = SampledNoise(self.h_rx, m, self.noise_sigma,
                                     rng.BlockRNG(seed, WAVE_NOISE), self._dmin,
                                     self._dmax) if self.noise_sigma > 0 else None

    def waveform(self, a: np.ndarray, k0: int) -> np.ndarray:
        """Fine-grid ADC-input waveform of UIs k0..k0+n-1 (n*m samples): sample r of UI k
        is at t = kT + (r - phase) dt relative to the symbol's sampling instant. With TX
        jitter, symbol n's pulse starts tau_n later (calls in order, back to back)."""
        n = a.shape[0]
        a_ext = np.concatenate([self._a_hist, a])
        self._a_hist = a_ext[a_ext.shape[0] - self._a_hist.shape[0]:].copy()
        shift = None
        if self._tx is not None:   # each symbol's transmit-time offset, in fine samples
            shift = np.concatenate([self._s_hist, self._tx.offsets(k0, n) * self.m])
            self._s_hist = shift[shift.shape[0] - self._s_hist.shape[0]:].copy()
        w = upsample_pulse_sum(a_ext, self.pulse.fine, self.m, self.pulse.n_ui, shift)
        if self.noise_sigma > 0:
            w += self._noise(k0 * self.m, n * self.m)
        return w

    def _noise(self, f0: int, nf: int) -> np.ndarray:
        """Filtered noise of fine samples f0..f0+nf-1 (calls in order, back to back).
        It is formed in fixed blocks of NOISE_BLOCK_UI UIs, whatever the calls ask for,
        so the rounding of the FFT convolution, and with it every sample, does not
        depend on the chunk size. (One FFT product per block with the filter's FFT kept:
        equal to scipy.signal.oaconvolve's valid part to rounding, tests/test_waveform.py.)"""
        block = NOISE_BLOCK_UI * self.m
        if self._h_fft is None:
            self._h_fft = np.fft.rfft(self.h_rx, self._n_fft)
        # the new blocks are joined once: appending them one by one copied the chunk's
        # noise again for every block (quadratic in the chunk length)
        parts, have = [self._nz], self._nz.shape[0]
        while self._nz0 + have < f0 + nf:
            white = self.noise_sigma * self._noise_rng.normal(self._noise_blocks * block,
                                                              block)
            ext = np.concatenate([self._n_hist, white])
            self._n_hist = ext[ext.shape[0] - self._n_hist.shape[0]:].copy()
            full = np.fft.irfft(np.fft.rfft(ext, self._n_fft) * self._h_fft, self._n_fft)
            parts.append(full[self.h_rx.shape[0] - 1: ext.shape[0]])
            have += parts[-1].shape[0]
            self._noise_blocks += 1
        if len(parts) > 1:
            self._nz = np.concatenate(parts)
        i = f0 - self._nz0
        out = self._nz[i:i + nf]
        self._nz = self._nz[i + nf:].copy()
        self._nz0 = f0 + nf
        return out

    def __call__(self, a: np.ndarray, k0: int) -> np.ndarray:
        n, m, g = a.shape[0], self.m, self.latency
        a_ext = np.concatenate([self._sym, a])
        a0 = k0 - self._sym.shape[0]
        self._sym = a_ext[a_ext.shape[0] - self._sym.shape[0]:].copy()
        u0 = k0 - g  # first output UI
        if self.jitter.active:
            offs = self.jitter.offsets_ui(u0, n) * m
        else:
            offs = np.zeros(n)
        S, s0, col = None, 0, None
        if self._sampled is not None:
            S, s0 = self._sampled.window(u0 + self._dmin // m, u0 + n - 1 + self._dmax // m)
            col = self._sampled.col
        x = sample_waveform(a_ext, a0, self._rows, self._dmin, self._jhi, self.pulse.phase,
                            offs, u0, m, S, s0, col)
        if self.crosstalk is not None:
            x += self.crosstalk(u0, n)
        return x
