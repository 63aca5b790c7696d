"""The statistical engine's slicer distributions of many jitter-quadrature rows in one
call (Gaussian noise, no random jitter, no crosstalk): private @njit ``_name`` behind
the checking wrapper ``gauss_rows`` (see serdes.kernels.args).

Per row the steps of ``StatisticalEngine.distribution``: the residual cursors above
``tiny`` (values ``c a`` of the M levels) and the ADC's per-tap uniform quantization
errors of at least one grid step (a K-point midpoint rule, the variance it lacks moved
to the Gaussian) convolved on the row's grid (:func:`_convolve`, which is also the
kernel of ``kernels.stat.isi_pmf``), the grid's excess variance taken off the Gaussian,
and the tails of every level at every slicer threshold that the decision matrix and the
per-eye error rates use (the sums of ``kernels.stat._tail_points`` with beta = 0).
"""

import math

import numpy as np

from serdes.errors import ConfigError
from serdes.kernels import args
from serdes.kernels.jit import njit

Z_LO = 8.3    # as serdes.kernels.stat
Z_HI = 11.5


@njit(cache=True)
def _stable_order(keys):
    """np.argsort(keys, kind="stable") of non-negative integer keys, by counting: the
    same order (numba's merge sort was about 3.5 s of a first run's compilation)."""
    n = keys.shape[0]
    kmax = 0
    for j in range(n):
        if keys[j] > kmax:
            kmax = keys[j]
    pos = np.zeros(kmax + 2, dtype=np.int64)
    for j in range(n):
        pos[keys[j] + 1] += 1
    for k in range(kmax + 1):
        pos[k + 1] += pos[k]
    order = np.empty(n, dtype=np.int64)
    for j in range(n):
        order[pos[keys[j]]] = j
        pos[keys[j]] += 1
    return order


@njit(cache=True)
def _isi_pmf(values, probs, delta):
    """``kernels.stat.isi_pmf``'s kernel: every row of ``values`` a component. Its own
    entry point, so the Python callers keep one specialization while the rows' kernels
    below call ``_convolve`` with their own argument types."""
    return _convolve(values, probs, values.shape[0], delta)


@njit(cache=True)
def _convolve(values, probs, n_comp, delta):
    """PMF of the sum of independent components on a grid of spacing ``delta``: the
    kernel of ``kernels.stat.isi_pmf`` and of every row here.

    values, probs  (>= n_comp, K) arrays: component j < n_comp takes values[j, m] with
                   probability probs[j, m] (rows sum to 1; zero-probability points
                   are ignored)
    Returns (pmf, k0): pmf[n] is the probability of (k0 + n) * delta.
    """
    K = values.shape[1]
    lo = np.empty(n_comp, dtype=np.int64)
    hi = np.empty(n_comp, dtype=np.int64)
    k0 = 0
    total = 1
    for j in range(n_comp):
        a = 1 << 62
        b = -(1 << 62)
        for m in range(K):
            if probs[j, m] > 0.0:
                f = int(math.floor(values[j, m] / delta))
                if f < a:
                    a = f
                if f + 1 > b:
                    b = f + 1
        if b < a:  # empty component: a point mass at 0
            a = 0
            b = 0
        lo[j] = a
        hi[j] = b
        k0 += a
        total += b - a
    pmf = np.zeros(total)
    tmp = np.zeros(total)
    pmf[0] = 1.0
    width = 1
    idx = np.empty(2 * K, dtype=np.int64)
    wts = np.empty(2 * K)
    # narrow components first: the running PMF stays narrow until the wide ones (the
    # work is the sum of width x points; the result is the same up to rounding, every
    # term being positive)
    order = _stable_order(hi - lo)
    for jj in range(n_comp):
        j = order[jj]
        # the component's binned points (at most 2K, merged by position)
        nnz = 0
        for m in range(K):
            p = probs[j, m]
            if p <= 0.0:
                continue
            u = values[j, m] / delta
            f = math.floor(u)
            t = u - f
            b0 = int(f) - lo[j]
            for s in range(2):
                bb = b0 + s
                ww = p * (1.0 - t) if s == 0 else p * t
                if ww == 0.0:
                    continue
                found = False
                for q in range(nnz):
                    if idx[q] == bb:
                        wts[q] += ww
                        found = True
                        break
                if not found:
                    idx[nnz] = bb
                    wts[nnz] = ww
                    nnz += 1
        w = hi[j] - lo[j] + 1
        new_width = width + w - 1
        for n in range(new_width):
            tmp[n] = 0.0
        for q in range(nnz):
            off = idx[q]
            wq = wts[q]
            for n in range(width):
                tmp[n + off] += wq * pmf[n]
        for n in range(new_width):
            pmf[n] = tmp[n]
        width = new_width
    # trim exact zeros at both ends
    first = 0
    while first < width - 1 and pmf[first] == 0.0:
        first += 1
    last = width - 1
    while last > first and pmf[last] == 0.0:
        last -= 1
    return pmf[first:last + 1].copy(), k0 + first


