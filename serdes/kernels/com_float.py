"""numba kernels of the floating DFE taps of the 802.3ck KR and CR COM (config-sheet keys
N_bg, N_bf, N_f, bmaxg, N_tail_start, B_float_RSS_MAX; see serdes/com/floating.py).

The IEEE COM code places the floating groups from the pulse's post-cursors at the cursor
phase beyond the N_b fixed taps, up to tap N_f: for each window of N_bf consecutive taps
the ISI energy a group there would remove, sum(h^2 - max(0, |h| - bmaxg h0)^2), is ranked
(stable, descending); if the (N_bg - 1) N_bf + 1 best windows are the first ones, the
groups are the first N_bg N_bf taps; otherwise one group at a time: the best window,
unless a window overlapping it from the left ranks before every window outside it (then
that best window is dropped and the next one tried), and when the window just left of it
(not overlapping) is the first outside it in the ranking, the next group goes there; the
last group takes the best window left. Placed windows and the ones overlapping them are
zeroed in the ranking. The floating taps are then clipped to +-bmaxg times the cursor,
the positions between them to 0, and the taps from N_tail_start on are scaled together
so that their root-sum-square is at most B_float_RSS_MAX.

The slow, literal reference is ``tests/naive.py::com_float_banks``; the two are tested
equal (``tests/test_com_float.py``).
"""

from __future__ import annotations

import numpy as np
from numba import njit

from serdes.errors import ConfigError
from serdes.kernels import args as _a
from serdes.kernels.threads import run_chunks

__all__ = ["float_taps", "float_delta_rows"]

# rows per chunk of float_delta_rows (a row is a few microseconds)
ROW_CHUNK = 256


@njit(cache=True)
def _zero(nd, n, i):
    """nd[i] = 0, growing the live length n (new entries 0) as MATLAB's assignment does."""
    while n <= i:
        nd[n] = 0.0
        n += 1
    nd[i] = 0.0
    return n


@njit(cache=True)
def _rank(nd, n):
    """Indices of nd[:n] in stable descending order."""
    return np.argsort(-nd[:n], kind="mergesort")


@njit(cache=True)
def _bad(s, nbf, lo_out):
    """Windows overlapping window s from the left: max(0, s - nbf + 1) .. s - 1."""
    k = 0
    for j in range(max(0, s - nbf + 1), s):
        lo_out[k] = j
        k += 1
    return k


@njit(cache=True)
def _banks(h, cur, nbf, nbg, bmaxg, mask):
    """Set mask[i] = 1 at the floating tap positions i (0 = first tap after the fixed
    ones) chosen from the post-cursors h beyond the fixed taps (see the module)."""
    ln = h.shape[0]
    nw = ln - nbf + 1
    nd = np.zeros(nw + nbf * (nbg + 2) + ln)
    for j in range(nw):
        s = 0.0
        for i in range(nbf):
            a = abs(h[j + i])
            b = max(0.0, a - bmaxg * cur)
            s += a * a - b * b
        nd[j] = s
    n = nw
    for i in range(ln):
        mask[i] = 0
    chosen = np.empty(nbf * nbg, dtype=np.int64)
    nch = 0
    bad = np.empty(nbf, dtype=np.int64)
    nxt = -1
    r = (nbg - 1) * nbf + 1
    for k in range(nbg):
        vs = _rank(nd, n)
        if k == 0:
            ok = True
            for i in range(r):
                if vs[i] >= r:
                    ok = False
                    break
            if ok:
                for i in range(nbg * nbf):
                    mask[i] = 1
                return
        if nxt >= 0:
            s = nxt
            nxt = -1
            for i in range(nbf):
                n = _zero(nd, n, s + i)
                chosen[nch] = s + i
                nch += 1
            nb = _bad(s, nbf, bad)
            for i in range(nb):
                n = _zero(nd, n, bad[i])
            continue
        s = vs[0]
        if k == nbg - 1:
            for i in range(nbf):
                chosen[nch] = s + i
                nch += 1
            break
        again = True
        first = True
        nb = 0
        while again:
            again = False
            nb0 = _bad(s, nbf, bad)
            nb = 0
            for i in range(nb0):       # drop the ones that are taps of a placed group
                hit = False
                for q in range(nch):
                    if chosen[q] == bad[i]:
                        hit = True
                        break
                if not hit:
                    bad[nb] = bad[i]
                    nb += 1
            good = s - nbf
            if nb > 0:
                if not first:
                    vs = _rank(nd, n)
                first = False
                found = False
                nv = vs.shape[0]
                ii = 0
                for ii in range(nv):
                    v = vs[ii]
                    if v == good:
                        found = True
                        break
                    inside = s <= v < s + nbf
                    if not inside:
                        for q in range(nb):
                            if bad[q] == v:
                                inside = True
                                break
                    if not inside:
                        break
                minpos = nv
                for q in range(nb):
                    for t in range(nv):
                        if vs[t] == bad[q]:
                            if t < minpos:
                                minpos = t
                            break
                if not found and minpos < ii:
                    again = True
                    n = _zero(nd, n, s)
                    s = vs[1]
                if found:
                    nxt = good
        for i in range(nbf):
            n = _zero(nd, n, s + i)
            chosen[nch] = s + i
            nch += 1
        for i in range(nb):
            n = _zero(nd, n, bad[i])
    for q in range(nch):
        if chosen[q] < ln:
            mask[chosen[q]] = 1


