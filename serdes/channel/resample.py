"""Resampling a measured transfer function onto the link's FFT grid; impulses, bulk delay.

Shared by every S-parameter channel (:mod:`serdes.channel.touchstone`).  Our own code,
not scikit-rf's ``interpolate``/``extrapolate_to_dc``: the grid runs far above the last
measured frequency, where scikit-rf has no continuation (here: last dB/Hz slope under a
raised-cosine taper, phase keeping the group delay), the bulk delay needs a minimum-phase
decomposition that scikit-rf lacks, and its DC extrapolation (a model fit of the whole
network) is not the 4-point fit below, so results would change.

Resampling onto an FFT grid (:func:`transfer_on_grid`)
-----------------------------------------------------
The grid is ``f_k = k*df, k = 0..N`` (first point 0 Hz); it may extend far beyond
the file's last frequency ``f_max`` (e.g. to 850 GHz = 16 x 53.125 GHz).

1. **Linear phase.**  ``H`` is split as ``H(f) = R(f) exp(-j 2 pi f tau_g)``, where
   ``tau_g`` is the least-squares phase slope (group delay) of the file over the band
   where ``|H|`` is within 30 dB of its peak.  Magnitude ``|R|`` and unwrapped phase
   ``arg R`` are interpolated linearly between file points and ``exp(-j 2 pi f tau_g)``
   is multiplied back afterwards, so the grid response carries the full delay of the
   file.  (Linear interpolation of a phase with a linear part removed and added back
   equals interpolating the unwrapped phase itself; removing ``tau_g`` first makes the
   unwrapping robust and sets the phase continuation above ``f_max``.)  At every file
   frequency the grid value equals the file value to rounding.
2. **DC.**  The value at 0 Hz is real.  If the file has a 0 Hz point its magnitude is
   kept and its phase is snapped to 0 or pi, whichever is nearer (some files carry a
   small spurious phase at DC).  Without a 0 Hz point, ``|H(0)|`` is a least-squares
   straight-line fit of ``|H|`` over the lowest 4 file points, evaluated at 0 Hz
   (clipped at 0), and the phase is 0 or pi, whichever is nearer the residual phase
   extrapolated to 0 Hz; between 0 Hz and the first file point the same linear
   interpolation applies.
3. **Above f_max.**  The magnitude continues the last dB/Hz slope of the file (a
   least-squares fit over the top 10 % of the band, forced to be <= 0 so it never
   grows), multiplied by a raised-cosine window that is 1 at ``f_max`` and reaches 0 at
   ``taper_factor * f_max`` (default 1.5); above that the response is exactly 0.  The
   residual phase ``arg R`` is held at its last value, i.e. the group delay above
   ``f_max`` is ``tau_g``: the extrapolated content is centred on the main pulse.
   The window starts with zero slope, so it adds no step to the magnitude and little
   ringing; 1.5x leaves half an octave for the roll-off, which
   for 40-60 GHz files lies well above the 26.5625 GHz Nyquist frequency of
   53.125 GBd, while keeping the extrapolated (unmeasured) part short.  If the grid
   ends below ``taper_factor * f_max`` the top of the grid is not forced to 0.
4. **Causality.**  The impulse response of a passive channel must be zero before the
   signal arrives.  Nothing is shifted, subtracted or wrapped: the full delay of the
   file is preserved, so the response starts after ``t = 0``, at about the bulk delay
   ``tau`` of :func:`estimate_bulk_delay` (the arrival time).  Whatever energy lies
   before ``tau`` (non-causal model data, band-limiting ringing, or a grid step ``df``
   so coarse that the ``1/df`` window wraps the response) is measured by
   :func:`causality_ratio` on the result of :func:`impulse_response`; energy that
   wraps to the end of the record (negative time) is not counted, so choose ``df``
   small enough that the response has died out within ``1/df``.

Bulk delay (:func:`estimate_bulk_delay`)
----------------------------------------
A least-squares fit of the phase slope gives the *group* delay, the centre of the
dispersed pulse, not its start: a lossy line's impulse response has a large part of
its energy before that time.  We therefore use the standard decomposition
``H = H_min * H_excess``: ``H_min`` is the minimum-phase response with the same
magnitude, computed by the folded real cepstrum (discrete Hilbert transform of
``ln|H|``) on a uniform grid from 0 Hz to ``max(4, 2 taper_factor) * f_max`` with the
magnitude built as in steps 2-3 and floored at 1e-6 (-120 dB) of its peak; the
excess phase ``arg H - arg H_min`` of a causal channel is (close to) the linear phase
of a pure delay, and ``tau`` is its least-squares slope through the origin over the
file frequencies below ``0.8 f_max`` whose magnitude is within 30 dB of its peak
(the well-measured part of the band).  The response of ``H_min`` starts at ``t = 0``,
so ``tau`` is the arrival time of the leading edge.  The floor and the extrapolated
roll-off add some minimum-phase delay, which moves ``tau`` a few ps earlier: the
estimate errs on the early (safe) side for causality checks and truncation.  It is
clipped at 0.  (On the IEEE 802.3ck files it lies 20-40 ps before the impulse
response peak, while the phase-slope group delay lies within about 10 ps of the
peak.)  The decomposition assumes a thru-like response; for crosstalk files, whose
responses are sums of paths, the estimate is not a reliable arrival time.

Limitation: the phase is unwrapped point to point, so the file step must be fine
enough that the phase changes by less than pi between points (step < 1/(2 delay);
the 10 MHz step of the IEEE files allows up to 50 ns).

Units: frequencies in Hz, times in s; ``h`` from :func:`impulse_response` is the
discrete (per-sample) response, ``sum(h) == H(0)``; divide by ``dt`` for the
continuous-time impulse response in 1/s.
"""

