"""Statistical-engine kernels for the jitter quadrature: private @njit ``_name`` behind
checking wrappers ``name`` (see serdes.kernels.args).

* :func:`_row_responses`: the combined response ``f = sum_i w_i p(. + o_ri)`` of every
  quadrature row r at once, each FFE tap's pulse re-sampled at its own offset ``o_ri``
  (4-point Lagrange on the fine pulse, the formula of ``kernels.fir._cubic``), and with
  random jitter the pulse averaged over the Gauss-Hermite nodes and each sample's
  jitter variance. The same arithmetic, in the same order, as re-sampling the pulses
  one at a time and adding ``w_i h_i`` tap by tap.
* the mixture tails at many points are in :mod:`serdes.kernels.stat_tails`.
"""

import math

import numpy as np

from serdes.errors import ConfigError
from serdes.kernels import args
from serdes.kernels.jit import njit

@njit(cache=True)
def _lagrange(p, pos):
    """4-point Lagrange interpolation of p at fractional index pos (zero outside)."""
    i = int(np.floor(pos))
    t = pos - i
    n = p.shape[0]
    y0 = p[i - 1] if 0 <= i - 1 < n else 0.0
    y1 = p[i] if 0 <= i < n else 0.0
    y2 = p[i + 1] if 0 <= i + 1 < n else 0.0
    y3 = p[i + 2] if 0 <= i + 2 < n else 0.0
    return (-t * (t - 1.0) * (t - 2.0) / 6.0 * y0 + (t + 1.0) * (t - 1.0) * (t - 2.0) / 2.0 * y1
            - (t + 1.0) * t * (t - 2.0) / 2.0 * y2 + (t + 1.0) * t * (t - 1.0) / 6.0 * y3)


@njit(cache=True, inline="always")
def _gh_moments(p, phase, o, m, rj_ui, gh_x, gh_w, hq, mean, var):
    """Mean and variance over the Gauss-Hermite nodes of the L symbol-spaced samples of
    pulse ``p`` (fine grid, m per UI) at offset ``o`` UI with ``rj_ui`` rms jitter, into
    mean[:L] and var[:L]; hq (Q, L) is scratch. Shared by both row kernels."""
    Q, L = hq.shape
    for q in range(Q):
        base = phase + (o + rj_ui * gh_x[q]) * m
        for j in range(L):
            hq[q, j] = _lagrange(p, base + m * j)
    for j in range(L):
        pb = 0.0
        for q in range(Q):
            pb += gh_w[q] * hq[q, j]
        v = 0.0
        for q in range(Q):
            dv = hq[q, j] - pb
            v += gh_w[q] * dv * dv
        mean[j] = pb
        var[j] = v


@njit(cache=True)
def _row_responses(fine, phase, m, n_ui, offsets_ui, w, rj_ui, gh_x, gh_w):
    """Combined responses and per-tap jitter variances of quadrature rows.

    fine        the pulse on the fine grid (m samples per UI); fine[phase + j m] is
                symbol-spaced sample j
    offsets_ui  (R, n) the sampling offset (UI) of the sample FFE tap i sees in row r
    w           (n,) FFE taps
    rj_ui       random jitter (UI rms); 0: the pulse itself, jitter variance 0
    gh_x, gh_w  Gauss-Hermite nodes (in stds) and weights (sum 1), used when rj_ui > 0
    Returns f (R, n + n_ui - 1) and jvar (R, n, n_ui).
    """
    R, n = offsets_ui.shape
    L = n_ui
    Q = gh_x.shape[0]
    f = np.zeros((R, n + L - 1))
    jvar = np.zeros((R, n, L))
    h = np.empty(L)
    hq = np.empty((Q, L))
    for r in range(R):
        for i in range(n):
            o = offsets_ui[r, i]
            if rj_ui > 0.0:
                _gh_moments(fine, phase, o, m, rj_ui, gh_x, gh_w, hq, h, jvar[r, i])
            else:
                base = phase + o * m
                for j in range(L):
                    h[j] = _lagrange(fine, base + m * j)
            wi = w[i]
            for j in range(L):
                f[r, i + j] += wi * h[j]
    return f, jvar


