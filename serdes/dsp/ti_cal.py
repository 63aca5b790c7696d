"""Background calibration of a time-interleaved ADC: a receiver block after the ADC.

Blind (no training data), running on the data all along, per lane l:

* offset: LMS on the lane's mean, o_l += mu_o (x - o_l) (the PAM signal has zero mean);
* gain: the lane's power after offset removal is driven to the all-lane average P:
  c_l += mu_g c_l (P - u^2) / P, u = c_l (x - o_l), so c_l -> sqrt(P / P_l) ~ g_mean / g_l;
* skew: a timing-error detector from the lag-1 correlations on each side of the lane,
  e_l = y_k (y_{k+1} - y_{k-1}) with E[e_l] ~ -2 R'(T) eps_l for a lane eps_l late (R the
  signal's autocorrelation, R'(T) estimated as E[y_{k-1} y'_k]); the correction is
  first order, y_k = u_k - tau_l u'_k, with u' from a windowed ideal differentiator of
  K taps each side (which delays the output by K samples: ``latency``). The detector
  sees only skew differences, so the estimates' common part is held at zero (removed
  after every stretch of ``record_every`` samples): a common delay is the sampling
  phase's business, not the calibration's.

The steps, the differentiator length and the settling time (decisions not counted
while the estimates converge) are :class:`CalSettings`; halfway through the settling
time the three steps shift down by ``fine_ratio`` (gear shifting: fast acquisition,
then less LMS noise). ``history`` holds the
estimates every ``record_every`` samples; :func:`residuals` turns them into the
residual mismatch against the converter's true lanes (for plots and tests only: the
calibration never sees them).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from serdes.kernels.ti_cal import ti_cal_run


@dataclass(frozen=True)
class CalSettings:
    mu_offset: float = 5e-4
    mu_gain: float = 5e-4
    mu_skew: float = 1e-3
    mu_average: float = 1e-3
    deriv_taps: int = 8
    settle_symbols: int = 600_000
    record_every: int = 4096
    fine_ratio: float = 1.0 / 8     # steps after the gear shift at settle_symbols / 2




def differentiator(k: int) -> np.ndarray:
    """Taps h_1..h_K of the ideal differentiator (-1)^(n+1) / n (per sample), under a
    Hann window of 2K + 1 points: u'(c) = sum_n h_n (u_{c+n} - u_{c-n})."""
    n = np.arange(1, k + 1)
    win = 0.5 * (1 + np.cos(np.pi * n / (k + 1)))
    return np.ascontiguousarray((-1.0) ** (n + 1) / n * win)


class TiCalibration:
    """The calibration block (see the module); ``lanes`` of the ADC it follows."""

    def __init__(self, lanes: int, settings: CalSettings, ui_s: float):
        self.settings = settings
        self.lanes = int(lanes)
        self.ui_s = float(ui_s)
        self.latency = int(settings.deriv_taps)
        self.warmup_symbols = int(settings.settle_symbols)
        self._h = differentiator(settings.deriv_taps)
        self._mu = np.array([settings.mu_offset, settings.mu_gain, settings.mu_skew,
                             settings.mu_average])
        self._mu_fine = self._mu * np.array([settings.fine_ratio] * 3 + [1.0])
        self.offsets = np.zeros(self.lanes)
        self.gains = np.ones(self.lanes)
        self.skews_ui = np.zeros(self.lanes)
        self._ring = np.zeros(2 * settings.deriv_taps + 4)
        self._scal = np.zeros(2)
        self._next = 0
        self.history: dict[str, list] = {"samples": [], "offsets": [], "gains": [], "skews_s": []}

    def __call__(self, x, k0: int) -> np.ndarray:
        x = np.ascontiguousarray(x, dtype=np.float64)
        out = np.empty(x.shape[0])
        # samples before the first symbol (warm-up history) pass through unchanged
        neg = min(max(-k0, 0), x.shape[0])
        out[:neg] = x[:neg]
        every = self.settings.record_every
        pos = neg
        gear = self.settings.settle_symbols // 2
        while pos < x.shape[0]:
            j = k0 + pos
            stop = min(x.shape[0], pos + every - (j % every))
            if j < gear:
                stop = min(stop, gear - k0)
            mu = self._mu if j < gear else self._mu_fine
            out[pos:stop] = ti_cal_run(x[pos:stop], j, self.offsets, self.gains,
                                       self.skews_ui, self._ring, self._scal, self._h, mu)
            pos = stop
            # the detector sees only skew differences: keep the common part at zero
            self.skews_ui -= self.skews_ui.mean()
            if (k0 + pos) % every == 0:
                self._record(k0 + pos)
        return out

    def _record(self, samples: int) -> None:
        h = self.history
        h["samples"].append(samples)
        h["offsets"].append(self.offsets.copy())
        h["gains"].append(self.gains.copy())
        h["skews_s"].append(self.skews_ui * self.ui_s)


def residuals(adc, history: dict) -> dict:
    """Residual mismatch after correction, rms over the lanes, at each recorded point:
    offset (V), gain (relative) and skew (s, the common part removed), against the true
    lanes of ``adc`` (a :class:`serdes.tiadc.model.TiAdc`)."""
    off = np.array(history["offsets"])
    c = np.array(history["gains"])
    sk = np.array(history["skews_s"])
    g = c * adc.gains[None, :]
    g_rel = g / g.mean(axis=1, keepdims=True) - 1
    e_sk = adc.skews_s[None, :] - sk
    e_sk -= e_sk.mean(axis=1, keepdims=True)
    return {"samples": np.array(history["samples"]),
            "offset_rms_v": np.sqrt(np.mean((adc.offsets_v[None, :] - off) ** 2, axis=1)),
            "gain_rms": np.sqrt(np.mean(g_rel ** 2, axis=1)),
            "skew_rms_s": np.sqrt(np.mean(e_sk ** 2, axis=1))}
