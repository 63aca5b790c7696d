"""Statistical-engine kernels: private @njit ``_name`` behind checking wrappers ``name``.

Distributions live on a uniform grid of spacing ``delta``: ``pmf[n]`` is the
probability of the value ``(k0 + n) * delta``.

* :func:`isi_pmf` (the kernel ``stat_batch._convolve``, shared with the batched rows)
  convolves independent discrete components (one per cursor: the
  values ``c_j * a`` of the PAM levels ``a``, equiprobable) into one PMF. Each
  component is put on the grid by the linear (mean-preserving) split of every point
  between its two neighbouring grid points, then convolved exactly on the grid.
* :func:`_tail_points` and :func:`_tail_grid` add independent noise and return
  tail probabilities P(X + N > y) or P(X + N < y), as sums of positive terms
  ``pmf[n] * Q(z)`` so that tails far below 1e-15 keep their relative precision.
  N = sigma (U + beta (U^2 - 1)), U standard normal: Gaussian for beta = 0, skewed
  (third cumulant ~ 6 beta sigma^3) otherwise, the exact form of a sampling-jitter term
  to second order (slope and curvature); N > sigma t exactly when U > z*(t), the root
  of z + beta (z^2 - 1) = t near t (the far root, beyond 1 / |beta|, is ignored).
"""

import math

import numpy as np

from serdes.errors import ConfigError
from serdes.kernels import args
from serdes.kernels.jit import njit
from serdes.kernels.stat_batch import _isi_pmf

# Q(z) is 1.0 in double precision below -Z_LO, and terms with z above Z_HI are below
# 1e-30 of their weight (ignored).
Z_LO = 8.3
Z_HI = 11.5


@njit(cache=True)
def _q(z):
    return 0.5 * math.erfc(z * 0.7071067811865476)


@njit(cache=True)
def _zskew(t, beta):
    """The root z* of z + beta (z^2 - 1) = t on the branch through (t, t) at beta = 0;
    without a root, the branch's vertex -1 / (2 beta) (probability 0 or 1)."""
    if beta == 0.0:
        return t
    disc = 1.0 + 4.0 * beta * (t + beta)
    if disc <= 0.0:
        return -0.5 / beta
    return 2.0 * (t + beta) / (1.0 + math.sqrt(disc))


@njit(cache=True)
def _tskew(z, beta):
    return z + beta * (z * z - 1.0)


@njit(cache=True)
def _prefix(pmf):
    c = np.empty(pmf.shape[0] + 1)
    c[0] = 0.0
    for n in range(pmf.shape[0]):
        c[n + 1] = c[n] + pmf[n]
    return c


@njit(cache=True)
def _tail_points(pmf, k0, delta, y, sigma, upper, beta):
    """P(X + N > y_v) (upper) or P(X + N < y_v) for X ~ pmf, N = sigma (U + beta (U^2-1)).

    Each value is sum_n pmf[n] Q(+-(y_v - x_n) / sigma); the terms with Q = 1 in
    double precision come from prefix sums, those below 1e-30 are skipped.
    """
    G = pmf.shape[0]
    out = np.empty(y.shape[0])
    csum = _prefix(pmf)
    for v in range(y.shape[0]):
        s = (y[v] / delta) - k0  # grid position of y_v
        r = sigma / delta
        acc = 0.0
        if upper:
            # x_n > y + Z_LO sigma -> Q(-...) = 1; x_n < y - Z_HI sigma -> ~0
            n_one = int(math.floor(s - _tskew(-Z_LO, beta) * r)) + 1
            n_zero = int(math.ceil(s - _tskew(Z_HI, beta) * r))
            a = max(n_zero, 0)
            b = min(n_one, G)
            if n_one < G:
                acc += csum[G] - csum[max(n_one, 0)]
            for n in range(a, b):
                acc += pmf[n] * _q(_zskew((y[v] - (k0 + n) * delta) / sigma, beta))
        else:
            n_one = int(math.ceil(s - _tskew(Z_LO, beta) * r))
            n_zero = int(math.floor(s - _tskew(-Z_HI, beta) * r)) + 1
            a = max(n_one, 0)
            b = min(n_zero, G)
            if n_one > 0:
                acc += csum[min(n_one, G)]
            for n in range(a, b):
                acc += pmf[n] * _q(-_zskew((y[v] - (k0 + n) * delta) / sigma, beta))
        out[v] = acc
    return out


