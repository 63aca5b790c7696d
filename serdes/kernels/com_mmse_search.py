"""numba kernels of the 802.3dj (Annex 178A) COM search: the MMSE RX FFE/DFE FOM of a
block of TX FFE settings at one CTLE setting (see serdes/com/mmse.py for the method), with
every @njit helper the search inlines: the Cholesky MMSE solve and the quantization noise's
clipping amplitude V_qc and its lower bound (no kernel may call an @njit helper of another
module: numba's on-disk cache would keep a stale inlined copy). The checking wrapper is
:func:`serdes.kernels.com_mmse.mmse_block`; V_qc's is :mod:`serdes.kernels.com_quant`.

Per TX setting c (all taps, cursor included; cc the products c_i c_j of the pairs):
the pulse peak (argmax of c @ S), each FEXT aggressor's phase of largest energy and its
UI-sample autocorrelation there (quadratic forms cc @ G), then for every sampling time
within +-M/2 of the peak: the victim's and its slope's autocorrelations at that phase
(cc @ G), the cursor and DFE rows of the convolution matrix (gathered UI samples), and
the MMSE solve of
:func:`serdes.com.mmse.solve_rows_batch` (the same steps: unit-cursor KKT, DFE tap
clipped and the FFE solved again, FFE taps clipped and renormalised) done with Cholesky
factorisation of the 16 x 16 matrix per solve. Returns the best FOM over the sampling times
and that sampling time.
"""

from __future__ import annotations

import math

import numpy as np
from numba import njit

__all__: list[str] = []

# The flags of the pair steps (_pair_row4 and the _q_one_dfe it calls), which only bound
# a FOM: their sums may be reordered and their multiply-adds fused (not nnan / ninf: the
# callers read a NaN or inf q as no bound). The bound is compared with a threshold
# through _SLACK_DB, 1e-9 dB, where these roundings are ~1e-13 dB (test), and the pair
# steps take about a tenth less time (docs/com.md, "Speed"). Only leaves get them: numba
# compiles a helper that sets no fastmath of its own with its caller's flags (the first
# compile of a signature wins), which would reach the Cholesky helpers the exact path
# shares. Everything an exact FOM, V_qc or the chosen taps come from keeps IEEE order,
# the same bits on every machine; only which sampling times the bound prunes could
# differ by rounding, and a pruned one is below the threshold either way.
_BOUND_MATH = {"reassoc", "contract"}


# -- the quantization noise's clipping amplitude (serdes/kernels/com_quant.py: method,
#    public wrappers) ------------------------------------------------------------------
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
def _qc_pmf(h, ystep, levels, npts):
    """The PMF (npts points of step ystep, centred) of sum_i h_i a_i, a_i uniform on the
    L levels in [-1, 1], each sample of |h_i| > ystep / 2 shifting by its levels' rounded
    grid points; returns (pmf, lo, hi), pmf zero off lo..hi. The PMF lives in the middle
    third of two zero-padded rows (a shift is at most (npts - 1) / 2 points): each
    sample's step reads the old row at its levels' shifts and writes the new one,
    new[j] = (old[j - s_0] + old[j - s_1] + ...) / L, the terms in level order as a
    scatter tmp[j + s_l] += pmf[j] adds them (the same numbers), in contiguous passes
    that vectorize (one pass for 2 and 4 levels, where / L is a product by 1 / L to the
    bit); the support only grows (the shifts of -x and x have both signs), so the writes
    cover the old values."""
    n = h.shape[0]
    c = npts // 2
    pad = npts
    buf = np.zeros((2, 3 * npts))
    cur = 0
    buf[0, pad + c] = 1.0
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
        w = nhi - nlo + 1
        src = buf[cur]
        dst = buf[1 - cur, pad + nlo:pad + nhi + 1]
        s0 = src[pad + nlo - sh[0]:pad + nlo - sh[0] + w]
        if levels == 4:     # one pass, the sums in level order; x * 0.25 is x / 4 exactly
            s1 = src[pad + nlo - sh[1]:pad + nlo - sh[1] + w]
            s2 = src[pad + nlo - sh[2]:pad + nlo - sh[2] + w]
            s3 = src[pad + nlo - sh[3]:pad + nlo - sh[3] + w]
            for j in range(w):
                dst[j] = (((s0[j] + s1[j]) + s2[j]) + s3[j]) * 0.25
        elif levels == 2:
            s1 = src[pad + nlo - sh[1]:pad + nlo - sh[1] + w]
            for j in range(w):
                dst[j] = (s0[j] + s1[j]) * 0.5
        else:
            for j in range(w):
                dst[j] = s0[j]
            for l in range(1, levels):
                sl = src[pad + nlo - sh[l]:pad + nlo - sh[l] + w]
                for j in range(w):
                    dst[j] += sl[j]
            for j in range(w):
                dst[j] /= levels
        cur = 1 - cur
        lo = nlo
        hi = nhi
    return buf[cur, pad:pad + npts], lo, hi


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
    pmf, lo, hi = _qc_pmf(h, ystep, levels, npts)
    # cumulative of the sampled, normalised Gaussian (the full grid's width, as a
    # 'same' convolution with a kernel of npts points)
    gc = np.empty(npts)
    if sigma > 0.0:
        t = 0.0
        for k in range(npts):
            y = (k - c) * ystep
            e = -y * y / (2.0 * sigma * sigma)
            if e > -750.0:      # below, exp is 0.0 and t stays as it is
                t += math.exp(e)
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


@njit(cache=True)
def _chol(a, n, lo):
    """Lower Cholesky factor of a[:n, :n] into lo; False if not positive definite."""
    return _chol_from(a, n, lo, 0)


@njit(cache=True)
def _chol_from(a, n, lo, k0):
    """_chol with the leading k0 rows of lo already the factor's (of the same leading
    block of a): the rows from k0 on, column by column, each entry by the same
    operations in the same order as the whole factorisation's."""
    for j in range(n):
        if j >= k0:
            s = a[j, j]
            for k in range(j):
                s -= lo[j, k] * lo[j, k]
            if not s > 0.0:
                return False
            lo[j, j] = np.sqrt(s)
        d = lo[j, j]
        for i in range(max(j + 1, k0), n):
            t = a[i, j]
            for k in range(j):
                t -= lo[i, k] * lo[j, k]
            lo[i, j] = t / d
    return True


@njit(cache=True)
def _chol_solve(lo, n, y, x):
    _forward_from(lo, n, y, x, 0)
    _back_solve(lo, n, x)


@njit(cache=True)
def _forward_from(lo, n, y, x, k0):
    """The forward pass of a Cholesky solve, L x = y, from row k0 on (x[:k0] already
    solved)."""
    for i in range(k0, n):
        t = y[i]
        for k in range(i):
            t -= lo[i, k] * x[k]
        x[i] = t / lo[i, i]


@njit(cache=True)
def _solve_one(av, rn, hr, cols, nw, dw, nb, wmin, wmax, bmin, bmax, var_x, rlm, levels,
               R, lo, Y, G, y, z, w, b, relaxed=False):
    """MMSE FOM of one problem (the steps of solve_rows_batch); w, b hold the taps on
    return. One Cholesky factorisation of R: z = R^-1 h0, Y = R^-1 H_b^T; the unclipped
    DFE solution uses Rt = R - H_b^T H_b through the Woodbury identity,
    Rt^-1 h0 = z + Y (I - H_b Y)^-1 H_b z.

    ``relaxed``: the minimum of the MSE over every unit-cursor FFE (no tap limits) and,
    with one DFE tap, every tap in its limits (the clipped solve is then exact: the MSE
    is convex), with several DFE taps every DFE setting; so for any noise added to rn
    it is at most the MSE the full steps reach (their taps are in that set).

    The FFE has the nw taps at positions cols[:nw] of the span (av, rn, hr, wmin, wmax
    indexed by position; cols[dw] the cursor); cols = 0 .. nw - 1 is the contiguous
    FFE."""
    for i in range(nw):
        for j in range(nw):
            k = abs(cols[i] - cols[j])
            R[i, j] = av[k] + rn[k] / var_x
    if not _chol(R, nw, lo):
        return -np.inf
    for i in range(nw):
        y[i] = hr[0, cols[i]]
    _chol_solve(lo, nw, y, z)
    for r in range(nb):
        for i in range(nw):
            y[i] = hr[1 + r, cols[i]]
        _chol_solve(lo, nw, y, Y[r])
    return _solve_rest(hr, cols, nw, dw, nb, wmin, wmax, bmin, bmax, var_x, rlm, levels, R,
                       Y, G, y, z, w, b, relaxed)


@njit(cache=True)
def _solve_from(av, rn, hr, cols, nw, dw, nb, wmin, wmax, bmin, bmax, var_x, rlm, levels,
                R, lo, Y, G, y, z, w, b, k0, fz, fY):
    """_solve_one (not relaxed) when the leading k0 rows of R and lo, and of the forward
    solves fz (R's cursor column) and fY (its DFE rows), hold those of the positions
    cols[:k0] (a call before with the same leading positions): only the rest is formed,
    each entry by the same operations in the same order, so the FOM and taps are
    _solve_one's to the bit. Returns (FOM, rows of R, lo, fz, fY now valid for cols)."""
    for i in range(nw):
        for j in range(nw):
            if i >= k0 or j >= k0:
                k = abs(cols[i] - cols[j])
                R[i, j] = av[k] + rn[k] / var_x
    if not _chol_from(R, nw, lo, k0):
        return -np.inf, k0
    # _chol_solve's forward rows from k0 on, then its backward pass
    for i in range(k0, nw):
        y[i] = hr[0, cols[i]]
    _forward_from(lo, nw, y, fz, k0)
    for i in range(nw):
        z[i] = fz[i]
    _back_solve(lo, nw, z)
    for r in range(nb):
        for i in range(k0, nw):
            y[i] = hr[1 + r, cols[i]]
        _forward_from(lo, nw, y, fY[r], k0)
        for i in range(nw):
            Y[r, i] = fY[r, i]
        _back_solve(lo, nw, Y[r])
    return _solve_rest(hr, cols, nw, dw, nb, wmin, wmax, bmin, bmax, var_x, rlm, levels, R,
                       Y, G, y, z, w, b, False), nw


@njit(cache=True)
def _back_solve(lo, n, x):
    """The backward pass of a Cholesky solve, L^T x = x in place (_chol_solve ends with it)."""
    for i in range(n - 1, -1, -1):
        t = x[i]
        for k in range(i + 1, n):
            t -= lo[k, i] * x[k]
        x[i] = t / lo[i, i]


@njit(cache=True)
def _solve_rest(hr, cols, nw, dw, nb, wmin, wmax, bmin, bmax, var_x, rlm, levels, R, Y, G,
                y, z, w, b, relaxed):
    """_solve_one from z = R^-1 h0 and Y = R^-1 H_b^T on (see there)."""
    # G = I - H_b Y (nb x nb, positive definite as Rt is), g = H_b z; solve G v = g
    for r in range(nb):
        t = 0.0
        for i in range(nw):
            t += hr[1 + r, cols[i]] * z[i]
        G[r, nb] = t
        for q in range(nb):
            t = 0.0
            for i in range(nw):
                t += hr[1 + r, cols[i]] * Y[q, i]
            G[r, q] = (1.0 if r == q else 0.0) - t
    for r in range(nb):                      # Gauss elimination, no pivoting (PD)
        for q in range(r + 1, nb):
            f = G[q, r] / G[r, r]
            for s in range(r, nb + 1):
                G[q, s] -= f * G[r, s]
    for r in range(nb - 1, -1, -1):
        t = G[r, nb]
        for s in range(r + 1, nb):
            t -= G[r, s] * G[s, nb]
        G[r, nb] = t / G[r, r]
    s = 0.0
    for i in range(nw):
        t = z[i]
        for r in range(nb):
            t += Y[r, i] * G[r, nb]
        w[i] = t
        s += hr[0, cols[i]] * t
    for i in range(nw):
        w[i] /= s
    hit = False
    for r in range(nb):
        t = 0.0
        for i in range(nw):
            t += hr[1 + r, cols[i]] * w[i]
        bl = min(max(t, bmin[r]), bmax[r])
        if relaxed and nb != 1:
            bl = t
        if bl != t:
            hit = True
        b[r] = bl
    if hit:
        # DFE taps fixed at their limits: w = R^-1 (h0 + H_b^T b) + mu R^-1 h0, h0^T w = 1
        s1 = 0.0
        s2 = 0.0
        for i in range(nw):
            t = z[i]
            for r in range(nb):
                t += Y[r, i] * b[r]
            y[i] = t
            s1 += hr[0, cols[i]] * t
            s2 += hr[0, cols[i]] * z[i]
        mu = (1.0 - s1) / s2
        for i in range(nw):
            w[i] = y[i] + mu * z[i]
    c = w[dw]
    changed = False
    for i in range(nw if not relaxed else 0):
        wl = min(wmax[cols[i]] * c, max(wmin[cols[i]] * c, w[i]))
        if wl != w[i]:
            changed = True
        y[i] = wl
    if changed:
        s = 0.0
        for i in range(nw):
            s += hr[0, cols[i]] * y[i]
        for i in range(nw):
            w[i] = y[i] / s
        for r in range(nb):
            t = 0.0
            for i in range(nw):
                t += hr[1 + r, cols[i]] * w[i]
            b[r] = min(max(t, bmin[r]), bmax[r])
    q = 1.0
    for i in range(nw):
        t = 0.0
        for j in range(nw):
            t += R[i, j] * w[j]
        q += w[i] * t - 2.0 * w[i] * hr[0, cols[i]]
        for r in range(nb):
            q -= 2.0 * w[i] * hr[1 + r, cols[i]] * b[r]
    for r in range(nb):
        q += b[r] * b[r]
    mse = var_x * q
    if mse > 0.0:
        return 20.0 * np.log10(rlm / (levels - 1) / np.sqrt(mse))
    return -np.inf


