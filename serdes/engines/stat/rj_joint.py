"""Random jitter joint with the ISI: the RJ noise's variance classes per ISI bin.

Given the decided level, the slicer's RJ variance ``V`` (:mod:`serdes.engines.stat.rj`)
and the residual ISI ``x`` are functions of the same symbols. They are uncorrelated (V
even in the other symbols at the peak, x odd) but not independent, and away from the
pulse peak not even that: the decided symbol's own slope gives V a term odd in the other
symbols. At +-0.125 UI on the default link, in the patterns whose ISI leans furthest
toward a threshold (top 1e-2..1e-4), V is 3.6-4.3x its level's mean
(``benchmarks/cdr_gap_split.py rjcorr``), and the error rate, the expectation over
(x, V) of ``Q((t - x) / sqrt(sigma^2 + V))``, is dominated by those patterns.

The model: the ISI axis is cut into :data:`ISI_QUANTILES` bins (quantiles of x over the
fixed symbol sample of :class:`~serdes.engines.stat.rj.RandomJitterModel`, finer in the
tails); within each (bin, level) the sampled V are cut into tail-rank classes as the
level-only model did (two points per class, mean -+ std, and the class's third
cumulant). The slicer distribution is the sum over the bins of the exact ISI pmf on the
bin's grid points times that bin's mixture (:func:`split_pmf`): the exact ISI marginal,
V's distribution conditioned on the ISI bin from the sample. V is scaled per level to
the exact mean, as before. ISI beyond the sample's extreme quantile takes the extreme
bin's classes (V there is not extrapolated further). The binned value is the
engine's pmf: the victim's residual ISI plus terms independent of the symbols (ADC
quantization, crosstalk, TX jitter cursors); the sample's ISI gets those as a Gaussian
of their exact variance (fixed seed), so the classes are conditioned on the same sum
(without it a -16 dB NEXT aggressor's ISI, binned as if it were the victim's, put the
BER 1.6x above the count).

Checks (tests/test_stat_rj_joint.py): against the model's own sampled statistics and a
slow Monte Carlo of the jittered link within 5-8 % at -+0.125 UI (the level-only
classes: 2.5-2.9x low against the sample) and at the peak of a 0.02 UI link; counted
with the loop opened at +0.125 UI: 1.03x. Limits: ISI beyond the sample's 1e-3
quantiles takes that bin's V (the deep tails rest on it: on the default link the BER
is 4-9x the level-only classes' from 0.017 to 0.08 UI off the peak, 1e-16..1e-7, and
V in the ISI tail is 2-3x its mean already 0.005 UI off it, 0.9x at it); given the
data the jitter noise is taken Gaussian with a bounded skew, which at the peak of a
0.06 UI RJ link (curvature-dominated) is 0.63x a Monte Carlo (the level-only classes'
0.92x there was two errors cancelling); the classes cost ~5x the level-only CPU per
phase (``benchmarks/rj_joint_cost.py``).
"""

from __future__ import annotations

import numpy as np

# bin edges: quantiles of the sampled ISI (both tails finer: the errors come from there)
ISI_QUANTILES = (1e-3, 1e-2, 0.05, 0.25, 0.75, 0.95, 0.99, 0.999)
MIN_CLASS = 8      # fewer samples: the class merges into the next one inward
MIN_BIN = 16       # fewer samples of a level in a bin: the classes of the next bin inward


def _cell(vs: np.ndarray, ks: np.ndarray, tail_edges, K: int):
    """(var, weights, k3) of length K (zero-padded) for the V samples of one cell,
    sorted from the largest (ties in sample order), and their K3: classes by rank from
    the top at ``tail_edges`` fractions, a class with fewer than MIN_CLASS samples
    merged into the next; two points per class (mean -+ std)."""
    n = vs.shape[0]
    bounds = [0]
    for f in tail_edges[1:-1]:
        c = int(round(f * n))
        if c - bounds[-1] >= MIN_CLASS and n - c >= MIN_CLASS:
            bounds.append(c)
    bounds.append(n)
    out = np.zeros((3, K))
    for j, (s, e) in enumerate(zip(bounds[:-1], bounds[1:])):
        seg = vs[s:e]
        mu = float(seg.mean())
        sd = float(seg.std())
        out[0, 2 * j:2 * j + 2] = (mu - sd, mu + sd)
        out[1, 2 * j:2 * j + 2] = 0.5 * (e - s) / n
        out[2, 2 * j:2 * j + 2] = float(ks[s:e].mean())
    return out


