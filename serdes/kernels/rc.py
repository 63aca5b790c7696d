"""FFE + DFE + reflection canceller kernel (private; wrapper in serdes.dsp.rc).

The canceller is a sparse decision-feedback filter: K taps ``c`` at lags ``lags`` (UI
after the current decision) multiply past decided levels held in a ring buffer. Its
taps may be fixed, adapted by LMS, or first placed by correlating the error with past
decisions (adaptive mode): E[e_k a_{k-j}] = s2 f_j for white data, so the K lags with
the largest |correlation| are the echo positions and corr_j / (n s2) their values.
"""

import numpy as np
from numba import njit

from serdes.kernels.slicer import slice_one


@njit(cache=True)
def _place(corr, lo, c, lags, n_acc, level_power):
    """Put the K taps at the lags lo..len(corr)-1 of largest |corr| (ascending lags)."""
    k_taps = c.shape[0]
    used = np.zeros(corr.shape[0], dtype=np.bool_)
    for i in range(k_taps):
        best = -1.0
        arg = lo
        for j in range(lo, corr.shape[0]):
            if not used[j] and abs(corr[j]) > best:
                best = abs(corr[j])
                arg = j
        used[arg] = True
    i = 0
    for j in range(corr.shape[0]):
        if used[j]:
            lags[i] = j
            c[i] = corr[j] / (n_acc * level_power)
            i += 1


@njit(cache=True)
def ffe_dfe_rc(x, w, b, hist, c, lags, ring, st, corr, levels, thresholds, ref, n_train,
               mu_w, mu_b, mu_c, b_limit, adapt_eq, search_lo, search_start, search_n,
               level_power):
    """FFE, DFE and reflection canceller with a slicer, sample by sample.

    x        ADC samples with len(w) - 1 of history in front
    w, b     FFE and DFE taps; adapted by LMS (steps mu_w, mu_b) when adapt_eq
    hist     the last len(b) decided levels, newest first
    c, lags  RC taps and their lags (int64, each < len(ring)); c adapted with step mu_c
    ring     past decided levels; ring[n & (len - 1)] is decision n (len a power of 2)
    st       int64 state [decisions so far, searching (0/1), correlation samples]
    corr     error/decision correlation per lag (adaptive placement)
    ref      known levels for the first n_train outputs (training), else decisions
    search_* while st[1] == 1: from decision search_start on, accumulate corr over lags
             search_lo..len(corr)-1 for search_n decisions, then place the taps
    Every array argument except x, levels, thresholds and ref is state, updated in place,
    so a run in chunks gives the same decisions as one piece.
    Returns (decisions as level indices, slicer inputs).
    """
    nw = w.shape[0]
    nb = b.shape[0]
    nc = c.shape[0]
    mask = ring.shape[0] - 1
    n = x.shape[0] - nw + 1
    dec = np.empty(n, dtype=np.uint8)
    v_out = np.empty(n, dtype=np.float64)
    cnt = st[0]
    for k in range(n):
        top = k + nw - 1
        v = 0.0
        for i in range(nw):
            v += w[i] * x[top - i]
        for m in range(nb):
            v -= b[m] * hist[m]
        for i in range(nc):
            v -= c[i] * ring[(cnt - lags[i]) & mask]
        d = slice_one(v, thresholds)
        target = ref[k] if k < n_train else levels[d]
        e = v - target
        if adapt_eq:
            for i in range(nw):
                w[i] -= mu_w * e * x[top - i]
            for m in range(nb):
                bm = b[m] + mu_b * e * hist[m]
                if bm > b_limit:
                    bm = b_limit
                elif bm < -b_limit:
                    bm = -b_limit
                b[m] = bm
        if st[1] == 1:
            if cnt >= search_start:
                for j in range(search_lo, corr.shape[0]):
                    corr[j] += e * ring[(cnt - j) & mask]
                st[2] += 1
                if st[2] == search_n:
                    _place(corr, search_lo, c, lags, st[2], level_power)
                    st[1] = 0
        elif mu_c > 0.0:
            for i in range(nc):
                c[i] += mu_c * e * ring[(cnt - lags[i]) & mask]
        dec[k] = d
        v_out[k] = v
        for m in range(nb - 1, 0, -1):
            hist[m] = hist[m - 1]
        if nb > 0:
            hist[0] = target
        ring[cnt & mask] = target
        cnt += 1
    st[0] = cnt
    return dec, v_out