@njit(cache=True, fastmath={"contract"})
def _gram_keep(gram, nr, t0, out):
    """out = the symmetric Gram of the upper triangle of gram, divided by t0 (the flags of
    its caller _toeplitz_gram, which it would get anyway when compiled from there;
    a division has nothing to fuse)."""
    for r in range(nr):
        for q in range(r, nr):
            out[r, q] = gram[r, q] / t0
            out[q, r] = out[r, q]


@njit(cache=True, fastmath={"contract"})
def _toeplitz_gram(t0, rr, n, rhs, nr, gram, hist, kaps):
    """gram[r, s] = rhs_r^T T^-1 rhs_s (r, s < nr) for the symmetric Toeplitz
    T = t0 toeplitz(rr[:n]) (rr[0] = 1): with f_k, b_k the order-k forward and backward
    predictors (f_0 = b_0 = [1], b_k the reversed f_k, beta_k the prediction error),
    T^-1 = sum_k b_k b_k^T / (t0 beta_k) (the UDU^T factorisation of the inverse), so the
    Gram needs only e_k = b_k^T rhs per step, never a solution. Everything comes from
    Schur's recursion, without a dot product: with kappa the step's reflection
    coefficient, b_(k+1) = [0, b_k] + kappa [f_k, 0] and f_(k+1) = [f_k, 0] + kappa [0, b_k],
    so the correlations E_k(j) = sum_i b_k[i] rhs[i + j] and F_k(j) (f_k's) follow
    E_(k+1)(j) = E_k(j + 1) + kappa F_k(j), F_(k+1)(j) = F_k(j) + kappa E_k(j + 1), with
    e_k = E_k(0); the same steps on the autocorrelation (gs, hs: the forward error's
    correlations from lag k + 1 and the backward one's from lag k) give
    kappa = -gs[0] / hs[0] and beta = hs[0] (1 - kappa^2). Each step is element-wise
    updates, where Durbin's recursion waited on three dot products per step: 3.25
    against 3.7 us a _relaxed_span of 87 taps and one DFE tap (the same Gram to 1e-14
    relative, covered by the bound's _SLACK_DB). Its scratch is its own: arrays given
    by the caller may share memory as far as the compiler knows, and then the updates
    do not vectorize (5.8 us). hist (n x nr x nr, or empty): hist[k] = the Gram of the
    leading k + 1 rows (the order-(k + 1) prefix), NaN from the first step that failed.
    False if T is not positive definite (a step with beta <= 0). With nr == 2 the steps
    go two at a time: one pass over the arrays applies both reflections, each entry of
    the intermediate order formed in registers by the single step's operations (the same
    numbers, half the loads and stores: 2.7 -> 2.05 us per 87-tap recursion). kaps (n - 1,
    or empty): kaps[k] = the reflection coefficient of the step k -> k + 1 (the Levinson
    predictor's, _toeplitz_first_col)."""
    if not t0 > 0.0:
        return False
    keep = hist.shape[0] > 0
    kp = kaps.shape[0] > 0
    if keep:
        hist[:n] = np.nan
    for r in range(nr):
        for q in range(nr):
            gram[r, q] = rhs[r, 0] * rhs[q, 0]
    if keep:
        _gram_keep(gram, nr, t0, hist[0])
    gs = np.empty(n)
    hs = np.empty(n)
    # E_k and F_k of the right sides: with nr == 2 four arrays of their own (the compiler
    # vectorizes their updates; rows of one array, or arrays given, it does not)
    two = nr == 2
    ef = np.empty((0 if two else 2 * nr, n))    # E_k of each right side, then F_k
    e0 = np.empty(n if two else 0)
    f0 = np.empty(n if two else 0)
    e1_ = np.empty(n if two else 0)
    f1 = np.empty(n if two else 0)
    for m in range(n - 1):
        gs[m] = rr[m + 1]
        hs[m] = rr[m]
    if not two:
        for r in range(nr):
            for j in range(n):
                ef[r, j] = rhs[r, j]
                ef[nr + r, j] = rhs[r, j]
    else:
        for j in range(n):
            e0[j] = rhs[0, j]
            f0[j] = rhs[0, j]
            e1_[j] = rhs[1, j]
            f1[j] = rhs[1, j]
    k = 0
    while two and k + 2 < n:        # two orders per pass: k -> k + 2 (see below)
        kap = -gs[0] / hs[0]
        beta = hs[0] * (1.0 - kap * kap)
        if not beta > 0.0:
            return False
        if kp:
            kaps[k] = kap
        # order k + 1's first entries (the same sums as the loop's) give its kappa, and
        # e_(k+1) (E_(k+1)(0)) its Gram term
        g0n = gs[1] + kap * hs[1]
        h0n = hs[0] + kap * gs[0]
        ea = e0[1] + kap * f0[0]
        eb = e1_[1] + kap * f1[0]
        ib = 1.0 / beta
        gram[0, 0] += ea * ea * ib
        gram[0, 1] += ea * eb * ib
        gram[1, 1] += eb * eb * ib
        if keep:
            _gram_keep(gram, nr, t0, hist[k + 1])
        kap2 = -g0n / h0n
        beta2 = h0n * (1.0 - kap2 * kap2)
        if not beta2 > 0.0:
            return False
        if kp:
            kaps[k + 1] = kap2
        # both steps in one pass over the arrays, each entry of order k + 1 formed in
        # registers by the same operations as the single step (the same numbers, half
        # the loads and stores: 2.7 -> 2.05 us per 87-tap recursion)
        for m in range(n - 3 - k):
            g1 = gs[m + 1] + kap * hs[m + 1]
            h1 = hs[m + 1] + kap * gs[m + 1]
            g2 = gs[m + 2] + kap * hs[m + 2]
            h0 = hs[m] + kap * gs[m]
            gs[m] = g2 + kap2 * h1
            hs[m] = h0 + kap2 * g1
        for j in range(n - 2 - k):
            ea1 = e0[j + 2] + kap * f0[j + 1]
            fa0 = f0[j] + kap * e0[j + 1]
            e0[j] = ea1 + kap2 * fa0
            f0[j] = fa0 + kap2 * ea1
            eb1 = e1_[j + 2] + kap * f1[j + 1]
            fb0 = f1[j] + kap * e1_[j + 1]
            e1_[j] = eb1 + kap2 * fb0
            f1[j] = fb0 + kap2 * eb1
        ib = 1.0 / beta2
        gram[0, 0] += e0[0] * e0[0] * ib
        gram[0, 1] += e0[0] * e1_[0] * ib
        gram[1, 1] += e1_[0] * e1_[0] * ib
        if keep:
            _gram_keep(gram, nr, t0, hist[k + 2])
        k += 2
    for k in range(k, n - 1):       # order k -> k + 1
        kap = -gs[0] / hs[0]
        beta = hs[0] * (1.0 - kap * kap)
        if not beta > 0.0:
            return False
        if kp:
            kaps[k] = kap
        for m in range(n - 2 - k):
            g1 = gs[m + 1]
            gm = gs[m]
            gs[m] = g1 + kap * hs[m + 1]
            hs[m] = hs[m] + kap * gm
        if two:     # the presets' one DFE tap: both right sides in one loop
            for j in range(n - 1 - k):
                e1 = e0[j + 1]
                fj = f0[j]
                e0[j] = e1 + kap * fj
                f0[j] = fj + kap * e1
                e1 = e1_[j + 1]
                fj = f1[j]
                e1_[j] = e1 + kap * fj
                f1[j] = fj + kap * e1
        else:
            for r in range(nr):
                e = ef[r]
                f = ef[nr + r]
                for j in range(n - 1 - k):
                    e1 = e[j + 1]
                    fj = f[j]
                    e[j] = e1 + kap * fj
                    f[j] = fj + kap * e1
        ib = 1.0 / beta
        if two:
            gram[0, 0] += e0[0] * e0[0] * ib
            gram[0, 1] += e0[0] * e1_[0] * ib
            gram[1, 1] += e1_[0] * e1_[0] * ib
        else:
            for r in range(nr):
                for q in range(r, nr):
                    gram[r, q] += ef[r, 0] * ef[q, 0] * ib
        if keep:
            _gram_keep(gram, nr, t0, hist[k + 1])
    for r in range(nr):
        for q in range(r, nr):
            gram[r, q] /= t0
            gram[q, r] = gram[r, q]
    return True


@njit(cache=True)
def _relaxed_span(av, rn, hr, n, nb, bmin, bmax, var_x, rlm, levels, lv, gram, G, b):
    """Upper bound on the FOM of every placement of floating taps in a span of n
    contiguous positions: the relaxed problem of _solve_one (every unit-cursor FFE over
    the whole span, no tap limits; one DFE tap within its limits, several free), solved
    with the Toeplitz structure of R (R[i, j] = av[|i - j|] + rn[|i - j|] / var_x):
    the solution is w = alpha z + sum_r beta_r Y_r with z = R^-1 h0, Y_r = R^-1 h_(1+r),
    so the FOM needs only the products gram = [h0, h_1..]^T R^-1 [h0, h_1..]
    (_toeplitz_gram). Any placement's final taps (unit cursor, DFE tap clipped into its
    limits, zeros off the placed positions) are a point of that set and its FOM is
    20 log10(RLM / (L - 1) / sqrt(var_x q)) of the same quadratic q, so its FOM is at most
    this one. Returns +inf when R is not found positive definite (no bound: never prunes).
    lv: scratch (3, n + nb + 1); gram: scratch (nb + 1, nb + 1); G: (max(nb, 1), nb + 1);
    b: the DFE taps of the bound's solution."""
    for k in range(n):
        lv[0, k] = av[k] + rn[k] / var_x
    t0 = lv[0, 0]
    for k in range(n):
        lv[0, k] = lv[0, k] / t0
    if not _toeplitz_gram(t0, lv[0], n, hr, nb + 1, gram, np.empty((0, 0, 0)),
                          np.empty(0)):
        return np.inf
    return _gram_fom(gram, nb, bmin, bmax, var_x, rlm, levels, lv, G, b)


@njit(cache=True)
def _prefix_bounds(av, rn, hr, n, nb, bmin, bmax, var_x, rlm, levels, lv, gram, G, b,
                   hist, pb):
    """pb[k] = _relaxed_span's bound over the leading k + 1 positions of the span, for
    every k < n, from one Schur recursion (the Gram of each prefix is a step of it;
    +inf where R's prefix is not found positive definite). A placement whose last tap
    is at position k has every tap in that prefix, so its FOM is at most pb[k]."""
    for k in range(n):
        lv[0, k] = av[k] + rn[k] / var_x
    t0 = lv[0, 0]
    for k in range(n):
        lv[0, k] = lv[0, k] / t0
    if not t0 > 0.0:
        pb[:n] = np.inf
        return
    _toeplitz_gram(t0, lv[0], n, hr, nb + 1, gram, hist, np.empty(0))
    for k in range(n):
        if np.isnan(hist[k, 0, 0]):
            pb[k] = np.inf
        else:
            pb[k] = _gram_fom(hist[k], nb, bmin, bmax, var_x, rlm, levels, lv, G, b)


