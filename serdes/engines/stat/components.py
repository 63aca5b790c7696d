"""The discrete part of the statistical engine's slicer-input model: the ISI cursors
(DFE and reflection-canceller positions taken off), the TX-jitter cursors convolved
exactly, the ADC's uniform quantization per FFE tap and each aggressor's cursors, as
rows of (values, probabilities) for :func:`serdes.kernels.stat.isi_pmf`, with their exact
variance and the variance left to the Gaussian
(:meth:`serdes.engines.stat.engine.StatisticalEngine._components`).
"""

from __future__ import annotations

import numpy as np


def discrete_components(eng, f: np.ndarray, sigma_min: float, delta: float, tx_top=None):
    """Discrete components (values, probs, exact variance, Gaussian extra, residual) of
    the engine ``eng`` for the response ``f``. ``tx_top``: (cursor indices, deviations
    (K, Q)) of the cursors whose TX jitter is convolved exactly."""
    resid = eng._residual(f)
    tiny = 1e-12 * abs(f[eng.d])
    keep = np.abs(resid) > tiny
    if tx_top is not None and tx_top[0].size:
        keep[tx_top[0]] = False
    cur = resid[keep]
    vals = [np.outer(cur, eng.levels)]
    probs = [np.full(vals[0].shape, 1.0 / eng.m_levels)]
    var = eng.es * float(cur @ cur)
    if tx_top is not None and tx_top[0].size:
        tv, tp, tvar = eng.tx.rows(resid[tx_top[0]], tx_top[1])
        width = max(vals[0].shape[1], tv.shape[1])
        vals = [_widen(vals[0], width), _widen(tv, width)]
        probs = [_widen(probs[0], width), _widen(tp, width)]
        var += tvar
    if eng.quantization == "uniform" and eng.lsb > 0:
        half = 0.5 * eng.lsb * np.abs(eng.w)
        big = half[half >= delta]
        if big.size:
            K = int(min(max(np.ceil(2 * big.max() / delta), 2), 512))
            # K-point midpoint rule of each uniform; the variance deficit
            # h^2/(3K^2) is made up by the Gaussian below
            u = (np.arange(K) + 0.5) / K * 2 - 1
            kv = np.outer(big, u)
            pad = max(K, max(v.shape[1] for v in vals))
            vals = [_widen(v, pad) for v in vals] + [_widen(kv, pad)]
            probs = [_widen(v, pad) for v in probs] + [_widen(np.full(kv.shape, 1.0 / K),
                                                              pad)]
            var += float(np.sum(big ** 2)) / 3.0
        small = half[half < delta]
        extra_gauss = float(np.sum(small ** 2)) / 3.0
        if big.size:
            extra_gauss += float(np.sum(big ** 2)) / 3.0 / K ** 2
            var -= float(np.sum(big ** 2)) / 3.0 / K ** 2
    else:
        extra_gauss = 0.0
    if eng.link.aggressor_pulses:  # crosstalk: each aggressor's cursors (serdes.crosstalk)
        vals, probs, var, small = _with_crosstalk(eng.link, eng.w, tiny, delta, vals,
                                                  probs, var, eng._xt_offsets,
                                                  getattr(eng, "_xt_sj", None))
        extra_gauss += small
    values = np.ascontiguousarray(np.vstack(vals))
    p = np.ascontiguousarray(np.vstack(probs))
    return values, p, var, extra_gauss, resid


def _widen(x: np.ndarray, cols: int) -> np.ndarray:
    """``x`` padded with zero columns on the right to ``cols`` columns (np.pad's result,
    without its overhead)."""
    out = np.zeros((x.shape[0], cols))
    out[:, :x.shape[1]] = x
    return out


def _with_crosstalk(link, w, tiny, delta, vals, probs, var, offsets=0.0, sj=None):
    """The ISI rows with each aggressor's cursors appended (widths padded to one), and
    the variance of the cursors too small for the grid (within half a step: a
    Gaussian, their sum being one of hundreds of such terms) plus the aggressors' TX
    noise and random-jitter terms."""
    from serdes.crosstalk import stat_components

    xv, xp, xvar, small = stat_components(link, w, tiny, 0.5 * delta, offsets, sj)
    rows = list(vals) + xv
    prow = list(probs) + xp
    width = max(r.shape[1] for r in rows)
    rows = [np.pad(r, ((0, 0), (0, width - r.shape[1]))) for r in rows]
    prow = [np.pad(r, ((0, 0), (0, width - r.shape[1]))) for r in prow]
    return rows, prow, var + xvar, small
