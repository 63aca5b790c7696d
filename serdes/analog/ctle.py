"""Continuous-time linear equalizer (CTLE): the IEEE 802.3 COM reference CTLE.

Model
-----
The reference receiver CTLE of the Channel Operating Margin method, IEEE 802.3
Annex 93A eq. (93A-22) as extended by IEEE 802.3ck-2022 (clauses 162/163, a
second, low-frequency pole/zero stage)::

             g1 + j f/f_z                   g2 + j f/f_lf
    H(f) = -------------------------- * ----------------
           (1 + j f/f_p1)(1 + j f/f_p2)     1 + j f/f_lf

    g1 = 10**(g_dc/20),   g2 = 10**(g_dc2/20)

so ``H(0) = g1 * g2`` (real) and, for ``f_z = f_p1``, the first stage tends to
1 well above ``f_z``: the boost of the first stage is ``-g_dc`` dB, less what
the pole at ``f_p2`` takes away.  The second stage is a low-frequency shelf:
gain ``g2`` below ``f_lf`` and 1 above it.

Reference values (the 802.3ck COM parameter tables of clauses 162 and 163; the
same frequency ratios are kept by 802.3dj at 106.25 GBd): ``f_z = f_p1 = f_b/2.5``, ``f_p2 = f_b``,
``f_lf = f_b/80``, ``g_dc`` in -20..0 dB and ``g_dc2`` in -6..0 dB, both in
1 dB steps.  At the default 53.125 GBd: f_z = f_p1 = 21.25 GHz,
f_p2 = 53.125 GHz, f_lf = 664.0625 MHz.

The same response is available as zeros/poles (:func:`ctle_ieee_zpk`) and a
generic zeros/poles evaluator (:func:`zpk_response`).  All frequencies,
zeros and poles are in Hz: a zero at ``z`` Hz is the factor ``(s - z)`` with
``s = j f``, i.e. the s-plane value divided by 2*pi.
"""

from __future__ import annotations

import math

import numpy as np

from serdes.errors import ConfigError
from serdes.validate import finite_float as _finite_float
from serdes.validate import freq_array as _freq_array

__all__ = [
    "G_DC_RANGE_DB",
    "G_DC2_RANGE_DB",
    "G_DC_STEP_DB",
    "G_DC2_STEP_DB",
    "ctle_ieee",
    "ctle_ieee_zpk",
    "zpk_response",
    "ieee_defaults",
    "peaking_db",
]

#: Allowed first-stage DC gain g_DC in dB (802.3ck reference CTLE), inclusive.
G_DC_RANGE_DB = (-20.0, 0.0)
#: Allowed second-stage (low-frequency) DC gain g_DC2 in dB, inclusive.
G_DC2_RANGE_DB = (-6.0, 0.0)
#: Step of the g_DC search grid in COM (dB).
G_DC_STEP_DB = 1.0
#: Step of the g_DC2 search grid in COM (dB).
G_DC2_STEP_DB = 1.0

# Symbol rates accepted by ieee_defaults/peaking_db: wide enough for any wireline
# link, narrow enough to catch a rate given in GBd instead of Hz.
_SYMBOL_RATE_RANGE_HZ = (1e8, 1e12)


# --------------------------------------------------------------------------- checks
def _positive_hz(name: str, value) -> float:
    x = _finite_float(name, value, "a finite frequency > 0 Hz")
    if x <= 0.0:
        raise ConfigError(f"{name}={x!r} Hz must be > 0; allowed a finite frequency > 0 Hz")
    return x


def _gain_db(name: str, value, lo_hi: tuple[float, float]) -> float:
    lo, hi = lo_hi
    allowed = f"{lo:g}..{hi:g} dB"
    x = _finite_float(name, value, allowed)
    if not lo <= x <= hi:
        raise ConfigError(f"{name}={x!r} dB is out of range; allowed {allowed}")
    return x


def _symbol_rate(value) -> float:
    lo, hi = _SYMBOL_RATE_RANGE_HZ
    allowed = f"{lo:g}..{hi:g} Hz (a rate in Hz, e.g. 53.125e9, not GBd)"
    x = _finite_float("symbol_rate_hz", value, allowed)
    if not lo <= x <= hi:
        raise ConfigError(f"symbol_rate_hz={x!r} is out of range; allowed {allowed}")
    return x


