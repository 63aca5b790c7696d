"""Causal analytic transmission-line loss model (IEEE 802.3 Annex 93A form).

Model
-----
The propagation constant per mm of the COM package transmission line, IEEE
802.3 Annex 93A.1.2.3 (the ``gamma(f)`` of eqs. 93A-9 ff.), with ``f`` in GHz::

    gamma(f) = gamma0 + a1*sqrt(f)*(1 + j) + a2*f*(1 - j*(2/pi)*ln(f)) + j*2*pi*f*tau

and the line of length ``L`` mm transmits ``H(f) = exp(-gamma(f) * L)``
(matched terminations; no reflections).  ``gamma0`` (1/mm) is a
frequency-independent loss, ``a1`` (sqrt(ns)/mm) the skin-effect loss, ``a2``
(ns/mm) the dielectric loss and ``tau`` (ns/mm) the delay.  The default
coefficients are the 802.3ck values (the COM parameter tables of clauses 162
and 163, and the defaults ``package_tl_gamma0_a1_a2 = [0 1.734e-3 1.455e-4]``,
``package_tl_tau = 6.141e-3`` of the COM reference code): ``gamma0 = 0``,
``a1 = 1.734e-3``, ``a2 = 1.455e-4``, ``tau = 6.141e-3``.  Those describe a
package trace (0.11 dB/mm at 26.56 GHz); :func:`loss_channel_response` keeps
their skin/dielectric balance and scales the length to the loss asked for.  ``-20*log10|H|`` is
``(20/ln 10) * (gamma0 + a1*sqrt(f) + a2*f) * L`` dB, linear in ``L``, which
:func:`length_for_loss` inverts in closed form.

Skin/dielectric split of the channel stage
------------------------------------------
The package-trace coefficients put 70 % of the loss at 26.56 GHz in the skin-effect
term: a backplane or cable scaled from them loses far too little above Nyquist (37 dB
at 40 GHz for 28.25 dB at Nyquist, where the IEEE 802.3ck DPO_12in and Tp0_Tp5 thrus
lose 53 and 47 dB). :class:`LossLine` therefore sets the split itself:
``skin_fraction`` is the share of the loss at ``f_ref_hz`` that is skin effect
(``sqrt f``), the rest dielectric (``f``), keeping the package trace's dB/mm at
``f_ref_hz`` (so the length, and the delay, are as before; see
:func:`split_coefficients`). The default :data:`SKIN_FRACTION` = 0.24 is fitted to the
IEEE 802.3ck thru channels: least squares of IL(f) in dB over 0.05..1.5 x 26.5625 GHz
by ``a*sqrt(f/fN) + b*f/fN``, skin share ``a/(a+b)``: C2C_PCB_SYSVIA_12dB 0.21,
C2M_Z100_IL14 0.15, CA_19p75dB 0.30, Tp0_Tp5_28p5db 0.34, DPO_12in_Meg7 0.24 (median
0.236; DPO_4in_Meg7, dominated by its via-stub resonance, fits a negative share and is
left out). With it, 28.25 dB at Nyquist becomes 40.7 dB at 40 GHz (37.0 with the
package split), and 2.1 dB at 1 GHz (4.2). What it cannot follow: the real thrus lose
faster than ``f`` above Nyquist (46-53 dB at 40 GHz when scaled to 28.25 dB; a
three-term fit gives them a negative ``sqrt f`` share) and have 0.4-2.6 dB more loss
near 5 GHz than the fitted line, so the line stays 2-12 dB under them at 40 GHz; the
rms deviation over the fitted band is 0.6-2.7 dB (1.2-3.6 dB with the package split).

Causality
---------
With ``p = s / (2*pi*1 GHz)`` (so ``p = j f`` on the frequency axis) and
principal branches,

    (1 + j)*sqrt(f)            = sqrt(2) * sqrt(p)
    f*(1 - j*(2/pi)*ln(f))     = -(2/pi) * p * ln(p)
    j*2*pi*f*tau               = 2*pi*tau * p

Each right-hand side is analytic in the right half ``p``-plane and real on the
positive real axis: the imaginary parts are the Hilbert (Kramers-Kronig)
partners of the ``sqrt(f)`` and ``f`` attenuations, so the response is causal
(minimum phase plus the delay).  The one caveat is that the ``p*ln(p)`` term
lowers the group delay logarithmically with frequency,

    tau_g(f) = tau + a1/(4*pi*sqrt(f)) - (a2/pi**2)*(1 + ln f)    ns/mm,

so ``tau`` is the delay referenced to 1 GHz, not a high-frequency limit: a
response band-limited to ``f_max`` starts at ``L * tau_g(f_max)``, about
0.1 ps/mm before ``L*tau`` for ``f_max`` near 1 THz.  ``f = 0`` is handled
exactly (``f*ln f -> 0``, ``H(0) = exp(-gamma0*L)``, real).
"""

