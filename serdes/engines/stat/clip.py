"""Probability that the ADC input exceeds the ADC's full scale (clipping is not modelled in
the error rates; this says whether it matters).

The ADC input is the pulse response to the symbols (exact ISI distribution over every
pulse cursor) plus the Gaussian terms of :mod:`serdes.impairments` before the FFE: RX
noise, TX noise through the pulse, ADC ENOB noise and random jitter through the pulse
slope, all at the sampling phase.
"""

from __future__ import annotations

import math

import numpy as np

from serdes.impairments import adc_enob_variance, rj_variance, rx_thermal_variance, tx_sigma
from serdes.kernels.stat import isi_pmf, tail_points


def clip_probability(engine, offset_ui: float = 0.0) -> float:
    """P(|ADC input| > full scale / 2) at a sampling-phase offset (UI)."""
    link = engine.link
    fs = link.adc.fullscale_v / 2.0
    h, _ = engine._pulse_at(offset_ui)
    var = (rx_thermal_variance(link) + tx_sigma(link) ** 2 * float(h @ h)
           + adc_enob_variance(link) + rj_variance(link, offset_ui))
    sig = math.sqrt(max(var, 1e-30))
    delta = sig / engine.resolution
    spread = float(np.sum(np.abs(h)))
    delta = max(delta, 2 * spread / engine.max_bins)
    vals = np.ascontiguousarray(np.outer(h, engine.levels))
    probs = np.full(vals.shape, 1.0 / engine.m_levels)
    pmf, k0 = isi_pmf(vals, probs, delta)
    x = (k0 + np.arange(pmf.shape[0])) * delta
    excess = float(pmf @ (x - pmf @ x) ** 2) - engine.es * float(h @ h)
    sig = math.sqrt(max(var - excess, 0.25 * var))
    up = tail_points(pmf, k0, delta, np.array([fs]), sig, True)[0]
    lo = tail_points(pmf, k0, delta, np.array([-fs]), sig, False)[0]
    return float(up + lo)