def _roots_array(name: str, values) -> np.ndarray:
    try:
        arr = np.atleast_1d(np.asarray(values, dtype=np.complex128))
    except (TypeError, ValueError):
        raise ConfigError(f"{name}={values!r} is not numeric; allowed a 1-D sequence of complex values in Hz") from None
    if arr.ndim != 1:
        raise ConfigError(f"{name} has shape {arr.shape}; allowed a 1-D sequence of complex values in Hz")
    if arr.size and not np.all(np.isfinite(arr)):
        raise ConfigError(f"{name} contains {complex(arr[~np.isfinite(arr)][0])!r}; allowed finite values in Hz")
    return arr


def _is_conjugate_closed(roots: np.ndarray) -> bool:
    """True if every complex root has its conjugate in the set (relative tol 1e-9)."""
    remaining = list(roots)
    while remaining:
        r = remaining.pop()
        tol = 1e-9 * max(abs(r), 1e-300)
        if abs(r.imag) <= tol:
            continue
        dist = [abs(q - np.conj(r)) for q in remaining]
        if not dist or min(dist) > tol:
            return False
        remaining.pop(int(np.argmin(dist)))
    return True


# --------------------------------------------------------------------------- models
def ctle_ieee(
    f_hz,
    *,
    g_dc_db: float,
    g_dc2_db: float = 0.0,
    f_z_hz: float,
    f_p1_hz: float,
    f_p2_hz: float,
    f_lf_hz: float,
) -> np.ndarray:
    """Frequency response of the IEEE 802.3ck COM reference CTLE (eq. 93A-22).

    Parameters
    ----------
    f_hz : array_like
        Frequencies in Hz, finite and >= 0 (any shape).
    g_dc_db : float
        First-stage DC gain in dB, in ``G_DC_RANGE_DB`` (-20..0).
    g_dc2_db : float
        Second-stage (low-frequency shelf) DC gain in dB, in ``G_DC2_RANGE_DB``
        (-6..0); 0 makes the second stage exactly 1.
    f_z_hz, f_p1_hz, f_p2_hz, f_lf_hz : float
        Zero, first and second pole, and low-frequency pole/zero in Hz (> 0).
        See :func:`ieee_defaults` for the reference values.

    Returns
    -------
    numpy.ndarray of complex128, shaped like ``f_hz``; ``H(0) = 10**((g_dc+g_dc2)/20)``.
    """
    f = _freq_array(f_hz)
    g1 = 10.0 ** (_gain_db("g_dc_db", g_dc_db, G_DC_RANGE_DB) / 20.0)
    g2 = 10.0 ** (_gain_db("g_dc2_db", g_dc2_db, G_DC2_RANGE_DB) / 20.0)
    fz = _positive_hz("f_z_hz", f_z_hz)
    fp1 = _positive_hz("f_p1_hz", f_p1_hz)
    fp2 = _positive_hz("f_p2_hz", f_p2_hz)
    flf = _positive_hz("f_lf_hz", f_lf_hz)

    jf = 1j * f
    stage1 = (g1 + jf / fz) / ((1.0 + jf / fp1) * (1.0 + jf / fp2))
    stage2 = (g2 + jf / flf) / (1.0 + jf / flf)
    return np.asarray(stage1 * stage2, dtype=np.complex128)


def ctle_ieee_zpk(
    *,
    g_dc_db: float,
    g_dc2_db: float = 0.0,
    f_z_hz: float,
    f_p1_hz: float,
    f_p2_hz: float,
    f_lf_hz: float,
) -> tuple[np.ndarray, np.ndarray, float]:
    """The reference CTLE as zeros, poles (in Hz, s-plane / 2*pi) and gain.

    ``zpk_response(f, *ctle_ieee_zpk(**p))`` equals ``ctle_ieee(f, **p)``:

    * zeros ``-g1*f_z`` and ``-g2*f_lf`` (real, left half plane),
    * poles ``-f_p1``, ``-f_p2`` and ``-f_lf``,
    * gain ``f_p1*f_p2/f_z`` (the ``1/f_lf`` factors of the second stage cancel).

    Returns
    -------
    (zeros_hz, poles_hz, gain): two float64 arrays (2 zeros, 3 poles) and a float.
    """
    g1 = 10.0 ** (_gain_db("g_dc_db", g_dc_db, G_DC_RANGE_DB) / 20.0)
    g2 = 10.0 ** (_gain_db("g_dc2_db", g_dc2_db, G_DC2_RANGE_DB) / 20.0)
    fz = _positive_hz("f_z_hz", f_z_hz)
    fp1 = _positive_hz("f_p1_hz", f_p1_hz)
    fp2 = _positive_hz("f_p2_hz", f_p2_hz)
    flf = _positive_hz("f_lf_hz", f_lf_hz)
    zeros = np.array([-g1 * fz, -g2 * flf], dtype=np.float64)
    poles = np.array([-fp1, -fp2, -flf], dtype=np.float64)
    return zeros, poles, fp1 * fp2 / fz