@njit(cache=True)
def _q(z):
    return 0.5 * math.erfc(z * 0.7071067811865476)


@njit(cache=True)
def _tail(pmf, G, csum, k0, delta, y, sigma, upper):
    """P(X + sigma U > y) (upper) or P(X + sigma U < y): _tail_points at one point."""
    s = (y / delta) - k0
    r = sigma / delta
    acc = 0.0
    if upper:
        n_one = int(math.floor(s - (-Z_LO) * r)) + 1
        n_zero = int(math.ceil(s - Z_HI * r))
        a = max(n_zero, 0)
        b = min(n_one, G)
        if n_one < G:
            acc += csum[G] - csum[max(n_one, 0)]
        for n in range(a, b):
            acc += pmf[n] * _q((y - (k0 + n) * delta) / sigma)
    else:
        n_one = int(math.ceil(s - Z_LO * r))
        n_zero = int(math.floor(s - (-Z_HI) * r)) + 1
        a = max(n_one, 0)
        b = min(n_zero, G)
        if n_one > 0:
            acc += csum[min(n_one, G)]
        for n in range(a, b):
            acc += pmf[n] * _q(-((y - (k0 + n) * delta) / sigma))
    return acc


@njit(cache=True)
def _gauss_rows(resid, tiny, deltas, levels, thresholds, half, fd, nv, floor):
    """Slicer distributions of R rows (see the module docstring).

    resid (R, N) residual ISI per row; tiny (R,) cursors at or below it are left out;
    deltas (R,) grid steps; half (n_w,) half an LSB times |w_i| per FFE tap (empty:
    quantization taken as Gaussian elsewhere); fd (R,) main cursors; nv (R,) the
    Gaussian variance of every level; floor (R,) the smallest std.
    Returns pmfs (R, G_max) zero-padded, lengths (R,), k0 (R,), isi_var (R,),
    noise_var (R,) (Gaussian before the grid correction), sigma (R,), approximate (R,),
    tails (R, M, M - 1, 2): [.., 0] P(v_i < t_e), [.., 1] P(v_i > t_e), NaN where unused.
    """
    R, N = resid.shape
    M = levels.shape[0]
    E = thresholds.shape[0]
    es = 0.0
    for i in range(M):
        es += levels[i] * levels[i]
    es /= M
    nw = half.shape[0]
    hmax = 0.0
    for i in range(nw):
        hmax = max(hmax, half[i])
    lengths = np.zeros(R, dtype=np.int64)
    k0s = np.zeros(R, dtype=np.int64)
    isi_var = np.zeros(R)
    noise_var = np.zeros(R)
    sigma = np.zeros(R)
    approx = np.zeros(R, dtype=np.uint8)
    tails = np.full((R, M, E, 2), np.nan)
    pmfs_list = []
    for r in range(R):
        delta = deltas[r]
        K = 2
        if nw and hmax >= delta:
            K = int(min(max(math.ceil(2 * hmax / delta), 2), 512))
        width = max(K, M)
        values = np.zeros((N + nw, width))
        probs = np.zeros((N + nw, width))
        nc = 0
        cc = 0.0
        for j in range(N):
            c = resid[r, j]
            if abs(c) > tiny[r]:
                for mm in range(M):
                    values[nc, mm] = c * levels[mm]
                    probs[nc, mm] = 1.0 / M
                nc += 1
                cc += c * c
        var = es * cc
        extra = 0.0
        big2 = 0.0
        nbig = 0
        for i in range(nw):
            h = half[i]
            if h >= delta:
                for k in range(K):
                    values[nc, k] = h * ((k + 0.5) / K * 2 - 1)
                    probs[nc, k] = 1.0 / K
                nc += 1
                big2 += h * h
                nbig += 1
        small2 = 0.0
        for i in range(nw):
            if half[i] < delta:
                small2 += half[i] * half[i]
        if nbig:
            var += big2 / 3.0
        if nw:
            extra = small2 / 3.0
            if nbig:
                extra += big2 / 3.0 / K ** 2
                var -= big2 / 3.0 / K ** 2
        pmf, k0 = _convolve(values, probs, nc, delta)
        G = pmf.shape[0]
        mean = 0.0
        for n in range(G):
            mean += pmf[n] * ((k0 + n) * delta)
        vg = 0.0
        for n in range(G):
            dx = (k0 + n) * delta - mean
            vg += pmf[n] * dx * dx
        excess = vg - var
        gvar = nv[r] + extra
        eff = gvar - excess
        lim = 0.25 * gvar
        if eff < lim:
            approx[r] = 1
            eff = lim
        eff = max(eff, floor[r] * floor[r])
        sig = math.sqrt(eff)
        csum = np.empty(G + 1)
        csum[0] = 0.0
        for n in range(G):
            csum[n + 1] = csum[n] + pmf[n]
        for i in range(M):
            mean_i = fd[r] * levels[i]
            for e in range(E):
                up_dm = e >= i
                up_ws = thresholds[e] > mean_i
                y = thresholds[e] - mean_i
                for u in range(2):
                    want = (u == 1) == up_dm or (u == 1) == up_ws
                    if want:
                        tails[r, i, e, u] = _tail(pmf, G, csum, k0, delta, y, sig, u == 1)
        lengths[r] = G
        k0s[r] = k0
        isi_var[r] = var
        noise_var[r] = gvar
        sigma[r] = sig
        pmfs_list.append(pmf)
    gmax = 1
    for r in range(R):
        gmax = max(gmax, lengths[r])
    pmfs = np.zeros((R, gmax))
    for r in range(R):      # element loops: an array assignment compiles numba's
        pr = pmfs_list[r]       # shape-mismatch error path (seconds on a first run)
        for i in range(lengths[r]):
            pmfs[r, i] = pr[i]
    return pmfs, lengths, k0s, isi_var, noise_var, sigma, approx, tails