from __future__ import annotations

import numpy as np

from serdes.errors import ConfigError

__all__ = [
    "DEFAULT_TAPER_FACTOR",
    "causality_ratio",
    "estimate_bulk_delay",
    "impulse_response",
    "insertion_loss_db",
    "transfer_on_grid",
]

#: Raised-cosine roll-off above the last file frequency reaches 0 at this multiple of it.
DEFAULT_TAPER_FACTOR = 1.5
_DC_FIT_POINTS = 4  # lowest file points used to extrapolate |H(0)| when the file has no DC
_SLOPE_FIT_FRACTION = 0.10  # top fraction of the band used for the dB/Hz continuation slope
_MINPHASE_FLOOR = 1e-6  # |H| floor (relative to peak) in ln|H| for the minimum-phase part
_DELAY_FIT_MAX_LOSS_DB = 30.0  # fit the excess phase where |H| is within this of its peak
_DELAY_FIT_BAND = 0.8  # ... and below this fraction of f_max
_MINPHASE_MAX_POINTS = 1 << 17  # cap on the internal cepstrum grid (points up to its top)


# ------------------------------------------------------------------ input checking


def _as_response(f_hz, h, name_f="f_hz", name_h="h") -> tuple[np.ndarray, np.ndarray]:
    f = np.asarray(f_hz, dtype=np.float64)
    try:
        hh = np.asarray(h, dtype=np.complex128)
    except (TypeError, ValueError):
        raise ConfigError(f"{name_h}: must be an array of complex numbers") from None
    if f.ndim != 1 or hh.shape != f.shape:
        raise ConfigError(
            f"{name_f}, {name_h}: must be 1-D arrays of equal length, got {f.shape} and {hh.shape}"
        )
    if f.size < 2:
        raise ConfigError(f"{name_f}: needs at least 2 frequency points, got {f.size}")
    if not (np.all(np.isfinite(f)) and np.all(np.isfinite(hh))):
        raise ConfigError(f"{name_f}, {name_h}: must be finite (no NaN/inf)")
    if f[0] < 0 or np.any(np.diff(f) <= 0):
        raise ConfigError(f"{name_f}: must be >= 0 and strictly increasing")
    return f, hh


