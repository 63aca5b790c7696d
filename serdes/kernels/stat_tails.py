"""Tail sums of the statistical engine with a vectorizable Gaussian tail: private @njit
``_name`` behind the checking wrapper ``mixture_tails`` (see serdes.kernels.args).

The engine's error rates are sums ``sum_n pmf[n] Q(z_n)`` over the ISI grid, ~1e8 terms
for a report with sinusoidal jitter (a 801-point vertical bathtub over 32 quadrature
rows, 4 levels, with random jitter 20 noise components each). ``math.erfc`` is a scalar
library call (~20 ns); :func:`_q_buffer` evaluates Q on a whole window of a tail sum
in plain arithmetic that LLVM vectorizes (the IEEE error model: no division check):

    Q(a) = exp(-a^2 / 2) G(t) / (a + 5),  t = (a - 5) / (a + 5),  a = |z|

G(a) = (a + 5) exp(a^2 / 2) Q(a) runs from 2.5 (a = 0) to 1/sqrt(2 pi) (a -> inf) and is
smooth in t on [-1, 1]: a degree-22 polynomial (the Chebyshev interpolant at 23 nodes,
computed with mpmath at 50 digits and written in monomials, evaluated by Estrin's
scheme: sum |c_k t^k| / |G| < 4) is within 6e-16 of it for a in [0, 38]. The
exponential takes the argument exactly: a = ah + al with ah = a rounded to float32, so
ah^2 / 2 is exact and exp(-al (a + ah) / 2) = 1 + c + c^2 / 2; exp(-ah^2 / 2) = 2^k
exp(r) (Cody-Waite reduction, |r| <= ln2 / 2, Taylor degree 13, 2^k from its bits).
Q(z) = 1 - Q(|z|) for z < 0. Relative error at most 1e-15 for |z| <= 20
(tests/test_stat_tails.py against mpmath), where 0.5 erfc(z / sqrt 2) carries up to
2.5e-14 from rounding z / sqrt 2; |z| is clamped to 37 (Q below 1e-299, far past the
cut-offs).

:func:`_mixture_tails` is the tail sum of serdes.kernels.stat_rows' earlier kernel
(same cut-offs, same windows, the terms added in the same order) with this Q.
"""

import math

import numpy as np

from serdes.errors import ConfigError
from serdes.kernels import args
from serdes.kernels.jit import njit

# the cut-offs of serdes.kernels.stat (Q = 1 below -Z_LO, terms ignored above Z_HI)
Z_LO = 8.3
Z_HI = 11.5

_LOG2E = 1.4426950408889634
_LN2_HI = 6.93147180369123816490e-01   # 32 significant bits: k * _LN2_HI is exact
_LN2_LO = 1.90821492927058770002e-10

# G(t) = sum _G[k] t^k (see the module docstring)
_G0 = 0.769193049750063
_G1 = -0.6653825028900577
_G2 = 0.4953056159699768
_G3 = -0.3135331566712138
_G4 = 0.16502036617034282
_G5 = -0.06911863870881432
_G6 = 0.020795066800941616
_G7 = -0.00299337673822322
_G8 = -0.0007978694094808063
_G9 = 0.00054489883090093
_G10 = -5.9375673286488655e-05
_G11 = -4.976177118979218e-05
_G12 = 1.6681099115863468e-05
_G13 = 3.977912640593242e-06
_G14 = -2.769337871043854e-06
_G15 = -3.310698071526862e-07
_G16 = 4.340262594829775e-07
_G17 = 3.581840051543223e-08
_G18 = -6.782555313291156e-08
_G19 = -5.015649939857857e-09
_G20 = 9.446827519677366e-09
_G21 = 5.037302126379857e-10
_G22 = -8.166192624428987e-10


