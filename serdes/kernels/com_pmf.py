"""The COM delta distributions' accumulation (``serdes.com.noise.delta_pmf``): each
sample's L rounded values added to the running PMF, the same operations in the same
order as the NumPy loop it replaced (so the same bits), without its per-sample Python
overhead (a window eye of the C2M search forms 22 such PMFs of some hundred samples)."""

from __future__ import annotations

import numpy as np
from numba import njit

__all__ = ["accumulate"]


@njit(cache=True, nogil=True)
def _accumulate(sh, levels, pmf):
    """pmf (centred, odd length, a delta on entry) <- the PMF of sum_t x_t, x_t taking
    the grid values sh[t, :] with equal probability. False (pmf undefined) when the
    support leaves the grid."""
    npts = pmf.shape[0]
    c = npts // 2
    for i in range(npts):
        pmf[i] = 0.0
    pmf[c] = 1.0
    lo = c
    hi = c
    out = np.empty(npts)
    for t in range(sh.shape[0]):
        mn = sh[t, 0]
        mx = sh[t, 0]
        for li in range(1, levels):
            mn = min(mn, sh[t, li])
            mx = max(mx, sh[t, li])
        new_lo = lo + mn
        new_hi = hi + mx
        if new_lo < 0 or new_hi >= npts:
            return False
        n_out = new_hi - new_lo + 1
        for i in range(n_out):
            out[i] = 0.0
        seg = hi - lo + 1
        for li in range(levels):
            a = lo + sh[t, li] - new_lo
            for i in range(seg):
                out[a + i] += pmf[lo + i]
        for i in range(lo, hi + 1):
            pmf[i] = 0.0
        for i in range(n_out):
            pmf[new_lo + i] = out[i] / levels
        lo = new_lo
        hi = new_hi
    return True


def accumulate(sh: np.ndarray, levels: int, npts: int) -> np.ndarray | None:
    """The PMF on npts points (None when it does not fit) of the samples' rounded
    values ``sh`` (n x levels, grid steps)."""
    pmf = np.empty(npts)
    ok = _accumulate(np.ascontiguousarray(sh, dtype=np.int64), int(levels), pmf)
    return pmf if ok else None
