"""The slicer distributions of all jitter-quadrature rows at one phase in one kernel
call, for Gaussian noise (no random jitter, no crosstalk aggressors): the numbers of
``StatisticalEngine.distribution`` row by row, up to floating-point rounding
(tests/test_stat_rows.py). The grid step of each row comes from the same rule,
evaluated for all rows at once; the ISI convolution, the grid correction and the tails
at the slicer thresholds run in :func:`serdes.kernels.stat_batch.gauss_rows`."""

from __future__ import annotations

import math

import numpy as np

from serdes.engines.stat.distribution import SlicerDistribution
from serdes.engines.stat.rj import hermite_points
from serdes.kernels.stat_batch import gauss_rows as _kernel
from serdes.kernels.stat_rows import row_responses

# what the batched rows compute themselves: an engine class that overrides one of these
# (an interleaved ADC's) takes the rows one by one
_OWN = ("response", "_components", "_residual", "_noise_var_per_level", "distribution",
        "_distribution_of", "_isi_part", "_from_isi")


def row_distributions(engine, base: type, offset_ui: float = 0.0,
                      grid_step: float | None = None):
    """[(weight, distribution)] over the jitter quadrature rows of ``engine`` at a phase
    offset. Per-tap SJ rows: the combined responses of all rows (each tap's pulse
    re-sampled at its own offset, with RJ over its Gauss-Hermite nodes) in one kernel
    call; without RJ and crosstalk the distributions too (:func:`gauss_rows`). The last
    phase's rows are kept (the BER and the vertical bathtub share the nominal phase).
    ``base``: the engine class whose methods the batched rows reproduce (a subclass
    that overrides one of them takes the rows one by one)."""
    J = engine.jitter
    cls = type(engine)
    # per-symbol TX jitter (its mean response, exact cursors and DCD parities) is applied
    # row by row in StatisticalEngine.distribution
    if J.quasi_static or getattr(engine, "tx", None) is not None or any(
            getattr(cls, n) is not getattr(base, n) for n in _OWN):
        return [(wq, engine.distribution(offset_ui, row, grid_step=grid_step))
                for wq, row in J.rows()]
    key = (round(float(offset_ui), 12), grid_step)
    if engine._rows_cache[0] == key:
        return engine._rows_cache[1]
    rj = engine.rj
    x, gw = hermite_points(rj.points) if rj is not None else ((0.0,), (1.0,))
    p = engine.pulse
    fs, jvars = row_responses(p.fine, p.phase, p.m, p.n_ui, offset_ui + J.offsets, engine.w,
                              engine.rj_ui if rj is not None else 0.0, x, gw)
    if rj is None and not engine.link.aggressor_pulses:
        rows = list(zip(J.weights, gauss_rows(engine, fs, grid_step)))
    else:
        rows = [(wq, engine._distribution_of(f, jv, offset_ui, row, None, grid_step))
                for wq, row, f, jv in zip(J.weights, J.offsets, fs, jvars)]
    engine._rows_cache = (key, rows)
    return rows


def gauss_rows(engine, fs: np.ndarray, grid_step: float | None = None) -> list:
    """SlicerDistributions of the rows whose combined responses are ``fs`` (R, N)."""
    fd = fs[:, engine.d].copy()
    var = engine.rx_var + engine.sigma_tx ** 2 * np.einsum("ij,ij->i", fs, fs) + engine.enob_var
    if engine.quantization == "gaussian":
        var = var + engine.quant_var
    floor = 1e-6 * np.maximum(np.abs(fd), 1e-3)
    sig_ref = np.maximum(np.sqrt(np.maximum(var, 0.0)), floor)
    delta = sig_ref / engine.resolution
    resid = engine._residual(fs)
    spread = np.sum(np.abs(resid), axis=1) * float(np.max(np.abs(engine.levels)))
    spread += (0.5 * engine.lsb * float(np.sum(np.abs(engine.w)))) if engine.lsb else 0.0
    spread += engine._crosstalk_spread
    delta = np.maximum(delta, 2.0 * spread / engine.max_bins)
    if grid_step is not None:
        delta = np.array([grid_step / max(1, math.ceil(grid_step / d)) for d in delta])
    half = (0.5 * engine.lsb * np.abs(engine.w)
            if engine.quantization == "uniform" and engine.lsb > 0 else np.zeros(0))
    pmfs, lengths, k0s, isi_var, noise_var, sigma, approx, tails = _kernel(
        resid, 1e-12 * np.abs(fd), delta, engine.levels, engine.thresholds, half, fd, var,
        floor)
    m = engine.m_levels
    out = []
    for r in range(fs.shape[0]):
        d = SlicerDistribution(pmf=pmfs[r, :lengths[r]].copy(), k0=int(k0s[r]),
                               delta=float(delta[r]), means=fd[r] * engine.levels,
                               sigmas=np.full(m, sigma[r]), levels=engine.levels,
                               thresholds=engine.thresholds, bit_errors=engine.bit_errors,
                               isi_var=float(isi_var[r]), noise_var=np.full(m, noise_var[r]),
                               approximate=bool(approx[r]))
        t = tails[r]
        d._at_thresholds = {(i, e, bool(u)): float(t[i, e, u]) for i in range(m)
                            for e in range(m - 1) for u in (0, 1) if t[i, e, u] == t[i, e, u]}
        d._tails_given = True
        if engine._pre_apart:   # StatisticalEngine.precursors_apart()
            d.precursor_values = engine._last_pre[r]
        out.append(d)
    return out


def xtalk_sj_rows(engine, base: type, offset_ui: float = 0.0, grid_step: float | None = None):
    """:func:`row_distributions`, averaged over the aggressors' SJ phases
    (:func:`serdes.crosstalk.sj_points`, one set of rows per point) when any aggressor
    has TX SJ."""
    if not engine.link.aggressor_pulses:  # no aggressor: serdes.crosstalk stays unloaded
        return row_distributions(engine, base, offset_ui, grid_step)
    from serdes.crosstalk import sj_points

    pts = sj_points(engine.link)
    if pts is None:
        return row_distributions(engine, base, offset_ui, grid_step)
    key = (round(float(offset_ui), 12), grid_step)
    hit = getattr(engine, "_xt_sj_rows", (None, None))
    if hit[0] == key:
        return hit[1]
    out = []
    try:
        for theta in pts:
            engine._xt_sj, engine._rows_cache = theta, (None, None)
            out += [(w / pts.shape[0], d)
                    for w, d in row_distributions(engine, base, offset_ui, grid_step)]
    finally:
        engine._xt_sj, engine._rows_cache = None, (None, None)
    engine._xt_sj_rows = (key, out)
    return out
