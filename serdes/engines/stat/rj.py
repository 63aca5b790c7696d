"""Random sampling jitter at the slicer: a data-dependent noise.

ADC sample m is taken at ``mT + phi + j_m`` with ``j_m`` iid N(0, rj^2) (UI), so
``x_m = sum_n a_{m-n} p(nT + phi + j_m)``. Given the symbols, each sample is a random
variable of ``j_m`` alone, with mean ``sum_n a_{m-n} pbar_n`` (``pbar`` = the pulse
averaged over the jitter: the curvature's mean shift, to all orders) and variance
``var_m = E_j[(sum_n a_{m-n} (p_n(j) - pbar_n))^2]`` (``sigma_t^2 s_m^2`` to first
order, with ``s_m`` the data-dependent slope, plus the curvature terms). Through the
FFE the jitter noise at the slicer has, given the data, the variance
``V_k = sum_i w_i^2 var_{k-i}``: a Gaussian whose variance depends on the pattern.
Averaging V over the patterns (the old model) gives the right power but a much lighter
tail: the errors come from the patterns with large slopes.

The jitter average is a Gauss-Hermite quadrature over ``j``. The distribution of V given
the decided level is sampled from a fixed pseudo-random symbol sequence (fixed seed,
reproducible), scaled so that its mean per level is the exact mean, and cut into
classes of geometrically shrinking tail probability; the slicer noise of a level is
then the mixture over the classes (:class:`JitterMixture`). Beyond first order the
jitter noise given the data is skewed (the curvature: ``s j + c j^2 / 2``); its third
cumulant ``K3 = sum_i w_i^3 E_j[(x_{k-i} - xbar)^3]`` is kept per class (classes split
by its sign) and each component is ``sigma (U + beta (U^2 - 1))``, U ~ N(0, 1), with the
class's variance and third cumulant: exact for one dominant FFE tap at second order,
and it matters in the tail (at 0.04 UI on a 30 dB link, skew ~0.08 at z ~ 4.5 moves
the error rate of each tail by a factor ~3 either way). V and the ISI value depend on
the same symbols and are not independent given the decided level (away from the peak
the decided symbol's own slope makes them correlated): :meth:`RandomJitterModel.joint`
gives the classes per ISI bin (:mod:`serdes.engines.stat.rj_joint`), which the
statistical engine uses; :meth:`RandomJitterModel.mixture` (the level-only classes) is
kept for engines with their own ISI components (the interleaved ADC's).
"""

from __future__ import annotations

import functools
from dataclasses import dataclass

import numpy as np

from serdes.kernels.fir import interp_cubic
from serdes.kernels.stat_joint import rj_joint_classes
from serdes.kernels.stat_rows import rj_classes, rj_samples

GH_POINTS = 9
MC_SYMBOLS = 1 << 16
MC_SEED = 20261201
# classes: sample ranks from the top (per level) at these fractions of the level's count
_TAIL_EDGES = (0.0, 2e-4, 2e-3, 0.02, 0.15, 1.0)
# the classes joint with the ISI (serdes.engines.stat.rj_joint): ISI bin edges at these
# quantiles of the sample's ISI (both tails finer: the errors come from there)
ISI_QUANTILES = (1e-3, 1e-2, 0.05, 0.25, 0.75, 0.95, 0.99, 0.999)
MIN_CLASS = 8      # fewer samples: the class merges into the next one inward
MIN_BIN = 16       # fewer samples of a level in a bin: the classes of the next bin inward
# RandomJitterModel.class_grid_ui for an engine with many jitter rows per phase that
# takes the level-only classes: their sums at multiples of this offset (UI), linear in
# between; 4 nodes per step of a 64-phase bathtub, so the phases share them (the
# interleaved ADC's engine: its rows that carry little of the error rate keep them,
# serdes.tiadc.rows; the others take the classes joint with the ISI)
CLASS_GRID_UI = 1.0 / 256
# RandomJitterModel.joint_grid_ui's nodes kept at most (each the sample's V and K3)
JOINT_NODES = 128


