"""Bathtubs, the statistical eye and eye openings of a :class:`StatisticalEngine`: the
per-eye error rate over sampling phase and slicer voltage, averaged over the jitter
quadrature (quasi-static jitter: evaluated on a phase grid covering the jitter and
interpolated in log)."""

from __future__ import annotations

import time

import numpy as np

from serdes.engines.stat.results import DEFAULT_TARGETS, MAP_FLOOR, Bathtub, EyeOpening, StatEye


def phase_grid_values(engine, phases: np.ndarray, fn) -> np.ndarray:
    """fn(dist) -> array, averaged over the jitter at every phase. Quasi-static
    jitter: evaluated on a grid covering the jitter, interpolated in log."""
    J = engine.jitter
    if J.weights.shape[0] == 1 and not J.span_ui:
        return np.array([fn(engine.distribution(p)) for p in phases])
    if not J.quasi_static:
        out = []
        for p in phases:
            acc = None
            for wq, row in engine.jitter.rows():
                v = wq * fn(engine.distribution(p, row))
                acc = v if acc is None else acc + v
            out.append(acc)
        return np.array(out)
    step = float(np.min(np.diff(phases))) / 2 if phases.shape[0] > 1 else 1 / 128
    lo = phases.min() - J.span_ui - 2 * step
    hi = phases.max() + J.span_ui + 2 * step
    grid = np.arange(lo, hi + step / 2, step)
    vals = np.array([fn(engine.distribution(p)) for p in grid])
    logv = np.log(np.maximum(vals, MAP_FLOOR))
    out = np.zeros((phases.shape[0],) + vals.shape[1:])
    for wq, tau in zip(J.weights, J.common):
        pos = (phases + tau - grid[0]) / step
        i = np.clip(np.floor(pos).astype(int), 0, grid.shape[0] - 2)
        t = (pos - i).reshape((-1,) + (1,) * (vals.ndim - 1))
        lv = logv[i] * (1 - t) + logv[i + 1] * t
        out += wq * np.exp(lv)
    return out


def bathtub_horizontal(engine, n_phases: int = 64, span_ui: float = 1.0) -> Bathtub:
    """BER per eye (at its slicer threshold) and total BER vs sampling phase."""
    phases = -span_ui / 2 + np.arange(n_phases) * span_ui / n_phases
    ne = engine.m_levels - 1

    def fn(dist):
        return np.concatenate([dist.ber_per_eye(), [dist.ber()]])

    vals = phase_grid_values(engine, phases, fn)
    return Bathtub(x=phases, ber_per_eye=vals[:, :ne].T.copy(), ber=vals[:, ne].copy(),
                   eye_names=engine.eye_names, kind="horizontal", ui_s=engine.ui_s,
                   volts_per_unit=engine.volts_per_unit)


def bathtub_vertical(engine, offset_ui: float = 0.0, n_points: int = 401,
                     span: float | None = None) -> Bathtub:
    """Per-eye error rate vs threshold offset from each slicer threshold."""
    if span is None:
        span = float(np.min(np.diff(engine.levels)))
    dy = np.linspace(-span / 2, span / 2, n_points)
    out = np.zeros((engine.m_levels - 1, n_points))
    for wq, row in engine.jitter.rows():
        dist = engine.distribution(offset_ui, row)
        for e, t in enumerate(engine.thresholds):
            out[e] += wq * dist.wrong_side(t + dy)
    return Bathtub(x=dy, ber_per_eye=out, ber=None, eye_names=engine.eye_names,
                   kind="vertical", ui_s=engine.ui_s, volts_per_unit=engine.volts_per_unit)


def eye(engine, n_phases: int = 64, n_bins: int = 256, y_range: float = 1.3) -> StatEye:
    """Statistical eye: the eye map over one UI of phase x n_bins slicer voltages."""
    t0 = time.perf_counter()
    ymax = y_range * float(np.max(np.abs(engine.levels)))
    y = np.linspace(-ymax, ymax, n_bins)
    step = float(y[1] - y[0])
    phases = -0.5 + np.arange(n_phases) / n_phases

    def fn(dist):
        stride = int(round(step / dist.delta))
        return dist.wrong_side_grid(float(y[0]), stride, n_bins)

    def dist_at(p, row=None):
        return engine.distribution(p, row, grid_step=step)

    J = engine.jitter
    if J.weights.shape[0] == 1 and not J.span_ui:
        ber = np.array([fn(dist_at(p)) for p in phases])
    elif not J.quasi_static:
        ber = np.zeros((n_phases, n_bins))
        for k, p in enumerate(phases):
            for wq, row in engine.jitter.rows():
                ber[k] += wq * fn(dist_at(p, row))
    else:
        dstep = 1.0 / n_phases
        lo = phases.min() - J.span_ui - 2 * dstep
        hi = phases.max() + J.span_ui + 2 * dstep
        grid = np.arange(lo, hi + dstep / 2, dstep)
        logv = np.log(np.maximum(np.array([fn(dist_at(p)) for p in grid]), MAP_FLOOR))
        ber = np.zeros((n_phases, n_bins))
        for wq, tau in zip(J.weights, J.common):
            pos = (phases + tau - grid[0]) / dstep
            i = np.clip(np.floor(pos).astype(int), 0, grid.shape[0] - 2)
            t = (pos - i)[:, None]
            ber += wq * np.exp(logv[i] * (1 - t) + logv[i + 1] * t)
    means = np.array([float(engine.response(p)[0][engine.d]) * engine.levels for p in phases])
    return StatEye(phases_ui=phases, y=y, ber=np.maximum(ber, MAP_FLOOR), means=means,
                   thresholds=engine.thresholds, eye_names=engine.eye_names, ui_s=engine.ui_s,
                   volts_per_unit=engine.volts_per_unit,
                   elapsed_s=time.perf_counter() - t0)


def eye_opening(engine, targets=DEFAULT_TARGETS, offset_ui: float = 0.0,
                n_phases: int = 64, vertical: Bathtub | None = None,
                horizontal: Bathtub | None = None) -> EyeOpening:
    """Eye height (at the phase offset) and eye width (at the slicer threshold) of
    every eye at each target BER."""
    from serdes.metrics.eye import opening_from_bathtub

    v = vertical or engine.bathtub_vertical(offset_ui, n_points=801)
    h = horizontal or engine.bathtub_horizontal(n_phases)
    targets = tuple(float(t) for t in targets)
    ne = engine.m_levels - 1
    height = np.zeros((len(targets), ne))
    width = np.zeros((len(targets), ne))
    for k, tb in enumerate(targets):
        for e in range(ne):
            height[k, e] = opening_from_bathtub(v.x, v.ber_per_eye[e], tb, centre=0.0)
            width[k, e] = opening_from_bathtub(h.x, h.ber_per_eye[e], tb, centre=offset_ui)
    return EyeOpening(targets=targets, eye_names=engine.eye_names, height=height,
                      width_ui=width, volts_per_unit=engine.volts_per_unit, ui_s=engine.ui_s,
                      offset_ui=offset_ui)