def _as_grid(f_grid_hz, name="f_grid_hz") -> np.ndarray:
    g = np.asarray(f_grid_hz, dtype=np.float64)
    if g.ndim != 1 or g.size < 2:
        raise ConfigError(f"{name}: must be a 1-D array of at least 2 frequencies")
    if not np.all(np.isfinite(g)):
        raise ConfigError(f"{name}: must be finite")
    if g[0] != 0.0:
        raise ConfigError(f"{name}: first point must be 0 Hz, got {g[0]:g} Hz")
    if np.any(np.diff(g) <= 0):
        raise ConfigError(f"{name}: must be strictly increasing")
    return g


def _check_taper(taper_factor) -> float:
    try:
        tf = float(taper_factor)
    except (TypeError, ValueError):
        tf = float("nan")
    if not (np.isfinite(tf) and tf > 1.0):
        raise ConfigError(f"taper_factor={taper_factor!r}: must be a number > 1 (default 1.5)")
    return tf


# ------------------------------------------------------------- resampling helpers


def _phase_slope_delay(f: np.ndarray, h: np.ndarray) -> float:
    """Least-squares phase-slope (group) delay tau_g over the band within 30 dB of peak |H|."""
    mag = np.abs(h)
    ph = np.unwrap(np.angle(h))
    ref = mag.max()
    ok = mag >= ref * 10 ** (-_DELAY_FIT_MAX_LOSS_DB / 20)
    if np.count_nonzero(ok) < 2:
        ok = np.ones_like(ok)
    w = 2 * np.pi * f[ok]
    A = np.vstack([w, np.ones_like(w)]).T
    slope = np.linalg.lstsq(A, ph[ok], rcond=None)[0][0]
    return float(-slope)


class _Prepared:
    """File response with a real DC point prepended/snapped, split into |H| and residual phase.

    ``phase`` is the unwrapped phase of ``H * exp(+j 2 pi f tau0)`` (delay ``tau0`` removed),
    with ``phase[0]`` exactly 0 or +-pi.
    """

    def __init__(self, f: np.ndarray, h: np.ndarray):
        tau0 = _phase_slope_delay(f, h)
        r = h * np.exp(2j * np.pi * f * tau0)
        ph = np.unwrap(np.angle(r))
        mag = np.abs(h)
        if f[0] == 0.0:
            # keep |H(0)|, snap its phase to 0 or +-pi (whichever is nearer): real DC value
            ph[0] = np.pi * np.round(ph[0] / np.pi)
            f_e, mag_e, ph_e = f, mag, ph
        else:
            k = min(_DC_FIT_POINTS, f.size)
            A = np.vstack([f[:k], np.ones(k)]).T
            mag0 = max(float(np.linalg.lstsq(A, mag[:k], rcond=None)[0][1]), 0.0)
            ph_ext = ph[0] - f[0] * (ph[1] - ph[0]) / (f[1] - f[0])
            ph0 = np.pi * np.round(ph_ext / np.pi)
            f_e = np.concatenate(([0.0], f))
            mag_e = np.concatenate(([mag0], mag))
            ph_e = np.concatenate(([ph0], ph))
        self.f = f_e
        self.mag = mag_e
        self.phase = ph_e
        self.tau0 = tau0
        self.f_max = float(f_e[-1])
        # continuation slope (dB/Hz) over the top of the band, never rising
        top = f_e >= f_e[-1] - _SLOPE_FIT_FRACTION * (f_e[-1] - f_e[0])
        if np.count_nonzero(top) < 2:
            top[-2:] = True
        db = 20 * np.log10(np.maximum(mag_e[top], 1e-300))
        A = np.vstack([f_e[top], np.ones(np.count_nonzero(top))]).T
        slope = float(np.linalg.lstsq(A, db, rcond=None)[0][0])
        self.slope_db_per_hz = min(slope, 0.0) if np.isfinite(slope) else 0.0

    def magnitude(self, g: np.ndarray, taper_factor: float) -> np.ndarray:
        mag = np.interp(g, self.f, self.mag)
        up = g > self.f_max
        if np.any(up):
            fu = g[up]
            x = (fu - self.f_max) / ((taper_factor - 1.0) * self.f_max)
            win = np.where(x < 1.0, 0.5 * (1.0 + np.cos(np.pi * np.minimum(x, 1.0))), 0.0)
            ext_db = self.slope_db_per_hz * (fu - self.f_max)
            mag[up] = self.mag[-1] * 10.0 ** (ext_db / 20.0) * win
        return mag

    def residual_phase(self, g: np.ndarray) -> np.ndarray:
        # np.interp holds the last value above f_max: constant residual phase there
        return np.interp(g, self.f, self.phase)