@functools.lru_cache(maxsize=16)
def hermite_points(n: int = GH_POINTS) -> tuple[np.ndarray, np.ndarray]:
    """Nodes (in units of the std) and weights (sum 1) of an n-point Gauss-Hermite rule
    for a standard normal variable (computed once per n: read-only arrays)."""
    x, w = np.polynomial.hermite_e.hermegauss(n)
    w = w / w.sum()
    x.setflags(write=False)
    w.setflags(write=False)
    return x, w


def resample(pulse, offsets_fine) -> np.ndarray:
    """``pulse.at_offset(o)`` for every offset ``o`` (fine samples) in one kernel call:
    rows (len(offsets), n_ui), each equal to at_offset's (same positions, same
    interpolation)."""
    offs = np.asarray(offsets_fine, dtype=np.float64).reshape(-1)
    pos = (pulse.phase + offs)[:, None] + (pulse.m * np.arange(pulse.n_ui,
                                                               dtype=np.float64))[None, :]
    return interp_cubic(pulse.fine, pos.reshape(-1)).reshape(offs.shape[0], pulse.n_ui)


def pulse_moments(pulse, offset_ui: float, rj_ui: float, points: int = GH_POINTS):
    """(pbar, dev): the symbol-spaced pulse averaged over the jitter and the deviations
    ``p(j_q) - pbar`` at the quadrature nodes (q, n_ui), with their weights."""
    x, wq = hermite_points(points)
    h = resample(pulse, [(offset_ui + rj_ui * xq) * pulse.m for xq in x])
    pbar = wq @ h
    return pbar, h - pbar, wq


@dataclass
class JitterMixture:
    """Per decided level i: RJ variance classes ``var[i, k]`` with probabilities
    ``weights[i, k]`` (rows sum to 1); ``mean[i]`` = sum_k weights var (the exact mean)."""

    var: np.ndarray
    weights: np.ndarray
    k3: np.ndarray            # third cumulant of each class (V^3)

    @property
    def mean(self) -> np.ndarray:
        return np.sum(self.var * self.weights, axis=1)


