"""An upper bound on the C2M window's eye height (``serdes.com.eye.eye_over_window``),
in grid steps, for the search by the window's COM (``serdes.com.c2m_search``).

The window's eye pools, with weights w_j, the distribution of every offset j: level l
at its rounded mean ls[j, l] plus D_j, D_j the sum of a discretized Gaussian X_j
(symmetric, unimodal on the grid) and independent symmetric terms (ISI and dual-Dirac
samples, each taking its L rounded level values with equal probability). For any K of
those terms with sum S, and t >= 1 grid steps, P(X_j + rest >= t) >= P(X_j >= t) (adding
independent symmetric terms to a symmetric unimodal variable only raises its tail beyond
0), and P(. >= t) >= 1/2 for t <= 0; so

    P(D_j >= u) >= T_j(u) = sum_s P(S = s) (1/2 if u - s <= 0 else P(X_j >= u - s)),

with S's PMF exact. The top of eye n (the lowest grid point where the pooled level n + 1
reaches DER_0 from below) is then at most the lowest y with sum_j w_j T_j(ls[j, n+1] -
y) >= DER_0, its bottom at least the highest y with sum_j w_j T_j(y - ls[j, n]) >=
DER_0; the eye height, the smallest over the L - 1 eyes, is at most the lowest eye's
difference (an outer eye: an outer level's mean moves most over the window). The
Gaussian's variance may be any value at most the eye's (a smaller variance gives a
smaller tail); its PMF is normalised over the whole grid line, which makes each tail
at most the eye's grid-limited one.
"""

from __future__ import annotations

import math

import numpy as np
from numba import njit

from serdes.kernels import args as _a
from serdes.kernels.threads import run_chunks

__all__ = ["eye_height_bound"]


@njit(cache=True)
def _terms_pmf(sh, nt, levels, pmf, half):
    """PMF over -half..half (index + half) of the sum of nt terms, term t taking the
    grid values sh[t, :] with equal probability; returns the largest |value| reached."""
    for i in range(2 * half + 1):
        pmf[i] = 0.0
    pmf[half] = 1.0
    reach = 0
    tmp = np.empty(2 * half + 1)
    p_l = 1.0 / levels
    for t in range(nt):
        mx = 0
        for li in range(levels):
            mx = max(mx, abs(sh[t, li]))
        new_reach = reach + mx
        for i in range(half - new_reach, half + new_reach + 1):
            tmp[i] = 0.0
        for li in range(levels):
            d = sh[t, li]
            for i in range(half - reach, half + reach + 1):
                v = pmf[i]
                if v != 0.0:
                    tmp[i + d] += p_l * v
        for i in range(half - new_reach, half + new_reach + 1):
            pmf[i] = tmp[i]
        reach = new_reach
    return reach


@njit(cache=True)
def _gauss_ccdf(var, out):
    """out[u] <= P(X >= u), u = 0 .. len(out) - 1, X on the integers with P(X = k)
    proportional to exp(-k^2 / (2 var)) (var in grid steps^2; var <= 0: X = 0): the
    weights from u to len(out) - 1 only, over an upper bound on their sum over all k,
    sqrt(2 pi var) (1 + 3 exp(-2 pi^2 var)) (Poisson's summation; 1 below var = 1/4)."""
    n = out.shape[0]
    for u in range(n):
        out[u] = 0.0
    if not var > 0.0:
        out[0] = 1.0
        return
    if var >= 0.25:
        z = math.sqrt(2.0 * math.pi * var) * (1.0 + 3.0 * math.exp(-2.0 * math.pi ** 2 * var))
    else:
        e = math.exp(-1.0 / (2.0 * var))       # exp(-k^2 / 2v) <= e^k
        z = 1.0 + 2.0 * e / (1.0 - e)
    # the weights exp(-k^2 / 2v) by their ratios exp(-(2k + 1) / 2v) (two products a
    # step instead of an exponential; relative error about k x 1e-16)
    a = math.exp(-1.0 / (2.0 * var))
    b = a * a
    wk = 1.0
    r = a
    for k in range(n):
        out[k] = wk
        wk *= r
        r *= b
    acc = 0.0
    for k in range(n - 1, -1, -1):
        acc += out[k] / z
        out[k] = acc