from __future__ import annotations

import math

import numpy as np

from serdes.errors import ConfigError
from serdes.validate import finite_float as _finite
from serdes.validate import freq_array as _freq_array

__all__ = [
    "GAMMA0_PER_MM",
    "A1_SQRT_NS_PER_MM",
    "A2_NS_PER_MM",
    "TAU_NS_PER_MM",
    "LOSS_DB_RANGE",
    "tline_response",
    "loss_channel_response",
    "length_for_loss",
    "split_coefficients",
    "SKIN_FRACTION",
    "LossLine",
]

#: Frequency-independent loss gamma0 in 1/mm (802.3ck).
GAMMA0_PER_MM = 0.0
#: Skin-effect coefficient a1 in sqrt(ns)/mm (802.3ck).
A1_SQRT_NS_PER_MM = 1.734e-3
#: Dielectric-loss coefficient a2 in ns/mm (802.3ck).
A2_NS_PER_MM = 1.455e-4
#: Propagation delay tau in ns/mm (802.3ck), referenced to 1 GHz.
TAU_NS_PER_MM = 6.141e-3
#: Default share of the loss at f_ref that is skin effect (fit to the IEEE 802.3ck thrus,
#: see the module notes); the package-trace coefficients above have 0.70 at 26.56 GHz.
SKIN_FRACTION = 0.24
#: Allowed insertion loss for :func:`loss_channel_response` (dB, inclusive).
LOSS_DB_RANGE = (0.0, 60.0)

_DB_PER_NEPER = 20.0 / math.log(10.0)
_F_REF_GHZ = 1.0e9  # the 1 GHz reference of the model, in Hz
# Loss coefficients above this (1/mm, sqrt(ns)/mm, ns/mm) are ~1 dB/mm at 1 GHz:
# no PCB, cable or package comes close, so they flag a unit mistake.
_COEF_MAX = 0.1
# Nothing propagates faster than light: tau >= 1/c = 3.3356e-3 ns/mm.
_TAU_RANGE = (1.0e9 / 299_792_458.0 / 1.0e3, 1.0)


# --------------------------------------------------------------------------- checks
def _in_range(name: str, value, lo: float, hi: float, unit: str) -> float:
    allowed = f"{lo:.6g}..{hi:.6g} {unit}"
    x = _finite(name, value, allowed)
    if not lo <= x <= hi:
        raise ConfigError(f"{name}={x!r} {unit} is out of range; allowed {allowed}")
    return x


def _coefficients(gamma0_per_mm, a1, a2, tau_ns_per_mm) -> tuple[float, float, float, float]:
    g0 = _in_range("gamma0_per_mm", gamma0_per_mm, 0.0, _COEF_MAX, "1/mm")
    c1 = _in_range("a1", a1, 0.0, _COEF_MAX, "sqrt(ns)/mm")
    c2 = _in_range("a2", a2, 0.0, _COEF_MAX, "ns/mm")
    tau = _in_range("tau_ns_per_mm", tau_ns_per_mm, *_TAU_RANGE, "ns/mm")
    return g0, c1, c2, tau


