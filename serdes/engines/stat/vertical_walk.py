"""The vertical bathtub points the eye heights read, from few evaluations of the rows.

An eye height at target BER b reads, on each side of the eye's centre, the first
point of the 801-point vertical bathtub above b and its inner neighbour (interpolated
in log; :func:`serdes.metrics.opening.opening_from_bathtub`), and needs every point
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

A row may be a mixture (the DCD parities' ParityMixture, the RJ classes' ISI bins'
BinnedMixture, or parities of binned mixtures) whose means are its parts' (not
replaced): its eye map is the weighted sum of its parts', each a plain distribution
with the split above, so the kernel takes the parts as rows inside their mixtures and
adds them as the mixtures' own methods do (bit for bit). A mixture with replaced means
or another kind of row is walked point by point.
"""

from __future__ import annotations

import numpy as np

from serdes.engines.stat.distribution import SlicerDistribution
from serdes.engines.stat.txjitter import ParityMixture
from serdes.kernels.stat_tails import RowsWrongSide

MARGIN_REL = 1e-9
MARGIN_ABS = 1e-28


def _leaves(w, d, out: list, opens: int) -> bool:
    """Append [weight, distribution, mixtures opened before it, weights of those closed
    after it] for the plain rows under (w, d) in depth-first order; a mixture
    (:class:`ParityMixture`, rj_joint's BinnedMixture) whose means are its parts'
    average (not replaced) is the weighted sum of its parts, as its own methods add
    them. False when something under it cannot be packed."""
    if type(d) is SlicerDistribution:
        out.append([w, d, opens, []])
        return True
    if not isinstance(d, ParityMixture) or np.any(d.means - d._base):
        return False
    for k, (wk, part) in enumerate(zip(d.wts, d.parts)):
        if not _leaves(float(wk), part, out, opens + 1 if k == 0 else 0):
            return False
    out[-1][3].append(w)
    return True


def flat_rows(rows):
    """The plain :class:`SlicerDistribution` rows under ``rows`` with the nesting of
    their mixtures, (leaves [(weight in its mixture, distribution)], opens, closes, the
    mixtures' weights in the order they close), or None when a row is neither a plain
    distribution nor a mixture of them with its parts' means (the walks then take the
    rows one by one)."""
    out: list = []
    for wq, d in rows:
        if not _leaves(wq, d, out, 0):
            return None
    if not out:
        return None
    leaves = [(w, d) for w, d, _, _ in out]
    return (leaves, [o for _, _, o, _ in out], [len(c) for _, _, _, c in out],
            [g for _, _, _, c in out for g in c])


def rows_evaluator(rows) -> RowsWrongSide | None:
    """The packed rows' eye map (weighted sum and its monotone parts; mixtures as the
    weighted sums of their parts, added in the same order as their own methods), or
    None when the rows cannot be packed (:func:`flat_rows`)."""
    flat = flat_rows(rows)
    if flat is None:
        return None
    leaves, opens, closes, gw = flat
    dists = [d for _, d in leaves]
    return RowsWrongSide([w for w, _ in leaves], [d.checked_tails() for d in dists],
                         [d.means for d in dists], dists[0].m * dists[0].bits_per_symbol,
                         opens, closes, gw)


def vertical_values(engine, rows, dy: np.ndarray, targets) -> np.ndarray | None:
    """(n_eyes, len(dy)) values of the vertical bathtub of ``rows`` at threshold
    offsets ``dy`` that the eye heights at ``targets`` read (see the module), or None
    when the rows cannot be packed (the caller walks them point by point)."""
    flat = flat_rows(rows)
    if flat is None:
        return None
    ev = rows_evaluator(rows)
    means = np.unique(np.concatenate([d.means for _, d in flat[0]]))
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