def zpk_response(f_hz, zeros_hz, poles_hz, gain) -> np.ndarray:
    """Evaluate ``H(s) = gain * prod(s - z) / prod(s - p)`` at ``s = j f``.

    Everything is in Hz (s-plane values divided by 2*pi), like
    ``scipy.signal.freqs_zpk`` with ``worN = f`` in these units.

    Parameters
    ----------
    f_hz : array_like
        Frequencies in Hz, finite and >= 0.
    zeros_hz : sequence of complex
        Zeros in Hz; each must have real part <= 0 (right-half-plane zeros are refused:
        a CTLE is a minimum-phase filter; zeros on the imaginary axis or at 0 Hz are allowed).
    poles_hz : sequence of complex
        Poles in Hz; each must have real part < 0 (a stable, causal system).
    gain : float
        Real, finite gain.

    Zeros and poles must each come in complex-conjugate pairs (a real impulse
    response), so that ``H(0)`` is real; it is returned with zero imaginary part.

    Returns
    -------
    numpy.ndarray of complex128, shaped like ``f_hz``.
    """
    f = _freq_array(f_hz)
    z = _roots_array("zeros_hz", zeros_hz)
    p = _roots_array("poles_hz", poles_hz)
    if p.size and np.any(p.real >= 0.0):
        bad = p[p.real >= 0.0][0]
        raise ConfigError(
            f"poles_hz contains {complex(bad)!r} Hz; allowed poles with real part < 0 (left half plane)"
        )
    if z.size and np.any(z.real > 0.0):
        bad = z[z.real > 0.0][0]
        raise ConfigError(
            f"zeros_hz contains {complex(bad)!r} Hz; allowed zeros with real part <= 0 "
            "(a right-half-plane zero is not a minimum-phase equalizer)"
        )
    if np.iscomplexobj(gain) and np.imag(gain) != 0:
        raise ConfigError(f"gain={gain!r} is complex; allowed a finite real number")
    k = _finite_float("gain", np.real(gain), "a finite real number")
    for name, roots in (("zeros_hz", z), ("poles_hz", p)):
        if not _is_conjugate_closed(roots):
            raise ConfigError(
                f"{name}={roots.tolist()!r} has a complex value without its conjugate; "
                "allowed real values or complex-conjugate pairs"
            )

    s = 1j * f
    h = np.full(f.shape, complex(k), dtype=np.complex128)
    # Interleave numerator and denominator factors so that high orders do not
    # overflow before they are divided.
    n_common = min(z.size, p.size)
    for i in range(n_common):
        h *= (s - z[i]) / (s - p[i])
    for zi in z[n_common:]:
        h *= s - zi
    for pi_ in p[n_common:]:
        h /= s - pi_
    dc = f == 0.0
    if np.any(dc):
        h[dc] = h[dc].real
    return h


def ieee_defaults(symbol_rate_hz: float = 53.125e9) -> dict[str, float]:
    """802.3ck reference CTLE pole/zero frequencies for a symbol rate ``f_b``.

    Returns ``{"f_z_hz": f_b/2.5, "f_p1_hz": f_b/2.5, "f_p2_hz": f_b,
    "f_lf_hz": f_b/80}``, ready to splat into :func:`ctle_ieee`,
    :func:`ctle_ieee_zpk` or :func:`peaking_db` together with ``g_dc_db`` (in
    ``G_DC_RANGE_DB``) and ``g_dc2_db`` (in ``G_DC2_RANGE_DB``).

    ``symbol_rate_hz`` is in Hz (1e8..1e12); 53.125e9 by default.
    """
    fb = _symbol_rate(symbol_rate_hz)
    return {
        "f_z_hz": fb / 2.5,
        "f_p1_hz": fb / 2.5,
        "f_p2_hz": fb,
        "f_lf_hz": fb / 80.0,
    }


