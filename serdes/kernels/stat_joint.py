"""Kernel of the random-jitter classes joint with the ISI
(:mod:`serdes.engines.stat.rj_joint`): private @njit ``_name`` behind the checking
wrapper :func:`rj_joint_classes` (see serdes.kernels.args).

From the fixed symbol sample of :class:`~serdes.engines.stat.rj.RandomJitterModel`: each
sample's jitter variance V, third cumulant K3 and decided level (the sums of
:func:`serdes.kernels.stat_rows._rj_samples`), its ISI value ``x`` (the residual cursors
convolved with the symbols, plus a given term independent of them), the ISI bin edges
(NumPy's linear quantiles of x), and per (bin, level) cell the tail-rank classes of V.
Ranks are taken by a selection, not a sort: only the class boundaries need their order
statistics, and a class's sums do not depend on the order inside it. Ranks order V from
the largest, ties by sample order (NumPy's stable sort), so the classes hold the same
samples as the NumPy form (``tests/naive.py``: ``rj_joint_classes``) and their sums agree
to rounding.
"""

import math

import numpy as np

from serdes.errors import ConfigError
from serdes.kernels import args
from serdes.kernels.jit import njit
from serdes.kernels.stat_rows import _TILE, _rj_samples, sample_args

_SMALL = 16   # segments up to this size are insertion-sorted


@njit(cache=True)
def _select(val, ids, lo, hi, ranks):
    """Rearrange the pairs (val, ids)[lo:hi] so that for every position r in ``ranks``
    (ascending, within lo..hi-1) [lo, r) holds the r - lo smallest by (val, id) and r
    the next one. Quickselect (median of three, Hoare's partition) into every side that
    holds a wanted rank; keys with the id are distinct, so the pivot's final position
    is exact. The pairs are moved together: no indirection in the comparisons."""
    nr = ranks.shape[0]
    st = np.empty((nr + 1, 4), dtype=np.int64)
    st[0, 0], st[0, 1], st[0, 2], st[0, 3] = lo, hi, 0, nr
    top = 1
    while top > 0:
        top -= 1
        l, h, r0, r1 = st[top, 0], st[top, 1], st[top, 2], st[top, 3]
        if h - l <= _SMALL:
            for p in range(l + 1, h):
                tv, ti = val[p], ids[p]
                q = p - 1
                while q >= l and (tv < val[q] or (tv == val[q] and ti < ids[q])):
                    val[q + 1] = val[q]
                    ids[q + 1] = ids[q]
                    q -= 1
                val[q + 1] = tv
                ids[q + 1] = ti
            continue
        m = (l + h - 1) // 2
        a, b, c = (val[l], ids[l]), (val[m], ids[m]), (val[h - 1], ids[h - 1])
        if b < a:
            a, b = b, a
        if c < b:   # the median of a <= b and c
            b = a if c < a else c
        kv, ki = b
        i, j = l, h - 1
        while i <= j:
            while val[i] < kv or (val[i] == kv and ids[i] < ki):
                i += 1
            while kv < val[j] or (kv == val[j] and ki < ids[j]):
                j -= 1
            if i <= j:
                val[i], val[j] = val[j], val[i]
                ids[i], ids[j] = ids[j], ids[i]
                i += 1
                j -= 1
        # [l..j] <= pivot <= [i..h-1]; between them (at most) the pivot, placed.
        # Only sides with a wanted rank are kept: each holds one at least and their
        # ranges are disjoint, so the stack never holds more than nr entries
        s = r0
        while s < r1 and ranks[s] <= j:
            s += 1
        u = s
        while u < r1 and ranks[u] < i:
            u += 1
        if s > r0:
            st[top, 0], st[top, 1], st[top, 2], st[top, 3] = l, j + 1, r0, s
            top += 1
        if r1 > u:
            st[top, 0], st[top, 1], st[top, 2], st[top, 3] = i, h, u, r1
            top += 1