class RandomJitterModel:
    """Conditional RJ variance at the slicer for an FFE ``w`` with decision delay ``d``."""

    def __init__(self, pulse, w, d: int, levels, rj_ui: float, *,
                 points: int = GH_POINTS, symbols: int = MC_SYMBOLS, seed: int = MC_SEED):
        self.pulse = pulse
        self.w2 = np.asarray(w, dtype=np.float64) ** 2
        self.wsign = np.sign(np.asarray(w, dtype=np.float64))
        self.d = int(d)
        self.levels = np.asarray(levels, dtype=np.float64)
        self.es = float(np.mean(self.levels ** 2))
        self.rj_ui = float(rj_ui)
        self.points = int(points)
        rng = np.random.default_rng(seed)
        self.idx = rng.integers(0, self.levels.shape[0], symbols)
        self.a = self.levels[self.idx]
        self._cache: dict = {}
        self._normal = None   # the Gaussian draw of joint()'s other terms (fixed seed)
        # > 0: mixture() interpolates the classes' sums between offsets on this grid (UI)
        self.class_grid_ui = 0.0
        self._nodes: dict = {}   # grid node -> the classes' sums there
        # > 0: joint() interpolates each sample's V and K3 between offsets on this grid
        self.joint_grid_ui = 0.0
        self._joint_nodes: dict = {}   # grid node -> (V, K3, level) of the samples there
        self._joint_last: tuple = (None, None)   # _joint_samples' last (position, samples)

    def moments(self, offset_ui: float):
        key = round(float(offset_ui), 12)
        hit = self._cache.get(key)
        if hit is None:
            pbar, dev, wq = pulse_moments(self.pulse, offset_ui, self.rj_ui, self.points)
            hit = (pbar, dev, wq, wq @ dev ** 2)
            if len(self._cache) > 4096:
                self._cache.clear()
            self._cache[key] = hit
        return hit

    def moments_many(self, offsets_ui) -> list:
        """:meth:`moments` at each offset, the missing ones re-sampled in one call."""
        keys = [round(float(o), 12) for o in offsets_ui]
        wanted: dict = {}
        for k, o in zip(keys, offsets_ui):
            wanted.setdefault(k, float(o))   # the first offset of a key, as moments()
        need = sorted((k, o) for k, o in wanted.items() if k not in self._cache)
        if len(self._cache) + len(need) > 4096:
            self._cache.clear()
            need = sorted(wanted.items())
        if need:
            x, wq = hermite_points(self.points)
            m = self.pulse.m
            fine = [(o + self.rj_ui * xq) * m for _, o in need for xq in x]
            h_all = resample(self.pulse, fine).reshape(len(need), x.shape[0], -1)
            for (key, _), h in zip(need, h_all):
                pbar = wq @ h
                dev = h - pbar
                self._cache[key] = (pbar, dev, wq, wq @ dev ** 2)
        return [self._cache[k] for k in keys]

    def mean_var(self, per_tap_var: np.ndarray) -> np.ndarray:
        """Exact mean of V per decided level from the per-cursor jitter variances
        ``per_tap_var[i, n] = E_j[(p_n(j) - pbar_n)^2]`` seen by FFE tap i."""
        n, L = per_tap_var.shape
        tot = per_tap_var.sum(axis=1)
        j = self.d - np.arange(n)                 # pulse index of the decided symbol
        own = np.zeros(n)
        ok = (j >= 0) & (j < L)
        own[ok] = per_tap_var[np.nonzero(ok)[0], j[ok]]
        base = self.es * float(self.w2 @ tot)
        return np.array([base + (a * a - self.es) * float(self.w2 @ own)
                         for a in self.levels])

    def samples(self, offset_ui: float) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """V and the third cumulant K3 over the symbol sequence (before the scaling of
        :meth:`mixture`) and the decided level index of each sample."""
        _, dev, wq, jv = self.moments(offset_ui)
        L = dev.shape[1]
        n = self.w2.shape[0]
        lo, hi = self._support(jv)
        # y_q[m] = sum_l a_{m-l} dev_q[l] for every sample m with a full pulse
        N = self.a.shape[0] - L + 1
        var = np.zeros(N)
        m3 = np.zeros(N)
        for q in range(dev.shape[0]):
            y = np.convolve(self.a, dev[q, lo:hi])[L - 1 - lo: L - 1 - lo + N]
            y2 = y * y
            var += wq[q] * y2
            m3 += wq[q] * y2 * y
        w3 = self.w2 * np.sqrt(self.w2) * self.wsign
        # V[k] = sum_i w_i^2 var[k-i], K3[k] = sum_i w_i^3 m3[k-i]
        v = np.convolve(var, self.w2, mode="valid")
        k3 = np.convolve(m3, w3, mode="valid")
        k = np.arange(L + n - 2, self.a.shape[0])    # symbol index of each output
        return v, k3, self.idx[k - self.d]

    def mixture(self, offset_ui: float, mean: np.ndarray) -> JitterMixture:
        """Classes per level (V class by tail rank x sign of K3), each represented by two
        points, mean -+ std of V in the class (weights 1/2: the error rate is convex in
        V, one point per class would be optimistic); V scaled to the exact per-level
        mean ``mean`` (K3 with it)."""
        if self.class_grid_ui > 0:   # interpolated between grid nodes
            hit = self._grid_classes(offset_ui)
        else:
            key = ("mix", round(float(offset_ui), 12))
            hit = self._cache.get(key)
            if hit is None:
                hit = self._classes(offset_ui)
                if len(self._cache) > 4096:
                    self._cache.clear()
                self._cache[key] = hit
        var, wts, kk = hit
        mv = np.sum(var * wts, axis=1)
        scale = np.where(mv > 0, mean / np.where(mv > 0, mv, 1.0), 0.0)
        return JitterMixture(var=var * scale[:, None], weights=wts,
                             k3=kk * scale[:, None] ** 1.5)

    def joint(self, offset_ui: float, mean: np.ndarray, resid: np.ndarray,
              other_var: float = 0.0):
        """(edges, var, weights, k3): the V classes per ISI bin and level, (B, m, K),
        V scaled to the exact per-level mean ``mean``; ``resid`` the residual ISI
        cursors at the slicer (main cursor 0); ``other_var`` the variance of the rest of
        the binned value, independent of the symbols (crosstalk, quantization), drawn
        Gaussian (fixed seed) into the sample's ISI; :mod:`serdes.engines.stat.rj_joint`."""
        resid = np.ascontiguousarray(resid, dtype=np.float64)
        key = ("joint", round(float(offset_ui), 12), resid.tobytes(), float(other_var))
        hit = self._cache.get(key)
        if hit is None:
            _, dev, wq, jv = self.moments(offset_ui)
            lo, hi = self._support(jv)
            nv = self.a.shape[0] - dev.shape[1] - self.w2.shape[0] + 2
            extra = np.zeros(nv)
            if other_var > 0:
                if self._normal is None or self._normal.shape[0] != nv:
                    self._normal = np.random.default_rng(MC_SEED + 1).standard_normal(nv)
                extra = np.sqrt(other_var) * self._normal
            w3 = self.w2 * np.sqrt(self.w2) * self.wsign
            edges, var, wts, kk, mv = rj_joint_classes(
                self.a, self.idx, dev, lo, hi, wq, self.w2, w3, self.d,
                self.levels.shape[0], resid, extra, ISI_QUANTILES, _TAIL_EDGES[1:-1],
                MIN_CLASS, MIN_BIN, self._joint_samples(offset_ui))
            hit = (mv, (edges, var, wts, kk))
            if len(self._cache) > 4096:
                self._cache.clear()
            self._cache[key] = hit
        mv, (edges, var, wts, kk) = hit
        scale = np.where(mv > 0, mean / np.where(mv > 0, mv, 1.0), 0.0)
        return (edges, var * scale[None, :, None], wts,
                kk * scale[None, :, None] ** 1.5)

    def _joint_samples(self, offset_ui: float):
        """(V, K3, level) of the samples for :meth:`joint` on :attr:`joint_grid_ui`:
        each sample's V and K3 linear between the two nodes around the offset (at a
        node, that node's); without the grid the exact samples at the offset (the same
        numbers the kernel forms itself). The last offset's are kept."""
        h = self.joint_grid_ui
        last = self._joint_last   # (key, samples), read once
        if h <= 0:   # the exact samples at the offset (kept: both DCD parities ask)
            key = ("exact", round(float(offset_ui), 12))
            if last[0] == key:
                return last[1]
            _, dev, wq, jv = self.moments(offset_ui)
            lo, hi = self._support(jv)
            w3 = self.w2 * np.sqrt(self.w2) * self.wsign
            out = rj_samples(self.a, self.idx, dev, lo, hi, wq, self.w2, w3, self.d,
                             self.levels.shape[0])
            self._joint_last = (key, out)
            return out
        pos = float(offset_ui) / h
        k = int(np.floor(pos))
        t = pos - k
        a = self._joint_node(k)
        if t == 0:
            return a
        # the last offset's interpolated samples (a row's two DCD parities ask twice)
        if last[0] == (pos, h):
            return last[1]
        b = self._joint_node(k + 1)
        out = ((1.0 - t) * a[0] + t * b[0], (1.0 - t) * a[1] + t * b[1], a[2])
        self._joint_last = ((pos, h), out)
        return out

    def _joint_node(self, k: int):
        hit = self._joint_nodes.get(k)
        if hit is None:
            if len(self._joint_nodes) >= JOINT_NODES:   # the oldest out (1 MB each)
                self._joint_nodes.pop(next(iter(self._joint_nodes)))
            _, dev, wq, jv = self.moments(k * self.joint_grid_ui)
            lo, hi = self._support(jv)
            w3 = self.w2 * np.sqrt(self.w2) * self.wsign
            v, k3, lv = rj_samples(self.a, self.idx, dev, lo, hi, wq, self.w2, w3, self.d,
                                   self.levels.shape[0])
            first = next(iter(self._joint_nodes.values()), None)   # the levels: shared
            if first is not None and np.array_equal(first[2], lv):
                lv = first[2]
            hit = self._joint_nodes[k] = (v, k3, lv)
        return hit

    def _classes(self, offset_ui: float):
        """(var, weights, k3) of the classes at one offset: the samples of
        :meth:`samples`, their per-level quantiles, class sums and counts in one kernel
        call (``tests/naive.py``: the NumPy steps, same numbers up to rounding)."""
        m = self.levels.shape[0]
        nc = len(_TAIL_EDGES) - 1
        return class_points(*self._class_sums(offset_ui), m, nc)

    def _grid_classes(self, offset_ui: float):
        """(var, weights, k3) of the classes at an offset from the group counts and sums
        at the two grid nodes (:attr:`class_grid_ui`) around it, interpolated linearly
        (the pooled samples of both, weighted 1 - t and t): the classes depend on the
        offset only through the pulse's deviations there, which change little within a
        node step. At a node, that node's classes. The nodes are kept for the model's
        life (every phase of a bathtub reuses them). Its error against :meth:`_classes`
        row by row: ``tests/test_tiadc_stat_grid.py``."""
        h = self.class_grid_ui
        pos = float(offset_ui) / h
        k = int(np.floor(pos))
        t = pos - k
        a = self._node(k)
        if t > 0:
            b = self._node(k + 1)
            a = tuple((1.0 - t) * x + t * y for x, y in zip(a[:4], b[:4])) + (a[4],)
        return class_points(*a, self.levels.shape[0], len(_TAIL_EDGES) - 1)

    def _node(self, k: int):
        hit = self._nodes.get(k)
        if hit is None:
            hit = self._nodes[k] = self._class_sums(k * self.class_grid_ui)
        return hit

    def _class_sums(self, offset_ui: float):
        """(count, sum V, sum V^2, sum K3) per group and the count per level at an
        offset (:func:`serdes.kernels.stat_rows.rj_classes`)."""
        _, dev, wq, jv = self.moments(offset_ui)
        lo, hi = self._support(jv)
        m = self.levels.shape[0]
        nc = len(_TAIL_EDGES) - 1
        w3 = self.w2 * np.sqrt(self.w2) * self.wsign
        return rj_classes(self.a, self.idx, dev, lo, hi, wq, self.w2, w3, self.d, m,
                          1.0 - np.asarray(_TAIL_EDGES[1:-1]), nc)

    @staticmethod
    def _support(jv: np.ndarray) -> tuple[int, int]:
        """The pulse samples that carry the jitter variance (all but 1e-4 of it, left
        off at the two ends; the mean is restored exactly by mixture's scaling)."""
        if not float(jv.sum()) > 0.0:   # no pulse sample moves (the pulse is out of reach)
            return 0, 1
        c = np.cumsum(jv) / float(jv.sum())
        lo = int(np.searchsorted(c, 0.5e-4))
        hi = max(int(np.searchsorted(c, 1 - 0.5e-4)) + 1, lo + 1)
        return lo, hi