def _prepare(f_hz, h) -> _Prepared:
    f, hh = _as_response(f_hz, h)
    return _Prepared(f, hh)


def _minphase_phase(mag: np.ndarray) -> np.ndarray:
    """Phase of the minimum-phase response with magnitude ``mag`` on a uniform 0..fN grid."""
    floor = max(float(mag.max()), 1e-300) * _MINPHASE_FLOOR
    logm = np.log(np.maximum(mag, floor))
    n = mag.size - 1
    c = np.fft.irfft(logm, 2 * n)
    fold = np.zeros_like(c)
    fold[0] = c[0]
    fold[1:n] = 2.0 * c[1:n]
    fold[n] = c[n]
    return np.imag(np.fft.rfft(fold))


def _bulk_delay(prep: _Prepared, taper_factor: float) -> float:
    f_max = prep.f_max
    step = float(np.median(np.diff(prep.f)))
    f_top = max(4.0, 2.0 * taper_factor) * f_max
    n = int(min(max(int(np.ceil(f_top / step)), 1024), _MINPHASE_MAX_POINTS))
    g = np.linspace(0.0, f_top, n + 1)
    phi_min = np.interp(prep.f, g, _minphase_phase(prep.magnitude(g, taper_factor)))
    # measured phase (coarse delay put back) minus the minimum phase = excess phase
    excess = prep.phase - 2 * np.pi * prep.f * prep.tau0 - phi_min
    ref = prep.mag.max()
    ok = (prep.f > 0) & (prep.f <= _DELAY_FIT_BAND * f_max)
    ok &= prep.mag >= ref * 10 ** (-_DELAY_FIT_MAX_LOSS_DB / 20)
    if np.count_nonzero(ok) < 2:
        ok = prep.f > 0
    w = 2 * np.pi * prep.f[ok]
    # the excess phase at 0 Hz is the snapped DC phase (0 or pi): fit its slope from there
    tau = -float(np.dot(w, excess[ok] - prep.phase[0]) / np.dot(w, w))
    # nothing arrives before t = 0 (a flat, band-limited response can give tau < 0)
    return max(tau, 0.0)


def estimate_bulk_delay(f_hz, h, *, taper_factor: float = DEFAULT_TAPER_FACTOR) -> float:
    """Pure-delay (arrival-time) part of a measured transfer function, in seconds.

    Least-squares slope (through the origin) of the excess phase ``arg H - arg H_min``,
    where ``H_min`` is the minimum-phase response with the magnitude of ``H`` (see the
    module docstring for the grid, the -120 dB floor and the fit band).
    """
    tf = _check_taper(taper_factor)
    return _bulk_delay(_prepare(f_hz, h), tf)