@njit(cache=True)
def _lane_row_responses(fines, tap_fine, tap_gain, common, phase, m, n_ui, offsets_ui, w,
                        rj_ui, gh_x, gh_w):
    """_row_responses for an interleaved ADC: FFE tap i reads lane pulse
    ``fines[tap_fine[i]]`` with gain ``tap_gain[i]``; with random jitter its samples are
    moved by the jitter's mean shift of the ``common`` pulse (h_lane + (pbar - h_common)),
    and their jitter variance is the common pulse's times the gain squared (the
    arithmetic of InterleavedStatistics.response, summed in the same order)."""
    R, n = offsets_ui.shape
    L = n_ui
    Q = gh_x.shape[0]
    f = np.zeros((R, n + L - 1))
    jvar = np.zeros((R, n, L))
    h = np.empty(L)
    hq = np.empty((Q, L))
    mu = np.empty(L)
    for r in range(R):
        for i in range(n):
            o = offsets_ui[r, i]
            lane = fines[tap_fine[i]]
            g = tap_gain[i]
            base = phase + o * m
            for j in range(L):
                h[j] = _lagrange(lane, base + m * j)
            if rj_ui > 0.0:
                _gh_moments(common, phase, o, m, rj_ui, gh_x, gh_w, hq, mu, jvar[r, i])
                for j in range(L):
                    h[j] = h[j] + (mu[j] - _lagrange(common, base + m * j))
                    jvar[r, i, j] = jvar[r, i, j] * g * g
            wg = w[i] * g
            for j in range(L):
                f[r, i + j] += wg * h[j]
    return f, jvar


# ------------------------------------------------------------------ public wrappers
def row_responses(fine, phase, m, n_ui, offsets_ui, w, rj_ui=0.0, gh_x=(0.0,),
                  gh_w=(1.0,)):
    """(f, jvar): the combined response of each quadrature row (R, n + n_ui - 1) and
    the jitter variance of each tap's pulse samples (R, n, n_ui); see _row_responses."""
    m = args.integer("m", m, lo=1)
    n_ui = args.integer("n_ui", n_ui, lo=1)
    fine = args.array("fine", fine, finite=True, min_len=1)
    offsets_ui = args.array("offsets_ui", offsets_ui, ndim=2, finite=True)
    w = args.array("w", w, finite=True)
    if offsets_ui.shape[1] != w.shape[0]:
        raise ConfigError(f"offsets_ui: {offsets_ui.shape[1]} columns for {w.shape[0]} "
                          "FFE taps")
    gh_x = args.array("gh_x", gh_x, finite=True, min_len=1)
    gh_w = args.array("gh_w", gh_w, finite=True, min_len=1)
    if gh_x.shape != gh_w.shape:
        raise ConfigError(f"gh_w: {gh_w.shape[0]} weights for {gh_x.shape[0]} nodes")
    return _row_responses(fine, args.real("phase", phase), m, n_ui, offsets_ui, w,
                          args.real("rj_ui", rj_ui, nonneg=True), gh_x, gh_w)


_TILE = 512   # outputs per tile of _rj_classes