@njit(cache=True)
def _partition(val, ids, lo, hi, ranks):
    """What :func:`_select` does, in a few linear passes: the pairs of [lo, hi) are
    counting-sorted (stably) into value buckets of equal width (a monotone map of the
    value, so equal values share a bucket and the buckets are in order), then each
    bucket holding a wanted rank is selected exactly by :func:`_select`."""
    n = hi - lo
    if n <= 64 or ranks.shape[0] == 0:
        _select(val, ids, lo, hi, ranks)
        return
    vmin = val[lo]
    vmax = val[lo]
    for p in range(lo, hi):
        vmin = min(vmin, val[p])
        vmax = max(vmax, val[p])
    if not vmax > vmin:
        _select(val, ids, lo, hi, ranks)
        return
    nb = n // 4
    scale = nb / (vmax - vmin)
    bk = np.empty(n, dtype=np.int64)
    start = np.zeros(nb + 1, dtype=np.int64)
    for p in range(n):
        b = min(int((val[lo + p] - vmin) * scale), nb - 1)
        bk[p] = b
        start[b + 1] += 1
    for b in range(nb):
        start[b + 1] += start[b]
    fill = start[:nb].copy()
    tv = np.empty(n)
    ti = np.empty(n, dtype=np.int64)
    for p in range(n):
        q = fill[bk[p]]
        tv[q] = val[lo + p]
        ti[q] = ids[lo + p]
        fill[bk[p]] += 1
    for p in range(n):      # a loop, not a slice copy: numba compiles the shape-mismatch
        val[lo + p] = tv[p]     # error path (string formatting) of an array assignment,
        ids[lo + p] = ti[p]     # seconds on a first run
    r = 0
    b = 0
    while r < ranks.shape[0]:
        while start[b + 1] <= ranks[r] - lo:
            b += 1
        e = r
        while e < ranks.shape[0] and ranks[e] - lo < start[b + 1]:
            e += 1
        _select(val, ids, lo + start[b], lo + start[b + 1], ranks[r:e])
        r = e


@njit(cache=True)
def _order_stats(x, ranks):
    """The order statistics of x (ascending) at ``ranks`` (ascending, distinct): a
    histogram over 1024 value buckets of equal width (a monotone map: equal values
    share a bucket), then only the buckets that hold a wanted rank gathered and
    selected exactly (:func:`_select`); x is left as it is."""
    n = x.shape[0]
    nr = ranks.shape[0]
    out = np.empty(nr)
    vmin = x[0]
    vmax = x[0]
    for p in range(n):
        vmin = min(vmin, x[p])
        vmax = max(vmax, x[p])
    if not vmax > vmin:
        out[:] = vmin
        return out
    nb = 1024
    scale = nb / (vmax - vmin)
    cum = np.zeros(nb + 1, dtype=np.int64)
    for p in range(n):
        cum[min(int((x[p] - vmin) * scale), nb - 1) + 1] += 1
    for b in range(nb):
        cum[b + 1] += cum[b]
    slot = np.full(nb, -1, dtype=np.int64)   # each wanted bucket's start in the gather
    size = 0
    b = 0
    for r in range(nr):
        while cum[b + 1] <= ranks[r]:
            b += 1
        if slot[b] < 0:
            slot[b] = size
            size += cum[b + 1] - cum[b]
    gv = np.empty(size)
    gi = np.empty(size, dtype=np.int64)
    fill = slot.copy()
    for p in range(n):
        b = min(int((x[p] - vmin) * scale), nb - 1)
        if slot[b] >= 0:
            gv[fill[b]] = x[p]
            gi[fill[b]] = p
            fill[b] += 1
    b = 0
    r = 0
    while r < nr:
        while cum[b + 1] <= ranks[r]:
            b += 1
        e = r
        while e < nr and ranks[e] < cum[b + 1]:
            e += 1
        loc = ranks[r:e] - cum[b] + slot[b]
        _select(gv, gi, slot[b], slot[b] + cum[b + 1] - cum[b], loc)
        for t in range(r, e):
            out[t] = gv[loc[t - r]]
        r = e
    return out