def peaking_db(
    *,
    symbol_rate_hz: float,
    g_dc_db: float,
    g_dc2_db: float = 0.0,
    f_z_hz: float,
    f_p1_hz: float,
    f_p2_hz: float,
    f_lf_hz: float,
) -> float:
    """Peaking of the reference CTLE: ``max |H(f)| / |H(0)|`` in dB over ``0 < f <= f_b/2``.

    Always >= 0 dB (``|H|`` tends to ``|H(0)|`` as ``f -> 0``).  The maximum is
    found on a dense logarithmic grid from ``f_b/2 * 1e-7`` to ``f_b/2`` and
    refined with a bounded scalar search around the best grid point.
    """
    fb = _symbol_rate(symbol_rate_hz)
    params = dict(
        g_dc_db=g_dc_db, g_dc2_db=g_dc2_db,
        f_z_hz=f_z_hz, f_p1_hz=f_p1_hz, f_p2_hz=f_p2_hz, f_lf_hz=f_lf_hz,
    )
    f_max = fb / 2.0
    h0 = abs(ctle_ieee(0.0, **params))

    def mag(f: float) -> float:
        return float(abs(ctle_ieee(f, **params)))

    grid = np.geomspace(f_max * 1e-7, f_max, 4097)
    mags = np.abs(ctle_ieee(grid, **params))
    i = int(np.argmax(mags))
    best = float(mags[i])
    if 0 < i < grid.size - 1:
        from scipy.optimize import minimize_scalar  # imported here: only this needs it

        res = minimize_scalar(
            lambda f: -mag(f), bounds=(grid[i - 1], grid[i + 1]), method="bounded",
            options={"xatol": grid[i] * 1e-10},
        )
        best = max(best, -float(res.fun))
    return max(0.0, 20.0 * math.log10(best / h0))


class IeeeCtle:
    """CTLE stage of the IEEE 802.3 reference form (:func:`ctle_ieee`); pole/zero
    frequencies left at 0 take the reference values for ``symbol_rate_hz``
    (f_z = f_p1 = f_b/2.5, f_p2 = f_b, f_LF = f_b/80)."""

    def __init__(self, *, g_dc_db: float, g_dc2_db: float = 0.0, symbol_rate_hz: float,
                 f_z_hz: float = 0.0, f_p1_hz: float = 0.0, f_p2_hz: float = 0.0,
                 f_lf_hz: float = 0.0, auto: bool = False):
        fb = float(symbol_rate_hz)
        self.auto = bool(auto)  # the gains were chosen by serdes.dsp.ctle_search
        self.symbol_rate_hz = fb
        self.g_dc_db = float(g_dc_db)
        self.g_dc2_db = float(g_dc2_db)
        self.f_z_hz = float(f_z_hz) or fb / 2.5
        self.f_p1_hz = float(f_p1_hz) or fb / 2.5
        self.f_p2_hz = float(f_p2_hz) or fb
        self.f_lf_hz = float(f_lf_hz) or fb / 80.0

    def response(self, f_hz) -> np.ndarray:
        return ctle_ieee(f_hz, g_dc_db=self.g_dc_db, g_dc2_db=self.g_dc2_db, f_z_hz=self.f_z_hz,
                         f_p1_hz=self.f_p1_hz, f_p2_hz=self.f_p2_hz, f_lf_hz=self.f_lf_hz)

    def describe(self) -> str:
        return (f"CTLE ieee (g_dc {self.g_dc_db:g} dB"
                + (f", g_dc2 {self.g_dc2_db:g} dB" if self.g_dc2_db else "")
                + (", auto)" if self.auto else ")"))


class ZpkCtle:
    """CTLE stage from zeros and poles in Hz (s/2pi) and a gain (:func:`zpk_response`)."""

    def __init__(self, *, zeros_hz, poles_hz, gain: float = 1.0):
        zpk_response([0.0], zeros_hz, poles_hz, gain)   # the roots' and gain's checks
        self.zeros_hz = _roots_array("zeros_hz", zeros_hz)
        self.poles_hz = _roots_array("poles_hz", poles_hz)
        self.gain = float(np.real(gain))
        if self.zeros_hz.size > self.poles_hz.size:
            raise ConfigError(f"zeros_hz has {self.zeros_hz.size} zeros and poles_hz "
                              f"{self.poles_hz.size} poles: a CTLE needs at least as many "
                              "poles as zeros (its gain must level off at high frequency)")
        if self.gain == 0.0:
            raise ConfigError("gain = 0.0: the CTLE would pass nothing; allowed a "
                              "non-zero gain")

    def response(self, f_hz) -> np.ndarray:
        return zpk_response(f_hz, self.zeros_hz, self.poles_hz, self.gain)

    def describe(self) -> str:
        return f"CTLE zpk ({self.zeros_hz.size} zeros, {self.poles_hz.size} poles)"