@njit(cache=True)
def _top_sorted(vs, first):
    """np.sort(vs)[first:] (the order statistics first .. n - 1) without sorting the
    rest: Hoare's selection (median-of-three pivot) on a copy, then a heap sort of the top.
    The same values as np.sort(np.partition(vs, first)[first:]); numba's np.partition
    (with the np.unique behind its argument check) was about 12 s of a first run's
    compilation, this loop a fraction of a second."""
    x = vs.copy()
    lo = 0
    hi = x.shape[0] - 1
    while lo < hi:
        a, b, c = x[lo], x[(lo + hi) // 2], x[hi]
        if a > b:
            a, b = b, a
        pivot = b if b < c else (c if c > a else a)   # the median of a <= b and c
        i, j = lo, hi
        while i <= j:
            while x[i] < pivot:
                i += 1
            while x[j] > pivot:
                j -= 1
            if i <= j:
                x[i], x[j] = x[j], x[i]
                i += 1
                j -= 1
        # x[lo..j] <= pivot <= x[i..hi], the pivot's value in between
        if first <= j:
            hi = j
        elif first >= i:
            lo = i
        else:
            break
    top = x[first:].copy()
    _heapsort(top)
    return top


@njit(cache=True)
def _heapsort(x):
    """Sort ``x`` in place, ascending (the values of np.sort(x); numba's np.sort was
    about 2.5 s of a first run's compilation, this loop a fraction of a second)."""
    n = x.shape[0]
    for k in range(n // 2 - 1, -1, -1):
        _sift(x, k, n)
    for end in range(n - 1, 0, -1):
        x[0], x[end] = x[end], x[0]
        _sift(x, 0, end)


@njit(cache=True)
def _sift(x, root, end):
    while True:
        child = 2 * root + 1
        if child >= end:
            return
        if child + 1 < end and x[child] < x[child + 1]:
            child += 1
        if x[root] < x[child]:
            x[root], x[child] = x[child], x[root]
            root = child
        else:
            return


@njit(cache=True)
def _add4(y, x, b, kn, c0, c1, c2, c3):
    """y[k] += c0 x[b + k], then c1 x[b - 1 + k], c2 x[b - 2 + k] and c3 x[b - 3 + k]
    (k < kn), each in that order with the partial sum in a register: the numbers of four
    passes of one tap, with one load and store of y instead of four."""
    s0 = x[b:b + kn]
    s1 = x[b - 1:b - 1 + kn]
    s2 = x[b - 2:b - 2 + kn]
    s3 = x[b - 3:b - 3 + kn]
    for k in range(kn):
        v = y[k]
        v += c0 * s0[k]
        v += c1 * s1[k]
        v += c2 * s2[k]
        v += c3 * s3[k]
        y[k] = v


@njit(cache=True)
def _rj_samples(a, idx, dev, lo, hi, gh_w, w2, w3, d):
    """(V, K3, level index) of every sample with a full pulse (see _rj_classes)."""
    S = a.shape[0]
    Q, L = dev.shape
    n = w2.shape[0]
    N = S - L + 1
    # loops over contiguous slices, so that they vectorize, in tiles of _TILE outputs
    # that stay in the L1 cache (each sum keeps its order: the same numbers untiled)
    var = np.zeros(N)
    m3 = np.zeros(N)
    yq = np.empty(_TILE)
    for t0 in range(0, N, _TILE):
        kn = min(_TILE, N - t0)
        vt = var[t0:t0 + kn]
        mt = m3[t0:t0 + kn]
        for q in range(Q):
            for k in range(kn):
                yq[k] = 0.0
            l = lo
            while l + 4 <= hi:   # four taps per pass, each sum in the same order
                _add4(yq, a, L - 1 - l + t0, kn, dev[q, l], dev[q, l + 1], dev[q, l + 2],
                      dev[q, l + 3])
                l += 4
            while l < hi:
                g = dev[q, l]
                src = a[L - 1 - l + t0:L - 1 - l + t0 + kn]
                for k in range(kn):
                    yq[k] += src[k] * g
                l += 1
            wq = gh_w[q]
            for k in range(kn):
                y2 = yq[k] * yq[k]
                vt[k] += wq * y2
                mt[k] += wq * y2 * yq[k]
    nv = N - n + 1
    v = np.zeros(nv)
    k3 = np.zeros(nv)
    for t0 in range(0, nv, _TILE):
        kn = min(_TILE, nv - t0)
        vt = v[t0:t0 + kn]
        kt = k3[t0:t0 + kn]
        i = 0
        while i + 4 <= n:
            b = n - 1 - i + t0
            _add4(vt, var, b, kn, w2[i], w2[i + 1], w2[i + 2], w2[i + 3])
            _add4(kt, m3, b, kn, w3[i], w3[i + 1], w3[i + 2], w3[i + 3])
            i += 4
        while i < n:
            a2 = w2[i]
            src = var[n - 1 - i + t0:n - 1 - i + t0 + kn]
            for k in range(kn):
                vt[k] += a2 * src[k]
            a3 = w3[i]
            src = m3[n - 1 - i + t0:n - 1 - i + t0 + kn]
            for k in range(kn):
                kt[k] += a3 * src[k]
            i += 1
    lv = np.empty(nv, dtype=np.int64)
    for k in range(nv):
        lv[k] = idx[L + n - 2 + k - d]
    return v, k3, lv


@njit(cache=True)
def _rj_classes(a, idx, dev, lo, hi, gh_w, w2, w3, d, m, fracs, nc):
    """The sums behind the random-jitter classes of serdes.engines.stat.rj at one
    sampling offset, from the fixed symbol sequence ``a`` (level indices ``idx``):

    y_q[k] = sum_{l=lo}^{hi-1} a[k + L - 1 - l] dev[q, l]   (every sample with a full pulse)
    var = sum_q gh_w[q] y_q^2, m3 = sum_q gh_w[q] y_q^3
    V[k] = sum_i w2[i] var[k + n - 1 - i], K3[k] = sum_i w3[i] m3[k + n - 1 - i]

    Each output belongs to the level of symbol L + n - 2 + k - d; within its level a
    sample's class is the number of the level's quantiles at ``fracs`` (NumPy's linear
    rule) above its V, and its group is (level nc + class) 2 + (K3 < 0).
    Returns per group the count and the sums of V, V^2 and K3, and the count per level.
    """
    v, k3, lv = _rj_samples(a, idx, dev, lo, hi, gh_w, w2, w3, d)
    nv = v.shape[0]
    counts = np.zeros(m, dtype=np.int64)
    for k in range(nv):
        counts[lv[k]] += 1
    # every level's V, in sample order, gathered in one pass
    start = np.zeros(m + 1, dtype=np.int64)
    for i in range(m):
        start[i + 1] = start[i] + counts[i]
    fill = start[:m].copy()
    by_level = np.empty(nv)
    for k in range(nv):
        i = lv[k]
        by_level[fill[i]] = v[k]
        fill[i] += 1
    nf = fracs.shape[0]
    thr = np.zeros((m, nf))
    for i in range(m):
        c = counts[i]
        if c == 0:
            continue
        vs = by_level[start[i]:start[i + 1]]
        # the order statistics at and above the lowest quantile's lower neighbour:
        # one partition, then a sort of the top alone
        first = c - 1
        for f in range(nf):
            virt = (c - 1) * fracs[f]
            if 0 <= virt < first:
                first = int(math.floor(virt))
        top = _top_sorted(vs, first)
        for f in range(nf):
            virt = (c - 1) * fracs[f]
            if virt >= c - 1:
                thr[i, f] = top[c - 1 - first]
                continue
            prev = int(math.floor(virt))
            gamma = virt - prev
            lo_v = top[prev - first]
            hi_v = top[prev + 1 - first]
            diff = hi_v - lo_v
            if gamma >= 0.5:
                thr[i, f] = hi_v - diff * (1 - gamma)
            else:
                thr[i, f] = lo_v + diff * gamma
    G = m * nc * 2
    cnt = np.zeros(G)
    s1 = np.zeros(G)
    s2 = np.zeros(G)
    s3 = np.zeros(G)
    for k in range(nv):
        i = lv[k]
        cls = 0
        for f in range(nf):
            if v[k] < thr[i, f]:
                cls += 1
        g = (i * nc + cls) * 2 + (1 if k3[k] < 0 else 0)
        cnt[g] += 1.0
        s1[g] += v[k]
        s2[g] += v[k] * v[k]
        s3[g] += k3[k]
    return cnt, s1, s2, s3, counts


def sample_args(a, idx, dev, lo, hi, gh_w, w2, w3, d, m):
    """The checked arguments ``a`` .. ``d``, ``m`` of the RJ sample kernels (the
    symbols, their level indices, the Gauss-Hermite pulse deviations and weights, the
    FFE's squared and cubed taps, the cursor delay, the number of levels), shared by
    :func:`rj_classes` and :func:`serdes.kernels.stat_joint.rj_joint_classes`."""
    a = args.array("a", a, finite=True, min_len=1)
    idx = args.array("idx", idx, dtype=np.int64)
    dev = args.array("dev", dev, ndim=2, finite=True)
    gh_w = args.array("gh_w", gh_w, finite=True)
    w2 = args.array("w2", w2, finite=True, min_len=1)
    w3 = args.array("w3", w3, finite=True)
    L = dev.shape[1]
    m = args.integer("m", m, lo=1)
    if idx.shape != a.shape or (idx.size and (idx.min() < 0 or idx.max() >= m)):
        raise ConfigError(f"idx: needs one level index in 0..{m - 1} per symbol")
    if gh_w.shape[0] != dev.shape[0]:
        raise ConfigError(f"gh_w: {gh_w.shape[0]} weights for {dev.shape[0]} nodes")
    if w3.shape != w2.shape:
        raise ConfigError(f"w3: {w3.shape[0]} values for {w2.shape[0]} FFE taps")
    lo = args.integer("lo", lo, lo=0, hi=L - 1)
    hi = args.integer("hi", hi, lo=lo + 1, hi=L)
    d = args.integer("d", d, lo=0, hi=L + w2.shape[0] - 2)
    if a.shape[0] < L + w2.shape[0]:
        raise ConfigError(f"a: needs at least {L + w2.shape[0]} symbols, got {a.shape[0]}")
    return a, idx, dev, lo, hi, gh_w, w2, w3, d, m


def rj_classes(a, idx, dev, lo, hi, gh_w, w2, w3, d, m, fracs, nc):
    """Group counts and sums of the random-jitter classes (see _rj_classes)."""
    a, idx, dev, lo, hi, gh_w, w2, w3, d, m = sample_args(a, idx, dev, lo, hi, gh_w, w2,
                                                          w3, d, m)
    fracs = args.array("fracs", fracs, finite=True)
    if fracs.size and (fracs.min() < 0.0 or fracs.max() > 1.0):
        raise ConfigError("fracs: quantile fractions must be in [0, 1]")
    nc = args.integer("nc", nc, lo=fracs.shape[0] + 1)
    return _rj_classes(a, idx, dev, lo, hi, gh_w, w2, w3, d, m, fracs, nc)


def rj_samples(a, idx, dev, lo, hi, gh_w, w2, w3, d, m):
    """(V, K3, level index) of every sample with a full pulse (see _rj_samples)."""
    a, idx, dev, lo, hi, gh_w, w2, w3, d, m = sample_args(a, idx, dev, lo, hi, gh_w, w2,
                                                          w3, d, m)
    return _rj_samples(a, idx, dev, lo, hi, gh_w, w2, w3, d)


def lane_row_responses(fines, tap_fine, tap_gain, common, phase, m, n_ui, offsets_ui, w,
                       rj_ui=0.0, gh_x=(0.0,), gh_w=(1.0,)):
    """(f, jvar) of quadrature rows through an interleaved ADC's lanes (see
    _lane_row_responses): ``fines`` (lane pulses, one per row), ``tap_fine`` the lane
    pulse and ``tap_gain`` the gain each FFE tap reads."""
    m = args.integer("m", m, lo=1)
    n_ui = args.integer("n_ui", n_ui, lo=1)
    fines = args.array("fines", fines, ndim=2, finite=True)
    common = args.array("common", common, finite=True, min_len=1)
    offsets_ui = args.array("offsets_ui", offsets_ui, ndim=2, finite=True)
    w = args.array("w", w, finite=True)
    n = w.shape[0]
    tap_fine = args.array("tap_fine", tap_fine, dtype=np.int64)
    tap_gain = args.array("tap_gain", tap_gain, finite=True)
    if offsets_ui.shape[1] != n or tap_fine.shape != (n,) or tap_gain.shape != (n,):
        raise ConfigError(f"offsets_ui, tap_fine, tap_gain: need {n} columns (FFE taps)")
    if n and (tap_fine.min() < 0 or tap_fine.max() >= fines.shape[0]):
        raise ConfigError(f"tap_fine: lane pulse indices in 0..{fines.shape[0] - 1}")
    gh_x = args.array("gh_x", gh_x, finite=True, min_len=1)
    gh_w = args.array("gh_w", gh_w, finite=True, min_len=1)
    if gh_x.shape != gh_w.shape:
        raise ConfigError(f"gh_w: {gh_w.shape[0]} weights for {gh_x.shape[0]} nodes")
    return _lane_row_responses(fines, tap_fine, tap_gain, common,
                               args.real("phase", phase), m, n_ui, offsets_ui, w,
                               args.real("rj_ui", rj_ui, nonneg=True), gh_x, gh_w)
