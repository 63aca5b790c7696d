"""The interleaved ADC's terms of the impairment budget (:mod:`serdes.impairments`),
Gaussian-modelled, per ADC sample (lag 0; V^2):

==============  =============================================================
adc_interleave  mean over the lanes of the error a lane makes against the ideal
                converter: E[a^2] ||g_l p_l(tau_l) - p||^2 + o_l^2 (p_l: the
                lane's T/H; deterministic per lane, periodic in k with period N);
                calibrated in the background: what the calibration keeps
                (serdes.tiadc.cal_residual): sigma_o^2 + sigma_g^2 E[x^2] +
                C[0] E[a^2] |p'|^2 (offset, gain and skew residuals)
adc_clock       the ADC clock's jitter beyond the link's RJ, first order
                through the pulse slope: (aperture^2 + supply RJ^2 + sum of the
                supply tones' SJ^2 / 2) E[a^2] |p'|^2
adc_supply      the front end's gain modulation: k_g^2 <v^2> E[x^2]
==============  =============================================================

The statistical engine (:mod:`serdes.tiadc.stat`) does not use these Gaussian stand-ins:
it takes each lane's response and offset exactly and the clock jitter as RJ/SJ.
"""

from __future__ import annotations

import numpy as np


def interleave_variance(link) -> float:
    """The lanes' mismatch error power; with background calibration, the residual it
    keeps (LMS and trim noise, :mod:`serdes.tiadc.cal_residual`)."""
    from serdes.tiadc.lanes import lane_fine_pulses

    adc, p = link.adc, link.pulse
    if adc.calibration is not None:
        from serdes.tiadc import cal_residual as cr

        s = adc.calibration
        x_ms = float(cr._input_autocorr(link, 1)[0])
        sl = p.slope()
        skew = float(cr.skew_covariance(link, s, s.chunk_symbols)[0]) if s.skew_gain > 0 else 0.0
        return (cr.offset_variance(link, s) + cr.gain_variance(link, s) * x_ms
                + skew * link.level_power * float(sl @ sl))
    base = p.taps
    fines = lane_fine_pulses(adc, p.fine, p.m, link.ui_s / p.m)
    err = 0.0
    for l, fine in enumerate(fines):
        pos = p.phase + adc.skews_s[l] / link.ui_s * p.m + p.m * np.arange(p.n_ui)
        from serdes.kernels.fir import interp_cubic

        h = adc.gains[l] * interp_cubic(fine, pos.astype(np.float64))
        err += link.level_power * float((h - base) @ (h - base)) + adc.offsets_v[l] ** 2
    return err / adc.lanes


def clock_variance(link) -> float:
    """Sampling-clock jitter (aperture, supply-induced) to first order: sigma_t^2 / T^2
    E[a^2] sum_j p'_j^2 (V^2)."""
    adc = link.adc
    s2 = adc.aperture_jitter_s ** 2
    sup = adc.supply
    if sup is not None and sup.jitter_active:
        s2 += sup.rj_s ** 2 + float(np.sum(sup.sj_s ** 2)) / 2
    if s2 == 0:
        return 0.0
    s = link.pulse.slope()
    return float(s2 / link.ui_s ** 2 * link.level_power * float(s @ s))


def supply_gain_variance(link) -> float:
    sup = link.adc.supply
    if sup is None or not sup.gain_active:
        return 0.0
    x_ms = link.noise.variance + link.level_power * float(link.pulse.taps @ link.pulse.taps)
    return float(sup.gain_mod_variance() * x_ms)


def budget_terms(link, lags: int) -> dict[str, np.ndarray]:
    """The terms above as autocorrelations R[k], k < lags (white: lag 0 only)."""
    out = {}
    for name, fn in (("adc_interleave", interleave_variance), ("adc_clock", clock_variance),
                     ("adc_supply", supply_gain_variance)):
        r = np.zeros(lags)
        r[0] = fn(link)
        out[name] = r
    return out