def gauss_rows(resid, tiny, deltas, levels, thresholds, half, fd, nv, floor):
    """Slicer distributions of many rows in one call (see _gauss_rows)."""
    resid = args.array("resid", resid, ndim=2, finite=True)
    R = resid.shape[0]
    out = []
    for name, v in (("tiny", tiny), ("deltas", deltas), ("fd", fd), ("nv", nv),
                    ("floor", floor)):
        a = args.array(name, v, finite=True)
        if a.shape[0] != R:
            raise ConfigError(f"{name}: needs one value per row ({R}), got {a.shape[0]}")
        out.append(a)
    tiny, deltas, fd, nv, floor = out
    if R and deltas.min() <= 0:
        raise ConfigError("deltas: grid steps must be > 0")
    levels = args.array("levels", levels, finite=True, min_len=2)
    thresholds = args.array("thresholds", thresholds, finite=True)
    if thresholds.shape[0] != levels.shape[0] - 1:
        raise ConfigError(f"thresholds: needs {levels.shape[0] - 1} values, got "
                          f"{thresholds.shape[0]}")
    half = args.array("half", half, finite=True)
    if half.size and half.min() < 0:
        raise ConfigError("half: half-LSB errors must be >= 0")
    return _gauss_rows(resid, tiny, deltas, levels, thresholds, half, fd, nv, floor)