@njit(cache=True, error_model="numpy")
def _q_buffer(z, n, part, bits):
    """z[:n] <- Q(z[:n]). ``part`` (float64) and ``bits`` (int64), at least n long, are
    scratch: the first pass leaves 2^k as exponent bits, the second multiplies them in
    through a float64 view (numba has no scalar bit cast), so both passes vectorize."""
    for j in range(n):
        a = min(abs(z[j]), 37.0)
        ah = np.float64(np.float32(a))
        al = a - ah
        x = -0.5 * ah * ah                      # exact
        k = math.floor(x * _LOG2E + 0.5)
        r = (x - k * _LN2_HI) - k * _LN2_LO
        r2 = r * r
        r4 = r2 * r2
        er = (((1.0 + r) + r2 * (0.5 + r * (1.0 / 6.0)))
              + r4 * ((1.0 / 24.0 + r * (1.0 / 120.0)) + r2 * (1.0 / 720.0 + r * (1.0 / 5040.0)))
              + (r4 * r4) * (((1.0 / 40320.0 + r * (1.0 / 362880.0))
                              + r2 * (1.0 / 3628800.0 + r * (1.0 / 39916800.0)))
                             + r4 * (1.0 / 479001600.0 + r * (1.0 / 6227020800.0))))
        c = -0.5 * al * (a + ah)
        inv = 1.0 / (a + 5.0)
        t = (a - 5.0) * inv
        t2 = t * t
        t4 = t2 * t2
        t8 = t4 * t4
        t16 = t8 * t8
        g = ((((_G0 + t * _G1) + t2 * (_G2 + t * _G3))
              + t4 * ((_G4 + t * _G5) + t2 * (_G6 + t * _G7)))
             + t8 * (((_G8 + t * _G9) + t2 * (_G10 + t * _G11))
                     + t4 * ((_G12 + t * _G13) + t2 * (_G14 + t * _G15))))
        g += t16 * (((_G16 + t * _G17) + t2 * (_G18 + t * _G19))
                    + t4 * ((_G20 + t * _G21) + t2 * _G22))
        part[j] = er * (1.0 + c * (1.0 + 0.5 * c)) * (g * inv)
        bits[j] = np.int64(k + 1023.0) << 52
    scale = bits.view(np.float64)
    for j in range(n):
        q = part[j] * scale[j]
        z[j] = q if z[j] >= 0.0 else 1.0 - q


@njit(cache=True, error_model="numpy")
def _mixture_tails(pmf, k0, delta, y, upper, level, sigmas, betas, weights):
    """sum_k weights[l, k] P(X + N_lk > y_v) (upper[v]) or P(X + N_lk < y_v), l =
    level[v], N_lk = sigmas[l, k] (U + betas[l, k] (U^2 - 1)); components of zero weight
    are skipped. y_v is relative to the level's mean. The terms are those of
    kernels.stat._tail_points (same cut-offs, same order); Q from :func:`_q_buffer`."""
    G = pmf.shape[0]
    csum = np.empty(G + 1)
    csum[0] = 0.0
    for n in range(G):
        csum[n + 1] = csum[n] + pmf[n]
    K = sigmas.shape[1]
    zb = np.empty(G)
    part = np.empty(G)
    bits = np.empty(G, dtype=np.int64)
    out = np.empty(y.shape[0])
    for v in range(y.shape[0]):
        lv = level[v]
        up = upper[v] != 0
        yv = y[v]
        total = 0.0
        for k in range(K):
            wk = weights[lv, k]
            if not wk > 0.0:
                continue
            sigma = sigmas[lv, k]
            beta = betas[lv, k]
            s = (yv / delta) - k0
            r = sigma / delta
            acc = 0.0
            if up:
                n_one = int(math.floor(s - (-Z_LO + beta * (Z_LO * Z_LO - 1.0)) * r)) + 1
                n_zero = int(math.ceil(s - (Z_HI + beta * (Z_HI * Z_HI - 1.0)) * r))
                a = max(n_zero, 0)
                b = min(n_one, G)
                if n_one < G:
                    acc += csum[G] - csum[max(n_one, 0)]
                sign = 1.0
            else:
                n_one = int(math.ceil(s - (Z_LO + beta * (Z_LO * Z_LO - 1.0)) * r))
                n_zero = int(math.floor(s - (-Z_HI + beta * (Z_HI * Z_HI - 1.0)) * r)) + 1
                a = max(n_one, 0)
                b = min(n_zero, G)
                if n_one > 0:
                    acc += csum[min(n_one, G)]
                sign = -1.0
            m = b - a
            if m > 0:
                if beta == 0.0:
                    for j in range(m):
                        zb[j] = sign * ((yv - (k0 + a + j) * delta) / sigma)
                else:   # the root of z + beta (z^2 - 1) = t through (t, t)
                    vertex = -0.5 / beta
                    for j in range(m):
                        tt = (yv - (k0 + a + j) * delta) / sigma
                        disc = 1.0 + 4.0 * beta * (tt + beta)
                        root = 2.0 * (tt + beta) / (1.0 + math.sqrt(max(disc, 0.0)))
                        zb[j] = sign * (root if disc > 0.0 else vertex)
                _q_buffer(zb, m, part, bits)
                for j in range(m):
                    acc += pmf[a + j] * zb[j]
            total += wk * acc
        out[v] = total
    return out