@njit(cache=True)
def _tail(pmf, cge, reach, half, gcc, u, c):
    """T(u) = sum_s P(S = s) (1/2 if u - c s <= 0 else P(X >= u - c s)) for S on the
    lattice of c grid steps; cge[i] = P(S >= i - half) (0 beyond the support)."""
    ng = gcc.shape[0]
    lo = max(-reach, -((ng - 1 - u) // c))          # c s > u - ng
    hi = min(reach, (u - 1) // c)                   # c s <= u - 1
    tot = 0.0
    for s in range(lo, hi + 1):
        tot += pmf[half + s] * gcc[u - c * s]
    k = -((-u) // c)                                # the least s with c s >= u
    if k <= reach:
        tot += 0.5 * cge[half + max(k, -reach)]
    return tot


@njit(cache=True)
def _eh_bound(sh, nterms, ls, var, w, der, levels, half, ng, c):
    """One candidate: sh (J, K, L) int64 term values in units of c grid steps (the first
    nterms[j] rows of offset j used), ls (J, L) int64 level means (grid steps), var (J,)
    Gaussian variances in steps^2, w (J,) weights (summing to 1). Returns the eye
    height's bound in grid steps."""
    J = sh.shape[0]
    pmfs = np.zeros((J, 2 * half + 1))
    reach = np.zeros(J, dtype=np.int64)
    gccs = np.zeros((J, ng))
    cges = np.zeros((J, 2 * half + 1))
    lo_all = 0
    hi_all = 0
    for j in range(J):
        reach[j] = _terms_pmf(sh[j], nterms[j], levels, pmfs[j], half)
        _gauss_ccdf(var[j], gccs[j])
        acc = 0.0
        for i in range(2 * half, -1, -1):
            acc += pmfs[j, i]
            cges[j, i] = acc
        for li in range(levels):
            lo_all = min(lo_all, ls[j, li])
            hi_all = max(hi_all, ls[j, li])
    span = c * half + ng + 2
    # the eye height is the smallest of the L - 1 eyes', so any one eye's bound bounds
    # it: the lowest eye's (an outer level's mean moves most over the window, so an
    # outer eye is the smallest; the top one mirrors it but for the rounding).
    # Its top: the lowest y with sum_j w_j T_j(ls[j, 1] - y) >= der; its bottom: the
    # highest y with sum_j w_j T_j(y - ls[j, 0]) >= der, i.e. -z for the lowest z with
    # sum_j w_j T_j(-ls[j, 0] - z) >= der
    top = _lowest_reach(pmfs, cges, reach, half, gccs, w, ls[:, 1],
                        lo_all - span, hi_all + span, der, c)
    bot = -_lowest_reach(pmfs, cges, reach, half, gccs, w, -ls[:, 0],
                         -(hi_all + span), -(lo_all - span), der, c)
    return top - bot


@njit(cache=True)
def _lowest_reach(pmfs, cges, reach, half, gccs, w, base, lo, hi, der, c):
    """The lowest integer y in (lo, hi] with f(y) = sum_j w_j T_j(base[j] - y) >= der,
    by bisection (f grows with y; hi is taken to reach der, lo not: hi when nothing
    in the range does, lo + 1 when all of it does)."""
    while hi - lo > 1:
        mid = (lo + hi) // 2
        f = 0.0
        for j in range(w.shape[0]):
            f += w[j] * _tail(pmfs[j], cges[j], reach[j], half, gccs[j], base[j] - mid, c)
        if f >= der:
            hi = mid
        else:
            lo = mid
    return hi


@njit(cache=True, nogil=True)
def _eh_bounds(sh, nterms, ls, var, w, der, levels, half, ng, c, out, first, stride):
    """Rows first, first + stride, ... (threads.run_chunks: each writes its own)."""
    for r in range(first, sh.shape[0], stride):
        out[r] = _eh_bound(sh[r], nterms[r], ls[r], var[r], w, der, levels, half, ng, c)


def eye_height_bound(sh, nterms, ls, var, w, der: float, levels: int,
                     coarse: int = 1, threads: int | None = None) -> np.ndarray:
    """Bounds (grid steps, int64) for R candidates: sh (R, J, K, L) the chosen terms'
    rounded level values (grid steps), nterms (R, J) how many of the K are used, ls (R,
    J, L) the rounded level means, var (R, J) Gaussian variances (steps^2), w (J,) the
    window's weights (normalised here). ``coarse`` > 1: each term's values are taken
    down to a multiple of that many steps (a smaller sum: smaller tails, still a bound,
    a little looser) and the sums run over that coarser lattice. ``threads``: as
    :func:`serdes.kernels.threads.run_chunks` (the same bounds on any count)."""
    c = _a.integer("coarse", coarse, lo=1)
    sh = np.floor_divide(_a.array("sh", sh, dtype=np.int64, ndim=4), c)
    nterms = _a.array("nterms", nterms, dtype=np.int64, ndim=2)
    ls = _a.array("ls", ls, dtype=np.int64, ndim=3)
    var = _a.array("var", var, ndim=2, finite=True)
    w = _a.array("w", w, finite=True)
    levels = _a.integer("levels", levels, lo=2)
    w = np.ascontiguousarray(w / w.sum())
    reach = int(np.abs(sh).max(axis=3).sum(axis=2).max()) if sh.size else 0
    ng = int(12.0 * math.sqrt(max(float(var.max()), 0.0))) + 3 if var.size else 3
    out = np.empty(sh.shape[0], dtype=np.int64)
    run_chunks(_eh_bounds, (sh, nterms, ls, var, w, _a.real("der", der, positive=True),
                            levels, reach, ng, c, out), sh.shape[0], threads)
    return out