def class_points(cnt, s1, s2, s3, counts, m: int, nc: int):
    """Two points per class (mean -+ std of V), their weights and the class's K3, from
    the group counts and sums (groups (level nc + class) 2 + (K3 < 0)); the counts
    may be interpolated (not whole): an empty group's sums are 0."""
    c = np.where(cnt > 0, cnt, 1.0)
    mu = s1 / c
    sd = np.sqrt(np.maximum(s2 / c - mu * mu, 0.0))
    kk = s3 / c
    wts = cnt / counts.repeat(nc * 2)
    var = np.stack([mu - sd, mu + sd], axis=1).reshape(m, -1)
    wts = np.repeat(0.5 * wts, 2).reshape(m, -1)
    kk = np.repeat(kk, 2).reshape(m, -1)
    return var, wts, kk


BETA_LIMIT = 0.04   # serdes.kernels.stat.BETA_MAX
MERGE_REL = 1e-3    # components closer than this in sigma (and beta) are merged
# (serdes.kernels.stat_joint.merge_close_rows: every level's components, any number of
# rows, in one call; the tail at z changes by ~ (z^2 MERGE_REL)^2 / 8, below 1e-3 to z = 9)


def skewed_components(total_var: np.ndarray, k3: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """(sigma, beta) of ``sigma (U + beta (U^2 - 1))`` with variance ``total_var`` and
    third cumulant ``k3``: variance sigma^2 (1 + 2 beta^2), third cumulant
    sigma^3 (6 beta + 8 beta^3) (solved by a few fixed-point steps)."""
    total_var = np.maximum(total_var, 1e-300)
    gamma = k3 / total_var ** 1.5
    beta = gamma / 6.0
    for _ in range(4):
        beta = gamma * (1 + 2 * beta ** 2) ** 1.5 / (6 + 8 * beta ** 2)
    beta = np.clip(beta, -BETA_LIMIT, BETA_LIMIT)
    return np.sqrt(total_var / (1 + 2 * beta ** 2)), beta
