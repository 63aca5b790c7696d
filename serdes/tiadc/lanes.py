"""Per-lane pulse sums for the pulse engine (:mod:`serdes.engines.pulse`).

Sample k of an N-way interleaved ADC is taken by lane l = k mod N, through its own
track-and-hold and at its own skewed instant:

    x_k = sum_j a_{k-j} p_l(jT + phi + tau_l + e_k),   p_l = p * (h_l / h_0)

with p the link's pulse (which holds the nominal T/H h_0), h_l the lane's T/H,
tau_l its skew and e_k the sampling offsets of the instant: the link's jitter
(:class:`serdes.engines.pulse.Jitter`), the aperture jitter and the supply-induced
clock jitter. Each lane keeps its own polyphase rows of p_l, so every sample is formed
exactly (the 4-point Lagrange sum of :mod:`serdes.kernels.jitter`) at the cost of one
jittered pulse sum; without any random offset the lanes are plain symbol FIRs, one tap
set per lane (``path`` "lanes-fir" or "lanes-exact"). When the only random offsets are
fast (link RJ, aperture jitter) and small, each lane runs the pulse engine's Taylor-2
expansion around its static instant (``path`` "lanes-taylor": three tap sets per lane,
taken under the engine's rule, every lane's error bound within TAYLOR_TOL of the noise).
"""

from __future__ import annotations

import numpy as np

from serdes import rng
from serdes.errors import ConfigError
from serdes.engines.taylor_rule import TAYLOR_TOL, taylor_scales
from serdes.kernels import jitter as kj
from serdes.kernels.adc_ti import lane_fir, lane_pulse_sum_rows, lane_pulse_sum_taylor
from serdes.kernels.fir import interp_cubic
from serdes.kernels.jitter import pulse_rows
from serdes.tiadc.model import APERTURE_STREAM

MAX_ROWS_BYTES = 1 << 30   # the exact path's pulse rows (lanes x positions x UI x 8 B)


def lane_fine_pulses(adc, fine: np.ndarray, m: int, dt: float) -> list[np.ndarray]:
    """p_l = p * (h_l / h_0) on the fine grid (one shared array without bandwidth
    mismatch); the FFT runs on 64 extra UI of zeros so the lane filters' tails do not
    wrap."""
    if not adc.bw_mismatch:
        return [fine] * adc.lanes
    # every run builds its front end again: the lanes' filtering (an FFT and N lane
    # responses, ~40 ms at 64 lanes) is kept per converter, keyed by the pulse
    key = (hash(np.ascontiguousarray(fine).tobytes()), fine.shape[0], int(m), float(dt),
           adc.bws_hz.tobytes(), float(adc.bw_hz))
    memo = adc.__dict__.setdefault("_lane_pulse_memo", {})
    hit = memo.get(key)
    if hit is not None:
        return hit
    if len(memo) > 8:
        memo.clear()
    memo[key] = out = _lane_filter(adc, fine, m, dt)
    return out


def _lane_filter(adc, fine, m, dt):
    n = fine.shape[0]
    nfft = 1 << int(np.ceil(np.log2(n + 64 * m)))
    spec = np.fft.rfft(fine, nfft)
    rel = adc.lane_th(np.fft.rfftfreq(nfft, dt))
    return [np.ascontiguousarray(np.fft.irfft(spec * r, nfft)[:n]) for r in rel]


def lane_front_end(link, jitter, seed: int):
    """The per-lane pulse sums of ``link``'s ADC, or None when its lanes sample alike
    (no skew, no bandwidth mismatch, no aperture or supply jitter): then the engine's
    own paths are exact."""
    adc = link.adc
    if not getattr(adc, "analog", False):
        return None
    return LanePulses(link, jitter, seed)


