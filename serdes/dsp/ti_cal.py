"""Background calibration of a time-interleaved ADC: a receiver block after the ADC.

Blind (no training data), running on the data all along, per lane l:

* offset (digital): LMS on the lane's mean, o_l += mu_o (x - o_l) (the PAM signal has
  zero mean);
* gain (digital): the lane's power after offset removal is driven to the all-lane
  average P: c_l += mu_g c_l (P - u^2) / P, u = c_l (x - o_l), so c_l -> sqrt(P / P_l);
* skew (detected digitally, corrected in the clock, as in published 112G ADCs whose
  lanes have delay-line trims): the timing-error detector e = y_{k-1} (y_k - y_{k-2}),
  averaged per lane l of sample k - 1 over a chunk, has the mean
  R'(T) (eps_{l+1} - 2 eps_l + eps_{l-1}) for lane errors eps (R the signal's
  autocorrelation; R'(T) = E[y_{k-1} y'_k] estimated with a windowed differentiator of
  ``deriv_taps`` taps each side). The circulant system is solved over the lanes by a
  DFT (the common mode, a sampling-phase shift, is left alone) and a fraction ``g`` of
  the solution is added to the lanes' delay trims (:attr:`TiAdc.skew_trim_s`), which
  the front end applies from the next chunk on (the loop's latency is one chunk).

The skew detector is blind and assumes white data (the closed-form residual of
:mod:`serdes.tiadc.cal_residual` and the statistical BER do too). A PRBS is white over
its period, not everywhere: PRBS31's ~25 chunks around its register's return to all
ones carry a lane-periodic correlation that the detector reads as skew with a steady phase,
and the trims follow it to ~15x their closed-form residual (tests/test_ti_cal_pattern.py).

The LMS steps, the trim gain and the settling time (decisions not counted while the
estimates converge) are :class:`CalSettings`; halfway through the settling time the
steps and the trim gain shift down by ``fine_ratio`` (gear shifting: fast acquisition,
then less noise). ``history`` holds the estimates after every chunk; :func:`residuals`
turns them into the residual mismatch against the converter's true lanes (for plots
and tests only: the calibration never sees them).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from serdes.kernels.ti_cal import ti_cal_run


# decisions left out of the count while the lanes converge, per lane: each lane's LMS
# sees 1/N of the samples, so N lanes take N times as long (measured: 600 k symbols
# bring 8 lanes within 0.14 dB of the mismatch-free slicer SNR, but leave 64 lanes
# 6.8 dB short; 4 M symbols bring 64 lanes within 1.1 dB)
SETTLE_PER_LANE = 75_000
# time constants of the power average before the gain LMS starts
WARM_AVERAGES = 4


@dataclass(frozen=True)
class CalSettings:
    mu_offset: float = 5e-4
    mu_gain: float = 5e-4
    skew_gain: float = 1.0         # fraction of the detected skew trimmed per chunk
    mu_average: float = 1e-3
    deriv_taps: int = 8
    settle_symbols: int = 600_000
    fine_ratio: float = 1.0 / 8     # steps after the gear shift at settle_symbols / 2
    chunk_symbols: int = 1 << 16    # the run's chunk: one skew trim each (link.chunk_symbols)


def differentiator(k: int) -> np.ndarray:
    """Taps h_1..h_K of the ideal differentiator (-1)^(n+1) / n (per sample), under a
    Hann window of 2K + 1 points: u'(c) = sum_n h_n (u_{c+n} - u_{c-n})."""
    n = np.arange(1, k + 1)
    win = 0.5 * (1 + np.cos(np.pi * n / (k + 1)))
    return np.ascontiguousarray((-1.0) ** (n + 1) / n * win)


