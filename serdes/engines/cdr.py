"""Pulse-engine front end with TX jitter and clock recovery.

Used instead of :class:`serdes.engines.pulse.PulseFrontEnd` when the CDR is on or the
transmitter has jitter (with both off the pulse engine runs as before, bit-identical).
The sampler, phase detector and loop run in one numba kernel
(:func:`serdes.kernels.cdr.cdr_sampler`); the sampling phase is a state fed back per
symbol with the loop latency.

Phase-detector decisions come from the ADC-input sample itself, not from the FFE
output: the detector then sees the samples as soon as they exist (the FFE would add its
pre-cursor delay to the loop latency and tie the lock point to taps designed for one
phase), and an MM detector fed that way locks where the raw pulse's pre- and
post-cursor balance, a property of the analog link. The decision is the sample's sign
(the PAM4 MSB), not a 4-level slicer: on the default 25 dB link a 4-level slicer on the
raw sample is wrong so often away from the peak that the detector's mean output has
false zeros at -0.35 and +0.25 UI (the loop hung there from some starting phases),
while the sign's S-curve keeps its sign from -0.45 to -0.05 and +0.05 to +0.45 UI.
Wrong decisions lower the detector gain, which is why the gain Kpd is measured on the
link (an S-curve with common random numbers, :meth:`CdrFrontEnd.calibrate`) before the
loop gains are derived from it.
``cdr.lock = "peak"`` subtracts the detector's mean output at the pulse peak (its median
for the sign detector), so the loop locks where the equalizer was designed; ``"mm"``
locks at the detector's zero. Both points are reported.

``cdr.mode = "bb"``: 2x sampling and a bang-bang (Alexander) detector on the edge sample
half a UI before each data sample (same pulse tables, TX jitter and aggressors; the
kernel's mode 3). The edge sample's RX noise is the link's noise spectrum from its own
stream (:data:`EDGE_NOISE`): the data and edge noise are taken as independent, which
leaves out their correlation at half a UI (the noise is band-limited, so it is not
zero; its effect on the detector is not measured). Its decisions are the
same signs as the MM detector's; only symbols whose sign changes give an output (+-1).

Crosstalk aggressors are sampled at the recovered phase to first order, as the
fixed-phase engine moves them by the victim's RX jitter: their sum and its slope per UI
at the nominal instants (:meth:`serdes.engines.crosstalk.CrosstalkFrontEnd.streams`)
go into the kernel, which adds ``sum + offset x slope`` at each sample's whole-UI shift
and fraction. The aggressors run on the victim transmitter's symbol grid (their ``ppm``
is against it), so a TX ppm offset moves them with the victim; their own RJ/DCD/BUJ/SJ
are in the streams (:mod:`serdes.crosstalk`). The detector gain is calibrated on the
victim alone.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from serdes import cdr as loop
from serdes import rng
from serdes.engines.cdr_summary import PhaseStats, summarize
from serdes.engines.crosstalk import CrosstalkFrontEnd
from serdes.engines.pulse import Jitter
from serdes.errors import ConfigError
from serdes.kernels import cdr as kc
from serdes.kernels.fir import fir_valid, interp_cubic
from serdes.txjitter import TxJitter, TxJitterSource

LOOKAHEAD = 8          # largest cycle slip the sampler follows (UI); also its latency
TABLE_Q = 256          # pulse rows per UI
CAL_SYMBOLS = 1 << 17  # S-curve calibration length
CAL_DELTA = 0.03       # S-curve half step (UI)
ZERO_SPAN_UI = 0.45     # the MM zero is searched this far from the pulse peak
ZERO_SCAN_UI = 0.05     # ... in steps of this where the secant from the peak fails
EDGE_NOISE = 141       # block-stream id of the edge samples' RX noise (cdr.mode = "bb")


@dataclass
class Calibration:
    kpd: float               # PD gain (output per UI of phase error) at the lock point
    bias: float              # subtracted from the MM output
    lock_ui: float           # the lock point the loop aims for, from the peak (UI)
    mm_zero_ui: float        # where the MM detector's mean output is zero (UI)
    pd_noise_var: float      # variance of the PD output at the lock point (PD units^2)


class CdrFrontEnd:
    """Symbols of UIs k0..k0+n-1 -> samples of nominal symbols k0-P..k0+n-1-P (latency P).
    ``settings``: :class:`serdes.cdr.CdrSettings`; ``tx_jitter``: :class:`TxJitter`."""

    latency = LOOKAHEAD

    def __init__(self, link, seed: int, settings: loop.CdrSettings,
                 tx_jitter: TxJitter | None = None, calibration: Calibration | None = None):
        self.link = link
        self.settings = settings
        self.txj = tx_jitter or TxJitter()
        self.pulse = link.pulse
        self.ui_s = link.ui_s
        self.h0 = float(self.pulse.taps[self.pulse.cursor])
        self.levels = np.ascontiguousarray(np.sort(link.levels), dtype=np.float64)
        # the detector's slicer: the sign of the sample (the PAM4 MSB), see the module notes
        self.pd_levels = np.array([-1.0, 1.0])
        self.table, dtable, d2table = pulse_tables(self.pulse, TABLE_Q)
        # any TX jitter differs across the pulse span (a large slow SJ by 2 pi f A T n_ui:
        # 0.15 UI for 3700 UI at 10 kHz), so the second-order term runs whenever it is on
        none = np.zeros((0, self.table.shape[1]))
        self.dtable = dtable if self.txj.active else none
        self.d2table = d2table if self.txj.active else none
        self.n_ui = self.table.shape[1]
        self.hist = self.n_ui - 1 + 2 * LOOKAHEAD
        self.noise_fir = link.noise.fir
        self.rx_jitter = Jitter(link, seed)
        self.tx_source = TxJitterSource(self.txj, self.ui_s, seed)
        self.crosstalk = (CrosstalkFrontEnd(link, self.rx_jitter, slopes=True)
                          if link.aggressor_pulses else None)
        self._noise_rng = rng.BlockRNG(seed, rng.RX_NOISE)
        self._a_hist = np.zeros(self.hist)
        self._t_hist = np.zeros(self.hist)
        self._w_hist = np.zeros(self.noise_fir.shape[0] - 1)
        self.mode = {"off": 0, "mm": 1, "ssmm": 2, "bb": 3}[settings.mode]
        self._edge_rng = rng.BlockRNG(seed, EDGE_NOISE) if self.mode == 3 else None
        self._we_hist = np.zeros(self.noise_fir.shape[0] - 1)
        if settings.active:
            self.cal = calibration or self.calibrate()
            self.kp, self.ki = loop.gains(settings, self.cal.kpd, self.ui_s)
            self.bias = self.cal.bias
        else:
            self.cal = None
            self.kp = self.ki = self.bias = 0.0
        self.state = np.array([settings.initial_phase_ui if settings.active else 0.0,
                               0.0, 0.0, 0.0, 0.0])
        self.ring = np.zeros(settings.latency_ui + 1)
        if settings.active:  # whole UIs of TX jitter at the start only relabel symbols
            n0 = float(np.round(self.tx_source.slow(0, 1)[0]))
            self.state[0] += n0
            # the symbols before 0 (a = 0) take the same relabel as their TX offset: the
            # sampler's outputs before symbol 0 read the data's start at the loop's start
            # offset. With tau = 0 there, an SJ starting 626.2 UI off put those outputs
            # 626 UI past the slip window (samples ~1e4 h0 from the table's edge); the
            # first detector output, x_0 d_-1 - x_-1 d_0, threw the loop 379 UI (seed 2)
            self._t_hist[:] = n0
            # the loop starts in the TX SJ's steady state (loop.sj_integrator says why);
            # the TX-RX ppm is acquired, not preloaded
            src = self.tx_source
            self.state[1] = loop.sj_integrator(self.txj.sj_ui, src.sj_rad_per_ui, src.sj_phase,
                                               self.cal.kpd, self.kp, self.ki,
                                               settings.latency_ui)
        self.stats = PhaseStats()
        self.outside = 0  # samples past the slip window (see __call__)
        self.trace: list | None = None  # set to [] to keep every sampling phase

    @property
    def warmup_symbols(self) -> int:
        return int(self.settings.warmup_symbols) if self.settings.active else 0

    # ------------------------------------------------------------------ streaming
    def __call__(self, a: np.ndarray, k0: int) -> np.ndarray:
        n, a_ext, t_ext, kn, drx, w, we = self._stream_in(a, k0)
        integ0 = self.state[1]
        parts = [kc.cdr_sampler(
            a_ext[lo:hi + self.hist], t_ext[lo:hi + self.hist], drx[lo:hi], w[lo:hi],
            self.table, self.dtable, self.d2table, TABLE_Q, LOOKAHEAD,
            self.pd_levels, self.h0, self.mode, self.bias, self.kp * g,
            self.ki * g * g, self.settings.pi_steps, max(0, -kn - lo), self.state, self.ring,
            **agg) for lo, hi, g, agg in self._segments(kn, n, we)]
        x, ph, _ = parts[0] if len(parts) == 1 else (np.concatenate(v) for v in zip(*parts))
        self._stream_out(ph, drx, t_ext, kn, n, integ0)
        return x

    def _stream_in(self, a: np.ndarray, k0: int):
        """A chunk's inputs to the sampler: symbols and TX offsets with their histories,
        the nominal symbol of output 0, the RX jitter and the data (and edge) noise, each
        stream indexed by the nominal symbol."""
        n = a.shape[0]
        a_ext = np.concatenate([self._a_hist, a])
        tau = self.tx_source.offsets(k0, n) if self.txj.active else np.zeros(n)
        t_ext = np.concatenate([self._t_hist, tau])
        self._a_hist = a_ext[n:].copy()
        self._t_hist = t_ext[n:].copy()
        kn = k0 - LOOKAHEAD  # nominal symbol of output 0
        drx = self.rx_jitter.offsets_ui(kn, n) if self.rx_jitter.active else np.zeros(n)
        if self.noise_fir.shape[0] > 1 or self.noise_fir[0] != 0:
            # indexed by the nominal symbol, as the pulse engine's sample of that symbol
            white = np.zeros(n)
            neg = min(max(-kn, 0), n)
            white[neg:] = self._noise_rng.normal(kn + neg, n - neg)
            w_ext = np.concatenate([self._w_hist, white])
            self._w_hist = w_ext[w_ext.shape[0] - self._w_hist.shape[0]:].copy()
            w = fir_valid(w_ext, self.noise_fir)
        else:
            w = np.zeros(n)
        we = None
        if self._edge_rng is not None and (self.noise_fir.shape[0] > 1
                                           or self.noise_fir[0] != 0):
            white = np.zeros(n)
            neg = min(max(-kn, 0), n)
            white[neg:] = self._edge_rng.normal(kn + neg, n - neg)
            w_ext = np.concatenate([self._we_hist, white])
            self._we_hist = w_ext[w_ext.shape[0] - self._we_hist.shape[0]:].copy()
            we = fir_valid(w_ext, self.noise_fir)
        return n, a_ext, t_ext, kn, drx, w, we

    def _segments(self, kn: int, n: int, we=None):
        """The chunk's outputs lo .. hi - 1 at loop gain factor g, with the aggressors'
        (and edge noise) streams for them: outputs before ``gear_end`` (nominal symbol
        index) run at the acquisition gains."""
        s = self.settings
        gear_end = min(max(s.acquire_symbols - kn, 0), n) if s.acquire_gear != 1 else 0
        xv = xs = None
        if self.crosstalk is not None:  # nominal instants kn - P .. kn + n - 1 + P
            xv, xs = self.crosstalk.streams(kn - LOOKAHEAD, n + 2 * LOOKAHEAD)
        out = []
        for lo, hi, g in ((0, gear_end, s.acquire_gear), (gear_end, n, 1.0)):
            if hi > lo:
                agg = {} if xv is None else {"xv": xv[lo:hi + 2 * LOOKAHEAD],
                                             "xs": xs[lo:hi + 2 * LOOKAHEAD]}
                if we is not None:
                    agg["we"] = we[lo:hi]
                out.append((lo, hi, g, agg))
        return out

    def _stream_out(self, ph: np.ndarray, d: np.ndarray, t_ext: np.ndarray, kn: int, n: int,
                    integ0: float) -> None:
        """After a chunk: keep the trace, count the samples past the slip window, and add
        the slow sampling offset the data sees to the phase statistics (``d``: the
        sampler's offsets beyond the recovered phase)."""
        if self.trace is not None:
            self.trace.append(ph)
        if self.settings.active:
            # samples whose whole-UI slip is past the sampler's window (it then reads the
            # window's edge: not the signal); symbols from 0 on
            c = ph + d - t_ext[self.hist - LOOKAHEAD:self.hist - LOOKAHEAD + n]
            slip = np.floor(c[min(max(-kn, 0), n):] + 0.5)
            self.outside += int(np.count_nonzero(np.abs(slip) > LOOKAHEAD))
            # slow sampling offset seen by the data: phase - trackable TX jitter + RX SJ
            off = ph + self._rx_slow(kn, n)
            if self.txj.active:
                off -= self.tx_source.slow(kn, n)
            # the integrator is not kept per sample; its chunk mean is close enough to
            # a block mean for the tracked frequency (it moves on the loop's time scale)
            self.stats.add(kn, off, 0.5 * (integ0 + self.state[1]))
            # the tracking error with the RX dual-Dirac holds the loop partly follows
            # (serdes.engines.cdr_phase_ber takes the engine without them)
            hist = off - self.cal.lock_ui
            if self.rx_jitter.active:
                hist = hist + self.rx_jitter.dd_offsets_ui(kn, n)
            self.stats.add_histogram(kn, hist, self.warmup_symbols)

    def _rx_slow(self, kn: int, n: int) -> np.ndarray:
        j = self.rx_jitter
        if j.sj_ui <= 0:
            return np.zeros(n)
        k = np.arange(kn, kn + n, dtype=np.float64)
        return j.sj_ui * np.sin(j.sj_rad_per_ui * k + j._sj_phase)

    # ------------------------------------------------------------------ calibration
    def _row(self, c: float):
        shift = int(min(max(np.floor(c + 0.5), -LOOKAHEAD), LOOKAHEAD))
        u = (c - shift + 0.5) * TABLE_Q + 1.0
        r = int(min(max(np.floor(u), 0), self.table.shape[0] - 2))
        t = u - r
        return LOOKAHEAD + shift, (1.0 - t) * self.table[r] + t * self.table[r + 1]

    def edge_noise(self, n: int) -> np.ndarray:
        """The edge samples' noise of the open-loop measurements (own fixed seed)."""
        hit = getattr(self, "_we_cal", None)
        if hit is None or hit.shape[0] < n:
            g = np.random.default_rng(97531)
            hit = self._we_cal = fir_valid(np.concatenate(
                [np.zeros(self.noise_fir.shape[0] - 1), g.standard_normal(n)]), self.noise_fir)
        return hit[:n]

    def _open_loop(self, a, tau, w, phase_ui: float, we=None):
        """Raw MM outputs with the loop open at a fixed phase and no jitter (``tau`` all
        zero): the sampler's arithmetic of :func:`serdes.kernels.cdr.cdr_sampler` in mode 0
        (phase rounded to 1e-9 UI, the two table rows interpolated, the slip window), as
        one FIR of the interpolated row, the slicer and detector in one pass
        (:func:`serdes.kernels.cdr.mm_open_loop`; BB: vectorized); the same values to
        rounding (tests/test_cdr.py)."""
        if np.any(tau):
            raise ValueError("calibration runs without TX jitter")
        n = a.shape[0] - self.hist
        c = np.floor(phase_ui * 1e9 + 0.5) / 1e9
        base, row = self._row(c)
        x = fir_valid(a[base:base + n + self.n_ui - 1], row[::-1].copy()) + w
        lv = self.pd_levels
        if self.mode != 3:   # the slicer and the MM detector in one compiled pass
            return kc.mm_open_loop(x, lv, self.h0)
        d = lv[np.searchsorted(0.5 * (lv[:-1] + lv[1:]), x / self.h0, side="left")]
        # Alexander on the edge sample half a UI earlier
        base, row = self._row(c - 0.5)
        xe = fir_valid(a[base:base + n + self.n_ui - 1], row[::-1].copy())
        xe += self.edge_noise(n) if we is None else we
        return -0.5 * np.sign(xe[1:]) * (d[1:] - d[:-1])

    def _open_loop_kernel(self, a, tau, w, phase_ui: float, we=None):
        """The same through the CDR kernel itself (mode 0): the reference of the above."""
        n = a.shape[0] - self.hist
        state = np.array([phase_ui, 0.0, 0.0, 0.0, 0.0])
        if self.mode == 3 and we is None:
            we = self.edge_noise(n)
        _, _, e = kc.cdr_sampler(a, tau, np.zeros(n), w, self.table, self.dtable,
                                 self.d2table, TABLE_Q, LOOKAHEAD, self.pd_levels, self.h0,
                                 3 if self.mode == 3 else 0, 0.0, 0.0, 0.0, 1e9, 0, state,
                                 np.zeros(1), we=we)
        return e[1:]

    def calibrate(self) -> Calibration:
        """The detector's S-curve on this link: random levels, the link's RX noise, one
        fixed seed, the same data at every phase (common random numbers), so the slope
        and the bias are measured with little noise."""
        g = np.random.default_rng(12345)
        n = CAL_SYMBOLS + self.hist
        a = self.levels[g.integers(0, self.levels.shape[0], n)]
        tau = np.zeros(n)
        w = fir_valid(np.concatenate([np.zeros(self.noise_fir.shape[0] - 1),
                                      g.standard_normal(n - self.hist)]), self.noise_fir)
        sign = self.settings.mode == "ssmm"

        def level(phase):
            e = self._open_loop(a, tau, w, phase)
            return e

        def pd_mean(e, bias):
            return float(np.mean(np.sign(e - bias))) if sign else float(np.mean(e - bias))

        e0 = level(0.0)
        mm_zero, found = 0.0, False
        for _ in range(4):  # secant steps to the zero of the raw MM mean
            ea, eb = level(mm_zero - CAL_DELTA), level(mm_zero + CAL_DELTA)
            slope = (np.mean(ea) - np.mean(eb)) / (2 * CAL_DELTA)
            if not slope > 0:
                break
            step = float(np.mean(level(mm_zero))) / slope
            mm_zero = float(np.clip(mm_zero + step, -ZERO_SPAN_UI, ZERO_SPAN_UI))
            if abs(step) < 1e-4:
                found = abs(mm_zero) < ZERO_SPAN_UI
                break
        if not found:   # the secant from the peak failed: scan the span, then bisect
            mm_zero = _falling_zero(lambda x: float(np.mean(level(x))))
            if not np.isfinite(mm_zero) and self.settings.lock == "mm":
                raise ConfigError(
                    f"cdr.lock = 'mm': the {self.settings.mode.upper()} detector's S-curve "
                    f"has no falling zero within +-{ZERO_SPAN_UI:g} UI of the pulse peak on "
                    "this link; use cdr.lock = 'peak' or cdr.mode = 'bb'")
        if self.settings.lock == "peak":
            lock = 0.0
            bias = float(np.median(e0)) if sign else float(np.mean(e0))
        else:
            lock = mm_zero
            bias = 0.0
        if not np.isfinite(lock):
            lock = 0.0
        ea, eb, el = level(lock - CAL_DELTA), level(lock + CAL_DELTA), level(lock)
        kpd = (pd_mean(ea, bias) - pd_mean(eb, bias)) / (2 * CAL_DELTA)
        pd_var = float(np.var(np.sign(el - bias) if sign else el - bias))
        return Calibration(kpd=float(kpd), bias=bias, lock_ui=float(lock),
                           mm_zero_ui=float(mm_zero), pd_noise_var=pd_var)

    # ------------------------------------------------------------------ results
    def model(self) -> dict:
        """The linear loop model of these gains."""
        s, c = self.settings, self.cal
        bw, peak = loop.bandwidth_and_peaking(c.kpd, self.kp, self.ki, s.latency_ui, self.ui_s)
        g2 = loop.noise_gain(c.kpd, self.kp, self.ki, s.latency_ui)
        dither = float(np.sqrt(c.pd_noise_var * g2 / c.kpd ** 2 + 1.0 / (12 * s.pi_steps ** 2)))
        return {"kpd": c.kpd, "kp": self.kp, "ki": self.ki, "bandwidth_hz": bw,
                "peaking_db": peak, "dither_rms_ui": dither}

    def summary(self) -> dict:
        """Lock time, recovered phase mean and rms wander after lock, tracked frequency
        offset, the lock points, and the loop model (:mod:`serdes.engines.cdr_summary`)."""
        return summarize(self.stats, self.settings, self.cal, self.model(), self.outside)


def _rows(pulse, q: int, extra: float = 0.0) -> np.ndarray:
    """(Q + 3, n_ui) reversed rows of p(jT + f + extra / m) for f = (r - 1) / Q - 1/2."""
    m, n_ui = pulse.m, pulse.n_ui
    f = (np.arange(q + 3) - 1.0) / q - 0.5
    pos = (pulse.phase + (f * m + extra))[:, None] + m * np.arange(n_ui, dtype=np.float64)
    return np.ascontiguousarray(interp_cubic(pulse.fine, pos.ravel()).reshape(pos.shape)[:, ::-1])


def pulse_tables(pulse, q: int):
    """(Q + 3, n_ui) reversed rows of p(jT + f), p'(jT + f) and p''(jT + f) (per UI and
    UI^2, central differences over one fine sample) for f = (r - 1) / Q - 1/2 (zero
    outside the kept pulse)."""
    m = pulse.m
    mid, hi, lo = _rows(pulse, q), _rows(pulse, q, 1.0), _rows(pulse, q, -1.0)
    return mid, np.ascontiguousarray((hi - lo) * (m / 2.0)), \
        np.ascontiguousarray((hi - 2 * mid + lo) * (m * m))


def _falling_zero(mean_at) -> float:
    """The falling zero of the detector's mean output (positive when sampling early)
    nearest the pulse peak within +-ZERO_SPAN_UI: a scan in steps of ZERO_SCAN_UI, then
    bisection of the bracketing step to 1e-5 UI; NaN where it has none. (The secant from
    the peak that runs first stops after 4 steps: on a link with a strong pre-cursor it
    ended wherever it was, or at the span's end, and that was reported as the zero.)"""
    xs = np.linspace(-ZERO_SPAN_UI, ZERO_SPAN_UI,
                     int(round(2 * ZERO_SPAN_UI / ZERO_SCAN_UI)) + 1)
    ms = np.array([mean_at(x) for x in xs])
    i = np.nonzero((ms[:-1] > 0) & (ms[1:] <= 0))[0]
    if not i.size:
        return float("nan")
    k = int(i[np.argmin(np.abs(xs[i] + xs[i + 1]))])
    lo, hi = float(xs[k]), float(xs[k + 1])
    while hi - lo > 1e-5:
        mid = 0.5 * (lo + hi)
        if mean_at(mid) > 0:
            lo = mid
        else:
            hi = mid
    return 0.5 * (lo + hi)