@njit(cache=True)
def _isi(a, resid, extra, first):
    """x[k] = sum_j resid[j] a[first + k - j] + extra[k], in tiles of contiguous slices:
    each x[k] sums j = 0, 1, ... in order (then extra), four cursors per pass over a tile
    with the partial sum in a register (the same numbers as one cursor per pass, which
    loads and stores the tile each time: 0.43 against 0.60 ms for 65,450 samples x 87
    cursors; stat_rows._add4's loop, written out here because a kernel may not call
    another module's helper)."""
    n = extra.shape[0]
    J = resid.shape[0]
    x = np.zeros(n)
    for t0 in range(0, n, _TILE):
        kn = min(_TILE, n - t0)
        xt = x[t0:t0 + kn]
        j = 0
        while j + 4 <= J:
            g0 = resid[j]
            g1 = resid[j + 1]
            g2 = resid[j + 2]
            g3 = resid[j + 3]
            b = first + t0 - j
            s0 = a[b:b + kn]
            s1 = a[b - 1:b - 1 + kn]
            s2 = a[b - 2:b - 2 + kn]
            s3 = a[b - 3:b - 3 + kn]
            for k in range(kn):
                v = xt[k]
                v += g0 * s0[k]
                v += g1 * s1[k]
                v += g2 * s2[k]
                v += g3 * s3[k]
                xt[k] = v
            j += 4
        while j < J:
            g = resid[j]
            src = a[first + t0 - j:first + t0 - j + kn]
            for k in range(kn):
                xt[k] += g * src[k]
            j += 1
        for k in range(kn):
            xt[k] += extra[t0 + k]
    return x


@njit(cache=True)
def _cell(nv_, ids, s0, n, k3, fracs, min_class, out_v, out_w, out_k):
    """Classes of one cell: (-V, sample index) pairs at nv_[s0:s0 + n], ids[...];
    classes by rank from the top at ``fracs`` of n (a class of fewer than min_class
    merged into the next), two points per class (mean -+ std of V), weights, mean K3."""
    nb = 1
    bounds = np.zeros(fracs.shape[0] + 2, dtype=np.int64)
    for f in range(fracs.shape[0]):
        c = int(np.rint(fracs[f] * n))
        if c - bounds[nb - 1] >= min_class and n - c >= min_class:
            bounds[nb] = c
            nb += 1
    bounds[nb] = n
    if nb > 1:
        _partition(nv_, ids, s0, s0 + n, bounds[1:nb] + s0)
    for j in range(nb):
        s, e = s0 + bounds[j], s0 + bounds[j + 1]
        cnt = e - s
        sv = 0.0
        sk = 0.0
        for p in range(s, e):
            sv -= nv_[p]
            sk += k3[ids[p]]
        mu = sv / cnt
        ss = 0.0
        for p in range(s, e):
            dv = -nv_[p] - mu
            ss += dv * dv
        sd = math.sqrt(ss / cnt)
        out_v[2 * j] = mu - sd
        out_v[2 * j + 1] = mu + sd
        out_w[2 * j] = out_w[2 * j + 1] = 0.5 * cnt / n
        out_k[2 * j] = out_k[2 * j + 1] = sk / cnt


@njit(cache=True)
def _first_at_least(a, v):
    """np.searchsorted(a, v) (a ascending): the first index with a[i] >= v, by bisection
    (numba's searchsorted compiles a generic comparator, a few tenths of a second on a
    first run)."""
    lo = 0
    hi = a.shape[0]
    while lo < hi:
        mid = (lo + hi) // 2
        if a[mid] < v:
            lo = mid + 1
        else:
            hi = mid
    return lo