@njit(cache=True)
def _tail_grid(pmf, k0, delta, y0_steps, stride, n_out, frac, sigma, upper, beta):
    """_tail_points at the evenly spaced points y_v = (y0_steps + frac + v*stride) delta,
    v = 0..n_out-1 (integer y0_steps and stride, 0 <= frac < 1).

    z = (y_v - x_n) / sigma depends only on the integer lag s_v - n, so the Q values
    are tabulated once per call instead of once per term.
    """
    G = pmf.shape[0]
    r = sigma / delta
    if upper:   # term Q(z): 1 for z < -Z_LO (small lags), ~0 for z > Z_HI
        lag_lo = int(math.floor(_tskew(-Z_LO, beta) * r - frac)) - 1
        lag_hi = int(math.ceil(_tskew(Z_HI, beta) * r)) + 1
    else:       # term Q(-z): 1 for z > Z_LO (large lags), ~0 for z < -Z_HI
        lag_lo = int(math.floor(_tskew(-Z_HI, beta) * r - frac)) - 1
        lag_hi = int(math.ceil(_tskew(Z_LO, beta) * r)) + 1
    nk = lag_hi - lag_lo + 1
    table = np.empty(nk)
    for i in range(nk):
        z = _zskew((lag_lo + i + frac) / r, beta)
        table[i] = _q(z) if upper else _q(-z)
    csum = _prefix(pmf)
    out = np.empty(n_out)
    for v in range(n_out):
        s = y0_steps + v * stride - k0
        a = s - lag_hi          # n in [a, b) have lags in [lag_lo, lag_hi]
        b = s - lag_lo + 1
        acc = 0.0
        if upper:
            if b < G:           # n >= b: lag < lag_lo, the term is 1
                acc += csum[G] - csum[max(b, 0)]
        else:
            if a > 0:           # n < a: lag > lag_hi, the term is 1
                acc += csum[min(a, G)]
        for n in range(max(a, 0), min(b, G)):
            acc += pmf[n] * table[s - n - lag_lo]
        out[v] = acc
    return out


# ------------------------------------------------------------------ public wrappers
def isi_pmf(values, probs, delta):
    """PMF of a sum of independent discrete components on a grid of ``delta``; returns
    (pmf, k0) with pmf[n] the probability of (k0 + n) * delta (see
    serdes.kernels.stat_batch._convolve, which the batched rows share)."""
    values = args.array("values", values, ndim=2, finite=True)
    probs = args.array("probs", probs, ndim=2, finite=True)
    if values.shape != probs.shape:
        raise ConfigError(f"probs: shape {probs.shape} differs from values {values.shape}")
    return _isi_pmf(values, probs, args.real("delta", delta, positive=True))


def _pmf_args(pmf, k0, delta, sigma):
    return (args.array("pmf", pmf, min_len=1), args.integer("k0", k0),
            args.real("delta", delta, positive=True), args.real("sigma", sigma, positive=True))


BETA_MAX = 0.04   # |beta| up to which the cut-offs above stay on the root's branch


def _beta(beta):
    beta = args.real("beta", beta)
    if abs(beta) > BETA_MAX:
        raise ConfigError(f"beta: must be in [-{BETA_MAX}, {BETA_MAX}], got {beta!r}")
    return beta


def tail_points(pmf, k0, delta, y, sigma, upper, beta=0.0) -> np.ndarray:
    """P(X + N > y) (upper) or P(X + N < y), X ~ pmf, N = sigma (U + beta (U^2 - 1)),
    U ~ Normal(0, 1) (Gaussian for beta = 0)."""
    pmf, k0, delta, sigma = _pmf_args(pmf, k0, delta, sigma)
    return _tail_points(pmf, k0, delta, args.array("y", y), sigma, bool(upper), _beta(beta))


def tail_grid(pmf, k0, delta, y0_steps, stride, n_out, frac, sigma, upper,
              beta=0.0) -> np.ndarray:
    """tail_points at y_v = (y0_steps + frac + v * stride) * delta, v = 0..n_out-1."""
    pmf, k0, delta, sigma = _pmf_args(pmf, k0, delta, sigma)
    frac = args.real("frac", frac)
    if not 0.0 <= frac < 1.0:
        raise ConfigError(f"frac: must be in [0, 1), got {frac!r}")
    return _tail_grid(pmf, k0, delta, args.integer("y0_steps", y0_steps),
                      args.integer("stride", stride), args.integer("n_out", n_out, lo=0),
                      frac, sigma, bool(upper), _beta(beta))