@njit(cache=True)
def _gram_fom(gram, nb, bmin, bmax, var_x, rlm, levels, lv, G, b):
    """The relaxed FOM of _relaxed_span from the Gram [h0, h_1..]^T R^-1 [h0, h_1..]."""
    # the unclipped DFE solution w ~ z + Y v with (I - H_b Y) v = H_b z (Woodbury, as
    # _solve_one); nb is 0 or 1 here in the presets, any nb by Gauss elimination
    for r in range(nb):
        G[r, nb] = gram[1 + r, 0]
        for q in range(nb):
            G[r, q] = (1.0 if r == q else 0.0) - gram[1 + r, 1 + q]
    for r in range(nb):
        for q in range(r + 1, nb):
            f = G[q, r] / G[r, r]
            for s2 in range(r, nb + 1):
                G[q, s2] -= f * G[r, s2]
    for r in range(nb - 1, -1, -1):
        t = G[r, nb]
        for s2 in range(r + 1, nb):
            t -= G[r, s2] * G[s2, nb]
        G[r, nb] = t / G[r, r]
    # w = (z + sum_r v_r Y_r) / s, s = h0^T (z + Y v): h0^T w = 1
    s = gram[0, 0]
    for r in range(nb):
        s += gram[0, 1 + r] * G[r, nb]
    if not s > 0.0:
        return np.inf
    alpha = 1.0 / s
    hit = False
    for r in range(nb):
        t = gram[1 + r, 0]
        for q in range(nb):
            t += gram[1 + r, 1 + q] * G[q, nb]
        t /= s                              # h_(1+r)^T w
        bl = min(max(t, bmin[r]), bmax[r]) if nb == 1 else t
        if bl != t:
            hit = True
        b[r] = bl
        lv[1, r] = G[r, nb] / s             # beta_r
        lv[1, nb + r] = t                   # d_r = h_(1+r)^T w
    d0 = 1.0
    if hit:
        # the DFE tap at its limit: w = R^-1 (h0 + h1 b) + mu R^-1 h0, h0^T w = 1
        s1 = gram[0, 0] + gram[0, 1] * b[0]
        mu = (1.0 - s1) / gram[0, 0]
        alpha = 1.0 + mu
        lv[1, 0] = b[0]
        d0 = s1 + mu * gram[0, 0]
        lv[1, nb] = gram[1, 0] + gram[1, 1] * b[0] + mu * gram[1, 0]
    q = 1.0 + alpha * d0 - 2.0 * d0
    for r in range(nb):
        dr = lv[1, nb + r]
        q += lv[1, r] * dr - 2.0 * b[r] * dr + b[r] * b[r]
    mse = var_x * q
    if mse > 0.0:
        return 20.0 * np.log10(rlm / (levels - 1) / np.sqrt(mse))
    return np.inf


@njit(cache=True)
def _float_solve(av, rn, hr, nfix, nmax, nwg, nwf, dw, nb, wmin, wmax, bmin, bmax, var_x,
                 rlm, levels, R, lo, Y, G, y, z, w, b, cols, chosen, valid, thr, pb):
    """MMSE FOM with nwg floating groups of nwf contiguous taps among positions
    nfix .. nmax - 1 beside the nfix fixed taps (802.3dj 178A.1.8.1), placed as the IEEE
    COM code's FOM_rxffe_floating_taps places them: one group at a time, each start
    location still valid tried in ascending order with the groups already placed (a full
    MMSE solve each), the first best FOM kept; then the next nwf entries of the list of
    valid starts from the chosen one on, and the starts nwf - 1 .. 1 before it, are
    removed. Returns the FOM of the last placement (w, b its taps; cols[:nfix + n]
    the positions, n the floating taps placed).

    Pruning (pb: _prefix_bounds of this problem, or empty: none): a placement whose last
    tap is at position k has FOM at most pb[k] + _SLACK_DB; it is not solved when that
    is below the best FOM of its round so far (it cannot be that round's first best),
    nor, in the last round, below thr (the FOM returned is the best of the last round,
    which then cannot reach thr). When no placement of the last round can reach thr the
    value returned is below thr (not the FOM) and w, b are not set."""
    nprune = pb.shape[0] > 0
    nval = nmax - nfix - nwf + 1
    for k in range(max(nval, 0)):
        valid[k] = k
    nch = 0
    for i in range(nfix):
        cols[i] = i
    fo = -np.inf
    if nval <= 0 or nwg == 0:
        return _solve_one(av, rn, hr, cols, nfix, dw, nb, wmin, wmax, bmin, bmax, var_x,
                          rlm, levels, R, lo, Y, G, y, z, w, b)
    # the placements share their leading positions with the one solved before (the fixed
    # taps, and the groups placed below the new one): _solve_from forms only the rest
    pcols = np.empty(nmax, dtype=np.int64)
    fz = np.empty(nmax)
    fY = np.empty((max(nb, 1), nmax))
    kv = 0                              # leading rows valid for pcols[:kv]
    for g in range(nwg):
        if nval <= 0:
            break
        bestf = -np.inf
        bk = 0
        n = nfix + nch + nwf
        last = g == nwg - 1
        top = nfix + chosen[nch - 1] if nch else 0     # last placed tap (chosen ascending)
        for k in range(nval):
            st = valid[k]
            if nprune:
                fb = pb[max(top, nfix + st + nwf - 1)] + _SLACK_DB
                if fb < bestf or (last and fb < thr):
                    continue
            # positions: the fixed taps, then the placed and the new group's, ascending
            i = 0
            j = 0
            for q in range(nch + nwf):
                if j >= nwf or (i < nch and chosen[i] < st + j):
                    cols[nfix + q] = nfix + chosen[i]
                    i += 1
                else:
                    cols[nfix + q] = nfix + st + j
                    j += 1
            k0 = 0
            while k0 < kv and cols[k0] == pcols[k0]:
                k0 += 1
            f, kv = _solve_from(av, rn, hr, cols, n, dw, nb, wmin, wmax, bmin, bmax, var_x,
                                rlm, levels, R, lo, Y, G, y, z, w, b, k0, fz, fY)
            for q in range(kv):
                pcols[q] = cols[q]
            if f > bestf:
                bestf = f
                bk = k
        if nprune and last and not bestf >= thr:
            return bestf if bestf < thr else -np.inf
        st = valid[bk]
        # chosen += st .. st + nwf - 1, kept ascending
        for j in range(nwf):
            v = st + j
            q = nch
            while q > 0 and chosen[q - 1] > v:
                chosen[q] = chosen[q - 1]
                q -= 1
            chosen[q] = v
            nch += 1
        # remove the entries bk .. bk + nwf - 1 of the list (as far as it goes), then
        # the values st - nwf + 1 .. st - 1
        cut = min(nwf, nval - bk)
        for k in range(bk, nval - cut):
            valid[k] = valid[k + cut]
        nval -= cut
        k2 = 0
        for k in range(nval):
            v = valid[k]
            if st - nwf + 1 <= v <= st - 1:
                continue
            valid[k2] = v
            k2 += 1
        nval = k2
    for q in range(nch):
        cols[nfix + q] = nfix + chosen[q]
    k0 = 0
    while k0 < kv and k0 < nfix + nch and cols[k0] == pcols[k0]:
        k0 += 1
    fo, kv = _solve_from(av, rn, hr, cols, nfix + nch, dw, nb, wmin, wmax, bmin, bmax,
                         var_x, rlm, levels, R, lo, Y, G, y, z, w, b, k0, fz, fY)
    return fo


@njit(cache=True)
def _rows_dot(A, nrow, n, v, out):
    """out[i] = sum_j A[i, j] v[j] over j < n, in j order, four rows at a time (four
    independent chains of additions instead of one)."""
    i = 0
    while i + 4 <= nrow:
        t0 = 0.0
        t1 = 0.0
        t2 = 0.0
        t3 = 0.0
        for j in range(n):
            vj = v[j]
            t0 += A[i, j] * vj
            t1 += A[i + 1, j] * vj
            t2 += A[i + 2, j] * vj
            t3 += A[i + 3, j] * vj
        out[i] = t0
        out[i + 1] = t1
        out[i + 2] = t2
        out[i + 3] = t3
        i += 4
    while i < nrow:
        t = 0.0
        for j in range(n):
            t += A[i, j] * v[j]
        out[i] = t
        i += 1


@njit(cache=True)
def _sym_matvec(A, n, x, out):
    """out += A[:n, :n] x for A symmetric to the bit, by rows of A: out[i] gets
    A[j, i] x[j] = A[i, j] x[j] in j order, as a row-by-row dot product would (the same
    value), but the loop over i is contiguous and vectorizes."""
    for j in range(n):
        aj = A[j, :n]
        xj = x[j]
        for i in range(n):
            out[i] += aj[i] * xj


@njit(cache=True)
def _box_lagr(Mi, M, s, es, mv, mu, st, lim, cof, n1, dw, x, u):
    """The Lagrangian's minimum over the unit-cursor x (m^T x = 1) for the signed
    multipliers mu (mu_j of constraint x_j - cof_j x_dw <= / >= lim_j, st_j the side):
    x = Minv (m - A^T mu / 2) + kappa s; returns x^T M x - 1 + sum mu_j (x_j - cof_j x_dw
    - lim_j), x in x (u: scratch)."""
    tc = 0.0
    for j in range(n1):
        u[j] = s[j]
    for k in range(n1):
        if st[k] == 0 or mu[k] == 0.0:
            continue
        h = 0.5 * mu[k]
        tc += h * cof[k]
        for j in range(n1):
            u[j] -= h * Mi[j, k]
    if tc != 0.0:
        for j in range(n1):
            u[j] += tc * Mi[j, dw]
    mu_ = 0.0
    for j in range(n1):
        mu_ += mv[j] * u[j]
    kap = (1.0 - mu_) / es
    for j in range(n1):
        x[j] = u[j] + kap * s[j]
    q = -1.0
    mx = np.zeros(n1)
    _sym_matvec(M, n1, x, mx)
    for i in range(n1):
        q += x[i] * mx[i]
    for k in range(n1):
        if st[k] != 0 and mu[k] != 0.0:
            q += mu[k] * (x[k] - cof[k] * x[dw] - lim[k])
    return q


@njit(cache=True)
def _box_sides(x, n, nb, dw, wmin, wmax, bmin, bmax, st, lim, cof):
    """Mark (st = +1 upper, -1 lower) every inactive constraint x violates; True if any."""
    anyv = False
    for k in range(n + nb):
        if k == dw or st[k] != 0:
            continue
        if k < n:
            hi = wmax[k] * x[dw]
            lo_ = wmin[k] * x[dw]
            if x[k] > hi:
                st[k], cof[k], lim[k] = 1, wmax[k], 0.0
                anyv = True
            elif x[k] < lo_:
                st[k], cof[k], lim[k] = -1, wmin[k], 0.0
                anyv = True
        else:
            r = k - n
            if x[k] > bmax[r]:
                st[k], cof[k], lim[k] = 1, 0.0, bmax[r]
                anyv = True
            elif x[k] < bmin[r]:
                st[k], cof[k], lim[k] = -1, 0.0, bmin[r]
                anyv = True
    return anyv