@njit(cache=True)
def _rj_joint_classes(a, v, k3, lv, m, resid, extra, qs, order, inner, fracs, min_class,
                      min_bin):
    nv = v.shape[0]
    x = _isi(a, resid, extra, a.shape[0] - nv)
    # the bin edges: NumPy's linear quantiles (its lerp) from the order statistics
    nq = qs.shape[0]
    rk = np.empty(2 * nq, dtype=np.int64)
    nr = 0
    for q in range(nq):   # the ranks ascending (qs increase), each once
        p = int(math.floor((nv - 1) * qs[q]))
        for r in (p, min(p + 1, nv - 1)):
            if nr == 0 or r > rk[nr - 1]:
                rk[nr] = r
                nr += 1
    rk = rk[:nr]
    xs = _order_stats(x, rk)
    edges = np.empty(nq)
    for q in range(nq):
        virt = (nv - 1) * qs[q]
        p = int(math.floor(virt))
        g = virt - p
        lo_x = xs[_first_at_least(rk, p)]
        hi_x = xs[_first_at_least(rk, min(p + 1, nv - 1))]
        diff = hi_x - lo_x
        edges[q] = hi_x - diff * (1 - g) if g >= 0.5 else lo_x + diff * g
    # cells (level, bin), samples in sample order (a counting sort)
    ix = np.empty(nv, dtype=np.int64)
    B = nq + 1
    cell = np.empty(nv, dtype=np.int64)
    for k in range(nv):
        b = 0
        for q in range(nq):   # the number of edges <= x (edges ascending), branch-free
            b += edges[q] <= x[k]
        cell[k] = lv[k] * B + b
    start = np.zeros(m * B + 1, dtype=np.int64)
    for k in range(nv):
        start[cell[k] + 1] += 1
    for c in range(m * B):
        start[c + 1] += start[c]
    fill = start[:m * B].copy()
    negv = np.empty(nv)   # (-V, index) by cell, in sample order within a cell
    for k in range(nv):
        negv[fill[cell[k]]] = -v[k]
        ix[fill[cell[k]]] = k
        fill[cell[k]] += 1
    mv = np.zeros(m)
    cnt = np.zeros(m)
    for k in range(nv):
        mv[lv[k]] += v[k]
        cnt[lv[k]] += 1.0
    for i in range(m):
        mv[i] = mv[i] / max(cnt[i], 1.0)
    K = 2 * (fracs.shape[0] + 1)
    var = np.zeros((B, m, K))
    wts = np.zeros((B, m, K))
    kk = np.zeros((B, m, K))
    for i in range(m):
        for t in range(B):
            bi = order[t]
            s, e = start[i * B + bi], start[i * B + bi + 1]
            if e - s < min_bin:     # element loops, not row copies (see _partition)
                for j in range(K):
                    var[bi, i, j] = var[inner[bi], i, j]
                    wts[bi, i, j] = wts[inner[bi], i, j]
                    kk[bi, i, j] = kk[inner[bi], i, j]
                continue
            _cell(negv, ix, s, e - s, k3, fracs, min_class, var[bi, i], wts[bi, i],
                  kk[bi, i])
    return edges, var, wts, kk, mv


def rj_joint_classes(a, idx, dev, lo, hi, gh_w, w2, w3, d, m, resid, extra, qs, fracs,
                     min_class, min_bin, samples=None):
    """(edges, var, weights, k3, level means of V): the ISI bin edges at the quantiles
    ``qs`` of x and per (bin, level) the V classes (B, m, K) of the samples of
    :func:`serdes.kernels.stat_rows.rj_classes` (same arguments ``a`` .. ``d``, ``m``);
    x[k] = sum_j resid[j] a[s_k - j] + extra[k] (s_k the sample's symbol index), classes
    by rank from the top at ``fracs`` of each cell's count; a cell with fewer than
    ``min_bin`` samples takes the classes of the next bin inward (toward the median).
    ``samples``: the samples' (V, K3, level) given (else :func:`_rj_samples`')."""
    a, idx, dev, lo, hi, gh_w, w2, w3, d, m = sample_args(a, idx, dev, lo, hi, gh_w, w2,
                                                          w3, d, m)
    resid = args.array("resid", resid, finite=True, min_len=1)
    extra = args.array("extra", extra, finite=True)
    qs = args.array("qs", qs, finite=True, min_len=1)
    fracs = args.array("fracs", fracs, finite=True)
    L = dev.shape[1]
    nv = a.shape[0] - L - w2.shape[0] + 2
    if extra.shape[0] != nv:
        raise ConfigError(f"extra: needs one value per sample ({nv}), got {extra.shape[0]}")
    if resid.shape[0] > L + w2.shape[0] - 1:
        raise ConfigError(f"resid: at most {L + w2.shape[0] - 1} cursors, got "
                          f"{resid.shape[0]}")
    if np.any(np.diff(qs) <= 0) or qs[0] <= 0 or qs[-1] >= 1:
        raise ConfigError("qs: quantiles must increase strictly within (0, 1)")
    if fracs.size and (np.any(np.diff(fracs) <= 0) or fracs[0] <= 0 or fracs[-1] >= 1):
        raise ConfigError("fracs: class fractions must increase strictly within (0, 1)")
    min_class = args.integer("min_class", min_class, lo=1)
    min_bin = args.integer("min_bin", min_bin, lo=1)
    B = qs.shape[0] + 1
    centre = int(np.searchsorted(qs, 0.5))
    order = np.array(sorted(range(B), key=lambda i: (abs(i - centre + 0.5), i)),
                     dtype=np.int64)
    inner = np.array([i + 1 if i < centre else i - 1 for i in range(B)], dtype=np.int64)
    # the samples' (V, K3, level) from stat_rows' kernel, called here (a kernel of this
    # module may not call another module's: numba's cache, tests/test_kernel_rules.py)
    if samples is None:
        v, k3, lv = _rj_samples(a, idx, dev, lo, hi, gh_w, w2, w3, d)
    else:
        v = args.array("V", samples[0], finite=True)
        k3 = args.array("K3", samples[1], finite=True)
        lv = args.array("level", samples[2], dtype=np.int64)
        if not v.shape == k3.shape == lv.shape == (nv,) or lv.min() < 0 or lv.max() >= m:
            raise ConfigError(f"samples: need V, K3 and a level in 0..{m - 1} for each of "
                              f"the {nv} samples")
    return _rj_joint_classes(a, v, k3, lv, m, resid, extra, qs, order, inner, fracs,
                             min_class, min_bin)


