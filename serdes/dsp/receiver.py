"""The digital receiver shared by the pulse and waveform engines.

ADC samples -> quantizer (with ENOB noise) -> FFE -> DFE/slicer, or FFE + DFE adapted
by LMS; with a reflection canceller (serdes.dsp.rc) FFE -> RC + DFE/slicer; with
``eq.detector = "mlse"`` FFE -> RC -> whitening -> Viterbi (serdes.dsp.mlse). State
(filter histories, DFE decisions, adaptive taps, trellis) lives in the object, so
processing a stream in chunks gives the same decisions as one piece.
"""

from __future__ import annotations

import numpy as np

from serdes import rng
from serdes.dsp.mlse import MlseDetector
from serdes.dsp.mmse import EqualizerTaps
from serdes.dsp.rc import RcSettings, ReflectionCanceller
from serdes.kernels.fir import fir_valid
from serdes.kernels.slicer import dfe_run, ffe_dfe_lms


def thresholds_for(levels: np.ndarray) -> np.ndarray:
    return np.ascontiguousarray((levels[1:] + levels[:-1]) / 2.0)


class DigitalReceiver:
    """ADC + FFE + DFE with explicit state; ``process(x, k0)`` takes ADC-input samples
    whose first sample has absolute index k0 and returns (decisions, slicer inputs).

    Decision k is about the symbol ``latency`` UIs before ADC sample k. The RC and the
    MLSE come from ``taps`` (a :class:`serdes.dsp.design.ReceiverTaps`) and ``rc``
    (the canceller's settings; default: off); ``train_symbols`` delays the adaptive RC search
    until the LMS training is over.
    """

    def __init__(self, link, taps: EqualizerTaps, *, mode: str = "mmse", seed: int = 0,
                 mu: float = 1e-2, dfe_limit: float = 1.0, rc: RcSettings | None = None,
                 train_symbols: int = 0):
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
        self.detector = getattr(taps, "detector", "dfe")
        self.latency = getattr(taps, "latency", taps.delay)
        rc = RcSettings() if rc is None else rc
        rc_lags = getattr(taps, "rc_lags", np.zeros(0, dtype=np.int64))
        rc_taps = getattr(taps, "rc_taps", np.zeros(0))
        self.rc = self.mlse = None
        if self.detector == "mlse":
            self.mlse = MlseDetector(self.levels, target=taps.target, whitening=taps.whitening,
                                     traceback=taps.traceback, rc_lags=rc_lags, rc_taps=rc_taps)
        elif rc.taps and (rc.mode == "adaptive" or rc_lags.size):
            self.rc = ReflectionCanceller(
                rc, lags=rc_lags, taps=rc_taps, first_lag=self.dfe.shape[0] + 1,
                level_power=link.level_power, search_start=train_symbols if mode == "lms" else 0)

    @property
    def warmup_symbols(self) -> int:
        """Decisions to leave uncounted beyond the usual warm-up (RC placement search)."""
        return self.rc.warmup_symbols if self.rc is not None else 0

    @property
    def rc_lags(self) -> np.ndarray:
        if self.rc is not None:
            return self.rc.lags
        return self.mlse.rc_lags if self.mlse is not None else np.zeros(0, dtype=np.int64)

    @property
    def rc_taps(self) -> np.ndarray:
        if self.rc is not None:
            return self.rc.taps
        return self.mlse.rc_taps if self.mlse is not None else np.zeros(0)

    def process(self, x_v: np.ndarray, k0: int, ref_levels: np.ndarray | None = None,
                n_train: int = 0) -> tuple[np.ndarray, np.ndarray]:
        n = x_v.shape[0]
        extra = self._adc_rng.normal(k0, n) if self.adc.enob_noise_sigma_v > 0 else None
        q = self.adc(x_v, extra)
        x_ext = np.concatenate([self._x_hist, q])
        if self.ffe.shape[0] > 1:
            self._x_hist = x_ext[-(self.ffe.shape[0] - 1):].copy()
        if self.rc is not None:
            return self.rc.run(x_ext, self.ffe, self.dfe, self._dfe_hist, self.levels,
                               self.thresholds, ref_levels, n_train, self.mu_w, self.mu_b,
                               self.dfe_limit, self.mode == "lms")
        if self.mode == "lms":
            ref = (np.zeros(n) if ref_levels is None
                   else np.ascontiguousarray(ref_levels, dtype=np.float64))
            return ffe_dfe_lms(x_ext, self.ffe, self.dfe, self.levels, self.thresholds,
                               self._dfe_hist, ref, n_train, self.mu_w, self.mu_b,
                               self.dfe_limit)
        z = fir_valid(x_ext, self.ffe)
        if self.mlse is not None:
            return self.mlse.process(z)
        return dfe_run(z, self.dfe, self.levels, self.thresholds, self._dfe_hist)
