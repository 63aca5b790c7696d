"""The TX noise of several crosstalk aggressors as one Gaussian stream.

Each aggressor's symbol values carry white TX noise (sigma per value, its own seed's
stream), which reaches the victim's samples through its taps: ``sum_i nu_{k-i} c_i``.
For aggressors at a fixed phase these are independent stationary Gaussian processes, so
their sum is one, with the autocorrelation ``R = sigma^2 sum_a c_a * c_a~``. One white
stream through a factor ``h`` of R (``h * h~ = R``, the minimum-phase one from the
roots of R(z)) has exactly that law, at one Gaussian draw per UI instead of one per
aggressor and UI (about a third of the cost of 15 short aggressors). The factor is
checked against R (1e-9 of R[0]); when the check fails (R(z) badly conditioned) the
aggressors keep their own noise.

What changes against drawing each aggressor's noise: the realization (another stream:
``rng.BlockRNG(first aggressor's seed, XTALK_TX_NOISE)``), the first ``len(h)`` UIs of
the start-up transient, and the victim's RX jitter no longer moves this noise (its
first-order term ``offset x noise slope``, ~0.1 % of the aggressor at the default
SNR_TX, which the noise budget and the statistical engine leave out too). Walking
(ppm) aggressors, the FFT path and aggressors with their own TX jitter keep their own
noise. Samples are indexed by absolute UI and summed by the crosstalk kernel in a fixed
order, so they do not depend on the chunk size.
"""

from __future__ import annotations

import numpy as np

from serdes import rng
from serdes.kernels.xtalk import xtalk_add

XTALK_TX_NOISE = 110    # block-stream id of the combined stream
CHECK_TOL = 1e-9        # |h * h~ - R| <= this x R[0], else no combining


def autocorr(taps: np.ndarray) -> np.ndarray:
    """One-sided autocorrelation sum_i c_i c_{i+l}, l = 0 .. len - 1."""
    return np.correlate(taps, taps, mode="full")[taps.shape[0] - 1:]


def spectral_factor(r: np.ndarray) -> np.ndarray | None:
    """A real minimum-phase ``h`` with ``autocorr(h) == r`` (one-sided r), or None when
    the factor does not reproduce r to :data:`CHECK_TOL` of r[0]."""
    r = np.asarray(r, dtype=np.float64)
    if not r.shape[0] or not r[0] > 0:
        return None
    keep = np.nonzero(np.abs(r) > 1e-15 * r[0])[0]
    r = r[: keep[-1] + 1]
    n = r.shape[0]
    if n == 1:
        h = np.array([np.sqrt(r[0])])
    else:
        roots = np.roots(np.concatenate([r[::-1], r[1:]]))   # 2n - 2 roots, pairs (z, 1/z*)
        inside = roots[np.argsort(np.abs(roots))[: n - 1]]
        p = np.poly(inside)
        if np.max(np.abs(p.imag)) > 1e-9 * np.max(np.abs(p.real)):
            return None
        h = p.real
        h = h * np.sqrt(r[0] / float(h @ h))
    if np.max(np.abs(autocorr(h) - r)) > CHECK_TOL * r[0]:
        return None
    return h


class CombinedTxNoise:
    """``(out, k0, n)``: adds the combined TX noise of the given aggressors' taps to the
    samples of UIs k0 .. k0+n-1. ``taps``: each aggressor's fixed-phase taps; ``sigma``:
    the TX noise per symbol value; ``seed``: the stream's seed. ``fir`` is None when the
    factor failed its check (then do not use it)."""

    def __init__(self, taps: list, sigma: float, seed: int):
        r = np.zeros(max(t.shape[0] for t in taps))
        for t in taps:
            a = autocorr(np.asarray(t, dtype=np.float64))
            r[: a.shape[0]] += a
        h = spectral_factor(sigma ** 2 * r)
        self.fir = None if h is None else h[None, :].copy()
        self._rng = rng.BlockRNG(seed, XTALK_TX_NOISE)
        self._seg = np.zeros(2, dtype=np.int64)
        self._shift = np.zeros(1, dtype=np.int64)

    def add(self, out: np.ndarray, k0: int, n: int) -> None:
        L = self.fir.shape[1]
        lo = k0 - (L - 1)
        xi = np.zeros(n + L - 1)
        first = max(lo, 0)
        if first < k0 + n:
            xi[first - lo:] = self._rng.normal(first, k0 + n - first)
        self._seg[1] = n
        xtalk_add(out, xi, lo, k0, self._seg, self._shift, self.fir, self.fir[:0], out[:0])