@njit(cache=True, error_model="numpy")
def _rows_wrong_side(pmfs, starts, k0s, deltas, means, sigmas, betas, weights, wq, opens,
                     closes, gw, y, mb):
    """The eye map of a tree of weighted mixtures at y_p, its leaves the rows r
    (distribution r: pmf pmfs[starts[r]:starts[r + 1]], grid k0s[r] deltas[r], level
    means means[r], mixture sigmas[r] / betas[r] / weights[r], zero-weight padding
    skipped), in depth-first order: before leaf r ``opens[r]`` mixtures begin (each a
    new sum from 0), the leaf adds wq[r] (its weight in its mixture) times its eye map,
    after it ``closes[r]`` mixtures end (each adds gw[g] times its sum to its parent, g
    counting the closed mixtures in order). Row 0 the eye map, as
    SlicerDistribution.wrong_side weighted and summed the same way (the mixtures'
    averages, the rows' sum: the same operations, bit-identical), row 1 its part from
    the levels below y_p (upper tails, nonincreasing in y_p), row 2 from those at or
    above it (lower tails, nondecreasing). ``mb``: levels x bits per symbol."""
    R = wq.shape[0]
    m = means.shape[1]
    P = y.shape[0]
    depth = 0
    deepest = 0
    for r in range(R):
        depth += opens[r]
        deepest = max(deepest, depth)
        depth -= closes[r]
    acc = np.zeros((deepest + 1, 3, P))   # acc[0]: the result
    yrel = np.empty(P * m)
    upper = np.empty(P * m, dtype=np.uint8)
    level = np.empty(P * m, dtype=np.int64)
    depth = 0
    g = 0
    for r in range(R):
        for _ in range(opens[r]):
            depth += 1
            acc[depth, :, :] = 0.0
        for i in range(m):
            for p in range(P):
                yrel[i * P + p] = y[p] - means[r, i]
                upper[i * P + p] = 1 if y[p] > means[r, i] else 0
                level[i * P + p] = i
        vals = _mixture_tails(pmfs[starts[r]:starts[r + 1]], k0s[r], deltas[r], yrel, upper,
                              level, sigmas[r], betas[r], weights[r])
        for p in range(P):
            s = 0.0
            below = 0.0
            above = 0.0
            for i in range(m):
                v = vals[i * P + p]
                s += v
                if upper[i * P + p] != 0:
                    below += v
                else:
                    above += v
            acc[depth, 0, p] += wq[r] * (s / mb)
            acc[depth, 1, p] += wq[r] * (below / mb)
            acc[depth, 2, p] += wq[r] * (above / mb)
        for _ in range(closes[r]):
            for c in range(3):
                for p in range(P):
                    acc[depth - 1, c, p] += gw[g] * acc[depth, c, p]
            g += 1
            depth -= 1
    return acc[0].copy()


