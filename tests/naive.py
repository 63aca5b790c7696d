"""Slow, obviously-right references for the numba kernels."""

import numpy as np


def fir_valid(x, taps):
    return np.convolve(x, taps, mode="valid")


def lagrange4(p, pos):
    """4-point Lagrange interpolation of p at one fractional index, zero outside."""
    i = int(np.floor(pos))
    t = pos - i
    xs = np.array([-1.0, 0.0, 1.0, 2.0])
    val = 0.0
    for a, xa in enumerate(xs):
        w = 1.0
        for b, xb in enumerate(xs):
            if a != b:
                w *= (t - xb) / (xa - xb)
        idx = i + int(xa)
        if 0 <= idx < len(p):
            val += w * p[idx]
    return val


def pulse_sum_jitter(a, p_fine, m, phase, offsets, n_ui):
    n = len(a) - n_ui + 1
    y = np.zeros(n)
    for k in range(n):
        for j in range(n_ui):
            y[k] += a[k + n_ui - 1 - j] * lagrange4(p_fine, phase + offsets[k] + j * m)
    return y


def upsample_pulse_sum(a, p_fine, m, n_ui):
    n = len(a) - n_ui + 1
    up = np.zeros(len(a) * m)
    up[::m] = a
    full = np.convolve(up, p_fine)
    return full[(n_ui - 1) * m:(n_ui - 1) * m + n * m]


def quantize(x, lsb, bits):
    codes = np.clip(np.floor(x / lsb), -(2 ** (bits - 1)), 2 ** (bits - 1) - 1)
    return (codes + 0.5) * lsb


def dfe_run(z, taps, levels, thresholds, hist):
    hist = list(hist)
    dec, vs = [], []
    for zk in z:
        v = zk - sum(t * h for t, h in zip(taps, hist))
        d = int(np.searchsorted(thresholds, v, side="left"))
        d = int(np.sum(v > thresholds))
        dec.append(d)
        vs.append(v)
        hist = [levels[d]] + hist[:-1] if len(taps) else hist
    return np.array(dec, dtype=np.uint8), np.array(vs), np.array(hist)


def ffe_dfe_lms(x, w, b, levels, thresholds, hist, ref, n_train, mu, b_limit):
    w, b, hist = w.copy(), b.copy(), list(hist)
    nw = len(w)
    dec, vs = [], []
    for k in range(len(x) - nw + 1):
        xs = x[k:k + nw][::-1]
        v = float(w @ xs) - float(b @ np.array(hist)) if len(b) else float(w @ xs)
        d = int(np.sum(v > thresholds))
        target = ref[k] if k < n_train else levels[d]
        e = v - target
        w = w - mu * e * xs
        if len(b):
            b = np.clip(b + mu * e * np.array(hist), -b_limit, b_limit)
            hist = [target] + hist[:-1]
        dec.append(d)
        vs.append(v)
    return np.array(dec, dtype=np.uint8), np.array(vs), w, b


def rc_reference(x, w, b, c, lags, ref, n_train, mu_w, mu_b, mu_c, b_limit, adapt_eq,
                 search, search_lo, span, search_start, search_n, levels, thresholds,
                 level_power):
    """FFE + DFE + RC written out plainly: the whole decision history in a list, the
    placement by a stable sort of |correlation|."""
    w, b, c, lags = w.copy(), b.copy(), c.copy(), list(lags)
    nw, nb = len(w), len(b)
    past = []  # levels fed back, decision n at past[n]
    corr = np.zeros(span + 1)
    n_acc = 0
    dec, vs = [], []

    def level(n):
        return past[n] if n >= 0 else 0.0

    for k in range(len(x) - nw + 1):
        cnt = len(past)
        xs = x[k:k + nw][::-1]
        hist = np.array([level(cnt - 1 - m) for m in range(nb)])
        v = float(w @ xs) - float(b @ hist)
        v -= sum(c[i] * level(cnt - lags[i]) for i in range(len(c)))
        d = int(np.sum(v > thresholds))
        target = ref[k] if k < n_train else levels[d]
        e = v - target
        if adapt_eq:
            w = w - mu_w * e * xs
            b = np.clip(b + mu_b * e * hist, -b_limit, b_limit)
        if search:
            if cnt >= search_start:
                for j in range(search_lo, span + 1):
                    corr[j] += e * level(cnt - j)
                n_acc += 1
                if n_acc == search_n:
                    cand = np.arange(search_lo, span + 1)
                    pick = np.sort(cand[np.argsort(-np.abs(corr[cand]), kind="stable")[:len(c)]])
                    lags = list(pick)
                    c = corr[pick] / (n_acc * level_power)
                    search = False
        elif mu_c > 0:
            c = c + mu_c * e * np.array([level(cnt - j) for j in lags])
        past.append(target)
        dec.append(d)
        vs.append(v)
    return np.array(dec, np.uint8), np.array(vs), w, b, np.asarray(c), np.array(lags)
