"""Shunt-peaked amplifier stage (inductive peaking of an RC load).

Model
-----
A transconductor drives the load ``Z(s) = (R + sL) || 1/(sC)``.  Normalised to
its DC value ``R`` the stage gain is (Lee, *The Design of CMOS Radio-Frequency
Integrated Circuits*, 2nd ed., sec. 9.3 "Shunt peaking")::

                 1 + s*tau/m
    H(s) = ---------------------------,   tau = R*C,   m = R**2*C/L,
           1 + s*tau + (s*tau)**2/m

with ``s = j*2*pi*f``.  ``m`` is the ratio of the RC to the L/R time constant,
so a smaller ``m`` means more inductance; ``L -> 0`` (``m -> inf``) leaves the
plain RC pole ``1/(1 + s*tau)``.  In this module ``m = 0`` (and ``m = inf``)
select that single pole, i.e. "no inductor".

With ``w = 2*pi*f*tau`` and ``x = w**2`` the magnitude is

    |H|**2 = (1 + x/m**2) / ((1 - x/m)**2 + x)

which gives closed forms used here:

* -3 dB point: ``x**2 + (m**2 - 2m - 2) x - m**2 = 0`` (one positive root),
  so ``bandwidth_extension(m) = sqrt(x)`` at fixed ``tau``;
* peak: ``d|H|^2/dx = 0`` at ``x = m*(sqrt(2m + 1) - m)``, which is > 0 only for
  ``m < 1 + sqrt(2)``; ``m = 1 + sqrt(2)`` is the maximally flat magnitude.

Landmarks (Lee, Table 9.1): m = sqrt(2) gives the largest bandwidth (x1.85)
with about 1.5 dB of peaking; m = 1 + sqrt(2) is maximally flat (x1.72, no
peaking); m = 3.1 is close to flat group delay (x1.6); m = inf is the RC stage.

Allowed ``m``: 0 (no inductor), or ``1 <= m <= inf``.  The complex pole pair has
damping ``zeta = sqrt(m)/2``; below ``m = 1`` (zeta < 0.5, i.e. strongly
*under*-damped) the peaking exceeds 3.3 dB, the bandwidth falls again and the
step response rings, so no practical design uses it.

The stage is specified by its own -3 dB bandwidth: :func:`shunt_peaking_tau`
chooses ``tau`` so that ``|H(bandwidth_hz)| = 1/sqrt(2)``.
"""

from __future__ import annotations

import math

import numpy as np

from serdes.errors import ConfigError
from serdes.validate import freq_array as _freq_array

__all__ = [
    "M_MIN",
    "M_MAX_BANDWIDTH",
    "M_MAXIMALLY_FLAT",
    "M_FLAT_DELAY",
    "shunt_peaking_response",
    "shunt_peaking_tau",
    "bandwidth_extension",
    "peaking_db",
]

#: Smallest allowed m other than 0 (see the module docstring).
M_MIN = 1.0
#: m giving the largest -3 dB bandwidth, sqrt(2) (about 1.85x, 1.5 dB peaking).
M_MAX_BANDWIDTH = math.sqrt(2.0)
#: m giving a maximally flat magnitude, 1 + sqrt(2) (about 1.72x, no peaking).
M_MAXIMALLY_FLAT = 1.0 + math.sqrt(2.0)
#: m giving a nearly flat group delay (about 1.6x), Lee Table 9.1.
M_FLAT_DELAY = 3.1

_M_ALLOWED = "0 (no inductor) or 1 <= m <= inf"


def _check_m(m) -> float:
    """Validated m as a float; returns inf for 'no inductor' (m = 0 or inf)."""
    try:
        x = float(m)
    except (TypeError, ValueError):
        raise ConfigError(f"m={m!r} is not a number; allowed {_M_ALLOWED}") from None
    if math.isnan(x):
        raise ConfigError(f"m={x!r} is not a number; allowed {_M_ALLOWED}")
    if x == 0.0 or x == math.inf:
        return math.inf
    if x < M_MIN:
        raise ConfigError(
            f"m={x!r} is out of range; allowed {_M_ALLOWED} "
            "(below 1 the pole pair has damping < 0.5 and peaks by > 3.3 dB)"
        )
    return x


def _check_bandwidth(bandwidth_hz) -> float:
    allowed = "a finite frequency > 0 Hz"
    try:
        x = float(bandwidth_hz)
    except (TypeError, ValueError):
        raise ConfigError(f"bandwidth_hz={bandwidth_hz!r} is not a number; allowed {allowed}") from None
    if not math.isfinite(x) or x <= 0.0:
        raise ConfigError(f"bandwidth_hz={x!r} is out of range; allowed {allowed}")
    return x


