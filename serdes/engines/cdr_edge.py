"""How much the bang-bang detector's edge sample's RX noise is tied to the data samples'.

With ``cdr.mode = "bb"`` the front end (:mod:`serdes.engines.cdr`) draws the edge
sample's RX noise from its own stream, through the same colouring FIR as the data
samples' noise: right in variance and in its own correlation from UI to UI, but
independent of the data samples' noise. A real 2x sampler takes both from one noise
waveform, half a UI apart. The receiver's noise model (:func:`serdes.pulse_response.noise_model`:
the PSD eta0 |H_rx(f)|^2 at the ADC input) gives that waveform's autocorrelation at
any lag; :func:`edge_noise_correlation` reads it at half a UI and says how much of the
edge noise's variance the two neighbouring data samples' noise would explain (the
linear prediction from both, which are a UI apart). On the default link the
correlation at half a UI is -0.08 (the CTLE's high-frequency boost makes the noise
nearly white at that spacing; -0.28 at one UI) and the neighbours explain 1.7 % of the
edge noise's variance: the independent draw leaves out a 0.8 % change in its rms
given the data, which is why the front end keeps it (tests/test_cdr_track.py).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np


@dataclass(frozen=True)
class EdgeNoiseCorrelation:
    half_ui: float     # corr(noise(t), noise(t + T/2))
    one_ui: float      # corr(noise(t), noise(t + T))
    explained: float   # share of the edge noise's variance the two neighbours predict


def edge_noise_correlation(link) -> EdgeNoiseCorrelation:
    """The RX noise's correlation at half and one UI at the ADC input, from the
    link's noise PSD, and the share of an edge sample's noise variance that the data
    samples half a UI either side of it explain."""
    psd = link.impairments.eta0_v2_per_hz * np.abs(link.h_rx) ** 2
    r = np.fft.irfft(psd, n=2 * (psd.shape[0] - 1))
    m = link.m
    if r[0] <= 0:
        return EdgeNoiseCorrelation(0.0, 0.0, 0.0)
    rho_h = float(r[m // 2] / r[0]) if m % 2 == 0 else float(
        0.5 * (r[m // 2] + r[m // 2 + 1]) / r[0])
    rho_1 = float(r[m] / r[0])
    # prediction of e from (w_{k-1}, w_k): b = R^-1 c, explained = c^T R^-1 c
    explained = 2 * rho_h ** 2 / (1 + rho_1)
    return EdgeNoiseCorrelation(rho_h, rho_1, float(explained))
