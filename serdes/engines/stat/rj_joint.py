"""Random jitter joint with the ISI: the RJ noise's variance classes per ISI bin.

Given the decided level, the slicer's RJ variance ``V`` (:mod:`serdes.engines.stat.rj`)
and the residual ISI ``x`` are functions of the same symbols. They are uncorrelated (V
even in the other symbols at the peak, x odd) but not independent, and away from the
pulse peak not even that: the decided symbol's own slope gives V a term odd in the other
symbols. At +-0.125 UI on the default link, in the patterns whose ISI leans furthest
toward a threshold (top 1e-2..1e-4), V is 3.6-4.3x its level's mean
(``benchmarks/cdr_gap_split.py rjcorr``), and the error rate, the expectation over
(x, V) of ``Q((t - x) / sqrt(sigma^2 + V))``, is dominated by those patterns.

The model: the ISI axis is cut into :data:`~serdes.engines.stat.rj.ISI_QUANTILES` bins
(quantiles of x over the fixed symbol sample of :class:`~serdes.engines.stat.rj.RandomJitterModel`, finer in the
tails); within each (bin, level) the sampled V are cut into tail-rank classes as the
level-only model did (two points per class, mean -+ std, and the class's third
cumulant); the classes are one kernel call,
:func:`serdes.kernels.stat_joint.rj_joint_classes` (its NumPy form in tests/naive.py).
The slicer distribution is the sum over the bins of the exact ISI pmf on the
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
0.92x there was two errors cancelling); the engine's BER costs 1.42x the level-only
model's CPU per phase (``benchmarks/rj_joint_cost.py 11``, median of the paired
ratios, 1.08-1.77 on a shared, loaded machine; 5.5x with the classes in NumPy and a
decision matrix per bin).
"""

from __future__ import annotations

import numpy as np

from serdes.engines.stat.distribution import SlicerDistribution
from serdes.engines.stat.rj import MERGE_REL, skewed_components
from serdes.engines.stat.txjitter import ParityMixture
from serdes.kernels.stat_joint import merge_close_rows


def split_pmf(pmf: np.ndarray, k0: int, delta: float, edges: np.ndarray):
    """[(bin, pmf slice, its k0)] of the grid points x = (k0 + n) delta in each ISI bin
    (bins without a point left out)."""
    x = (k0 + np.arange(pmf.shape[0])) * delta
    cut = np.searchsorted(x, edges, side="left")
    bounds = np.concatenate([[0], cut, [pmf.shape[0]]])
    return [(bi, pmf[s:e], int(k0 + s)) for bi, (s, e) in
            enumerate(zip(bounds[:-1], bounds[1:])) if e > s]


def rj_joint_distribution(eng, offset_ui, rj_mean, resid, pmf, k0, delta, eff, floor, fd,
                          var_true, gvar, approx, shift: float = 0.0):
    """The engine's slicer distribution with the RJ classes joint with the ISI: one
    :class:`SlicerDistribution` per ISI bin (the pmf's points in the bin, scaled by the
    number of bins, and that bin's mixture), averaged by
    :class:`~serdes.engines.stat.txjitter.ParityMixture` (weights 1 / bins): their sum.
    ``shift``: a constant in the pmf beyond the ISI and the symbol-independent terms (an
    interleaved ADC's lane offsets through the FFE); the bins' edges move with it."""
    # the pmf's other terms (crosstalk, quantization, TX jitter cursors) in the binned
    # value: their variance, Gaussian in the sample (they are independent of V)
    other = max(var_true - eng.es * float(np.sum(resid ** 2)), 0.0)
    edges, var, wts, k3 = eng.rj.joint(offset_ui, rj_mean, resid, other)
    edges = edges + shift
    pieces = split_pmf(pmf, k0, delta, edges)
    # every bin's components at once (the same element-wise arithmetic per bin)
    total = np.maximum((eff - rj_mean)[None, :, None] + var, floor ** 2)
    s_all, b_all = skewed_components(total, k3)
    s_all, b_all, w_all = merge_close_rows(s_all, b_all, wts, MERGE_REL)
    parts = []
    for bi, p, k0b in pieces:
        parts.append(SlicerDistribution(
            mix_sigmas=s_all[bi], mix_weights=w_all[bi], mix_betas=b_all[bi],
            pmf=p * len(pieces), k0=k0b,
            delta=float(delta), means=fd * eng.levels, sigmas=np.sqrt(eff),
            levels=eng.levels, thresholds=eng.thresholds, bit_errors=eng.bit_errors,
            isi_var=var_true, noise_var=gvar, approximate=approx))
    return parts[0] if len(parts) == 1 else BinnedMixture(parts)


class BinnedMixture(ParityMixture):
    """The sum over the ISI bins (:class:`ParityMixture` with weights 1 / bins, the
    parts sharing means, thresholds and grid step): the tails at the thresholds
    are asked of every part with one set of points and averaged before the
    decision matrix is formed, instead of a decision matrix per part."""

    def _tt(self):
        if getattr(self, "_tt_cache", None) is None:
            p0 = self.parts[0]
            keys = []
            for i in range(p0.m):
                for e, t in enumerate(p0.thresholds):
                    want = {e >= i, bool(t > p0.means[i])}
                    keys += [(i, e, u) for u in sorted(want)]
            y = np.array([p0.thresholds[e] - p0.means[i] for i, e, _ in keys])
            up = np.array([u for _, _, u in keys], dtype=np.uint8)
            lev = np.array([i for i, _, _ in keys], dtype=np.int64)
            each = [p._tails(y, up, lev) for p in self.parts]
            tot = np.zeros(y.shape[0])
            for w, v in zip(self.wts, each):
                tot += w * v
            self._tt_cache = dict(zip(keys, tot.tolist()))
            self._tt_each = [dict(zip(keys, v.tolist())) for v in each]
        return self._tt_cache

    def decision_matrix(self):
        if np.any(self.means - self._base):
            return super().decision_matrix()
        m = self.m
        tt = self._tt()
        P = np.zeros((m, m))
        for i in range(m):
            if i < m - 1:
                up = np.array([tt[i, e, True] for e in range(i, m - 1)] + [0.0])
                P[i, i + 1:] = up[:-1] - up[1:]
            if i > 0:
                lo = np.array([0.0] + [tt[i, e, False] for e in range(i)])
                P[i, :i] = lo[1:] - lo[:-1]
        return np.maximum(P, 0.0)

    def ber_per_eye(self):
        if np.any(self.means - self._base):
            return super().ber_per_eye()
        self._tt()
        p0 = self.parts[0]
        total = 0   # each part's per-eye rates, averaged as ParityMixture's (the same sums)
        for w, tt in zip(self.wts, self._tt_each):
            out = np.zeros(p0.m - 1)
            for i in range(p0.m):
                out += [tt[i, e, bool(t > p0.means[i])] for e, t in enumerate(p0.thresholds)]
            total = total + w * (out / (p0.m * p0.bits_per_symbol))
        return total
