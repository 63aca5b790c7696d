"""The integrated crosstalk noise of IEEE 802.3 (92.10.7.4.7, 93A.1.7) of a link's
aggressors: :func:`icn_v` (also reached as ``serdes.crosstalk.icn_v``)."""

from __future__ import annotations

import numpy as np

from serdes.errors import ConfigError


def icn_v(link) -> float | None:
    """The integrated crosstalk noise (IEEE 802.3 92.10.7.4.7, 93A.1.7), rms volts:
    sigma^2 = 2 df sum_f sum_a W_a(f) |H_a(f)|^2 with
    W_a(f) = (A_a^2 / f_b) sinc^2(f / f_b) / (1 + (f / f_t)^4) / (1 + (f / (f_r f_b))^8),
    f_t = 0.2365 / T_a (the aggressor's 20-80 % rise time), A_a its swing, H_a its coupling
    path (the channel data alone, as measured: no package, no TX FFE). With A_a equal
    within NEXT and within FEXT this is the standard's MDNEXT/MDFEXT form. A file is used
    at its own frequencies (df its step); a copy model on a 10 MHz grid. None without
    aggressors.

    Checked term by term against eqs. 93A-46/47/57 as the IEEE COM reference code
    computes them (``FD_Processing``: PWF = sinc^2(f/f_b) (1 + (f/f_tr)^4)^-1
    (1 + (f/(f_r f_b))^8)^-1, sigma = sqrt(2 df / f_2 sum A^2 PWF |XT|^2) over the power
    sum XT): the same terms. Where the two differ: the COM code divides by f_2 (= f_b by
    default; we divide by f_b, the standard's A^2 / f_b), takes the aggressor edge as
    f_tr = f_f f_b or f_n f_b (we use 0.2365 / T of each aggressor, the 92.10.7.4.7 form
    with T_ft / T_nt), sums from the last point <= f_1 to the first >= f_2 (we sum
    f_1 <= f <= f_2) and has separate ICN amplitudes A_ft / A_nt (we use each
    aggressor's swing, A_fe / A_ne). tests/test_crosstalk.py checks the sum against a
    quadrature of the integral for flat couplings."""
    spec = link.crosstalk_spec
    if spec is None or not spec.aggressors:
        return None
    fb = link.symbol_rate_hz
    f1, f2 = spec.f1_hz, (spec.f2_hz or fb)
    total = 0.0
    for agg in spec.aggressors:
        f, h = coupling_samples(agg.coupling, f1, f2)
        total += 2.0 * float(np.median(np.diff(f))) * float(np.sum(
            icn_weight(f, fb, agg.swing_v, agg.rise_time_s, spec.f_r) * np.abs(h) ** 2))
    return float(np.sqrt(total))


def icn_weight(f, fb: float, amplitude_v: float, rise_time_s: float, f_r: float) -> np.ndarray:
    """W(f) of the ICN (see :func:`icn_v`); no edge term with a zero rise time."""
    f = np.asarray(f, dtype=np.float64)
    w = amplitude_v ** 2 / fb * np.sinc(f / fb) ** 2 / (1.0 + (f / (f_r * fb)) ** 8)
    if rise_time_s > 0:
        w = w / (1.0 + (f * rise_time_s / 0.2365) ** 4)
    return w


def coupling_samples(stage, f1: float, f2: float) -> tuple[np.ndarray, np.ndarray]:
    """(f, H) of a coupling path in [f1, f2]: a file's own points, else a 10 MHz grid."""
    f_raw = getattr(stage, "f_hz", None)
    if isinstance(f_raw, np.ndarray) and hasattr(stage, "sdd21"):
        sel = (f_raw >= f1) & (f_raw <= f2)
        if np.count_nonzero(sel) < 2:
            raise ConfigError(f"{getattr(stage, 'describe', lambda: 'aggressor')()}: fewer "
                              f"than 2 frequency points in the ICN band {f1:g}..{f2:g} Hz")
        return f_raw[sel], stage.sdd21[sel]
    f = np.arange(0.0, np.floor(f2 / 1e7) + 1) * 1e7   # from 0 Hz: a file needs it
    stages = stage if isinstance(stage, list) else [stage]
    from serdes.stage import cascade

    h = cascade(stages, f)
    sel = f >= f1
    return f[sel], h[sel]