def joint_classes(v, k3, lev, x, m: int, tail_edges):
    """(edges, var, weights, k3): the ISI bin edges (B - 1) and per bin and level the V
    classes (B, m, K), rows of weights summing to 1, from the samples V, K3 (already
    scaled), their decided level index and their ISI value x. Within each (bin, level)
    the classes are tail ranks of the cell's own V (:func:`_cell`); a bin with fewer
    than MIN_BIN samples of a level takes the classes of the next bin inward."""
    edges = np.quantile(x, ISI_QUANTILES)
    b = np.searchsorted(edges, x, side="right")
    B = edges.shape[0] + 1
    K = 2 * (len(tail_edges) - 1)
    out = np.zeros((3, B, m, K))
    centre = int(np.searchsorted(np.asarray(ISI_QUANTILES), 0.5))
    order = sorted(range(B), key=lambda i: (abs(i - centre + 0.5), i))
    cell = lev.astype(np.int64) * B + b
    o = np.argsort(-v, kind="stable")              # by cell, then V from the largest
    o = o[np.argsort(cell[o], kind="stable")]
    start = np.concatenate([[0], np.cumsum(np.bincount(cell, minlength=m * B))])
    vo, ko = v[o], k3[o]
    for i in range(m):
        for bi in order:
            s, e = start[i * B + bi], start[i * B + bi + 1]
            if e - s < MIN_BIN:
                inner = bi + 1 if bi < centre else bi - 1
                out[:, bi, i] = out[:, inner, i]
                continue
            out[:, bi, i] = _cell(vo[s:e], ko[s:e], tail_edges, K)
    return edges, out[0], out[1], out[2]


def split_pmf(pmf: np.ndarray, k0: int, delta: float, edges: np.ndarray):
    """[(bin, pmf slice, its k0)] of the grid points x = (k0 + n) delta in each ISI bin
    (bins without a point left out)."""
    x = (k0 + np.arange(pmf.shape[0])) * delta
    cut = np.searchsorted(x, edges, side="left")
    bounds = np.concatenate([[0], cut, [pmf.shape[0]]])
    return [(bi, pmf[s:e], int(k0 + s)) for bi, (s, e) in
            enumerate(zip(bounds[:-1], bounds[1:])) if e > s]


def rj_joint_distribution(eng, offset_ui, rj_mean, resid, pmf, k0, delta, eff, floor, fd,
                          var_true, gvar, approx):
    """The engine's slicer distribution with the RJ classes joint with the ISI: one
    :class:`SlicerDistribution` per ISI bin (the pmf's points in the bin, scaled by the
    number of bins, and that bin's mixture), averaged by
    :class:`~serdes.engines.stat.txjitter.ParityMixture` (weights 1 / bins): their sum."""
    from serdes.engines.stat.distribution import SlicerDistribution
    from serdes.engines.stat.rj import merge_close, skewed_components
    from serdes.engines.stat.txjitter import ParityMixture

    # the pmf's other terms (crosstalk, quantization, TX jitter cursors) in the binned
    # value: their variance, Gaussian in the sample (they are independent of V)
    other = max(var_true - eng.es * float(np.sum(resid ** 2)), 0.0)
    edges, var, wts, k3 = eng.rj.joint(offset_ui, rj_mean, resid, other)
    pieces = split_pmf(pmf, k0, delta, edges)
    parts = []
    for bi, p, k0b in pieces:
        total = np.maximum((eff - rj_mean)[:, None] + var[bi], floor ** 2)
        s, b = skewed_components(total, k3[bi])
        s, b, w = merge_close(s, b, wts[bi])
        parts.append(SlicerDistribution(
            mix_sigmas=s, mix_weights=w, mix_betas=b, pmf=p * len(pieces), k0=k0b,
            delta=float(delta), means=fd * eng.levels, sigmas=np.sqrt(eff),
            levels=eng.levels, thresholds=eng.thresholds, bit_errors=eng.bit_errors,
            isi_var=var_true, noise_var=gvar, approximate=approx))
    return parts[0] if len(parts) == 1 else ParityMixture(parts)