@njit(cache=True)
def _toeplitz_inv(rr, n, B, y, z):
    """B = T^-1 for the symmetric positive definite Toeplitz T = toeplitz(rr[:n])
    (rr[0] = 1) by Trench's algorithm (Golub & Van Loan, Alg. 4.7.3): Durbin's order
    n - 1 solution y of T_(n-1) y = -rr[1:n] gives the first row, each further entry one
    update, the rest by symmetry and persymmetry; O(n^2). y, z: scratch (n). False if T
    is not found positive definite."""
    if n == 1:
        B[0, 0] = 1.0
        return True
    y[0] = -rr[1]
    beta = 1.0
    alpha = -rr[1]
    for k in range(1, n - 1):
        beta = (1.0 - alpha * alpha) * beta
        if not beta > 0.0:
            return False
        t = rr[k + 1]
        for i in range(k):
            t += rr[k - i] * y[i]
        alpha = -t / beta
        for i in range(k):
            z[i] = y[i] + alpha * y[k - 1 - i]
        for i in range(k):
            y[i] = z[i]
        y[k] = alpha
    t = 1.0
    for i in range(n - 1):
        t += rr[i + 1] * y[i]
    if not t > 0.0:
        return False
    g = 1.0 / t
    for i in range(n - 1):
        z[i] = g * y[n - 2 - i]            # nu
    B[0, 0] = g
    for j in range(1, n):
        B[0, j] = g * y[j - 1]
    for i in range(1, (n - 1) // 2 + 1):
        for j in range(i, n - i):
            B[i, j] = B[i - 1, j - 1] + (z[n - 1 - j] * z[n - 1 - i] - z[i - 1] * z[j - 1]) / g
    for i in range(0, (n - 1) // 2 + 1):
        for j in range(i, n - i):
            v = B[i, j]
            B[j, i] = v
            B[n - 1 - i, n - 1 - j] = v
            B[n - 1 - j, n - 1 - i] = v
    return True


@njit(cache=True)
def _box_inverse(M, n, nb, Mi):
    """Mi = M^-1 for M = [[R, -H^T], [-H, I]] (R = M[:n, :n] Toeplitz, positive
    definite; nb DFE rows H) by bordering: R^-1 from _toeplitz_inv, Z = R^-1 H^T, the
    Schur complement S = I - H Z (nb x nb, Gauss-Jordan), Mi = [[R^-1 + Z S^-1 Z^T,
    Z S^-1], [S^-1 Z^T, S^-1]]. False if R or S is not found positive definite."""
    t0 = M[0, 0]
    if not t0 > 0.0:
        return False
    rr = np.empty(n)
    for k in range(n):
        rr[k] = M[0, k] / t0
    y = np.empty(n)
    z = np.empty(n)
    if not _toeplitz_inv(rr, n, Mi, y, z):
        return False
    for i in range(n):
        mi = Mi[i, :n]
        for j in range(n):
            mi[j] /= t0
    if nb == 0:
        return True
    # Z = R^-1 H^T, held transposed: zt[r, i] = - sum_j Mi[i, j] M[j, n + r]
    # (M[j, n + r] = -H[r, j]) in j order; R^-1 is symmetric to the bit here, so by rows
    # of Mi (vectorized)
    zt = np.zeros((nb, n))
    for j in range(n):
        mj = Mi[j, :n]
        for r in range(nb):
            h = M[j, n + r]
            zr = zt[r]
            for i in range(n):
                zr[i] -= mj[i] * h
    S = np.zeros((nb, 2 * nb))
    for r in range(nb):
        for q in range(nb):
            t = 1.0 if r == q else 0.0
            for j in range(n):
                t += M[n + r, j] * zt[q, j]     # - H Z
            S[r, q] = t
        S[r, nb + r] = 1.0
    for r in range(nb):                         # Gauss-Jordan, no pivoting (PD)
        d = S[r, r]
        if not d > 0.0:
            return False
        for c in range(2 * nb):
            S[r, c] /= d
        for q in range(nb):
            if q != r:
                f = S[q, r]
                for c in range(2 * nb):
                    S[q, c] -= f * S[r, c]
    ZS = np.zeros((n, nb))
    for i in range(n):
        for q in range(nb):
            t = 0.0
            for r in range(nb):
                t += zt[r, i] * S[r, nb + q]
            ZS[i, q] = t
    tj = np.empty(n)
    for i in range(n):
        for j in range(n):
            tj[j] = 0.0
        for r in range(nb):
            zs = ZS[i, r]
            zr = zt[r]
            for j in range(n):
                tj[j] += zs * zr[j]
        mi = Mi[i, :n]
        for j in range(n):
            mi[j] += tj[j]
        for q in range(nb):
            Mi[i, n + q] = ZS[i, q]
            Mi[n + q, i] = ZS[i, q]
    for r in range(nb):
        for q in range(nb):
            Mi[n + r, n + q] = S[r, nb + q]
    return True


@njit(cache=True)
def _box_bound(av, rn, hr, n, dw, nb, wmin, wmax, bmin, bmax, var_x, rlm, levels, iters):
    """Upper bound on the FOM of every unit-cursor FFE over the n positions of the span
    whose taps keep their limits relative to the cursor tap (wmin_i w_dw <= w_i <=
    wmax_i w_dw) and every DFE setting within [bmin, bmax], which holds every placement's
    final taps of _float_solve / _solve_one with a positive cursor tap (docs/com.md,
    "A bound that keeps the tap limits"): the MSE q(x) = x^T M x - 2 m^T x + 1 over
    x = (w, b), M = [[R, -H_b^T], [-H_b, I]], m = (h0, 0), is at least the Lagrangian
    dual g(lambda) for any multipliers lambda >= 0 of the limits (weak duality); the
    multipliers come from a few primal-dual active-set steps and the best g is kept.
    With a cursor tap <= 0 (the other sign of the ratio limits) the final taps lie in
    {w_dw <= 0}, whose minimum (on the face w_dw = 0 when the free optimum has w_dw > 0)
    is taken as well; the bound is that of the smaller MSE. +inf: no bound."""
    n1 = n + nb
    M = np.zeros((n1, n1))
    rk = np.empty(n)
    for k in range(n):
        rk[k] = av[k] + rn[k] / var_x
    for i in range(n):
        for j in range(n):
            M[i, j] = rk[abs(i - j)]
        for r in range(nb):
            M[i, n + r] = -hr[1 + r, i]
            M[n + r, i] = -hr[1 + r, i]
    for r in range(nb):
        M[n + r, n + r] = 1.0
    Mi = np.zeros((n1, n1))
    if not _box_inverse(M, n, nb, Mi):
        return np.inf
    mv = np.zeros(n1)
    for i in range(n):
        mv[i] = hr[0, i]
    s = np.zeros(n1)
    _rows_dot(Mi, n1, n, mv, s)
    es = 0.0
    for i in range(n1):
        es += mv[i] * s[i]
    if not es > 0.0:
        return np.inf
    x = np.empty(n1)
    u = np.empty(n1)
    st = np.zeros(n1, dtype=np.int64)
    mu = np.zeros(n1)
    lim = np.zeros(n1)
    cof = np.zeros(n1)
    gbest = _box_lagr(Mi, M, s, es, mv, mu, st, lim, cof, n1, dw, x, u)   # no limits
    # {w_dw <= 0}: its minimum, on the face w_dw = 0 when the free optimum has w_dw > 0
    if x[dw] > 0.0:
        a11, a12, a22 = es, s[dw], Mi[dw, dw]
        det = a11 * a22 - a12 * a12
        if not det > 0.0:
            return np.inf
        al = a22 / det
        ga = -a12 / det
        for j in range(n1):
            u[j] = al * s[j] + ga * Mi[j, dw]
        qm = -1.0
        mx = np.zeros(n1)
        _sym_matvec(M, n1, u, mx)
        for i in range(n1):
            qm += u[i] * mx[i]
    else:
        qm = gbest
    act = np.empty(n1, dtype=np.int64)
    K = np.empty((n1 + 1, n1 + 2))
    lam = np.zeros(n1)
    if _box_sides(x, n, nb, dw, wmin, wmax, bmin, bmax, st, lim, cof):
        for _ in range(iters):
            na = 0
            for k in range(n1):
                if st[k] != 0:
                    act[na] = k
                    na += 1
            # [es t^T; t P] [alpha; -mu / 2] = [1; lim] (P_kj = a_k^T Minv a_j,
            # a_k = e_k - cof_k e_dw, t_k = a_k^T s), Gauss elimination (PD)
            K[0, 0] = es
            K[0, na + 1] = 1.0
            for a in range(na):
                k = act[a]
                tk = s[k] - cof[k] * s[dw]
                K[0, 1 + a] = tk
                K[1 + a, 0] = tk
                K[1 + a, na + 1] = lim[k]
                for b2 in range(a, na):
                    j = act[b2]
                    v = (Mi[k, j] - cof[j] * Mi[k, dw] - cof[k] * Mi[dw, j]
                         + cof[k] * cof[j] * Mi[dw, dw])
                    K[1 + a, 1 + b2] = v
                    K[1 + b2, 1 + a] = v
            ok = True
            for r in range(na + 1):
                if not abs(K[r, r]) > 0.0:
                    ok = False
                    break
                for q in range(r + 1, na + 1):
                    f = K[q, r] / K[r, r]
                    if f != 0.0:
                        for c in range(r, na + 2):
                            K[q, c] -= f * K[r, c]
            if not ok:
                break
            for r in range(na, -1, -1):
                t = K[r, na + 1]
                for c in range(r + 1, na + 1):
                    t -= K[r, c] * K[c, na + 1]
                K[r, na + 1] = t / K[r, r]
            allpos = True
            for a in range(na):
                k = act[a]
                mu[k] = -2.0 * K[1 + a, na + 1]
                lam[k] = mu[k] * st[k]
                if lam[k] < 0.0:
                    allpos = False
                    mu[k] = 0.0              # lambda_k = max(lambda_k, 0) for the dual
            g = _box_lagr(Mi, M, s, es, mv, mu, st, lim, cof, n1, dw, x, u)
            if g > gbest:
                gbest = g
            if allpos:
                # x: the dual's minimizer is the equality solve's; feasible: optimum
                if not _box_sides(x, n, nb, dw, wmin, wmax, bmin, bmax, st, lim, cof):
                    break
            else:
                # release the constraints with negative multipliers, add the violated
                for a in range(na):
                    k = act[a]
                    if lam[k] < 0.0:
                        st[k] = 0
                        mu[k] = 0.0
                _box_sides(x, n, nb, dw, wmin, wmax, bmin, bmax, st, lim, cof)
    qb = min(gbest, qm)
    mse = var_x * qb
    if mse > 0.0:
        return 20.0 * np.log10(rlm / (levels - 1) / np.sqrt(mse))
    return np.inf



@njit(cache=True)
def _chol_rows(S, m, rev, ut):
    """ut[k, i] = L[i, k], L the lower Cholesky factor of S[:m, :m] (rev: of S with rows
    and columns in reversed order), by right-looking updates of a working lower triangle:
    every entry gets the same products subtracted in the same order as in _chol (the same
    factor to the bit), but the inner loops run over contiguous rows without a reduction,
    so they vectorize (_chol's dot products are serial chains of additions). False if S
    is not found positive definite."""
    W = np.empty((m, m))
    for i in range(m):
        ii = m - 1 - i if rev else i
        for j in range(i + 1):
            W[i, j] = S[ii, m - 1 - j if rev else j]
    for k in range(m):
        s = W[k, k]
        if not s > 0.0:
            return False
        d = np.sqrt(s)
        ut[k, k] = d
        for i in range(k + 1, m):
            ut[k, i] = W[i, k] / d
        # slices indexed from 0: numba then drops the negative-index wraparound that
        # keeps LLVM from vectorizing a loop starting at k + 1
        for i in range(k + 1, m):
            lik = ut[k, i]
            wi = W[i, k + 1:i + 1]
            uk = ut[k, k + 1:i + 1]
            for j in range(i - k):
                wi[j] -= lik * uk[j]
    return True


@njit(cache=True)
def _suffix_grams(S, Cm, g0, m, nr, cum):
    """cum[e] = the Gram of the fixed taps with the last e floating positions [m - e, m)
    (cum[0] = g0), from the Cholesky factor of S (m x m, the Schur complement over the
    floating positions) in reversed order: the Gram of a suffix is Gram_F plus the outer
    products of the rows of L^-1 C up to it. False if S is not found positive definite.
    The factor (_chol_rows) and the forward solve L^-1 C are column-oriented: the same
    products in the same order per entry as the row-oriented dot products, vectorized."""
    ut = np.empty((m, m))
    yt = np.empty((nr, m))
    if not _chol_rows(S, m, True, ut):
        return False
    for p in range(nr):
        for i in range(m):
            yt[p, i] = Cm[m - 1 - i, p]
    for k in range(m):
        uk = ut[k, k + 1:]
        for p in range(nr):
            yk = yt[p, k] / ut[k, k]
            yt[p, k] = yk
            yp = yt[p, k + 1:]
            for i in range(m - 1 - k):
                yp[i] -= uk[i] * yk
    for p in range(nr):
        for q in range(nr):
            cum[0, p, q] = g0[p, q]
    for e in range(1, m + 1):
        for p in range(nr):
            for q in range(nr):
                cum[e, p, q] = cum[e - 1, p, q] + yt[p, e - 1] * yt[q, e - 1]
    return True


@njit(cache=True)
def _hist_fom(hist, k, nb, bmin, bmax, var_x, rlm, levels, lv, G, b):
    """The relaxed FOM (_gram_fom) of the Gram hist[k] of a Toeplitz recursion; +inf
    where the recursion had failed (NaN: no bound)."""
    if np.isnan(hist[k, 0, 0]):
        return np.inf
    return _gram_fom(hist[k], nb, bmin, bmax, var_x, rlm, levels, lv, G, b)


@njit(cache=True)
def _lower_solve(L, X, n, nr):
    """X[:n, :nr] <- L^-1 X in place (L lower triangular, forward substitution)."""
    for p in range(nr):
        for i in range(n):
            t = X[i, p]
            for k in range(i):
                t -= L[i, k] * X[k, p]
            X[i, p] = t / L[i, i]


@njit(cache=True)
def _gram_plus(g0, E, n, nr, out):
    """out[:nr, :nr] <- g0 + E[:n, :nr]^T E[:n, :nr]."""
    for p in range(nr):
        for q in range(nr):
            t = g0[p, q]
            for i in range(n):
                t += E[i, p] * E[i, q]
            out[p, q] = t


@njit(cache=True)
def _best_fom(best, gram, nb, bmin, bmax, var_x, rlm, levels, lv, G, b):
    """The larger of ``best`` and the relaxed FOM of ``gram`` (``best`` kept on a tie or
    a NaN FOM)."""
    f = _gram_fom(gram, nb, bmin, bmax, var_x, rlm, levels, lv, G, b)
    return f if f > best else best


@njit(cache=True)
def _toeplitz_first_col(kaps, r0, n, gam):
    """gam = T^-1 e_0 for the symmetric Toeplitz T = toeplitz(r[:n]) from its reflection
    coefficients (kaps, _toeplitz_gram's; r0 = r[0]): the Levinson step-up recursion
    f_(k+1) = [f_k, 0] + kappa_k [0, f_k reversed] of the forward predictor (T f = beta
    e_0, beta_(k+1) = beta_k (1 - kappa_k^2), beta_0 = r0), element-wise updates without
    the dot products that Durbin's recursion takes per step for kappa (5.3 against
    2.5 us at 87 taps). False if a step's beta is not positive."""
    if not r0 > 0.0:
        return False
    f = np.empty(n)
    f[0] = 1.0
    beta = r0
    for k in range(n - 1):
        kap = kaps[k]
        f[k + 1] = 0.0
        # entries i and k + 1 - i from their old values at once, in place (each by the
        # same operation as through a copy: f[i] + kap f[k + 1 - i]); half the loop, and
        # no copy back
        for i in range((k + 2) // 2):
            a = f[i]
            b = f[k + 1 - i]
            f[i] = a + kap * b
            f[k + 1 - i] = b + kap * a
        if k % 2 == 1:          # k + 2 odd: the middle entry, its own partner
            h = (k + 1) // 2
            f[h] = f[h] + kap * f[h]
        beta *= 1.0 - kap * kap
        if not beta > 0.0:
            return False
    for i in range(n):
        gam[i] = f[i] / beta
    return True


@njit(cache=True)
def _inverse_row(gam, dl, ig0, i, prev, out, n):
    """Row i of T^-1 from row i - 1 (prev) by the Gohberg-Semencul recurrence
    P[i, j] = P[i - 1, j - 1] + (g_i g_j - d_i d_j) / g_0, P[i, 0] = g_i (g = T^-1 e_0,
    d = (0, g_(n-1), ..., g_1))."""
    gi = gam[i]
    di = dl[i]
    out[0] = gi
    o1 = out[1:]
    g1 = gam[1:]
    d1 = dl[1:]
    for j in range(n - 1):
        o1[j] = prev[j] + (gi * g1[j] - di * d1[j]) * ig0


@njit(cache=True)
def _schur_rows(S, Z, r, nfix, m, done, upto):
    """Rows done .. upto - 1 of S = R_UU - Z^T Z, each from its diagonal on
    (R_UU[u, v] = r[v - u]), the products subtracted in the order of Z's rows; returns
    the number of rows formed (max(done, upto))."""
    for u in range(done, upto):
        su = S[u, u:]
        for v in range(m - u):
            su[v] = r[v]
        for i in range(nfix):
            zu = Z[i, u]
            zi = Z[i, u:]
            for v in range(m - u):
                su[v] -= zu * zi[v]
    return max(done, upto)


@njit(cache=True, error_model="numpy", fastmath=_BOUND_MATH)
def _q_one_dfe(g00, g01, g10, g11, b_lo, b_hi):
    """_gram_fom's steps with one DFE tap (limits b_lo, b_hi) from the 2 x 2 Gram, as
    the normalised MSE q (FOM = 20 log10(rlm / (levels - 1) / sqrt(var_x q)) falls as q
    grows); returns (q, s), s = h0^T z + ... (not > 0: no solution). The numpy error
    model: a division by zero gives inf / NaN (the callers take a q or s that is not
    finite and positive as no bound) and leaves the pair loops free to vectorize."""
    v = g10 / (1.0 - g11)
    s = g00 + g01 * v
    t = (g10 + g11 * v) / s
    bl = min(max(t, b_lo), b_hi)
    qf = 1.0 + 1.0 / s - 2.0 + (v / s) * t - 2.0 * bl * t + bl * bl
    s1 = g00 + g01 * bl
    mu = (1.0 - s1) / g00
    d0 = s1 + mu * g00
    dd = g10 + g11 * bl + mu * g10
    qc = 1.0 + (1.0 + mu) * d0 - 2.0 * d0 + bl * dd - 2.0 * bl * dd + bl * bl
    return (qc if bl != t else qf), s


@njit(cache=True, error_model="numpy", fastmath=_BOUND_MATH)
def _pair_row4(S, band, Ct, La, ila, Ea, ga, a, c0, nc, b_lo, b_hi, qv, sv, ok):
    """The pair steps of window a with every window c in c0 .. c0 + nc - 1 for the
    presets' sizes (windows of 4 taps, one DFE tap): per c the 4 x 4 blocks K, T, the
    factor of T, the solved cursor / DFE block and its 2 x 2 Gram as scalars, then the
    normalised MSE qv[c] (and sv[c], ok[c]) as the general steps of _pair_bound form
    them: each entry by the same operations (in the same order but for the sums and
    multiply-adds _BOUND_MATH lets the compiler reorder and fuse: ~1e-12 dB at most on
    the test's random problems), but one pass over c with every intermediate in
    registers instead of ~200 short loops over c per window a. error_model="numpy": a
    division by zero gives inf / NaN instead of raising, as IEEE has it (such a pair's
    q or s is then not finite and positive, and the caller returns +inf: no bound);
    that is what lets LLVM vectorize the loop (with numba's Python model each division carries a zero
    check and an exception path, and the loop stays scalar: 78 against ~30 ns per
    pair on a synthetic row of 60 windows, call included)."""
    l10 = La[1, 0]
    l20 = La[2, 0]
    l21 = La[2, 1]
    l30 = La[3, 0]
    l31 = La[3, 1]
    l32 = La[3, 2]
    i0 = ila[0]
    i1 = ila[1]
    i2 = ila[2]
    i3 = ila[3]
    e00 = Ea[0, 0]
    e01 = Ea[0, 1]
    e10 = Ea[1, 0]
    e11 = Ea[1, 1]
    e20 = Ea[2, 0]
    e21 = Ea[2, 1]
    e30 = Ea[3, 0]
    e31 = Ea[3, 1]
    ga00 = ga[0, 0]
    ga01 = ga[0, 1]
    ga10 = ga[1, 0]
    ga11 = ga[1, 1]
    s0 = S[a, c0:c0 + nc + 3]
    s1 = S[a + 1, c0:c0 + nc + 3]
    s2 = S[a + 2, c0:c0 + nc + 3]
    s3 = S[a + 3, c0:c0 + nc + 3]
    d0 = band[0, c0:c0 + nc + 3]
    d1 = band[1, c0:c0 + nc + 3]
    d2 = band[2, c0:c0 + nc + 3]
    d3 = band[3, c0:c0 + nc + 3]
    h0 = Ct[0, c0:c0 + nc + 3]
    h1 = Ct[1, c0:c0 + nc + 3]
    for c in range(nc):
        # K = La^-1 S_ac (K[i, j]: row i of window a, column j of window c)
        k00 = s0[c] * i0
        k01 = s0[c + 1] * i0
        k02 = s0[c + 2] * i0
        k03 = s0[c + 3] * i0
        k10 = (s1[c] - l10 * k00) * i1
        k11 = (s1[c + 1] - l10 * k01) * i1
        k12 = (s1[c + 2] - l10 * k02) * i1
        k13 = (s1[c + 3] - l10 * k03) * i1
        k20 = (s2[c] - l20 * k00 - l21 * k10) * i2
        k21 = (s2[c + 1] - l20 * k01 - l21 * k11) * i2
        k22 = (s2[c + 2] - l20 * k02 - l21 * k12) * i2
        k23 = (s2[c + 3] - l20 * k03 - l21 * k13) * i2
        k30 = (s3[c] - l30 * k00 - l31 * k10 - l32 * k20) * i3
        k31 = (s3[c + 1] - l30 * k01 - l31 * k11 - l32 * k21) * i3
        k32 = (s3[c + 2] - l30 * k02 - l31 * k12 - l32 * k22) * i3
        k33 = (s3[c + 3] - l30 * k03 - l31 * k13 - l32 * k23) * i3
        # T = S_cc - K^T K (lower triangle; t[i][j] = S[c + j, c + i] - sum_k K[k, i] K[k, j])
        t00 = d0[c] - k00 * k00 - k10 * k10 - k20 * k20 - k30 * k30
        t10 = d1[c] - k01 * k00 - k11 * k10 - k21 * k20 - k31 * k30
        t11 = d0[c + 1] - k01 * k01 - k11 * k11 - k21 * k21 - k31 * k31
        t20 = d2[c] - k02 * k00 - k12 * k10 - k22 * k20 - k32 * k30
        t21 = d1[c + 1] - k02 * k01 - k12 * k11 - k22 * k21 - k32 * k31
        t22 = d0[c + 2] - k02 * k02 - k12 * k12 - k22 * k22 - k32 * k32
        t30 = d3[c] - k03 * k00 - k13 * k10 - k23 * k20 - k33 * k30
        t31 = d2[c + 1] - k03 * k01 - k13 * k11 - k23 * k21 - k33 * k31
        t32 = d1[c + 2] - k03 * k02 - k13 * k12 - k23 * k22 - k33 * k32
        t33 = d0[c + 3] - k03 * k03 - k13 * k13 - k23 * k23 - k33 * k33
        # the cursor / DFE rows of window c given a: c_c - K^T Ea
        b00 = h0[c] - k00 * e00 - k10 * e10 - k20 * e20 - k30 * e30
        b01 = h1[c] - k00 * e01 - k10 * e11 - k20 * e21 - k30 * e31
        b10 = h0[c + 1] - k01 * e00 - k11 * e10 - k21 * e20 - k31 * e30
        b11 = h1[c + 1] - k01 * e01 - k11 * e11 - k21 * e21 - k31 * e31
        b20 = h0[c + 2] - k02 * e00 - k12 * e10 - k22 * e20 - k32 * e30
        b21 = h1[c + 2] - k02 * e01 - k12 * e11 - k22 * e21 - k32 * e31
        b30 = h0[c + 3] - k03 * e00 - k13 * e10 - k23 * e20 - k33 * e30
        b31 = h1[c + 3] - k03 * e01 - k13 * e11 - k23 * e21 - k33 * e31
        # T = Lt Lt^T, the diagonal as reciprocals (1.0 where not positive: ok False)
        okc = True
        if not t00 > 0.0:
            okc = False
            t00 = 1.0
        j0 = 1.0 / np.sqrt(t00)
        t10 *= j0
        t20 *= j0
        t30 *= j0
        t11 = t11 - t10 * t10
        if not t11 > 0.0:
            okc = False
            t11 = 1.0
        j1 = 1.0 / np.sqrt(t11)
        t21 = (t21 - t20 * t10) * j1
        t31 = (t31 - t30 * t10) * j1
        t22 = t22 - t20 * t20 - t21 * t21
        if not t22 > 0.0:
            okc = False
            t22 = 1.0
        j2 = 1.0 / np.sqrt(t22)
        t32 = (t32 - t30 * t20 - t31 * t21) * j2
        t33 = t33 - t30 * t30 - t31 * t31 - t32 * t32
        if not t33 > 0.0:
            okc = False
            t33 = 1.0
        j3 = 1.0 / np.sqrt(t33)
        # cb <- Lt^-1 cb
        b00 = b00 * j0
        b10 = (b10 - t10 * b00) * j1
        b20 = (b20 - t20 * b00 - t21 * b10) * j2
        b30 = (b30 - t30 * b00 - t31 * b10 - t32 * b20) * j3
        b01 = b01 * j0
        b11 = (b11 - t10 * b01) * j1
        b21 = (b21 - t20 * b01 - t21 * b11) * j2
        b31 = (b31 - t30 * b01 - t31 * b11 - t32 * b21) * j3
        g00 = ga00 + b00 * b00 + b10 * b10 + b20 * b20 + b30 * b30
        g01 = ga01 + b00 * b01 + b10 * b11 + b20 * b21 + b30 * b31
        g10 = ga10 + b01 * b00 + b11 * b10 + b21 * b20 + b31 * b30
        g11 = ga11 + b01 * b01 + b11 * b11 + b21 * b21 + b31 * b31
        qv[c], sv[c] = _q_one_dfe(g00, g01, g10, g11, b_lo, b_hi)
        ok[c] = okc


@njit(cache=True)
def _pair_bound(av, rn, hr, nfix, n, nwg, nwf, nb, bmin, bmax, var_x, rlm, levels, thr,
                lv, gram, G, b, hist):
    """Upper bound on _float_solve's FOM that keeps the number of floating taps: the
    largest relaxed FOM (_gram_fom: no FFE tap limits) over the fixed taps plus every set
    of at most nwg = 2 disjoint windows of nwf contiguous floating positions (the final
    placement is one of them; docs/com.md, "A bound over the placements"). With F the
    fixed positions and U the floating ones, each set's Gram is Gram_F + C_P^T S_P^-1 C_P
    (S the Schur complement of R_F in R over U, C the cursor / DFE rows left after R_F):
    a 4 x 4 block step per window, one more per pair. Returns the first value found that
    reaches thr (then it is not the maximum: the caller needs only that), else the
    maximum; +inf for nwg > 2 (no bound: never prunes). hist: scratch (n x nb + 1 x
    nb + 1) of the prefix intervals' Toeplitz recursion."""
    if nwg > 2:
        return np.inf
    m = n - nfix
    nr = nb + 1
    r = np.empty(n)
    for k in range(n):
        r[k] = av[k] + rn[k] / var_x
    RF = np.empty((nfix, nfix))
    LF = np.empty((nfix, nfix))
    for i in range(nfix):
        for j in range(nfix):
            RF[i, j] = r[abs(i - j)]
    if not _chol(RF, nfix, LF):
        return np.inf
    # Z = LF^-1 R_(F,U), E = LF^-1 H_F^T (forward solves; row by row, each entry with
    # the products of the row-oriented solve in the same order, vectorized over columns)
    Z = np.empty((nfix, m))
    Et = np.empty((nr, nfix))
    for i in range(nfix):
        for u in range(m):
            Z[i, u] = r[nfix + u - i]
        for k in range(i):
            lik = LF[i, k]
            for u in range(m):
                Z[i, u] -= lik * Z[k, u]
        d = LF[i, i]
        for u in range(m):
            Z[i, u] /= d
        for p in range(nr):
            t = hr[p, i]
            for k in range(i):
                t -= LF[i, k] * Et[p, k]
            Et[p, i] = t / d
    g0 = np.zeros((nr, nr))
    for p in range(nr):
        for q in range(nr):
            for i in range(nfix):
                g0[p, q] += Et[p, i] * Et[q, i]
    # S = R_UU - Z^T Z and C = H_U^T - Z^T E, the products subtracted in i order
    # S's rows are formed as the a-loop reaches them (_schur_rows; only the upper
    # triangle: the lower one would be its copy), all of them only where the suffixes
    # need the Cholesky form; its first nwf diagonals (the pair steps' diagonal blocks)
    # at once, each entry by the same operations in the same order as its row's
    S = np.empty((m, m))
    s_rows = 0
    Ct = np.empty((nr, m))
    for p in range(nr):
        for u in range(m):
            Ct[p, u] = hr[p, nfix + u]
    for i in range(nfix):
        for p in range(nr):
            e = Et[p, i]
            for u in range(m):
                Ct[p, u] -= Z[i, u] * e
    nd = min(nwf, m)
    band = np.empty((nd, m))            # band[d, u] = S[u, u + d]
    for d in range(nd):
        bd = band[d]
        for u in range(m - d):
            bd[u] = r[d]
        for i in range(nfix):
            zi = Z[i]
            zd = Z[i, d:]
            for u in range(m - d):
                bd[u] -= zi[u] * zd[u]
    Cm = np.empty((m, nr))
    for u in range(m):
        for p in range(nr):
            Cm[u, p] = Ct[p, u]
    best = _gram_fom(g0, nb, bmin, bmax, var_x, rlm, levels, lv, G, b)
    if best >= thr:
        return best
    # the relaxed FOM over F and the floating suffix [a, m) (fsuf, from cum[m - a]) and
    # prefix [0, e) (fpre): a set of windows a < c lies in both [a, m) and [0, c + nwf)
    # F and the prefix [0, e) are the span's leading nfix + e positions: their Grams are
    # the steps of one Toeplitz recursion, and their FOM does not decrease with e (more
    # taps free), so the first e whose FOM reaches thr is found by bisection; a pair
    # whose second window ends before it is below thr (below fpre[e_star - 1])
    e_star = m + 1
    f_below = -np.inf
    kaps = np.empty(n - 1 if nwg >= 2 else 0)
    if nwg >= 2:
        for k in range(n):
            lv[0, k] = r[k]
        t0 = lv[0, 0]
        for k in range(n):
            lv[0, k] = lv[0, k] / t0
        _toeplitz_gram(t0, lv[0], n, hr, nr, gram, hist, kaps)
        lo_e = 2 * nwf
        hi_e = m + 1
        while lo_e < hi_e:
            mid = (lo_e + hi_e) // 2
            if _hist_fom(hist, nfix + mid - 1, nb, bmin, bmax, var_x, rlm, levels, lv, G,
                         b) >= thr:
                hi_e = mid
            else:
                lo_e = mid + 1
        e_star = lo_e
        if e_star > 2 * nwf:
            f_below = _hist_fom(hist, nfix + e_star - 2, nb, bmin, bmax, var_x, rlm, levels,
                                lv, G, b)
    # the suffixes' Grams, Gram(F + [a, m)), by removing the floating positions [0, a) from
    # the whole span's (hist[n - 1]): Gram_all - X_A^T P_AA^-1 X_A with P = R^-1 and
    # X = R^-1 H (block inverse), P's rows from its first column by the Gohberg-Semencul
    # recurrence (_inverse_row), P_AA's Cholesky factor and the X_A terms grown one
    # position per window a: only the positions the a-loop reaches (it stops at the
    # first suffix below thr, a few windows in), instead of the Cholesky factor of the
    # whole 72 x 72 S in reversed order (_suffix_grams, kept where this fails)
    rm = nwg >= 2 and not np.isnan(hist[n - 1, 0, 0])
    gam = np.empty(n)
    if rm:
        rm = _toeplitz_first_col(kaps, r[0], n, gam)
    dl = np.empty(n)
    brow = np.empty(n)
    bnew = np.empty(n)
    Lp = np.empty((m, m))
    Zs = np.empty((m, nr))
    xk = np.empty(nr)
    cur = np.empty((nr, nr))
    ig0 = 0.0
    i_row = 0
    if rm:
        dl[0] = 0.0
        for j in range(1, n):
            dl[j] = gam[n - j]
        for j in range(n):
            brow[j] = gam[j]
        ig0 = 1.0 / gam[0]
        for p in range(nr):
            for q in range(nr):
                cur[p, q] = hist[n - 1, p, q]
    cum = np.empty((0 if rm else m + 1, nr, nr))
    if not rm:
        s_rows = _schur_rows(S, Z, r, nfix, m, s_rows, m)
        if not _suffix_grams(S, Cm, g0, m, nr, cum):
            return np.inf
    La = np.empty((nwf, nwf))
    Sa = np.empty((nwf, nwf))
    Ea = np.empty((nwf, nr))
    ga = np.empty((nr, nr))
    ila = np.empty(nwf)
    # the pair steps for every window c of one window a at once, c innermost (the
    # scalar steps were chains of dependent divisions, square roots and sums, one c
    # after the other; over c they are independent and vectorize): each entry gets the
    # same operations in the same order as the scalar step, so the same numbers
    ncm = max(m - nwf + 1, 0)
    KB = np.empty((nwf, nwf, ncm))
    LT = np.empty((nwf, nwf, ncm))
    IL = np.empty((nwf, ncm))
    CB = np.empty((nwf, nr, ncm))
    GR = np.empty((nr, nr, ncm))
    ok = np.empty(ncm, dtype=np.bool_)
    QV = np.empty(ncm)
    SV = np.empty(ncm)
    b_lo = bmin[0] if nb == 1 else 0.0
    b_hi = bmax[0] if nb == 1 else 0.0
    # FOM >= thr <=> q <= q_thr (the rounding of either form is far inside _SLACK_DB)
    q_thr = (rlm / (levels - 1)) ** 2 / var_x * 10.0 ** (-thr / 10.0)
    for a in range(m - nwf + 1):
        if rm and a > 0:        # remove floating position a - 1 (span position nfix + a - 1)
            k = a - 1
            while i_row < nfix + k:
                i_row += 1
                _inverse_row(gam, dl, ig0, i_row, brow, bnew, n)
                tmp = brow
                brow = bnew
                bnew = tmp
            for p in range(nr):
                t = 0.0
                for j in range(n):
                    t += brow[j] * hr[p, j]
                xk[p] = t
            for l in range(k):
                t = brow[nfix + l]
                for q in range(l):
                    t -= Lp[k, q] * Lp[l, q]
                Lp[k, l] = t / Lp[l, l]
            t = brow[nfix + k]
            for q in range(k):
                t -= Lp[k, q] * Lp[k, q]
            if t > 0.0:
                Lp[k, k] = np.sqrt(t)
                for p in range(nr):
                    t = xk[p]
                    for q in range(k):
                        t -= Lp[k, q] * Zs[q, p]
                    Zs[k, p] = t / Lp[k, k]
                for p in range(nr):
                    for q in range(nr):
                        cur[p, q] -= Zs[k, p] * Zs[k, q]
            else:               # not found positive definite: the Cholesky form from here
                rm = False
                cum = np.empty((m + 1, nr, nr))
                s_rows = _schur_rows(S, Z, r, nfix, m, s_rows, m)
                if not _suffix_grams(S, Cm, g0, m, nr, cum):
                    return np.inf
        if rm:
            fs = _gram_fom(cur, nb, bmin, bmax, var_x, rlm, levels, lv, G, b) + _RM_SLACK_DB
        else:
            fs = _gram_fom(cum[m - a], nb, bmin, bmax, var_x, rlm, levels, lv, G, b)
        if fs < thr:            # so is every later suffix's (fewer taps free)
            return max(best, fs)
        # the window a alone: Gram_F + Ea^T Ea, Ea = La^-1 C_a, La La^T = S_aa
        for i in range(nwf):            # S_aa's lower triangle from the upper one
            for j in range(i + 1):
                Sa[i, j] = band[i - j, a + j]
        if not _chol(Sa, nwf, La):
            return np.inf
        for i in range(nwf):    # element copy: no array-assignment error path to compile
            for j in range(nr):
                Ea[i, j] = Cm[a + i, j]
        _lower_solve(La, Ea, nwf, nr)
        for i in range(nwf):
            ila[i] = 1.0 / La[i, i]
        _gram_plus(g0, Ea, nwf, nr, ga)
        best = _best_fom(best, ga, nb, bmin, bmax, var_x, rlm, levels, lv, G, b)
        if best >= thr:         # best < thr before: only a better FOM reaches it
            return best
        if nwg < 2:
            continue
        c0 = a + nwf
        if c0 + nwf < e_star:   # the pairs ending before e_star: below f_below < thr
            best = max(best, f_below)
            c0 = e_star - nwf
        nc = m - nwf + 1 - c0
        if nc <= 0:
            continue
        s_rows = _schur_rows(S, Z, r, nfix, m, s_rows, a + nwf)   # window a's rows
        okc = ok[:nc]
        qv = QV[:nc]
        sv = SV[:nc]
        if nwf == 4 and nb == 1:       # the presets' sizes: one vectorized pass
            _pair_row4(S, band, Ct, La, ila, Ea, ga, a, c0, nc, b_lo, b_hi, qv, sv, okc)
        else:
            # the window c given a: T = S_cc - K^T K, K = La^-1 S_ac; c_c - K^T Ea (the
            # triangular factors' diagonals as reciprocals: 4 divisions per pair where the
            # solves took 30; a bound, so their rounding is covered by _SLACK_DB)
            for j in range(nwf):
                for i in range(nwf):
                    o = KB[i, j, :nc]
                    srow = S[a + i, c0 + j:c0 + j + nc]
                    for c in range(nc):
                        o[c] = srow[c]
                    for k in range(i):
                        lik = La[i, k]
                        kk = KB[k, j, :nc]
                        for c in range(nc):
                            o[c] -= lik * kk[c]
                    di = ila[i]
                    for c in range(nc):
                        o[c] *= di
            for i in range(nwf):
                for j in range(i + 1):      # T into LT's lower triangle, factored in place
                    o = LT[i, j, :nc]
                    dr = band[i - j, c0 + j:c0 + j + nc]   # S[c + j, c + i], c >= c0
                    for c in range(nc):
                        o[c] = dr[c]
                    for k in range(nwf):
                        ki = KB[k, i, :nc]
                        kj = KB[k, j, :nc]
                        for c in range(nc):
                            o[c] -= ki[c] * kj[c]
                for p in range(nr):
                    o = CB[i, p, :nc]
                    cr = Ct[p, c0 + i:c0 + i + nc]
                    for c in range(nc):
                        o[c] = cr[c]
                    for k in range(nwf):
                        e = Ea[k, p]
                        ki = KB[k, i, :nc]
                        for c in range(nc):
                            o[c] -= ki[c] * e
            for c in range(nc):
                okc[c] = True
            for j in range(nwf):            # T = Lt Lt^T, IL the reciprocal diagonal
                dj = LT[j, j, :nc]
                for k in range(j):
                    lj = LT[j, k, :nc]
                    for c in range(nc):
                        dj[c] -= lj[c] * lj[c]
                ij = IL[j, :nc]
                for c in range(nc):
                    if not dj[c] > 0.0:
                        okc[c] = False
                        dj[c] = 1.0
                for c in range(nc):
                    ij[c] = 1.0 / np.sqrt(dj[c])
                for i in range(j + 1, nwf):
                    o = LT[i, j, :nc]
                    for k in range(j):
                        li = LT[i, k, :nc]
                        lj = LT[j, k, :nc]
                        for c in range(nc):
                            o[c] -= li[c] * lj[c]
                    for c in range(nc):
                        o[c] *= ij[c]
            for p in range(nr):             # cb <- Lt^-1 cb
                for i in range(nwf):
                    o = CB[i, p, :nc]
                    for k in range(i):
                        li = LT[i, k, :nc]
                        ck = CB[k, p, :nc]
                        for c in range(nc):
                            o[c] -= li[c] * ck[c]
                    ii = IL[i, :nc]
                    for c in range(nc):
                        o[c] *= ii[c]
            for p in range(nr):             # Gram = ga + cb^T cb
                for q in range(nr):
                    o = GR[p, q, :nc]
                    for c in range(nc):
                        o[c] = ga[p, q]
                    for i in range(nwf):
                        cp = CB[i, p, :nc]
                        cq = CB[i, q, :nc]
                        for c in range(nc):
                            o[c] += cp[c] * cq[c]
            if nb != 1:
                for c in range(nc):         # in c order, as the scalar loop returned
                    if not okc[c]:
                        return np.inf
                    for p in range(nr):
                        for q in range(nr):
                            gram[p, q] = GR[p, q, c]
                    best = _best_fom(best, gram, nb, bmin, bmax, var_x, rlm, levels, lv, G, b)
                    if best >= thr:
                        return best
                continue
            # one DFE tap: _gram_fom's steps for every c at once, as the normalised MSE q
            # (FOM = 20 log10(rlm / (levels - 1) / sqrt(var_x q)) falls as q grows), so the
            # logarithm is taken once per window a, not per pair
            g00 = GR[0, 0, :nc]
            g01 = GR[0, 1, :nc]
            g10 = GR[1, 0, :nc]
            g11 = GR[1, 1, :nc]
            for c in range(nc):
                qv[c], sv[c] = _q_one_dfe(g00[c], g01[c], g10[c], g11[c], b_lo, b_hi)
        qmin = np.inf
        for c in range(nc):             # in c order, as the scalar loop returned
            if not okc[c]:
                return np.inf
            qc = qv[c]
            if not (sv[c] > 0.0 and var_x * qc > 0.0):
                return np.inf
            if qc <= q_thr:
                return 20.0 * np.log10(rlm / (levels - 1) / np.sqrt(var_x * qc))
            if qc < qmin:
                qmin = qc
        if qmin < np.inf:
            best = max(best, 20.0 * np.log10(rlm / (levels - 1) / np.sqrt(var_x * qmin)))
    return best

_QWIN = 64          # UIs of the pulse the V_qc lower bound looks at (8 before the cursor)
_BOX_ITERS = 1      # active-set steps of _box_bound's multipliers (any number: a bound)
# (the kernels pass it as np.int64(_BOX_ITERS) and relaxed as np.bool_(...): a module
# constant or a literal is typed as a Literal and compiles a signature of its own beside
# the int64 / bool one of the callers from Python)
_BOX_SLACK_DB = 1e-6  # added to _box_bound's FOM: its MSE comes from the Lagrangian by a
                      # different sum than the exact solve's (rounding ~1e-12 dB on the
                      # random problems); a tie is never pruned
_RM_SLACK_DB = 1e-6  # added to _pair_bound's suffix FOMs formed by removal from the whole
                     # span (R^-1 by the Gohberg-Semencul recurrence): at most 2.6e-12 dB
                     # from a dense solve's on 300 random problems of D3.3's sizes
_SLACK_DB = 1e-9    # added to the floating taps' FOM bound: rounding (bound and exact FOM
                    # agree to ~1e-12 dB where they meet), so a tie is never pruned


@njit(cache=True)
def _slope_e0(CC, gj, r, ph, nw, P):
    """The slope's energy at phase ph (lag 0 of its UI-sample autocorrelation)."""
    e = 0.0
    for q in range(P):
        e += CC[r, q] * gj[q, ph * nw]
    return e


@njit(cache=True)
def _shift_sum(c, row, offs, start, cnt, out):
    """out[j] = sum_k c[k] row[(start + j - offs[k]) mod N] for j < cnt (N = len(row)),
    the terms in k order from 0.0 as an entry-by-entry sum adds them (the same numbers),
    but tap by tap over contiguous runs of row (one modulo per tap and run, not one per
    entry and tap: an integer division each), so the runs vectorize."""
    N = row.shape[0]
    for j in range(cnt):
        out[j] = 0.0
    for k in range(offs.shape[0]):
        ck = c[k]
        base = (start - offs[k]) % N
        j = 0
        while j < cnt:
            seg = min(cnt - j, N - base)
            src = row[base:base + seg]
            o = out[j:j + seg]
            for i in range(seg):
                o[i] += ck * src[i]
            j += seg
            base = 0
    return out


@njit(cache=True)
def _quant_solve(c, t0, offs, ph, dh, av, rn, hr, nw, dw, nb, wmin, wmax, bmin, bmax,
                 var_x, rlm, levels, R, lo, Y, G, y, z, w, b, qmode, qden, m_lb, p_half,
                 npts_q, dvar, a1, thr, top, hq, cols, nwt, nwg, nwf, chosen, valid, lv,
                 gram, hist, pb):
    """FOM with the quantization noise Delta^2 / 12 (Delta = 2 V_qc / qden) added to the
    noise at the FFE input (lag 0 of rn). qmode 1: an upper bound (V_qc's lower bound from
    _QWIN UIs around the cursor, the step bounded with sum |c_k| sum |t0[ph]|, the relaxed
    solve); qmode 2: that bound first, and when it reaches thr the exact V_qc (every UI)
    and the full steps, else the bound (below thr). With floating groups (nwg > 0) the
    bound's relaxed solve has every position of the span nwt free (so it bounds every
    placement; _relaxed_span, by Schur's recursion, plus _SLACK_DB for rounding) and the
    exact FOM is _float_solve's; with hist, pb not empty (scratch of _prefix_bounds) its
    placements are pruned with the prefix bounds at the exact V_qc (a value below thr is
    returned when the whole span's cannot reach thr), and the sampling time with
    _pair_bound at V_qc's lower bound and with _box_bound and _pair_bound at the exact
    V_qc."""
    K = offs.shape[0]
    N = t0.shape[1]
    rn0 = rn[0]
    sig = np.sqrt(max(rn0 + dvar, 0.0))   # RX, TX, crosstalk, RJ (dvar: minus the DD part)
    l1 = 0.0
    for k in range(K):
        l1 += abs(c[k])
    dy_ub = 2.0 * (l1 * a1[ph] + 10.0 * sig) / (npts_q - 1)
    _shift_sum(c, t0[ph], offs, dh - 8, _QWIN, hq)
    v_lb = _v_qc_lower(hq[:_QWIN], m_lb, dy_ub / 2.0, top)
    d = 2.0 * v_lb / qden
    rn[0] = rn0 + d * d / 12.0
    for i in range(nwt):
        cols[i] = i
    if nwg and pb.shape[0] > 0:
        # the pruned pass visits only the sampling times whose bound from the bound pass
        # (this same number: the same tables and steps) reaches thr; not formed again
        # (3 us of the ~45 us of a visit that the pair bound below prunes)
        fb = np.inf
    elif nwg:   # the whole span free, by Schur's recursion (R is Toeplitz there)
        fb = _relaxed_span(av, rn, hr, nwt, nb, bmin, bmax, var_x, rlm, levels, lv, gram,
                           G, b) + _SLACK_DB
    else:
        fb = _solve_one(av, rn, hr, cols, nw, dw, nb, wmin, wmax, bmin, bmax, var_x, rlm,
                        levels, R, lo, Y, G, y, z, w, b, np.bool_(True))
    if qmode == 1 or fb < thr:
        rn[0] = rn0
        return fb
    if nwg and pb.shape[0] > 0:     # pruned pass: the bound over the placements' sets
        # of floating taps (the tap-limit bound before it, while it pruned a fifth of a
        # row's sampling times, no longer pays since the pair bound got cheaper: 120
        # captured calls of a light set 10.2 against 9.1 s, 200 of CA_19p75dB 11.0
        # against 9.9 s, DPO_12in's 12.2 against 11.8 s)
        fb = _pair_bound(av, rn, hr, nw, nwt, nwg, nwf, nb, bmin, bmax, var_x, rlm,
                         levels, thr - _SLACK_DB, lv, gram, G, b, hist) + _SLACK_DB
        if fb < thr:
            rn[0] = rn0
            return fb
    _shift_sum(c, t0[ph], offs, 0, N, hq)
    v = _v_qc(hq, sig, np.int64(levels), p_half, npts_q)
    d = 2.0 * v / qden
    rn[0] = rn0 + d * d / 12.0
    if nwg and pb.shape[0] > 0:
        _prefix_bounds(av, rn, hr, nwt, nb, bmin, bmax, var_x, rlm, levels, lv, gram, G, b,
                       hist, pb)
        fx = pb[nwt - 1] + _SLACK_DB
        if fx >= thr:           # at the exact V_qc, the bound that keeps the tap limits
            fx = _box_bound(av, rn, hr, nwt, dw, nb, wmin, wmax, bmin, bmax, var_x, rlm,
                            levels, np.int64(_BOX_ITERS)) + _BOX_SLACK_DB
        if fx >= thr:
            fx = _pair_bound(av, rn, hr, nw, nwt, nwg, nwf, nb, bmin, bmax, var_x, rlm,
                             levels, thr - _SLACK_DB, lv, gram, G, b, hist) + _SLACK_DB
        if fx < thr:
            fo = fx
        else:
            fo = _float_solve(av, rn, hr, nw, nwt, nwg, nwf, dw, nb, wmin, wmax, bmin, bmax,
                              var_x, rlm, levels, R, lo, Y, G, y, z, w, b, cols, chosen,
                              valid, thr, pb)
    elif nwg:
        fo = _float_solve(av, rn, hr, nw, nwt, nwg, nwf, dw, nb, wmin, wmax, bmin, bmax,
                          var_x, rlm, levels, R, lo, Y, G, y, z, w, b, cols, chosen, valid,
                          thr, pb)
    else:
        fo = _solve_one(av, rn, hr, cols, nw, dw, nb, wmin, wmax, bmin, bmax, var_x, rlm,
                        levels, R, lo, Y, G, y, z, w, b)
    rn[0] = rn0
    return fo


@njit(cache=True)
def _ts_tables(C, CC, gv, gj, r_base, axt, t0r, noffs, r, ph, dh, dw, nb, nwt, k_j, av, rn,
               hr):
    """Row r's tables at the sampling time of phase ph, UI dh: the victim's UI-sample
    autocorrelation av, the noise's rn (RX, TX, jitter, crosstalk axt) and the cursor and
    DFE rows hr of the convolution matrix, hr[rr, i] = sum_k C[r, k] t0[ph, (dh + dw + rr
    - i - offs[k]) mod N] (t0r: t0's rows reversed, noffs = -offs: the same entries in
    ascending order). Each entry sums its pair or tap terms in the same order as a dot
    product per entry, but pair by pair (tap by tap) over contiguous rows, which
    vectorizes (the dot products were serial chains of additions)."""
    P = CC.shape[1]
    N = t0r.shape[1]
    for lag in range(nwt):
        av[lag] = 0.0
        rn[lag] = 0.0
    o = ph * nwt
    q = 0
    # five pairs per pass over the lags (the presets have 10 or 15 pairs): each entry
    # adds the same terms in the same order, with a fifth of the loads and stores of av
    # and rn that a pass per pair took
    while q + 5 <= P:
        c0 = CC[r, q]
        c1 = CC[r, q + 1]
        c2 = CC[r, q + 2]
        c3 = CC[r, q + 3]
        c4 = CC[r, q + 4]
        v0 = gv[q, o:o + nwt]
        v1 = gv[q + 1, o:o + nwt]
        v2 = gv[q + 2, o:o + nwt]
        v3 = gv[q + 3, o:o + nwt]
        v4 = gv[q + 4, o:o + nwt]
        j0 = gj[q, o:o + nwt]
        j1 = gj[q + 1, o:o + nwt]
        j2 = gj[q + 2, o:o + nwt]
        j3 = gj[q + 3, o:o + nwt]
        j4 = gj[q + 4, o:o + nwt]
        for lag in range(nwt):
            av[lag] = ((((av[lag] + c0 * v0[lag]) + c1 * v1[lag]) + c2 * v2[lag])
                       + c3 * v3[lag]) + c4 * v4[lag]
            rn[lag] = ((((rn[lag] + c0 * j0[lag]) + c1 * j1[lag]) + c2 * j2[lag])
                       + c3 * j3[lag]) + c4 * j4[lag]
        q += 5
    for q in range(q, P):
        cq = CC[r, q]
        gvq = gv[q, o:o + nwt]
        gjq = gj[q, o:o + nwt]
        for lag in range(nwt):
            av[lag] += cq * gvq[lag]
            rn[lag] += cq * gjq[lag]
    for lag in range(nwt):
        rn[lag] = r_base[ph, lag] + k_j * rn[lag] + axt[lag]
    for rr in range(nb + 1):
        _shift_sum(C[r], t0r[ph], noffs, N - 1 - (dh + dw + rr), nwt, hr[rr])


@njit(cache=True, nogil=True)
def _mmse_block(C, CC, gv, gj, gf, r_base, acf_xt0, t0, t0r, S, idx0, offs, m, nw, dw, nb,
                wmin, wmax, bmin, bmax, var_x, k_j, rlm, levels, fom_out, ts_out, chunk,
                qmode, qden, m_lb, p_half, npts_q, k_rj, a1, thr, nwt, nwg, nwf, prune,
                fbs_all, c_first, c_step):
    n = C.shape[0]
    K = C.shape[1]
    P = CC.shape[1]
    nf = gf.shape[0]
    N = t0.shape[1]
    ns = S.shape[1]
    n_chunks = (n + chunk - 1) // chunk
    bad = 0
    cnt = 0
    for ci in range(c_first, n_chunks, c_step):
        R = np.empty((nwt, nwt))
        lo = np.empty((nwt, nwt))
        Y = np.empty((max(nb, 1), nwt))
        G = np.empty((max(nb, 1), nb + 1))
        y = np.empty(nwt)
        z = np.empty(nwt)
        w = np.empty(nwt)
        b = np.empty(max(nb, 1))
        av = np.empty(nwt)
        rn = np.empty(nwt)
        axt = np.empty(nwt)
        hr = np.empty((nb + 1, nwt))
        cols = np.arange(nwt)
        chosen = np.empty(max(nwg * nwf, 1), dtype=np.int64)
        valid = np.empty(nwt, dtype=np.int64)
        top = np.empty(max(m_lb, 1))
        hq = np.empty(N if qmode == 2 else _QWIN)
        lv = np.empty((3, nwt + nb + 1))
        gram = np.empty((nb + 1, nb + 1))
        npb = nwt if prune and qmode == 2 else 0
        hist = np.empty((npb, nb + 1, nb + 1))
        pb = np.empty(npb)
        fbs = np.empty(2 * (m // 2) + 1)
        eph = np.empty(m)
        el = np.empty(nwt)
        noffs = np.empty(K, dtype=np.int64)
        for k in range(K):
            noffs[k] = -offs[k]
        for r in range(ci * chunk, min(n, (ci + 1) * chunk)):
            best_s = -np.inf
            kk = 0
            for s in range(ns):
                v = 0.0
                for k in range(K):
                    v += C[r, k] * S[k, s]
                if v > best_s:
                    best_s = v
                    kk = s
            if kk == 0 or kk == ns - 1:
                bad = 1
                fom_out[r] = -np.inf
                ts_out[r] = -1
                continue
            pk = idx0 + kk
            for lag in range(nwt):
                axt[lag] = acf_xt0[lag]
            for f in range(nf):
                # each phase's lag-0 energy and then the best phase's lags, the pairs'
                # terms in q order per entry, pair by pair (contiguous for the lags)
                for ph in range(m):
                    eph[ph] = 0.0
                for q in range(P):
                    cq = CC[r, q]
                    for ph in range(m):
                        eph[ph] += cq * gf[f, q, ph * nwt]
                be = -np.inf
                bph = 0
                for ph in range(m):
                    if eph[ph] > be:
                        be = eph[ph]
                        bph = ph
                for lag in range(nwt):
                    el[lag] = 0.0
                for q in range(P):
                    cq = CC[r, q]
                    gq = gf[f, q, bph * nwt:bph * nwt + nwt]
                    for lag in range(nwt):
                        el[lag] += cq * gq[lag]
                for lag in range(nwt):
                    axt[lag] += var_x * el[lag]
            fbest = -np.inf
            tbest = -1
            if qmode == 2 and prune:
                # every sampling time's bound (kept from the bound pass when given:
                # the same numbers), then the exact FOM in descending order of the bound
                # while it can reach thr or the best exact FOM so far (a time whose bound
                # is below that cannot be the row's first best)
                n_new = 0 if fbs_all.shape[0] > 0 else fbs.shape[0]
                for i in range(fbs.shape[0] - n_new):
                    fbs[i] = fbs_all[r, i]
                for dt in range(-(m // 2), -(m // 2) + n_new):
                    ts = pk + dt
                    dh = ts // m
                    ph = ts - dh * m
                    _ts_tables(C, CC, gv, gj, r_base, axt, t0r, noffs, r, ph, dh, dw, nb, nwt,
                               k_j, av, rn, hr)
                    cnt += 1
                    # qmode - 1 (== 1 here) and qmode below: int64 values, not the literals
                    # 1 and 2, so _quant_solve compiles one signature, not three
                    fbs[dt + m // 2] = _quant_solve(
                        C[r], t0, offs, ph, dh, av, rn, hr, nw, dw, nb, wmin, wmax, bmin,
                        bmax, var_x, rlm, levels, R, lo, Y, G, y, z, w, b, qmode - 1, qden,
                        m_lb, p_half, npts_q, (k_rj - k_j) * _slope_e0(CC, gj, r, ph, nwt, P),
                        a1, thr[r], top, hq, cols, nwt, nwg, nwf, chosen, valid, lv, gram,
                        hist[:0], pb[:0])
                order = np.argsort(-fbs, kind="mergesort")
                for oi in range(order.shape[0]):
                    dt = order[oi] - m // 2
                    th = max(thr[r], fbest)
                    if fbs[order[oi]] < th:
                        break
                    ts = pk + dt
                    dh = ts // m
                    ph = ts - dh * m
                    _ts_tables(C, CC, gv, gj, r_base, axt, t0r, noffs, r, ph, dh, dw, nb, nwt,
                               k_j, av, rn, hr)
                    fo = _quant_solve(
                        C[r], t0, offs, ph, dh, av, rn, hr, nw, dw, nb, wmin, wmax, bmin,
                        bmax, var_x, rlm, levels, R, lo, Y, G, y, z, w, b, qmode, qden,
                        m_lb, p_half, npts_q, (k_rj - k_j) * _slope_e0(CC, gj, r, ph, nwt, P),
                        a1, th, top, hq, cols, nwt, nwg, nwf, chosen, valid, lv, gram, hist,
                        pb)
                    if fo > fbest or (fo == fbest and ts < tbest):
                        fbest = fo
                        tbest = ts
                if fbest == -np.inf and fbs[order[0]] < thr[r]:   # the best bound, < thr
                    fbest = fbs[order[0]]
                    tbest = pk + order[0] - m // 2
                fom_out[r] = fbest
                ts_out[r] = tbest
                continue
            for dt in range(-(m // 2), m // 2 + 1):
                ts = pk + dt
                dh = ts // m
                ph = ts - dh * m
                _ts_tables(C, CC, gv, gj, r_base, axt, t0r, noffs, r, ph, dh, dw, nb, nwt, k_j,
                           av, rn, hr)
                cnt += 1
                if qmode == 0 and nwg:
                    fo = _float_solve(av, rn, hr, nw, nwt, nwg, nwf, dw, nb, wmin, wmax, bmin,
                                      bmax, var_x, rlm, levels, R, lo, Y, G, y, z, w, b, cols,
                                      chosen, valid, -np.inf, pb[:0])
                elif qmode == 0:
                    fo = _solve_one(av, rn, hr, cols, nw, dw, nb, wmin, wmax, bmin, bmax, var_x,
                                    rlm, levels, R, lo, Y, G, y, z, w, b)
                else:
                    fo = _quant_solve(C[r], t0, offs, ph, dh, av, rn, hr, nw, dw, nb, wmin,
                                      wmax, bmin, bmax, var_x, rlm, levels, R, lo, Y, G, y,
                                      z, w, b, qmode, qden, m_lb, p_half, npts_q,
                                      (k_rj - k_j) * _slope_e0(CC, gj, r, ph, nwt, P), a1,
                                      thr[r], top, hq, cols, nwt, nwg, nwf, chosen, valid,
                                      lv, gram, hist[:0], pb[:0])
                if qmode == 1 and fbs_all.shape[0] > 0:
                    fbs_all[r, dt + m // 2] = fo
                if fo > fbest:
                    fbest = fo
                    tbest = ts
            fom_out[r] = fbest
            ts_out[r] = tbest
    return bad, cnt