def transfer_on_grid(
    f_hz,
    h,
    f_grid_hz,
    *,
    taper_factor: float = DEFAULT_TAPER_FACTOR,
    delay_s: float | None = None,
) -> np.ndarray:
    """Resample a measured transfer function onto the FFT grid ``f_grid_hz`` (complex128).

    ``f_grid_hz`` must start at 0 Hz and increase (normally ``k*df, k=0..N``).  The
    value at 0 Hz is real; between file points |H| and the unwrapped phase (linear
    phase removed) are interpolated linearly, so file points are reproduced exactly; above
    the last file frequency the magnitude follows the last dB/Hz slope times a raised
    cosine reaching 0 at ``taper_factor * f_max``.  ``delay_s`` overrides the linear
    phase removed before interpolation (default: the least-squares phase-slope delay
    of the file); it only changes the phase above ``f_max``, whose group delay it is.
    See the module docstring for details.
    """
    tf = _check_taper(taper_factor)
    prep = _prepare(f_hz, h)
    g = _as_grid(f_grid_hz)
    if delay_s is None:
        tau = prep.tau0
    else:
        try:
            tau = float(delay_s)
        except (TypeError, ValueError):
            tau = float("nan")
        if not np.isfinite(tau):
            raise ConfigError(f"delay_s={delay_s!r}: must be a finite number of seconds")
    mag = prep.magnitude(g, tf)
    # residual phase w.r.t. tau (phase has tau0 removed): arg(H e^{+j w tau})
    res = prep.residual_phase(g) + 2 * np.pi * np.minimum(g, prep.f_max) * (tau - prep.tau0)
    out = mag * np.exp(1j * (res - 2 * np.pi * g * tau))
    out[0] = complex(mag[0] * np.cos(prep.phase[0]), 0.0)
    return out.astype(np.complex128, copy=False)


def impulse_response(f_grid_hz, H) -> tuple[np.ndarray, np.ndarray]:
    """Real impulse response of ``H`` given on the uniform grid ``f_k = k*df, k=0..N``.

    Returns ``(t_s, h)`` with ``n = 2N`` samples, ``dt = 1/(2 f_N) = 1/(n df)``,
    ``t_s = arange(n)*dt`` and ``h = irfft(H, n)``: the discrete (per-sample) response,
    so ``sum(h) == Re H(0)`` (``h/dt`` is the continuous-time response in 1/s).  The
    record is periodic with period ``1/df``; the imaginary parts of ``H`` at 0 Hz and
    at ``f_N`` are discarded (both are 0 from :func:`transfer_on_grid`).
    """
    g = _as_grid(f_grid_hz)
    HH = np.asarray(H, dtype=np.complex128)
    if HH.shape != g.shape:
        raise ConfigError(f"H: must have the shape of f_grid_hz {g.shape}, got {HH.shape}")
    if not np.all(np.isfinite(HH)):
        raise ConfigError("H: must be finite (no NaN/inf)")
    df = g[1]
    N = g.size - 1
    if not np.allclose(g, df * np.arange(N + 1), rtol=0.0, atol=1e-6 * df):
        raise ConfigError("f_grid_hz: must be uniform, f_k = k*df for k = 0..N")
    n = 2 * N
    h = np.fft.irfft(HH, n)
    dt = 1.0 / (n * df)
    return np.arange(n) * dt, h


def causality_ratio(h, delay_samples) -> float:
    """Energy of ``h`` before sample ``delay_samples`` divided by its total energy.

    With ``delay_samples = floor(bulk_delay / dt)`` this is the fraction of the impulse
    response that arrives before the signal can (0 for a causal response).
    """
    hh = np.asarray(h, dtype=np.float64)
    if hh.ndim != 1 or hh.size == 0:
        raise ConfigError("h: must be a non-empty 1-D real array")
    try:
        d = float(delay_samples)
    except (TypeError, ValueError):
        d = float("nan")
    if not (np.isfinite(d) and d >= 0):
        raise ConfigError(f"delay_samples={delay_samples!r}: must be a number >= 0")
    k = min(int(np.floor(d)), hh.size)
    e = hh * hh
    total = float(e.sum())
    if total <= 0.0:
        raise ConfigError("h: impulse response has zero energy")
    return float(e[:k].sum() / total)


def insertion_loss_db(f_hz, h, f0_hz) -> float:
    """``-20 log10 |H(f0)|`` with ``|H|`` interpolated linearly between file points (dB)."""
    f, hh = _as_response(f_hz, h)
    try:
        f0 = float(f0_hz)
    except (TypeError, ValueError):
        f0 = float("nan")
    if not (np.isfinite(f0) and f[0] <= f0 <= f[-1]):
        raise ConfigError(
            f"f0_hz={f0_hz!r}: must lie within the data range {f[0]:g}..{f[-1]:g} Hz"
        )
    m = float(np.interp(f0, f, np.abs(hh)))
    return float("inf") if m <= 0.0 else float(-20.0 * np.log10(m))
