"""The waveform engine's filtered noise at the fine offsets its ADC instants can reach.

The RX-input white noise (one value per fine sample, stream ``WAVE_NOISE``) filtered by
the front end's impulse response h (L fine samples) is the same sequence the full
waveform carries (:meth:`WaveformFrontEnd._noise`), but the ADC only interpolates it
near its sampling instants: at fine offsets ``dmin..dmax`` of each UI (a few of the
``m``). So the noise is formed by overlap-save in large fixed blocks (one forward FFT
per block) and the inverse transform is evaluated only on those offset residues: the
residue-rho samples of a length-N circular output, full[lam m + rho], are the inverse
length-N/m DFT of G_rho[k] = e^{2 pi i k rho / N} / m * sum_q Y[k + q N/m] e^{2 pi i q rho / m}
(decimation in frequency), a small matrix product and R short inverse FFTs instead of
one of length N. Blocks are fixed (not the chunk), so the samples do not depend on the
chunk size. Equal to the full convolution to rounding (tests/test_wave_sampling.py).
"""

from __future__ import annotations

import numpy as np

BLOCK_TARGET = 1 << 18  # FFT length aimed at: overlap-save output per FFT cost is
                        # near its best from about 8 filter lengths on


class SampledNoise:
    """Rows of filtered noise: ``window(lo, hi)`` -> (S, s0) with S[u - s0, col[r]] the
    noise at fine sample u m + r for UIs lo..hi and the residues r of ``dmin..dmax``
    (calls with non-decreasing ``lo``; UIs before the first symbol are zero; a first
    call with ``lo`` > 0 starts at the block holding it)."""

    def __init__(self, h: np.ndarray, m: int, sigma: float, stream, dmin: int, dmax: int):
        self.h = np.ascontiguousarray(h, dtype=np.float64)
        self.m, self.sigma, self.stream = int(m), float(sigma), stream
        L = self.h.shape[0]
        self.residues = np.unique(np.arange(dmin, dmax + 1) % m)
        self.col = np.full(m, -1, dtype=np.int64)
        self.col[self.residues] = np.arange(self.residues.shape[0])
        # N = m M with M a power of two and N >= max(8 L, BLOCK_TARGET / 4)
        M = 2
        while m * M < max(8 * L, BLOCK_TARGET // 4, L + m):
            M *= 2
        self.n_fft, self.M = m * M, M
        self.block = ((self.n_fft - L + 1) // m) * m   # new fine samples per FFT
        self.nb = self.block // m                      # UIs per block
        # sigma folded into the filter: one pass less over every block
        self._h_fft = np.fft.rfft(self.sigma * self.h, self.n_fft)
        R = self.residues.shape[0]
        self.pruned = 2 * R <= m and m % 2 == 0
        if self.pruned:
            rho = (L - 1 + self.residues) % m
            self._shift = (L - 1 + self.residues) // m
            q = np.arange(m)
            E = np.exp(2j * np.pi * np.outer(rho, q) / m) / m
            # bins k + q M of the upper half (q >= m/2) are conj(Y[N/2 - (k + (q - m/2) M)])
            self._E_lo, self._E_hi = E[:, :m // 2].copy(), np.conj(E[:, m // 2:])
            k = np.arange(M // 2 + 1)
            self._tw = np.exp(2j * np.pi * np.outer(rho, k) / self.n_fft)
        # the block's input: L - 1 samples of history, the new white block, zeros to N
        self._ext = np.zeros(self.n_fft)
        self._blocks = 0
        self._S = None
        self._s0 = 0

    def _seek(self, b: int) -> None:
        """Start at block ``b``: its history (the last L - 1 white samples of block b - 1,
        drawn again by absolute position) set as :meth:`_form` would have left it, so
        the rows from there on are those of a run from UI 0, bit for bit, without
        forming the blocks before it (a split run's range, :mod:`serdes.parallel`)."""
        L, B = self.h.shape[0], self.block
        self._blocks = int(b)
        if b > 0 and L > 1:
            self._ext[B:B + L - 1] = self.stream.normal(b * B - (L - 1), L - 1)
        self._S = np.zeros((0, self.residues.shape[0]))
        self._s0 = self._blocks * self.nb

    def _form(self) -> np.ndarray:
        """The next block's rows (nb x R)."""
        L, m, N, B = self.h.shape[0], self.m, self.n_fft, self.block
        ext = self._ext
        ext[:L - 1] = ext[B:B + L - 1]
        ext[L - 1:L - 1 + B] = self.stream.normal(self._blocks * B, B)
        self._blocks += 1
        Y = np.fft.rfft(ext)
        Y *= self._h_fft
        if not self.pruned:
            full = np.fft.irfft(Y, N)
            return full[L - 1:L - 1 + B].reshape(self.nb, m)[:, self.residues]
        M, half, c = self.M, N // 2, self.M // 2 + 1
        lo = Y[:half].reshape(m // 2, M)[:, :c]
        hi = Y[::-1][:half].reshape(m // 2, M)[:, :c]
        G = self._E_lo @ lo
        G += np.conj(self._E_hi @ hi)
        G *= self._tw
        dec = np.fft.irfft(G, M, axis=1)   # R x M: dec[i, lam] = full[lam m + rho_i]
        rows = np.empty((self.nb, self.residues.shape[0]))
        for i, s in enumerate(self._shift):
            rows[:, i] = dec[i, s:s + self.nb]
        return rows

    def window(self, lo: int, hi: int):
        if self._S is None:
            if lo > 0:   # a range of a split run starts here: from the block holding lo
                self._seek(lo // self.nb)
            else:
                s0 = min(lo, 0)
                self._S, self._s0 = np.zeros((-s0, self.residues.shape[0])), s0
        drop = min(lo - self._s0, self._S.shape[0])
        if drop > 0:  # rows no later call needs (s0 + rows stays the formed blocks' end)
            self._S = self._S[drop:]
            self._s0 += drop
        parts, have = [self._S], self._s0 + self._S.shape[0]
        while have <= hi:
            parts.append(self._form())
            have += self.nb
        if len(parts) > 1:
            self._S = np.concatenate(parts)
        return self._S, self._s0