class TiCalibration:
    """The calibration block (see the module) for ``adc`` (a
    :class:`serdes.tiadc.model.TiAdc`); it resets and then drives ``adc.skew_trim_s``."""

    latency = 0

    def __init__(self, adc, settings: CalSettings, ui_s: float):
        self.settings = settings
        self.adc = adc
        self.lanes = int(adc.lanes)
        self.ui_s = float(ui_s)
        self.warmup_symbols = int(settings.settle_symbols)
        self._h = differentiator(settings.deriv_taps)
        self._mu = np.array([settings.mu_offset, settings.mu_gain, settings.mu_average])
        self._mu_fine = self._mu * np.array([settings.fine_ratio] * 2 + [1.0])
        # the converter's arrays, updated in place: a clock-recovery loop reads them
        self.offsets = adc.cal_offsets_v
        self.gains = adc.cal_gains
        self.offsets[:] = 0.0
        self.gains[:] = 1.0
        adc.skew_trim_s[:] = 0.0
        self._esum = np.zeros(self.lanes)
        self._ecount = np.zeros(self.lanes)
        self._ring = np.zeros(2 * settings.deriv_taps + 1)
        self._scal = np.zeros(2)
        q = np.arange(self.lanes)
        # the DFT over the lanes of eps_l+1 - 2 eps_l + eps_l-1 is eps_q times this
        self._lap = 2 * np.cos(2 * np.pi * q / self.lanes) - 2
        self.history: dict[str, list] = {"samples": [], "offsets": [], "gains": [], "skews_s": []}

    def __call__(self, x, k0: int) -> np.ndarray:
        x = np.ascontiguousarray(x, dtype=np.float64)
        out = x.copy()            # samples before the first symbol pass through
        neg = min(max(-k0, 0), x.shape[0])
        gear = self.settings.settle_symbols // 2
        pos = neg
        while pos < x.shape[0]:
            j = k0 + pos
            mu, end = self._steps(j)
            stop = min(x.shape[0], end - k0)
            out[pos:stop] = ti_cal_run(x[pos:stop], j, self.offsets, self.gains, self._esum,
                                       self._ecount, self._ring, self._scal, self._h, mu)
            pos = stop
        if x.shape[0] > neg:
            g = self.settings.skew_gain * (1.0 if k0 + x.shape[0] <= gear
                                           else self.settings.fine_ratio)
            self._trim(g)
            self._record(k0 + x.shape[0])
        return out

    def _steps(self, j: int):
        """The LMS steps at sample j and the sample where they change next: the gain LMS
        waits for the power average to warm up (WARM_AVERAGES of its time constant; from
        zero it would read u^2 / P ~ 1 / mu_average and halve every gain at once), and
        all steps shift down at the gear."""
        gear = self.settings.settle_symbols // 2
        warm = int(np.ceil(WARM_AVERAGES / self.settings.mu_average))
        if j < min(warm, gear):
            return self._mu * np.array([1.0, 0.0, 1.0]), min(warm, gear)
        if j < gear:
            return self._mu, gear
        return self._mu_fine, np.iinfo(np.int64).max

    def _trim(self, g: float) -> None:
        """Solve the lanes' skew errors from the detector's chunk means and trim them."""
        r1 = self._scal[1]
        if self.lanes < 2 or not np.all(self._ecount > 0) or abs(r1) <= 1e-3 * self._scal[0]:
            return
        e = self._esum / self._ecount
        eq = np.fft.fft(e)
        eps_q = np.zeros_like(eq)
        eps_q[1:] = eq[1:] / (r1 * self._lap[1:])
        eps_ui = np.fft.ifft(eps_q).real
        self.adc.skew_trim_s[:] = self._within_range(self.adc.skew_trim_s
                                                     + g * eps_ui * self.ui_s)
        self._esum[:] = 0.0
        self._ecount[:] = 0.0

    def _within_range(self, trims: np.ndarray) -> np.ndarray:
        """``trims`` (zero mean), brought within the delay lines' range (which the front
        end's pulse rows cover) where a lane is past it: during acquisition (trim gain 1,
        64 lanes) the detector's noise in the low lane modes reaches it. The nearest
        zero-mean point of the range, clip(t - c, -span, span) with c found by bisection:
        clipping alone would leave a common sampling-phase shift that the loop, which
        leaves the common mode alone, never removes."""
        span = self.adc.trim_range_s(self.ui_s)
        if np.all(np.abs(trims) <= span):
            return trims
        lo, hi = float(np.min(trims)) - span, float(np.max(trims)) + span
        for _ in range(200):
            c = 0.5 * (lo + hi)
            if c in (lo, hi):
                break
            if np.mean(np.clip(trims - c, -span, span)) > 0:
                lo = c
            else:
                hi = c
        return np.clip(trims - 0.5 * (lo + hi), -span, span)

    def _record(self, samples: int) -> None:
        h = self.history
        h["samples"].append(samples)
        h["offsets"].append(self.offsets.copy())
        h["gains"].append(self.gains.copy())
        h["skews_s"].append(self.adc.skew_trim_s.copy())


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
