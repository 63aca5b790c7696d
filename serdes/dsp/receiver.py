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
from serdes.errors import ConfigError
from serdes.dsp.mlse import MlseDetector
from serdes.dsp.mmse import EqualizerTaps
from serdes.dsp.rc import RcSettings, ReflectionCanceller
from serdes.kernels.fir import fir_valid
from serdes.kernels.slicer import dfe_run, ffe_dfe_lms


# LMS health checks (see DigitalReceiver._check_adaptation)
LMS_MARGIN_DB = 10.0        # training SNR this far below the MMSE prediction: failed
LMS_DD_DROP_DB = 3.0        # decision-directed error this far above the training's
LMS_BLOCK = 1 << 13         # symbols per decision-directed check


class LmsDivergedError(ConfigError):
    """The LMS adaptation did not converge with the configured step size."""


def thresholds_for(levels: np.ndarray) -> np.ndarray:
    return np.ascontiguousarray((levels[1:] + levels[:-1]) / 2.0)


class DigitalReceiver:
    """ADC + FFE + DFE with explicit state; ``process(x, k0)`` takes ADC-input samples
    whose first sample has absolute index k0 and returns (decisions, slicer inputs).

    Decision k is about the symbol ``latency`` UIs before ADC sample k. The RC and the
    MLSE come from ``taps`` (a :class:`serdes.dsp.design.ReceiverTaps`) and ``rc``
    (default: the link's [rc] section); ``train_symbols`` delays the adaptive RC search
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
        self.mu = float(mu)
        self.train_symbols = int(train_symbols)
        self.level_power = float(link.level_power)
        self.predicted_snr_db = float(getattr(taps, "predicted_snr_db", np.nan))
        # second half of the training: squared error, count, slicer power
        self._train_err = [0.0, 0, 0.0]
        self._train_snr = self._train_power = None
        self._dd = [-1, 0.0, 0.0, 0]  # decision-directed block: index, sums, count
        self._x_hist = np.zeros(self.ffe.shape[0] - 1)
        self._dfe_hist = np.zeros(self.dfe.shape[0])
        self._adc_rng = rng.BlockRNG(seed, rng.ADC_NOISE)
        self.detector = getattr(taps, "detector", "dfe")
        self.latency = getattr(taps, "latency", taps.delay)
        rc = RcSettings.from_config(link.config) if rc is None else rc
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
            out = self.rc.run(x_ext, self.ffe, self.dfe, self._dfe_hist, self.levels,
                              self.thresholds, ref_levels, n_train, self.mu_w, self.mu_b,
                              self.dfe_limit, self.mode == "lms")
            if self.mode == "lms":
                self._check_adaptation(out[0], out[1], ref_levels, n_train, k0)
            return out
        if self.mode == "lms":
            ref = (np.zeros(n) if ref_levels is None
                   else np.ascontiguousarray(ref_levels, dtype=np.float64))
            out = ffe_dfe_lms(x_ext, self.ffe, self.dfe, self.levels, self.thresholds,
                              self._dfe_hist, ref, n_train, self.mu_w, self.mu_b,
                              self.dfe_limit)
            self._check_adaptation(out[0], out[1], ref, n_train, k0)
            return out
        z = fir_valid(x_ext, self.ffe)
        if self.mlse is not None:
            return self.mlse.process(z)
        return dfe_run(z, self.dfe, self.levels, self.thresholds, self._dfe_hist)

    def _check_adaptation(self, dec: np.ndarray, v: np.ndarray, ref, n_train: int,
                          k0: int) -> None:
        """Refuse an LMS adaptation that diverged instead of counting the errors of a
        broken receiver. Checked on absolute 8192-symbol blocks (so the verdict does
        not depend on the chunk size): non-finite taps; a training that ends more than
        LMS_MARGIN_DB below the MMSE prediction; after the training, a decision-directed
        error more than LMS_DD_DROP_DB above the training's, or a slicer input power
        that left [1/2, 2] x the trained one (the loop lost the level scale)."""
        with np.errstate(over="ignore", invalid="ignore"):
            why = self._adaptation_trouble(dec, v, ref, n_train, k0)
        if why:
            raise LmsDivergedError(
                f"eq.mu = {self.mu:g}: the LMS adaptation diverged ({why}); the FFE + DFE "
                f"loop is stable only for smaller steps on this link: use a smaller eq.mu "
                f"(0 < eq.mu < {self.mu:g}; 0.01 is the default and 0.1 has converged up "
                f"to 30 dB loss)")

    def _adaptation_trouble(self, dec, v, ref, n_train: int, k0: int):
        why = None
        if not (np.all(np.isfinite(self.ffe)) and np.all(np.isfinite(self.dfe))
                and np.all(np.isfinite(v))):
            why = "the taps became non-finite"
        elif n_train > 0 and ref is not None:
            first = max(self.train_symbols // 2 - k0, 0)
            if first < n_train:
                e = v[first:n_train] - np.asarray(ref)[first:n_train]
                self._train_err[0] += float(np.sum(e * e))
                self._train_err[1] += int(e.shape[0])
                self._train_err[2] += float(np.sum(v[first:n_train] ** 2))
            if k0 + n_train >= self.train_symbols and self._train_err[1]:
                n_t = self._train_err[1]
                self._train_snr = 10 * np.log10(self.level_power * n_t
                                                / max(self._train_err[0], 1e-300))
                self._train_power = self._train_err[2] / n_t
                if self._train_snr < self.predicted_snr_db - LMS_MARGIN_DB:
                    why = (f"the training ended at {self._train_snr:.1f} dB SNR where the "
                           f"MMSE taps reach {self.predicted_snr_db:.1f} dB")
        if why is None and v.shape[0] > n_train:
            why = self._check_decision_directed(dec[n_train:], v[n_train:], k0 + n_train)
        return why

    def _check_decision_directed(self, dec, v, k_first: int):
        e = v - self.levels[dec]
        blk = (np.arange(v.shape[0]) + k_first) // LMS_BLOCK
        b0 = int(blk[0])
        sums = [np.bincount(blk - b0, weights=w) for w in (e * e, v * v)]
        counts = np.bincount(blk - b0)
        why = None
        for j in range(counts.shape[0]):
            if self._dd[0] != b0 + j:
                self._dd = [b0 + j, 0.0, 0.0, 0]
            self._dd[1] += sums[0][j]
            self._dd[2] += sums[1][j]
            self._dd[3] += int(counts[j])
            if self._dd[3] < LMS_BLOCK:
                continue  # block not complete yet
            snr = 10 * np.log10(self.level_power * self._dd[3] / max(self._dd[1], 1e-300))
            ratio = self._dd[2] / self._dd[3] / (self._train_power or self.level_power)
            if self._train_snr is not None and snr < self._train_snr - LMS_DD_DROP_DB:
                why = (f"after the training the decision error rose to {snr:.1f} dB SNR "
                       f"from {self._train_snr:.1f} dB")
            elif not 0.5 < ratio < 2.0:
                why = (f"after the training the slicer input power moved by "
                       f"{10 * np.log10(ratio):+.1f} dB")
            if why:
                return why
        return None
