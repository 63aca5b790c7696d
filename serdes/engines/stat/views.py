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
    from serdes.forked import split_map

    J = engine.jitter
    if J.weights.shape[0] == 1 and not J.span_ui:
        return np.array(split_map(lambda p: fn(engine.distribution(p)), phases))
    if not J.quasi_static:
        def at(p):
            acc = None
            for wq, dist in engine.row_distributions(p):
                v = wq * fn(dist)
                acc = v if acc is None else acc + v
            return acc

        return np.array(split_map(at, phases))
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
    for wq, dist in engine.row_distributions(offset_ui):
        for e, t in enumerate(engine.thresholds):
            out[e] += wq * dist.wrong_side(t + dy)
    return Bathtub(x=dy, ber_per_eye=out, ber=None, eye_names=engine.eye_names,
                   kind="vertical", ui_s=engine.ui_s, volts_per_unit=engine.volts_per_unit)


def _eye_columns(engine, phases: np.ndarray, y: np.ndarray, dstep: float) -> np.ndarray:
    """The eye map of the decided symbol sampled at each offset in ``phases`` (from its
    nominal phase), averaged over the jitter, at the slicer voltages ``y``."""
    step = float(y[1] - y[0])
    n_bins = y.shape[0]

    def fn(dist):
        stride = int(round(step / dist.delta))
        return dist.wrong_side_grid(float(y[0]), stride, n_bins)

    def dist_at(p, row=None):
        return engine.distribution(p, row, grid_step=step)

    from serdes.forked import split_map

    J = engine.jitter
    if J.weights.shape[0] == 1 and not J.span_ui:
        return np.array(split_map(lambda p: fn(dist_at(p)), phases))
    ber = np.zeros((phases.shape[0], n_bins))
    if not J.quasi_static:
        def at(p):   # the phase's column over the jitter rows (a helper may take it)
            col = np.zeros(n_bins)
            for wq, dist in engine.row_distributions(p, grid_step=step):
                col += wq * fn(dist)
            return col

        return np.array(split_map(at, phases))
    lo = phases.min() - J.span_ui - 2 * dstep
    hi = phases.max() + J.span_ui + 2 * dstep
    grid = np.arange(lo, hi + dstep / 2, dstep)
    logv = np.log(np.maximum(np.array([fn(dist_at(p)) for p in grid]), MAP_FLOOR))
    for wq, tau in zip(J.weights, J.common):
        pos = (phases + tau - grid[0]) / dstep
        i = np.clip(np.floor(pos).astype(int), 0, grid.shape[0] - 2)
        t = (pos - i)[:, None]
        ber += wq * np.exp(logv[i] * (1 - t) + logv[i + 1] * t)
    return ber


def _faded(cols: np.ndarray, offsets: np.ndarray) -> np.ndarray:
    """A neighbour's eye map columns at offsets in [0.5, 1] UI from its centre, divided
    by the weight cos^2(pi (|x| - 1/2)): 1 at half a UI, 0 (excluded) at one UI."""
    w = np.cos(np.pi * (np.clip(np.abs(offsets), 0.5, 1.0) - 0.5)) ** 2
    w = np.where(np.abs(offsets) >= 1.0, 0.0, w)[:, None]
    with np.errstate(divide="ignore"):
        return np.where(w > 0, cols / np.where(w > 0, w, 1.0), np.inf)


def eye(engine, n_phases: int = 64, n_bins: int = 256, y_range: float = 1.3,
        phases_ui=None) -> StatEye:
    """Statistical eye: the eye map over one UI of phase x n_bins slicer voltages.

    As on a scope, every UI shows the eyes of all symbols: at an offset t from the
    nominal phase the map is the most open of the eye E(t) of the symbol sampled at t
    and those of its neighbours, E(t -+ 1) / w(t -+ 1). The weight w is 1 within half
    a UI of a symbol's centre and fades (cos^2) to 0 at one UI, so within +-T/2 a
    symbol's own eye counts in full (in the eye openings it is all there is), the map
    is continuous (a neighbour enters from infinity) and periodic: at the crossing both sides show min(E(-T/2), E(T/2)),
    so the columns at -T/2 and +T/2 are the same and tiled UIs show no seam.
    ``phases_ui`` (default n_phases points from -0.5 UI in steps of 1/n_phases) chooses
    the columns."""
    t0 = time.perf_counter()
    ymax = y_range * float(np.max(np.abs(engine.levels)))
    y = np.linspace(-ymax, ymax, n_bins)
    phases = (-0.5 + np.arange(n_phases) / n_phases if phases_ui is None
              else np.asarray(phases_ui, dtype=np.float64).ravel())
    # a symbol's eye at offsets within one UI of its centre
    late = phases[phases >= 0.0] - 1.0    # the next symbol, seen from t >= 0
    early = phases[phases <= 0.0] + 1.0   # the previous one, seen from t <= 0
    all_p = np.concatenate([phases, late, early])
    cols = _eye_columns(engine, all_p, y, 1.0 / n_phases)
    n = phases.shape[0]
    ber = cols[:n].copy()
    k_late = np.nonzero(phases >= 0.0)[0]
    k_early = np.nonzero(phases <= 0.0)[0]
    n_late = k_late.shape[0]
    ber[k_late] = np.minimum(ber[k_late], _faded(cols[n:n + n_late], late))
    ber[k_early] = np.minimum(ber[k_early], _faded(cols[n + n_late:], early))
    means = np.array([float(engine.response(p)[0][engine.d]) * engine.levels for p in phases])
    return StatEye(phases_ui=phases, y=y, ber=np.maximum(ber, MAP_FLOOR), means=means,
                   thresholds=engine.thresholds, eye_names=engine.eye_names, ui_s=engine.ui_s,
                   volts_per_unit=engine.volts_per_unit,
                   elapsed_s=time.perf_counter() - t0)