def _f_ref(f_ref_hz) -> float:
    allowed = "a finite frequency > 0 Hz"
    x = _finite("f_ref_hz", f_ref_hz, allowed)
    if x <= 0.0:
        raise ConfigError(f"f_ref_hz={x!r} Hz is out of range; allowed {allowed}")
    return x


# --------------------------------------------------------------------------- model
def _gamma(f: np.ndarray, g0: float, c1: float, c2: float, tau: float, include_delay: bool) -> np.ndarray:
    """Propagation constant per mm (complex, nepers + j radians per mm)."""
    fg = f / _F_REF_GHZ
    xlnx = np.zeros_like(fg)
    pos = fg > 0.0
    xlnx[pos] = fg[pos] * np.log(fg[pos])
    gamma = (g0 + c1 * np.sqrt(fg) + c2 * fg) + 1j * (c1 * np.sqrt(fg) - c2 * (2.0 / math.pi) * xlnx)
    if include_delay:
        gamma = gamma + 1j * (2.0 * math.pi * tau) * fg
    return gamma


def _loss_db_per_mm(f_hz: float, g0: float, c1: float, c2: float) -> float:
    fg = f_hz / _F_REF_GHZ
    return _DB_PER_NEPER * (g0 + c1 * math.sqrt(fg) + c2 * fg)


def tline_response(
    f_hz,
    *,
    length_mm: float,
    a1: float = A1_SQRT_NS_PER_MM,
    a2: float = A2_NS_PER_MM,
    tau_ns_per_mm: float = TAU_NS_PER_MM,
    gamma0_per_mm: float = GAMMA0_PER_MM,
    include_delay: bool = True,
) -> np.ndarray:
    """Transmission ``H(f) = exp(-gamma(f)*length_mm)`` of the Annex 93A line.

    Parameters
    ----------
    f_hz : array_like
        Frequencies in Hz, finite and >= 0.
    length_mm : float
        Line length in mm (>= 0).
    a1, a2, tau_ns_per_mm, gamma0_per_mm : float
        Coefficients in sqrt(ns)/mm, ns/mm, ns/mm and 1/mm; 802.3ck values by
        default.  ``a1``, ``a2``, ``gamma0_per_mm`` in 0..0.1; ``tau_ns_per_mm``
        in 1/c = 3.3356e-3 .. 1.
    include_delay : bool
        Include the ``j*2*pi*f*tau`` delay term.  Without it the remaining
        response is not causal by itself (see the module docstring); use it for
        loss plots or when the caller accounts for the delay.

    Returns
    -------
    numpy.ndarray of complex128 shaped like ``f_hz``; ``H(0) = exp(-gamma0*L)``.
    """
    f = _freq_array(f_hz)
    length = _finite("length_mm", length_mm, "a finite length >= 0 mm")
    if length < 0.0:
        raise ConfigError(f"length_mm={length!r} mm is out of range; allowed a finite length >= 0 mm")
    g0, c1, c2, tau = _coefficients(gamma0_per_mm, a1, a2, tau_ns_per_mm)
    h = np.exp(-_gamma(f, g0, c1, c2, tau, bool(include_delay)) * length)
    return np.asarray(h, dtype=np.complex128)


def length_for_loss(
    loss_db: float,
    f_ref_hz: float,
    *,
    a1: float = A1_SQRT_NS_PER_MM,
    a2: float = A2_NS_PER_MM,
    gamma0_per_mm: float = GAMMA0_PER_MM,
) -> float:
    """Length in mm for which the line loses exactly ``loss_db`` dB at ``f_ref_hz``.

    ``L = loss_db / ((20/ln 10) * (gamma0 + a1*sqrt(f) + a2*f))`` with ``f`` in
    GHz; ``loss_db`` in 0..60 dB, ``f_ref_hz`` > 0.
    """
    loss = _in_range("loss_db", loss_db, *LOSS_DB_RANGE, "dB")
    f_ref = _f_ref(f_ref_hz)
    g0, c1, c2, _ = _coefficients(gamma0_per_mm, a1, a2, TAU_NS_PER_MM)
    per_mm = _loss_db_per_mm(f_ref, g0, c1, c2)
    if loss == 0.0:
        return 0.0
    if per_mm <= 0.0:
        raise ConfigError(
            f"f_ref_hz={f_ref!r} gives 0 dB/mm with a1={c1!r}, a2={c2!r}, gamma0_per_mm={g0!r}; "
            "allowed coefficients with some loss when loss_db > 0"
        )
    return loss / per_mm


