"""numba kernels of the 802.3dj (Annex 178A.1.7.6) quantization noise: the clipping
amplitude V_qc of the signal at the RX FFE input and a cheap lower bound on it.

V_qc is the amplitude whose lower tail holds P_qc / 2 (178A-30) of the noisy signal
sum_n h_n x_n + G, x_n independent and uniform on the L levels 2l/(L-1) - 1, every UI
sample h_n of the pulse at the sampling phase (the cursor included), G Gaussian of
variance sigma^2. As in PyChOpMarg 3.4 (``NoiseCalc.quant_step``, its optimisation
setting): a centred grid of ``npts`` (odd) points over +-(sum |h_n| + 10 sigma), samples
with |h_n| <= step / 2 dropped, each level's value rounded to the grid (noise.delta_pmf),
the Gaussian sampled on the same grid and normalised, and V_qc = -y at the first grid
point where the CDF reaches P_qc / 2.

Lower bound (used to prune the search, serdes/com/mmse_grid.py): the gridded distribution
is symmetric, so for any m samples P(sum >= sum_{those m} g_n) >= L^-m / 2, g_n >=
|h_n| - step/2 the gridded value at the largest level; when L^-m >= P_qc, V_qc >= the
sum of the m largest (|h_n| - step/2)_+ over any subset of the samples, with any upper
bound on the step.
"""

from __future__ import annotations

import math

import numpy as np
from numba import njit

from serdes.kernels import args as _a

__all__ = ["v_qc", "v_qc_lower", "n_lower"]


@njit(cache=True)
def _cdf(pmf, lo, hi, gc, c, npts, i):
    """CDF at grid point i of pmf (nonzero on lo..hi) convolved ('same') with the
    Gaussian of cumulative gc: sum over i' <= i of sum_j pmf[j] g[i' - j + c]."""
    t = 0.0
    for j in range(lo, hi + 1):
        pj = pmf[j]
        if pj == 0.0:
            continue
        khi = i - j + c
        if khi < 0:
            continue
        if khi > npts - 1:
            khi = npts - 1
        klo = c - j
        a = gc[khi]
        if klo > 0:
            if khi < klo:
                continue
            a -= gc[klo - 1]
        t += pj * a
    return t


@njit(cache=True)
def _v_qc(h, sigma, levels, p_half, npts):
    n = h.shape[0]
    s = 0.0
    for i in range(n):
        s += abs(h[i])
    support = s + 10.0 * sigma
    if support <= 0.0:
        return 0.0
    c = npts // 2
    ystep = 2.0 * support / (npts - 1)
    pmf = np.zeros(npts)
    tmp = np.zeros(npts)
    pmf[c] = 1.0
    lo = c
    hi = c
    sh = np.empty(levels, dtype=np.int64)
    for i in range(n):
        x = h[i]
        if not abs(x) > ystep / 2.0:
            continue
        smin = 0
        smax = 0
        for l in range(levels):
            lv = 2.0 * l / (levels - 1) - 1.0
            sh[l] = np.int64(np.round(x * lv / ystep))
            if l == 0 or sh[l] < smin:
                smin = sh[l]
            if l == 0 or sh[l] > smax:
                smax = sh[l]
        nlo = lo + smin
        nhi = hi + smax
        for j in range(nlo, nhi + 1):
            tmp[j] = 0.0
        for l in range(levels):
            for j in range(lo, hi + 1):
                tmp[j + sh[l]] += pmf[j]
        for j in range(lo, hi + 1):
            pmf[j] = 0.0
        for j in range(nlo, nhi + 1):
            pmf[j] = tmp[j] / levels
        lo = nlo
        hi = nhi
    # cumulative of the sampled, normalised Gaussian (the full grid's width, as a
    # 'same' convolution with a kernel of npts points)
    gc = np.empty(npts)
    if sigma > 0.0:
        t = 0.0
        for k in range(npts):
            y = (k - c) * ystep
            t += math.exp(-y * y / (2.0 * sigma * sigma))
            gc[k] = t
    else:
        for k in range(npts):
            gc[k] = 1.0 if k >= c else 0.0

    total = _cdf(pmf, lo, hi, gc, c, npts, npts - 1)
    target = p_half * total
    a = 0
    b = npts - 1              # cdf(b) >= target
    if _cdf(pmf, lo, hi, gc, c, npts, 0) >= target:
        return -(0 - c) * ystep
    while b - a > 1:
        mid = (a + b) // 2
        if _cdf(pmf, lo, hi, gc, c, npts, mid) >= target:
            b = mid
        else:
            a = mid
    return -(b - c) * ystep


@njit(cache=True)
def _v_qc_lower(h, m, dy_half, top):
    """Sum of the m largest (|h_n| - dy_half)_+ (top: scratch of m values)."""
    k = 0
    for i in range(h.shape[0]):
        v = abs(h[i]) - dy_half
        if v <= 0.0:
            continue
        if k < m:
            j = k
            k += 1
        elif v > top[m - 1]:
            j = m - 1
        else:
            continue
        while j > 0 and top[j - 1] < v:
            top[j] = top[j - 1]
            j -= 1
        top[j] = v
    s = 0.0
    for j in range(k):
        s += top[j]
    return s


def n_lower(levels: int, p_qc: float) -> int:
    """Largest m with levels^-m >= p_qc (the number of samples in the lower bound)."""
    m = 0
    while float(levels) ** -(m + 1) >= p_qc:
        m += 1
    return m


def v_qc(h, sigma: float, levels: int, p_qc: float, npts: int = 2001) -> float:
    """Clipping amplitude V_qc (V) of sum h_n x_n + N(0, sigma^2) at tail P_qc / 2."""
    h = _a.array("h", h, finite=True)
    npts = _a.integer("npts", npts, lo=3) | 1
    p = _a.real("p_qc", p_qc, positive=True)
    return float(_v_qc(h, _a.real("sigma", sigma, nonneg=True),
                       _a.integer("levels", levels, lo=2), p / 2.0, npts))


def v_qc_lower(h, sigma: float, levels: int, p_qc: float, npts: int = 2001,
               support_max: float | None = None) -> float:
    """Lower bound on :func:`v_qc` from the samples ``h`` (any subset of the pulse's UI
    samples); ``support_max`` an upper bound on sum |h_n| over all samples (default:
    this h's)."""
    h = _a.array("h", h, finite=True)
    npts = _a.integer("npts", npts, lo=3) | 1
    m = n_lower(_a.integer("levels", levels, lo=2), _a.real("p_qc", p_qc, positive=True))
    s = float(np.abs(h).sum()) if support_max is None else float(support_max)
    dy = 2.0 * (s + 10.0 * _a.real("sigma", sigma, nonneg=True)) / (npts - 1)
    if m == 0:
        return 0.0
    return float(_v_qc_lower(h, m, dy / 2.0, np.empty(m)))