def eye_opening(engine, targets=DEFAULT_TARGETS, offset_ui: float = 0.0,
                n_phases: int = 64, vertical: Bathtub | None = None,
                horizontal: Bathtub | None = None) -> EyeOpening:
    """Eye height (at the phase offset) and eye width (at the slicer threshold) of
    every eye at each target BER. Without given bathtubs only their points that the
    openings read are computed (:func:`_walk`): the same numbers as from the full
    801-point vertical and ``n_phases`` horizontal bathtubs."""
    from serdes.metrics.opening import opening_from_bathtub

    targets = tuple(float(t) for t in targets)
    if vertical is not None:
        vx, vb = vertical.x, vertical.ber_per_eye
    else:
        vx, vb = vertical_walk(engine, offset_ui, 801, targets)
    if horizontal is not None:
        hx, hb = horizontal.x, horizontal.ber_per_eye
    else:
        hx, hb = horizontal_walk(engine, n_phases, offset_ui, max(targets))
    ne = engine.m_levels - 1
    height = np.zeros((len(targets), ne))
    width = np.zeros((len(targets), ne))
    for k, tb in enumerate(targets):
        for e in range(ne):
            height[k, e] = opening_from_bathtub(vx, vb[e], tb, centre=0.0)
            width[k, e] = opening_from_bathtub(hx, hb[e], tb, centre=offset_ui)
    return EyeOpening(targets=targets, eye_names=engine.eye_names, height=height,
                      width_ui=width, volts_per_unit=engine.volts_per_unit, ui_s=engine.ui_s,
                      offset_ui=offset_ui)


def _walk(x: np.ndarray, centre: float, n_eyes: int, limit: float, evaluate, chunk: int):
    """The per-eye bathtub values that ``opening_from_bathtub`` reads for every target up
    to ``limit``: from the point nearest ``centre`` outwards, on each side up to the first
    point above ``limit`` of every eye (the walk of each target stops there or before,
    and interpolates between it and its inner neighbour). ``evaluate(idx)`` returns the
    values (n_eyes, len(idx)) at those indices; each point's value does not depend on
    which others are computed. The rest are +inf (never read)."""
    n = x.shape[0]
    vals = np.full((n_eyes, n), np.inf)
    lt = np.log(limit)

    def above(col):   # opening_from_bathtub's test, per eye, on one point's values
        return np.log(np.maximum(col, 1e-300)) > lt

    i0 = int(np.argmin(np.abs(x - centre)))
    vals[:, [i0]] = evaluate(np.array([i0]))
    done = above(vals[:, i0])         # a closed eye reads the centre alone

    def walk(step, state=None, steps=None):   # from the centre (or ``state``) outwards
        got, stop, j = state if state is not None else ([], done.copy(), i0)
        while not stop.all() and 0 <= j + step < n and (steps is None or steps > 0):
            idx = (np.arange(j + 1, min(j + 1 + chunk, n)) if step > 0
                   else np.arange(j - 1, max(j - 1 - chunk, -1), -1))
            v = evaluate(idx)
            got.append((idx, v))
            for c, jj in enumerate(idx):
                stop |= above(v[:, c])
                j = jj
                if stop.all():
                    break
            steps = None if steps is None else steps - 1
        return got, stop, j

    # the first step outwards costly (an interleaved ADC's rows): the other side in a
    # forked helper where one is allowed (serdes.forked.helpers), the same values
    from serdes import forked

    t0 = time.perf_counter()
    right = walk(1, steps=1)
    kid = (forked.Forked(lambda: walk(-1)[0]) if forked.helpers_allowed() and right[0]
           and time.perf_counter() - t0 >= forked.FORK_AFTER_S else None)
    try:
        with forked.helpers(forked.helpers_allowed() - (kid is not None)):
            right = walk(1, right)   # (without the core the other side took)
        left = kid.result() if kid is not None else walk(-1)[0]
    finally:
        if kid is not None:
            kid.close()
    for idx, v in right[0] + left:
        vals[:, idx] = v
    return vals


