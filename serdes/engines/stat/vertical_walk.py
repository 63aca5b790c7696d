"""The vertical bathtub points the eye heights read, from few evaluations of the rows.

An eye height at target BER b reads, on each side of the eye's centre, the first
point of the 801-point vertical bathtub above b and its inner neighbour (interpolated
in log; :func:`serdes.metrics.eye.opening_from_bathtub`), and needs every point
between the centre and that crossing to be at or below b. The bathtub at slicer
voltage y is a weighted sum over the jitter rows of every level's tail beyond y, away
from its mean: the levels whose mean is below y give upper tails P(v_i > y),
nonincreasing in y, the others lower tails P(v_i < y), nondecreasing (each a sum of
pmf[n] Q(z) over the ISI grid, Q with its cut-offs a monotone function of y). So
between two evaluated voltages y_a < y_c with no row's level mean in [y_a, y_c], every
point is at most

    ub = below(y_a) + above(y_c)

(the parts of the rows' sum, :class:`serdes.kernels.stat_tails.RowsWrongSide`). A gap
whose ub is below a target (with a margin of 1e-9 relative, 1e-28 absolute, far above
the kernel's rounding: each tail is a sum of positive terms, relative error < 1e-12)
needs none of its points; otherwise its middle point is evaluated (bisection), until
each target's crossing and its inner neighbour are evaluated points. The values
returned: exact (bit for bit those of the full bathtub) at the evaluated points, the
gap's ub at the points of a gap (at or below every target whose crossing lies beyond
it, as those read), +inf elsewhere (never read): the same heights as from the full
bathtub (tests/test_stat_vertical_walk.py).
"""

from __future__ import annotations

import numpy as np

from serdes.engines.stat.distribution import SlicerDistribution
from serdes.kernels.stat_tails import RowsWrongSide

MARGIN_REL = 1e-9
MARGIN_ABS = 1e-28


def rows_evaluator(rows) -> RowsWrongSide | None:
    """The packed rows' eye map (weighted sum and its monotone parts), or None when a
    row is not a plain :class:`SlicerDistribution` (parity / binned mixtures)."""
    if not rows or not all(type(d) is SlicerDistribution for _, d in rows):
        return None
    dists = [d for _, d in rows]
    return RowsWrongSide([wq for wq, _ in rows], [d.checked_tails() for d in dists],
                         [d.means for d in dists], dists[0].m * dists[0].bits_per_symbol)


def vertical_values(engine, rows, dy: np.ndarray, targets) -> np.ndarray | None:
    """(n_eyes, len(dy)) values of the vertical bathtub of ``rows`` at threshold
    offsets ``dy`` that the eye heights at ``targets`` read (see the module), or None
    when the rows cannot be packed (the caller walks them point by point)."""
    ev = rows_evaluator(rows)
    if ev is None:
        return None
    means = np.unique(np.concatenate([d.means for _, d in rows]))
    i0 = int(np.argmin(np.abs(dy)))
    targets = sorted({float(t) for t in targets}, reverse=True)
    return np.array([_eye_values(float(t) + dy, i0, targets, ev, means)
                     for t in engine.thresholds])


def _above(v: float, target: float) -> bool:
    """opening_from_bathtub's test: log(max(v, 1e-300)) > log(target)."""
    return bool(np.log(np.maximum(np.array([v]), 1e-300))[0] > np.log(np.array([target]))[0])


def _eye_values(y: np.ndarray, i0: int, targets, ev, means) -> np.ndarray:
    n = y.shape[0]
    known: dict = {}   # index -> (value, below part, above part)

    def evaluate(j):
        out = ev(y[j:j + 1])
        known[j] = (float(out[0, 0]), float(out[1, 0]), float(out[2, 0]))

    def gap_bound(a, c):
        """ub over the points strictly between a and c, or inf (a mean in between)."""
        lo, hi = (a, c) if y[a] < y[c] else (c, a)
        if np.any((means >= y[lo]) & (means <= y[hi])):
            return np.inf
        return known[lo][1] + known[hi][2]

    def needed(step, target):
        """The next index to evaluate for this side and target, or None (done)."""
        end = n - 1 if step > 0 else 0
        order = sorted((j for j in known if (j - i0) * step >= 0), key=lambda j: (j - i0) * step)
        for a, c in zip(order, order[1:] + [None]):
            if _above(known[a][0], target):    # the crossing: its inner neighbour exact
                return None if a == i0 or (a - step) in known else a - step
            if c is None:
                return None if a == end else end
            if abs(c - a) > 1:
                ub = gap_bound(a, c)
                if not ub * (1 + MARGIN_REL) + MARGIN_ABS <= target:
                    return (a + c) // 2
        return None

    evaluate(i0)
    changed = True
    while changed:   # until no side and target asks for a point (a fixpoint)
        changed = False
        for step in (1, -1):
            for target in targets:
                j = needed(step, target)
                while j is not None:
                    evaluate(j)
                    changed = True
                    j = needed(step, target)
    vals = np.full(n, np.inf)
    order = sorted(known)
    for a, c in zip(order, order[1:]):
        if c - a > 1:
            vals[a + 1:c] = gap_bound(a, c)
    for j, (v, _, _) in known.items():
        vals[j] = v
    return vals