def loss_channel_response(
    f_hz,
    *,
    loss_db: float,
    f_ref_hz: float,
    include_delay: bool = True,
    a1: float = A1_SQRT_NS_PER_MM,
    a2: float = A2_NS_PER_MM,
    tau_ns_per_mm: float = TAU_NS_PER_MM,
    gamma0_per_mm: float = GAMMA0_PER_MM,
) -> np.ndarray:
    """Annex 93A line whose insertion loss at ``f_ref_hz`` is exactly ``loss_db``.

    The length comes from :func:`length_for_loss`; the response is
    :func:`tline_response` of that length.  ``loss_db`` in 0..60 dB
    (0 is a zero-length line, ``H = 1``); ``f_ref_hz`` > 0, typically the
    Nyquist frequency (26.5625e9 at 53.125 GBd).

    Returns
    -------
    numpy.ndarray of complex128 shaped like ``f_hz``.
    """
    length = length_for_loss(loss_db, f_ref_hz, a1=a1, a2=a2, gamma0_per_mm=gamma0_per_mm)
    return tline_response(
        f_hz, length_mm=length, a1=a1, a2=a2, tau_ns_per_mm=tau_ns_per_mm,
        gamma0_per_mm=gamma0_per_mm, include_delay=include_delay,
    )


def split_coefficients(skin_fraction: float, f_ref_hz: float) -> tuple[float, float]:
    """``(a1, a2)`` with the 802.3ck package trace's loss per mm at ``f_ref_hz`` of which
    the share ``skin_fraction`` (0..1) is skin effect: ``a1*sqrt(f) = s*K``,
    ``a2*f = (1 - s)*K`` at ``f = f_ref`` (GHz), ``K = A1*sqrt(f) + A2*f``."""
    s = _in_range("skin_fraction", skin_fraction, 0.0, 1.0, "(share of the loss at f_ref)")
    fg = _f_ref(f_ref_hz) / _F_REF_GHZ
    k = A1_SQRT_NS_PER_MM * math.sqrt(fg) + A2_NS_PER_MM * fg
    return s * k / math.sqrt(fg), (1.0 - s) * k / fg


class LossLine:
    """Channel stage: an Annex 93A line scaled to ``loss_db`` at ``f_ref_hz``, of which
    the share ``skin_fraction`` is skin effect (``sqrt f``) and the rest dielectric loss
    (``f``) (see the module notes); its delay left out: the link adds one bulk delay of
    its own."""

    def __init__(self, *, loss_db: float, f_ref_hz: float,
                 skin_fraction: float = SKIN_FRACTION):
        self.loss_db = float(loss_db)
        self.f_ref_hz = float(f_ref_hz)
        self.skin_fraction = float(skin_fraction)
        self.a1, self.a2 = split_coefficients(self.skin_fraction, self.f_ref_hz)

    def response(self, f_hz) -> np.ndarray:
        return loss_channel_response(np.asarray(f_hz, dtype=np.float64), loss_db=self.loss_db,
                                     f_ref_hz=self.f_ref_hz, include_delay=False,
                                     a1=self.a1, a2=self.a2)

    def il_db(self, f_hz) -> float:
        if f_hz == self.f_ref_hz:
            return self.loss_db
        h = self.response(np.array([0.0, float(f_hz)]))[1]
        return float(-20.0 * np.log10(abs(h)))

    def describe(self) -> str:
        return (f"loss line {self.loss_db:g} dB at {self.f_ref_hz / 1e9:g} GHz "
                f"({self.skin_fraction:.0%} skin)")