def vertical_walk(engine, offset_ui: float, n_points: int, targets, rows=None):
    """(dy, values) of :func:`bathtub_vertical` at the points the openings at
    ``targets`` read: bisected on the rows' monotone tails
    (:func:`serdes.engines.stat.vertical_walk.vertical_values`), or walked point by
    point when the rows are not plain slicer distributions. ``rows``: the weighted
    distributions to sum (default: the engine's rows at ``offset_ui``)."""
    from serdes.engines.stat.vertical_walk import vertical_values

    span = float(np.min(np.diff(engine.levels)))
    dy = np.linspace(-span / 2, span / 2, n_points)
    rows = engine.row_distributions(offset_ui) if rows is None else rows
    vals = vertical_values(engine, rows, dy, targets)
    if vals is not None:
        return dy, vals

    def evaluate(idx):
        out = np.zeros((engine.m_levels - 1, idx.shape[0]))
        for wq, dist in rows:
            for e, t in enumerate(engine.thresholds):
                out[e] += wq * dist.wrong_side(t + dy[idx])
        return out

    return dy, _walk(dy, 0.0, engine.m_levels - 1, max(targets), evaluate, 32)


def horizontal_walk(engine, n_phases: int, offset_ui: float, limit: float,
                     per_eye=None):
    """(phases, per-eye values) of the engine's ``bathtub_horizontal`` at the phases the
    openings read; quasi-static jitter interpolates on a grid set by all the phases, so
    there every phase is computed. ``per_eye(phases)``: the values (n_eyes, k) at those
    phases (default :func:`horizontal_per_eye`; an interleaved ADC's average over its
    output phases)."""
    if engine.jitter.quasi_static and (engine.jitter.weights.shape[0] > 1
                                       or engine.jitter.span_ui):
        h = engine.bathtub_horizontal(n_phases)
        return h.x, h.ber_per_eye
    phases = -0.5 + np.arange(n_phases) * 1.0 / n_phases   # bathtub_horizontal's, span 1
    if per_eye is None:
        def per_eye(ph):
            return horizontal_per_eye(engine, ph)

    def evaluate(idx):
        return per_eye(phases[idx])

    # one phase per step: phase_grid_values takes the phases one by one anyway, and a
    # larger chunk evaluates phases past the last one read (each a whole set of jitter
    # rows: 2592 of them on a calibrated 64-lane ADC with a supply tone)
    return phases, _walk(phases, offset_ui, engine.m_levels - 1, limit, evaluate, 1)


def horizontal_per_eye(engine, phases: np.ndarray) -> np.ndarray:
    """The per-eye values (n_eyes, len(phases)) of :func:`bathtub_horizontal` at
    ``phases`` (jitter not quasi-static, or one point of it), each phase on its own: the
    numbers of the whole bathtub at those phases."""
    J = engine.jitter
    if J.quasi_static or (J.weights.shape[0] == 1 and not J.span_ui):
        return phase_grid_values(engine, phases, lambda dist: dist.ber_per_eye()).T
    return np.array([_rows_rates_per_eye(engine, p) for p in phases]).T


def _rows_rates_per_eye(engine, phase: float) -> np.ndarray:
    """phase_grid_values(engine, [phase], ber_per_eye) over the jitter rows: the rows'
    eye map at the slicer thresholds in one kernel call (each row's ber_per_eye is its
    wrong_side at the thresholds, the same tail sums added in the same order, mixtures
    as their own per-eye rates average their parts: bit for bit), row by row when the
    rows cannot be packed."""
    from serdes.engines.stat.vertical_walk import flat_rows, rows_evaluator

    rows = engine.row_distributions(phase)
    flat = flat_rows(rows)
    if flat is not None and not any(d.thresholds_given for _, d in flat[0]):
        return rows_evaluator(rows)(rows[0][1].thresholds)[0]
    acc = None
    for wq, dist in rows:
        v = wq * dist.ber_per_eye()
        acc = v if acc is None else acc + v
    return acc