@njit(cache=True)
def _taps(h, cur, nbf, nbg, bmaxg, tail, b_rss, mask, t):
    """Floating tap coefficients t (in units of the cursor) for the post-cursors h."""
    ln = h.shape[0]
    _banks(h, cur, nbf, nbg, bmaxg, mask)
    for i in range(ln):
        if mask[i]:
            x = h[i] / cur
            t[i] = min(max(x, -bmaxg), bmaxg)
        else:
            t[i] = 0.0
    if tail >= 0 and tail < ln:
        ss = 0.0
        for i in range(tail, ln):
            ss += t[i] * t[i]
        rss = np.sqrt(ss)
        if rss != 0.0 and rss >= b_rss:
            for i in range(tail, ln):
                t[i] = t[i] * (b_rss / rss)


@njit(cache=True, nogil=True)
def _delta_rows(post, h0, nbf, nbg, bmaxg, tail, b_rss, out, chunk, c_first, c_step):
    rows, ln = post.shape
    for ci in range(c_first, (rows + chunk - 1) // chunk, c_step):
        for r in range(ci * chunk, min(rows, (ci + 1) * chunk)):
            cur = h0[r]
            if not cur > 0.0:
                out[r] = 0.0
                continue
            mask = np.zeros(ln, dtype=np.uint8)
            t = np.zeros(ln)
            h = post[r]
            _taps(h, cur, nbf, nbg, bmaxg, tail, b_rss, mask, t)
            d = 0.0
            for i in range(ln):
                e = h[i] - t[i] * cur
                d += e * e - h[i] * h[i]
            out[r] = d
    return 0


def _check(ln, nbf, nbg, bmaxg, tail, b_rss):
    nbf = _a.integer("dfe_n_bf", nbf, 1)
    nbg = _a.integer("dfe_n_bg", nbg, 1)
    if ln < nbf * nbg:
        raise ConfigError(f"com: the floating DFE span has {ln} taps, fewer than "
                          f"dfe_n_bg x dfe_n_bf = {nbg * nbf}")
    return (nbf, nbg, _a.real("dfe_bmaxg", bmaxg, nonneg=True), _a.integer("tail", tail, -1),
            _a.real("dfe_b_rss_max", b_rss, nonneg=True))


def float_taps(h, cur: float, nbf: int, nbg: int, bmaxg: float, tail: int = -1,
               b_rss: float = 0.0) -> np.ndarray:
    """Floating DFE tap coefficients (times the cursor ``cur`` > 0) for the post-cursors
    ``h`` of the floating span (first entry: the tap after the fixed ones); 0 where no
    group sits. ``tail``: index in ``h`` of N_tail_start (-1: no RSS limit)."""
    h = _a.array("h", h, finite=True)
    cur = _a.real("cur", cur, positive=True)
    nbf, nbg, bmaxg, tail, b_rss = _check(len(h), nbf, nbg, bmaxg, tail, b_rss)
    mask = np.zeros(len(h), dtype=np.uint8)
    t = np.zeros(len(h))
    _taps(h, cur, nbf, nbg, bmaxg, tail, b_rss, mask, t)
    return t


def float_delta_rows(post, h0, nbf: int, nbg: int, bmaxg: float, tail: int = -1,
                     b_rss: float = 0.0, threads: int | None = None) -> np.ndarray:
    """Per row of ``post`` (post-cursors of the floating span) with cursor ``h0``: the
    change of ISI energy, sum((h - t h0)^2 - h^2), that its floating taps make (0 for a
    row whose cursor is not > 0). ``threads``: default numba's thread count; the result
    does not depend on it."""
    post = _a.array("post", post, ndim=2, finite=True)
    h0 = _a.array("h0", h0)
    if h0.shape[0] != post.shape[0]:
        raise ConfigError(f"h0: needs {post.shape[0]} values, got {h0.shape[0]}")
    nbf, nbg, bmaxg, tail, b_rss = _check(post.shape[1], nbf, nbg, bmaxg, tail, b_rss)
    out = np.empty(post.shape[0])
    if post.shape[0]:
        # rows in chunks on Python threads (the kernel releases the GIL), not numba's
        # prange: serdes/kernels/threads.py says why
        n_chunks = (post.shape[0] + ROW_CHUNK - 1) // ROW_CHUNK
        run_chunks(_delta_rows, (post, h0, nbf, nbg, bmaxg, tail, b_rss, out, ROW_CHUNK),
                   n_chunks, threads)
    return out