@njit(cache=True)
def _merge_close(sigma, beta, weights, order, rel, out_s, out_b, out_w):
    """Merge each row's components whose sigma differ by less than ``rel`` relative and
    beta by less than ``rel`` (variance-weighted, weights added), every row at once,
    rows' components taken in ``order`` (np.argsort of each row's sigma); the NumPy
    form is tests/naive.py's merge_close."""
    R, K = sigma.shape
    for r in range(R):
        c = -1
        ref_s = 0.0
        ref_b = 0.0
        for t in range(K):
            k = order[r, t]
            if weights[r, k] <= 0:
                continue
            if c >= 0 and sigma[r, k] <= ref_s * (1 + rel) and abs(beta[r, k] - ref_b) <= rel:
                w0, w1 = out_w[r, c], weights[r, k]
                out_s[r, c] = math.sqrt((w0 * out_s[r, c] ** 2 + w1 * sigma[r, k] ** 2)
                                        / (w0 + w1))
                b0, b1 = out_b[r, c], beta[r, k]
                # a convex combination, also in rounding (betas clipped at BETA_MAX)
                out_b[r, c] = min(max((w0 * b0 + w1 * b1) / (w0 + w1), min(b0, b1)),
                                  max(b0, b1))
                out_w[r, c] = w0 + w1
                continue
            c += 1
            out_s[r, c], out_b[r, c], out_w[r, c] = sigma[r, k], beta[r, k], weights[r, k]
            ref_s, ref_b = sigma[r, k], beta[r, k]


def merge_close_rows(sigma, beta, weights, rel):
    """(sigma, beta, weights) of the merged components (see _merge_close) for arrays
    (..., K): every row merged, padded with zero weights (sigma 1)."""
    sigma = np.asarray(sigma, dtype=np.float64)
    shape = sigma.shape
    s = args.array("sigma", sigma.reshape(-1, shape[-1]), ndim=2, finite=True)
    b = args.array("beta", np.asarray(beta, dtype=np.float64).reshape(s.shape), ndim=2,
                   finite=True)
    w = args.array("weights", np.asarray(weights, dtype=np.float64).reshape(s.shape),
                   ndim=2, finite=True)
    rel = args.real("rel", rel, nonneg=True)
    order = np.ascontiguousarray(np.argsort(s, axis=1), dtype=np.int64)
    out_s, out_b, out_w = np.ones(s.shape), np.zeros(s.shape), np.zeros(s.shape)
    _merge_close(s, b, w, order, rel, out_s, out_b, out_w)
    return out_s.reshape(shape), out_b.reshape(shape), out_w.reshape(shape)
