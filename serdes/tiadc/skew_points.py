"""How many Gauss-Hermite points the calibrated lanes' skew residual needs.

The interleaved engine integrates the calibration's common skew residual (and the rest's
costliest direction) as Gaussian sampling offsets x = sigma z along a per-tap profile,
on an n-point Gauss-Hermite rule (:func:`serdes.tiadc.stat._with_gaussian_offset`):
every jitter row becomes n rows per direction, so n is paid n-fold (twice: n^2).

What the rule integrates: the error rate at a slicer threshold is a mixture of Gaussian
tails Q((d_i - s_i x) / sigma_i), each moved linearly by the offset (s_i: the slope of
that symbol pattern's slicer value per unit x). Its exact mean over z is
Q(d_i / sqrt(sigma_i^2 + s_i^2 sigma^2)); an n-point rule's relative error depends on
rho_i = sigma |s_i| / sigma_i and on the depth t = d_i / sigma_i alone
(:func:`rule_error`). With rho the largest of them (:func:`offset_rho`: every UI
sample's largest slope over the offsets a bathtub or a jitter row takes, the largest
level, the voltage noise without the RJ, the TX noise or the calibration's own noise)
and the relative error of a mixture at most its largest term's, the rule's relative
error in every rate is at most ``rule_error(n, rho)``. :func:`points_for` takes the
fewest points whose error stays within :data:`TOLERANCE` (the RJ screen's share,
:data:`serdes.tiadc.rows.RJ_SCREEN`), at most :data:`MAX_POINTS`.

Measured (``benchmarks/tiadc_skew_points.py``): a calibrated 8-lane ADC with 0.1 UI SJ
has rho 0.10 (common offset) and 0.21 (the rest's direction): 5 x 7 points instead of
9 x 9 (rows 2592 -> 1120).
"""

from __future__ import annotations

import functools

import numpy as np

TOLERANCE = 1e-4       # relative error of every rate the rule may add (per direction)
MIN_POINTS, MAX_POINTS = 3, 9
# depths t = d / sigma of the tails the views read: from the centre of a closed eye
# (t = -2) to rates of about 1e-19 (t = 9)
DEPTHS = np.linspace(-2.0, 9.0, 221)
RHO_STEPS = 24         # rule_error: rho' on this many steps of [0, rho]


def _tail(t: np.ndarray) -> np.ndarray:
    from scipy.special import ndtr

    return ndtr(-t)


@functools.lru_cache(maxsize=256)
def _error_at(n: int, rho: float) -> float:
    """Largest relative error over DEPTHS of the n-point rule for E[Q(t - rho z)]."""
    from numpy.polynomial.hermite_e import hermegauss

    x, w = hermegauss(n)
    w = w / w.sum()
    exact = _tail(DEPTHS / np.sqrt(1.0 + rho * rho))
    rule = _tail(DEPTHS[:, None] - rho * x[None, :]) @ w
    return float(np.max(np.abs(rule / exact - 1.0)))


def rule_error(n: int, rho: float) -> float:
    """Bound on the n-point rule's relative error for every rho' <= rho (the largest of
    :func:`_error_at` on RHO_STEPS steps, so a smaller rho_i is covered too)."""
    rho = float(rho)
    if not rho > 0.0:
        return 0.0
    return max(_error_at(int(n), round(rho * k / RHO_STEPS, 12))
               for k in range(1, RHO_STEPS + 1))


def points_for(rho: float, tol: float = TOLERANCE) -> int:
    """The fewest odd points (MIN_POINTS .. MAX_POINTS) whose rule_error at rho is within
    ``tol``; MAX_POINTS when none is (or rho is not finite)."""
    if not np.isfinite(rho):
        return MAX_POINTS
    for n in range(MIN_POINTS, MAX_POINTS + 1, 2):
        if rule_error(n, rho) <= tol:
            return n
    return MAX_POINTS


def offset_rho(pulse, w: np.ndarray, profile: np.ndarray, sigma_ui: float,
               levels: np.ndarray, sigma_v: float, reach_ui: float) -> float:
    """rho of a Gaussian offset of ``sigma_ui`` (UI rms) along ``profile`` (per FFE tap):
    sigma x the largest shift of a slicer value per UI of offset (the largest level times
    the sum over the FFE output's UI samples of |sum_i w_i profile_i p'(k - i)|, p' the
    pulse's slope, at the worst of the common offsets within +-reach_ui) / sigma_v."""
    if not sigma_ui > 0.0:
        return 0.0
    if not sigma_v > 0.0:
        return float("inf")
    wp = np.asarray(w, dtype=np.float64) * np.asarray(profile, dtype=np.float64)
    a = float(np.max(np.abs(levels)))
    steps = max(2, int(np.ceil(reach_ui * 40)))
    s = max(float(np.abs(np.convolve(wp, pulse.slope(float(o)))).sum())
            for o in np.linspace(-reach_ui, reach_ui, 2 * steps + 1))
    return float(sigma_ui) * a * s / float(sigma_v)