class RowsWrongSide:
    """The eye map of a set of weighted rows (SlicerDistribution-like: pmf, k0, delta,
    means and a checked :class:`MixtureTails`), packed once; called with voltages y it
    returns :func:`_rows_wrong_side`'s (3, len(y)): the weighted sum, its part from the
    levels below y (nonincreasing in y) and from those above (nondecreasing). Rows
    inside mixtures: ``opens``, ``closes`` per row and the mixtures' weights ``gw`` in
    the order they close (see :func:`_rows_wrong_side`; default: a flat sum)."""

    def __init__(self, weights_q, tails, means, mb: int, opens=None, closes=None, gw=()):
        tails = list(tails)
        R = len(tails)
        if R == 0 or len(weights_q) != R or len(means) != R:
            raise ConfigError(f"rows: need one weight, tails and means per row, got "
                              f"{len(weights_q)}, {R}, {len(means)}")
        m = tails[0].sigmas.shape[0]
        K = max(t.sigmas.shape[1] for t in tails)
        self.sigmas = np.ones((R, m, K))
        self.betas = np.zeros((R, m, K))
        self.weights = np.zeros((R, m, K))   # padding: weight 0, skipped
        for r, t in enumerate(tails):
            k = t.sigmas.shape[1]
            self.sigmas[r, :, :k] = t.sigmas
            self.betas[r, :, :k] = t.betas
            self.weights[r, :, :k] = t.weights
        self.starts = np.zeros(R + 1, dtype=np.int64)
        self.starts[1:] = np.cumsum([t.pmf.shape[0] for t in tails])
        self.pmfs = np.concatenate([t.pmf for t in tails])
        self.k0s = np.array([t.k0 for t in tails], dtype=np.int64)
        self.deltas = np.array([t.delta for t in tails], dtype=np.float64)
        self.means = args.array("means", np.array(means, dtype=np.float64), ndim=2)
        if self.means.shape[1] != m:
            raise ConfigError(f"means: {self.means.shape[1]} levels, the mixtures have {m}")
        self.wq = args.array("weights_q", np.array(weights_q, dtype=np.float64))
        self.opens = np.zeros(R, dtype=np.int64) if opens is None else \
            np.array(opens, dtype=np.int64)
        self.closes = np.zeros(R, dtype=np.int64) if closes is None else \
            np.array(closes, dtype=np.int64)
        self.gw = np.array(gw, dtype=np.float64).reshape(-1)
        if self.opens.shape != (R,) or self.closes.shape != (R,):
            raise ConfigError(f"opens, closes: need one count per row ({R})")
        depth = np.cumsum(self.opens - self.closes)
        if (np.any(self.opens < 0) or np.any(self.closes < 0) or np.any(depth < 0)
                or depth[-1] != 0 or np.any(depth + self.closes - self.opens < 0)
                or self.gw.shape[0] != int(self.closes.sum())):
            raise ConfigError("opens, closes, gw: the mixtures must nest (every one opened "
                              "is closed, with one weight each)")
        self.mb = float(mb)

    def __call__(self, y) -> np.ndarray:
        y = args.array("y", np.atleast_1d(np.asarray(y, dtype=np.float64)))
        return _rows_wrong_side(self.pmfs, self.starts, self.k0s, self.deltas, self.means,
                                self.sigmas, self.betas, self.weights, self.wq, self.opens,
                                self.closes, self.gw, y, self.mb)


def mixture_tails(pmf, k0, delta, y, upper, level, sigmas, betas, weights) -> np.ndarray:
    """Tail probabilities of X + N_l at points y (relative to level l's mean): upper[v]
    selects P(. > y_v), else P(. < y_v); N_l the mixture of row l of sigmas / betas /
    weights (see _mixture_tails)."""
    return MixtureTails(pmf, k0, delta, sigmas, betas, weights)(y, upper, level)


class MixtureTails:
    """:func:`mixture_tails` of one distribution (pmf, k0, delta and the mixture checked
    once), called with the points only: the eye map of a statistical SJ report asks
    for a few points at a time, over a thousand times, and the mixture's checks took
    about a third of each call."""

    def __init__(self, pmf, k0, delta, sigmas, betas, weights):
        self.pmf = args.array("pmf", pmf, min_len=1)
        self.sigmas = args.array("sigmas", sigmas, ndim=2)
        self.betas = args.array("betas", betas, ndim=2)
        self.weights = args.array("weights", weights, ndim=2)
        sigmas, betas, weights = self.sigmas, self.betas, self.weights
        if not (sigmas.shape == betas.shape == weights.shape):
            raise ConfigError(f"betas, weights: shapes {betas.shape}, {weights.shape} differ "
                              f"from sigmas {sigmas.shape}")
        live = weights > 0
        if np.any(sigmas[live] <= 0) or not np.all(np.isfinite(sigmas[live])):
            raise ConfigError("sigmas: every component with a weight needs a finite sigma > 0")
        if np.any(np.abs(betas[live]) > 0.04):
            raise ConfigError("betas: must be in [-0.04, 0.04]")
        self.k0 = args.integer("k0", k0)
        self.delta = args.real("delta", delta, positive=True)

    def __call__(self, y, upper, level) -> np.ndarray:
        y = args.array("y", y)
        upper = args.array("upper", upper, dtype=np.uint8)
        level = args.array("level", level, dtype=np.int64)
        if not (upper.shape == level.shape == y.shape):
            raise ConfigError(f"upper, level: need one value per point ({y.shape[0]}), got "
                              f"{upper.shape[0]} and {level.shape[0]}")
        if level.size and (level.min() < 0 or level.max() >= self.sigmas.shape[0]):
            raise ConfigError(f"level: must be in 0..{self.sigmas.shape[0] - 1}")
        return _mixture_tails(self.pmf, self.k0, self.delta, y, upper, level, self.sigmas,
                              self.betas, self.weights)


def gaussian_tail(z) -> np.ndarray:
    """Q(z) = P(U > z), U standard normal, for an array z (the kernel's Q)."""
    z = args.array("z", z, finite=True)
    out = z.copy()
    n = out.shape[0]
    _q_buffer(out, n, np.empty(n), np.empty(n, dtype=np.int64))
    return out