def _x3db(m: float) -> float:
    """Positive root x = (w_3dB*tau)**2 of x**2 + (m**2 - 2m - 2) x - m**2 = 0.

    Written with q = 1/m (q = 0: RC stage) as q**2 x**2 + c x - 1 = 0,
    c = 1 - 2q - 2q**2, and solved without cancellation.
    """
    q = 0.0 if math.isinf(m) else 1.0 / m
    c = 1.0 - 2.0 * q - 2.0 * q * q
    disc = math.sqrt(c * c + 4.0 * q * q)
    if c > 0.0:
        return 2.0 / (c + disc)
    return (disc - c) / (2.0 * q * q)


def bandwidth_extension(m: float) -> float:
    """-3 dB bandwidth with peaking over that of the RC stage (m = 0), at fixed tau.

    1 for ``m = 0``; about 1.85 at ``m = sqrt(2)``, 1.72 at ``m = 1 + sqrt(2)``,
    1.57 at ``m = 3.1`` (closed form, see the module docstring).
    """
    return math.sqrt(_x3db(_check_m(m)))


def peaking_db(m: float) -> float:
    """Peak of ``|H|`` above its DC value (1) in dB; 0 for ``m >= 1 + sqrt(2)`` and m = 0."""
    mm = _check_m(m)
    if math.isinf(mm) or mm >= M_MAXIMALLY_FLAT:
        return 0.0
    x = mm * (math.sqrt(2.0 * mm + 1.0) - mm)
    num = 1.0 + x / (mm * mm)
    den = (1.0 - x / mm) ** 2 + x
    return max(0.0, 10.0 * math.log10(num / den))


def shunt_peaking_tau(*, m: float, bandwidth_hz: float) -> float:
    """Time constant ``tau = R*C`` (s) that puts the stage's -3 dB point at ``bandwidth_hz``.

    ``tau = bandwidth_extension(m) / (2*pi*bandwidth_hz)``.
    """
    mm = _check_m(m)
    bw = _check_bandwidth(bandwidth_hz)
    return math.sqrt(_x3db(mm)) / (2.0 * math.pi * bw)


def shunt_peaking_response(f_hz, *, m: float, bandwidth_hz: float) -> np.ndarray:
    """Frequency response of a shunt-peaked stage with -3 dB bandwidth ``bandwidth_hz``.

    Parameters
    ----------
    f_hz : array_like
        Frequencies in Hz, finite and >= 0.
    m : float
        ``R**2*C/L``: 0 (no inductor, the RC pole), or ``1 <= m <= inf``.
    bandwidth_hz : float
        -3 dB bandwidth of this stage in Hz (> 0).

    Returns
    -------
    numpy.ndarray of complex128 shaped like ``f_hz``, with ``H(0) = 1``.
    """
    f = _freq_array(f_hz)
    mm = _check_m(m)
    bw = _check_bandwidth(bandwidth_hz)
    tau = math.sqrt(_x3db(mm)) / (2.0 * math.pi * bw)
    st = 1j * (2.0 * math.pi * tau) * f
    if math.isinf(mm):
        h = 1.0 / (1.0 + st)
    else:
        h = (1.0 + st / mm) / (1.0 + st + st * st / mm)
    return np.asarray(h, dtype=np.complex128)


class ShuntPeakedAfe:
    """AFE stage: a shunt-peaked (series R-L load with C) amplifier of peaking factor
    ``m`` and -3 dB bandwidth ``bandwidth_hz`` (:func:`shunt_peaking_response`; 0: no
    bandwidth limit, a flat stage)."""

    def __init__(self, *, m: float, bandwidth_hz: float):
        self.m = float(m)
        self.bandwidth_hz = float(bandwidth_hz)

    def response(self, f_hz) -> np.ndarray:
        if self.bandwidth_hz == 0:  # no bandwidth limit
            return np.ones(np.shape(f_hz), dtype=np.complex128)
        return shunt_peaking_response(f_hz, m=self.m, bandwidth_hz=self.bandwidth_hz)

    def describe(self) -> str:
        bw = "unlimited" if self.bandwidth_hz == 0 else f"{self.bandwidth_hz / 1e9:g} GHz"
        return f"AFE m={self.m:g} BW {bw}"
