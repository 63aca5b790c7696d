"""Decision-feedback and slicer kernels (private; wrappers in serdes.dsp)."""

import numpy as np
from numba import njit


@njit(cache=True)
def slice_one(v, thresholds):
    """Index of the PAM level for slicer input v (thresholds ascending)."""
    d = 0
    for t in thresholds:
        if v > t:
            d += 1
    return d


@njit(cache=True)
def dfe_run(z, taps, levels, thresholds, hist):
    """Decision-feedback equalizer and slicer.

    v_k = z_k - sum_m taps[m] * hist[m], hist[0] the most recent decided level.
    hist is updated in place so that a run in chunks equals a run in one piece.
    Returns (decisions as level indices, slicer inputs v).
    """
    n = z.shape[0]
    nt = taps.shape[0]
    dec = np.empty(n, dtype=np.uint8)
    v_out = np.empty(n, dtype=np.float64)
    for k in range(n):
        v = z[k]
        for m in range(nt):
            v -= taps[m] * hist[m]
        d = slice_one(v, thresholds)
        dec[k] = d
        v_out[k] = v
        for m in range(nt - 1, 0, -1):
            hist[m] = hist[m - 1]
        if nt > 0:
            hist[0] = levels[d]
    return dec, v_out


@njit(cache=True)
def ffe_dfe_lms(x, w, b, levels, thresholds, hist, ref, n_train, mu_w, mu_b, b_limit):
    """FFE + DFE adapted by LMS, sample by sample.

    x      ADC samples with len(w) - 1 of history in front
    ref    the known symbol levels aligned with the outputs (used while k < n_train,
           afterwards decisions drive the adaptation)
    w, b, hist are updated in place (the adaptive state). mu_w and mu_b are the step
    sizes of the FFE and DFE taps (the wrapper normalises them by the input powers).
    Returns (decisions, slicer inputs).
    """
    nw = w.shape[0]
    nb = b.shape[0]
    n = x.shape[0] - nw + 1
    dec = np.empty(n, dtype=np.uint8)
    v_out = np.empty(n, dtype=np.float64)
    for k in range(n):
        top = k + nw - 1
        v = 0.0
        for i in range(nw):
            v += w[i] * x[top - i]
        for m in range(nb):
            v -= b[m] * hist[m]
        d = slice_one(v, thresholds)
        target = ref[k] if k < n_train else levels[d]
        e = v - target
        for i in range(nw):
            w[i] -= mu_w * e * x[top - i]
        for m in range(nb):
            bm = b[m] + mu_b * e * hist[m]
            if bm > b_limit:
                bm = b_limit
            elif bm < -b_limit:
                bm = -b_limit
            b[m] = bm
        dec[k] = d
        v_out[k] = v
        for m in range(nb - 1, 0, -1):
            hist[m] = hist[m - 1]
        if nb > 0:
            hist[0] = target if k < n_train else levels[d]
    return dec, v_out
