"""The digital receiver shared by the pulse and waveform engines.

ADC samples -> quantizer (with ENOB noise) -> FFE -> DFE/slicer, or FFE + DFE adapted
by LMS. State (filter histories, DFE decisions, adaptive taps) lives in the object,
so processing a stream in chunks gives the same decisions as one piece.
"""

from __future__ import annotations

import numpy as np

from serdes import rng
from serdes.dsp.mmse import EqualizerTaps
from serdes.kernels.fir import fir_valid
from serdes.kernels.slicer import dfe_run, ffe_dfe_lms


def thresholds_for(levels: np.ndarray) -> np.ndarray:
    return np.ascontiguousarray((levels[1:] + levels[:-1]) / 2.0)


class DigitalReceiver:
    """ADC + FFE + DFE with explicit state; ``process(x, k0)`` takes ADC-input samples
    whose first sample has absolute index k0 and returns (decisions, slicer inputs)."""

    def __init__(self, link, taps: EqualizerTaps, *, mode: str = "mmse", seed: int = 0,
                 mu: float = 1e-2, dfe_limit: float = 1.0):
        self.adc = link.adc
        self.levels = np.ascontiguousarray(link.levels, dtype=np.float64)
        self.thresholds = thresholds_for(self.levels)
        self.ffe = np.array(taps.ffe, dtype=np.float64)
        self.dfe = np.array(taps.dfe, dtype=np.float64)
        self.delay = taps.delay
        self.mode = mode
        # normalised LMS: the step is relative to the power in each tap line
        x_power = link.level_power * float(link.pulse.taps @ link.pulse.taps) \
            + link.noise.variance
        self.mu_w = mu / (self.ffe.shape[0] * x_power)
        self.mu_b = mu / (max(self.dfe.shape[0], 1) * link.level_power)
        self.dfe_limit = dfe_limit
        self._x_hist = np.zeros(self.ffe.shape[0] - 1)
        self._dfe_hist = np.zeros(self.dfe.shape[0])
        self._adc_rng = rng.BlockRNG(seed, rng.ADC_NOISE)

    def process(self, x_v: np.ndarray, k0: int, ref_levels: np.ndarray | None = None,
                n_train: int = 0) -> tuple[np.ndarray, np.ndarray]:
        n = x_v.shape[0]
        extra = self._adc_rng.normal(k0, n) if self.adc.enob_noise_sigma_v > 0 else None
        q = self.adc(x_v, extra)
        x_ext = np.concatenate([self._x_hist, q])
        if self.ffe.shape[0] > 1:
            self._x_hist = x_ext[-(self.ffe.shape[0] - 1):].copy()
        if self.mode == "lms":
            ref = (np.zeros(n) if ref_levels is None
                   else np.ascontiguousarray(ref_levels, dtype=np.float64))
            return ffe_dfe_lms(x_ext, self.ffe, self.dfe, self.levels, self.thresholds,
                               self._dfe_hist, ref, n_train, self.mu_w, self.mu_b,
                               self.dfe_limit)
        z = fir_valid(x_ext, self.ffe)
        return dfe_run(z, self.dfe, self.levels, self.thresholds, self._dfe_hist)