class LanePulses:
    """``__call__(a_ext, k0, n)``: ADC-input samples k0 .. k0 + n - 1 (before the RX
    noise) from symbols with n_ui - 1 of history."""

    def __init__(self, link, jitter, seed: int):
        adc, p = link.adc, link.pulse
        m, n_ui, ui = p.m, p.n_ui, link.ui_s
        self.lanes, self.m, self.ui_s = adc.lanes, m, ui
        self.jitter = jitter
        self.skew_fine = adc.skews_s / ui * m
        self.aperture_fine = adc.aperture_jitter_s / ui * m
        self.supply = adc.supply if adc.supply is not None and adc.supply.jitter_active else None
        self._aperture = rng.BlockRNG(seed, APERTURE_STREAM)
        supply_max = 0.0
        if self.supply is not None:
            supply_max = float(np.sum(self.supply.sj_s) + 8 * self.supply.rj_s) / ui * m
        # the calibration's delay trims change during the run: per-sample offsets
        self.adc = adc
        self.trimmed = adc.calibration is not None
        random = (jitter.active or self.aperture_fine > 0 or self.supply is not None
                  or self.trimmed)
        # the calibration holds its trims within the delay lines' range
        trim_fine = adc.trim_range_s(ui) / ui * m if self.trimmed else 0.0
        reach = (jitter.max_ui * m + float(np.max(np.abs(self.skew_fine))) + trim_fine
                 + 8 * self.aperture_fine + supply_max)
        pad = (int(np.ceil(reach / m)) + 2) * m
        fine = np.concatenate([np.zeros(pad), p.fine, np.zeros(pad)])
        self.phase = float(p.phase + pad)
        lane_pulses = lane_fine_pulses(adc, fine, m, ui / m)
        if not random:
            self.path = "lanes-fir"
            pos = self.phase + m * np.arange(n_ui, dtype=np.float64)
            self._taps = np.ascontiguousarray(np.stack(
                [interp_cubic(pl, pos + s)[::-1] for pl, s in zip(lane_pulses, self.skew_fine)]))
        elif self._plan_taylor(link, lane_pulses):
            self.path = "lanes-taylor"
        else:
            self.path = "lanes-exact"
            self._first = int(np.floor(self.phase - reach)) - 1
            count = int(np.floor(self.phase + reach)) + 2 - self._first + 1
            need = len(lane_pulses) * count * n_ui * 8
            if need > MAX_ROWS_BYTES:
                parts = {"the link's jitter (noise.*)": jitter.max_ui * m,
                         "the supply-induced clock jitter (supply.*)": supply_max,
                         "the aperture jitter (adc.aperture_jitter_s)": 8 * self.aperture_fine,
                         "the lane skews (adc.skew*)": float(np.max(np.abs(self.skew_fine)))}
                big = max(parts, key=parts.get)
                raise ConfigError(
                    f"the ADC's sampling instants move up to {reach / m:.3g} UI, most of it "
                    f"from {big} ({parts[big] / m:.3g} UI): the pulse rows for that reach "
                    f"would take {need / 2 ** 30:.3g} GiB (at most "
                    f"{MAX_ROWS_BYTES / 2 ** 30:g}); lower it")
            self._rows = np.ascontiguousarray(np.stack(
                [pulse_rows(pl, m, n_ui, self._first, count) for pl in lane_pulses]))

    def _plan_taylor(self, link, lane_pulses) -> bool:
        """Each lane's Taylor-2 sum around its static instant (the skew), under the pulse
        engine's rule: every lane's error bound at most TAYLOR_TOL of the rms noise. Only
        for fast offsets (link RJ, aperture jitter); slow jitter, the supply's clock
        jitter and the calibration's moving trims take the exact rows."""
        if self.jitter.slow or self.supply is not None or self.trimmed:
            return False

        m, n_ui = self.m, link.pulse.n_ui
        a_max, sigma = taylor_scales(link)
        delta = self.jitter.max_ui * m + 8 * self.aperture_fine
        at = self.phase + self.skew_fine
        self.taylor_tol = TAYLOR_TOL * sigma
        # the bounds and taps (~0.1 s at 64 lanes) are kept per converter, as the lanes'
        # pulses: every run builds its front end again
        key = (hash(np.stack(lane_pulses).tobytes()), at.tobytes(), int(m), int(n_ui),
               float(delta), a_max)
        memo = self.adc.__dict__.setdefault("_lane_taylor_memo", {})
        hit = memo.get(key)
        if hit is None:
            bound = max(kj.taylor_error_bound(pl, m, c, n_ui, delta, 0.0, a_max)
                        for pl, c in zip(lane_pulses, at))
            taps = np.ascontiguousarray(np.concatenate(
                [kj.taylor_taps(kj.derivatives(pl), c, m, n_ui, np.zeros(1))
                 for pl, c in zip(lane_pulses, at)]))
            if len(memo) > 8:
                memo.clear()
            memo[key] = hit = (bound, taps)
        self.taylor_bound = hit[0]
        if self.taylor_bound > self.taylor_tol:
            return False
        self._taps = hit[1]
        return True

    def deltas(self, k0: int, n: int) -> np.ndarray:
        """Offsets (fine samples) of samples k0 .. k0 + n - 1 from their lane's static
        instant: the link's random jitter and the aperture jitter (clipped at 8 sigma)."""
        off = self.jitter.offsets_ui(k0, n) * self.m if self.jitter.active else np.zeros(n)
        neg = min(max(-k0, 0), n)
        if self.aperture_fine > 0 and n > neg:
            s = self.aperture_fine
            off[neg:] += np.clip(s * self._aperture.normal(k0 + neg, n - neg), -8 * s, 8 * s)
        return off

    def offsets(self, k0: int, n: int) -> np.ndarray:
        """Sampling offsets (fine samples) of samples k0 .. k0 + n - 1: the link's
        jitter, the lane skew, the aperture jitter (clipped at 8 sigma) and the supply's
        clock jitter; no random offset before the first symbol."""
        lane_off = self.skew_fine
        if self.trimmed:
            lane_off = lane_off - self.adc.skew_trim_s / self.ui_s * self.m
        # the lanes' offsets repeat every N samples: a tiled slice, not an index per sample
        l0 = k0 % self.lanes
        reps = (l0 + n) // self.lanes + 1
        off = np.tile(lane_off, reps)[l0:l0 + n]
        if self.jitter.active:
            off += self.jitter.offsets_ui(k0, n) * self.m
        neg = min(max(-k0, 0), n)
        if self.aperture_fine > 0 and n > neg:
            s = self.aperture_fine
            off[neg:] += np.clip(s * self._aperture.normal(k0 + neg, n - neg), -8 * s, 8 * s)
        if self.supply is not None:
            off += self.supply.delay_s(k0, n) / self.ui_s * self.m
        return off

    def __call__(self, a_ext: np.ndarray, k0: int, n: int) -> np.ndarray:
        lane0 = k0 % self.lanes
        if self.path == "lanes-fir":
            return lane_fir(a_ext, self._taps, lane0)
        if self.path == "lanes-taylor":
            return lane_pulse_sum_taylor(a_ext, self._taps, self.deltas(k0, n), lane0)
        return lane_pulse_sum_rows(a_ext, self._rows, self._first, self.phase,
                                   self.offsets(k0, n), lane0)
