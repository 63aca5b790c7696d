"""The link model: every analog stage collapsed into one transfer function and pulse.

The linear analog part (TX FFE, driver edge, channel, CTLE, shunt-peaked AFE, VGA) is
LTI, so it is evaluated once on an FFT grid (``window_ui`` UI long, ``samples_per_ui``
samples per UI) and turned into:

* the pulse response ``p(t)`` of one symbol of unit value on the fine grid, trimmed
  to ``pulse_ui`` UI around its main cursor, or longer where the response needs it
  (:class:`Pulse`, see :meth:`Link._pulse_unscaled`);
* the noise at the ADC input: the RX-input white noise (one-sided PSD eta0) filtered
  by CTLE and AFE, as its autocorrelation at symbol spacing and as a symbol-rate FIR
  that colours unit white noise to exactly that autocorrelation (:class:`Noise`).

All three engines read these; none re-derives the analog chain.

The FFT window must hold the whole response: a delay longer than the window (a long
reflection cascade, an echo) would wrap around and land as a spurious pre-cursor. The
response is therefore also computed on a window twice as long; while that one holds
more than ``WRAP_TOL`` of the peak beyond the first window, the window doubles (up to
``MAX_WINDOW_UI``, else a ConfigError names ``link.window_ui`` and the size needed).
"""

from __future__ import annotations

from functools import cached_property

import numpy as np

from typing import Sequence

from serdes.adc import Adc
from serdes.errors import ConfigError
from serdes.grid import BULK_DELAY_UI, Grid
from serdes.impairments import Impairments, tx_noise_sigma
from serdes.pulse_response import Noise, Pulse, noise_model, trim_pulse, ui_cells  # noqa: F401 (re-exported)
from serdes.signal.pam import levels as pam_levels
from serdes.stage import cascade, check_stages, describe, lead_s
from serdes.validate import float_in, whole_number

DROP_TOL = 1e-2    # no UI left out of the kept pulse may reach this fraction of the peak
WRAP_TOL = 1e-3    # response beyond the FFT window (would wrap around), fraction of the peak
MAX_WINDOW_UI = 16384


class Link:
    """The analog link: TX, channel and RX stages on a :class:`~serdes.grid.Grid`, the
    symbol levels and swing, the noise and jitter settings and the ADC it drives.

    ``tx``, ``channel`` and ``rx`` are sequences of stages (anything with
    ``response(f_hz)``, see :mod:`serdes.stage`); the RX-input noise goes through the
    ``rx`` stages only. The VGA sets its gain so that +-``clip_sigma`` x the rms ADC
    input spans the ADC full scale. Everything derived (pulse, noise) is computed on
    first use. Build one from a config with :func:`serdes.build.build_link`, or
    directly::

        Link(Grid(53.125e9), tx=[TxEdge(rise_time_s=6e-12)],
             channel=[LossLine(loss_db=20, f_ref_hz=26.5625e9)],
             rx=[ShuntPeakedAfe(m=2, bandwidth_hz=40e9)])
    """

    def __init__(self, grid: Grid | None = None, *, tx: Sequence = (), channel: Sequence = (),
                 rx: Sequence = (), levels=None, swing_v: float = 0.4,
                 impairments: Impairments | None = None, adc: Adc | None = None,
                 clip_sigma: float = 4.0, pulse_ui: int = 64, fixed_window: bool = False,
                 crosstalk=None, bulk_delay_ui: int | None = None):
        self.grid = grid or Grid()
        self.crosstalk_spec = crosstalk  # serdes.crosstalk.Crosstalk: the aggressors
        self.tx_stages = check_stages("tx", tx)
        self.channel_stages = check_stages("channel", channel)
        self.rx_stages = check_stages("rx", rx)
        for s in self.channel_stages:   # data-based channels must reach Nyquist
            if callable(getattr(s, "check_reach", None)):
                s.check_reach(self.grid.nyquist_hz)
        self.levels = (pam_levels(4, 1.0) if levels is None
                       else np.ascontiguousarray(levels, dtype=np.float64))
        if self.levels.ndim != 1 or self.levels.shape[0] < 2 or np.any(np.diff(self.levels) <= 0):
            raise ConfigError(f"levels = {levels!r}: need at least 2 increasing values")
        self.modulation_order = int(self.levels.shape[0])
        self.swing_v = float_in("swing_v", swing_v, "a finite number > 0 V", above=0.0)
        self.impairments = impairments or Impairments()
        self.adc = adc or Adc(bits=0, fullscale_v=1.0)
        self.clip_sigma = float_in("clip_sigma", clip_sigma, "a finite number > 0 sigma",
                                   above=0.0)
        self.pulse_ui = whole_number("pulse_ui", pulse_ui, 2, MAX_WINDOW_UI)
        if self.pulse_ui > self.grid.window_ui // 2:
            raise ConfigError(f"pulse_ui = {self.pulse_ui} must be at most half of the "
                              f"window ({self.grid.window_ui} UI)")
        g = self.grid
        self.symbol_rate_hz = g.symbol_rate_hz
        self.ui_s = g.ui_s
        self.m = g.m
        self.dt_s = g.dt_s
        if fixed_window:  # a probe on exactly this window (no wrap check)
            self.__dict__["window_ui"] = int(g.window_ui)
        if bulk_delay_ui is not None:  # given (e.g. the CTLE search's candidates keep the link's)
            self.__dict__["bulk_delay_ui"] = int(bulk_delay_ui)

    # -- FFT window -----------------------------------------------------------------------
    @cached_property
    def window_ui(self) -> int:
        """The FFT window (UI): the grid's, doubled while the response reaches past it by
        more than WRAP_TOL of its peak (it would wrap around)."""
        w = self.grid.window_ui
        while True:
            probe = self._on_window(2 * w)
            full = probe._pulse_window
            beyond = float(np.max(np.abs(full[w * self.m:]))) / float(np.max(full))
            if beyond < WRAP_TOL:
                return w
            if 2 * w > MAX_WINDOW_UI:
                echoes = any(getattr(s, "echo_amplitude", 0) or getattr(s, "segments", ())
                             for s in self.channel_stages)
                raise ConfigError(
                    f"link.window_ui = {self.grid.window_ui}: the pulse response "
                    f"still holds {beyond:.2g} of its peak after {w} UI (delays longer than "
                    f"the FFT window wrap around) and the window stops at {MAX_WINDOW_UI} UI"
                    + ("; shorten the reflection delays" if echoes else
                       ": the channel response does not decay"))
            w *= 2

    def _on_window(self, window_ui: int) -> "Link":
        """The same link on a window of exactly ``window_ui`` UI (same stage objects)."""
        return Link(self.grid.with_window(window_ui), tx=self.tx_stages,
                    channel=self.channel_stages, rx=self.rx_stages, levels=self.levels,
                    swing_v=self.swing_v, impairments=self.impairments, adc=self.adc,
                    clip_sigma=self.clip_sigma, pulse_ui=min(self.pulse_ui, window_ui // 2),
                    fixed_window=True, crosstalk=self.crosstalk_spec)

    @cached_property
    def n_fft(self) -> int:
        return self.window_ui * self.m

    @cached_property
    def f_hz(self) -> np.ndarray:
        return np.fft.rfftfreq(self.n_fft, self.dt_s)

    # -- analog stages ------------------------------------------------------------------
    @property
    def nyquist_hz(self) -> float:
        return self.grid.nyquist_hz

    @cached_property
    def h_tx(self) -> np.ndarray:
        return cascade(self.tx_stages, self.f_hz)

    @cached_property
    def h_channel(self) -> np.ndarray:
        return cascade(self.channel_stages, self.f_hz)

    @cached_property
    def h_rx(self) -> np.ndarray:
        """Receiver front end (e.g. CTLE x AFE) with its polarity (:attr:`rx_polarity`),
        before the VGA."""
        return self._h_rx_stages * self.rx_polarity

    @cached_property
    def _h_rx_stages(self) -> np.ndarray:
        return cascade(self.rx_stages, self.f_hz)

    @cached_property
    def rx_polarity(self) -> int:
        """-1 where the link inverts the signal (e.g. a channel file whose P and N are
        crossed: its pulse's largest excursion is negative), else 1. A receiver inverts
        its input there (every SerDes RX has the setting), so an inverted link gives the
        same results as the same link not inverted."""
        raw = self._raw_window
        peak = int(np.argmax(np.abs(raw)))
        if raw[peak] == 0.0:
            raise ConfigError("the link's pulse response is zero: check the TX FFE, "
                              "channel and CTLE settings")
        return -1 if raw[peak] < 0.0 else 1

    @cached_property
    def il_nyquist_db(self) -> float:
        """Insertion loss of the channel stages at the Nyquist frequency (dB); a stage
        with ``il_db`` reports its own (e.g. a file's, interpolated on its data). Device
        packages (stages with a die termination) are not part of the channel's loss."""
        total = 0.0
        for s in self.channel_stages:
            if any(t is not None for t in (getattr(s, "terminations", None) or ())):
                continue
            fn = getattr(s, "il_db", None)
            if callable(fn):
                total += float(fn(self.nyquist_hz))
            else:
                h = s.response(np.array([0.0, self.nyquist_hz]))[1]
                total += float(-20.0 * np.log10(max(abs(h), 1e-300)))
        return total

    @cached_property
    def bulk_delay_ui(self) -> int:
        """The delay (UI) every response gets, so that none starts before the window and
        wraps to its end: BULK_DELAY_UI, or more where the stages of the victim or an
        aggressor reach further ahead of t = 0 (:func:`serdes.stage.lead_s`: pre-cursor
        TX FFE taps, a slow zero-phase edge), plus one UI."""
        leads = [lead_s(self.tx_stages + self.channel_stages + self.rx_stages)]
        for agg in getattr(self.crosstalk_spec, "aggressors", ()) or ():
            leads.append(lead_s(tuple(agg.tx) + tuple(agg.channel) + self.rx_stages))
        return max(BULK_DELAY_UI, int(np.ceil(max(leads) / self.ui_s - 1e-9)) + 1)

    @cached_property
    def h_total(self) -> np.ndarray:
        """TX, channel and RX stages (with the RX polarity) and the bulk delay; without
        the VGA gain."""
        return self._h_stages * self.rx_polarity

    @cached_property
    def _h_stages(self) -> np.ndarray:
        delay = np.exp(-2j * np.pi * self.f_hz * self.bulk_delay_ui * self.ui_s)
        return self.h_tx * self.h_channel * self._h_rx_stages * delay

    def describe(self) -> dict[str, str]:
        """One label per part: tx, channel and rx stages."""
        return {"tx": ", ".join(describe(s) for s in self.tx_stages) or "none",
                "channel": ", ".join(describe(s) for s in self.channel_stages) or "ideal",
                "rx": ", ".join(describe(s) for s in self.rx_stages) or "none"}

    # -- pulse response -------------------------------------------------------------------
    @cached_property
    def _pulse_window(self) -> np.ndarray:
        """The transmitted UI [0, T] on the fine grid: m + 1 samples, the two at the
        jumps at half height (the midpoint value of the continuous rectangle, as a
        Fourier series takes it), so the rectangle is centred at exactly T/2 with area
        T. A band-limited link sees the continuous rectangle convolved with a unit
        triangle of half-width dt: error |p''| dt^2 / 12, 5.5e-4 of the peak for the
        default 6 ps edge at 32 samples/UI. (The continuous spectrum T sinc(fT)
        e^{-j pi f T} would be exact only for a band-limited link: with no edge and an
        ideal channel it rings by 9 % at each jump; these samples stay exact there.)"""
        return self._raw_window if self.rx_polarity > 0 else -self._raw_window

    @cached_property
    def _raw_window(self) -> np.ndarray:
        """:attr:`_pulse_window` before the RX polarity."""
        rect = np.zeros(self.n_fft)
        rect[: self.m + 1] = self.swing_v
        rect[0] = rect[self.m] = 0.5 * self.swing_v
        full = np.fft.irfft(np.fft.rfft(rect) * self._h_stages, n=self.n_fft)
        if not np.all(np.isfinite(full)):
            raise ConfigError("the link's pulse response is not finite: check the channel "
                              "and CTLE settings")
        return full

    def pulse_full(self) -> tuple[np.ndarray, np.ndarray]:
        """(t_s, p): the untrimmed pulse response over the whole window, before the VGA,
        with t = 0 at the start of the transmitted UI (the bulk delay removed)."""
        shift = self.bulk_delay_ui * self.m
        p = np.roll(self._pulse_window, -shift)
        return np.arange(self.n_fft) * self.dt_s, p

    @cached_property
    def _pulse_unscaled(self) -> Pulse:
        """Pulse response of one UI of value 1 (times swing) without the VGA.

        ``link.pulse_ui`` UI are kept, or more where the response needs them: while a UI
        left out reaches DROP_TOL of the peak (a reflection beyond the span), the span
        doubles (the pre-cursor part stays at most ``pulse_ui // 4``), up to half the
        window."""
        span = pulse_ui = self.pulse_ui
        limit = self.window_ui // 2
        while True:
            p = trim_pulse(self._pulse_window, self.m, span, max_pre=pulse_ui // 4)
            if p.dropped_peak < DROP_TOL:
                return p
            if span >= limit:
                pre = self._pre_cursor_ui(DROP_TOL)
                if pre > pulse_ui // 4:
                    raise ConfigError(
                        f"link.pulse_ui = {pulse_ui}: the pulse response has {pre} UI of "
                        f"pre-cursors reaching {DROP_TOL:g} of its peak, and at most "
                        f"link.pulse_ui // 4 = {pulse_ui // 4} are kept; set link.pulse_ui "
                        f"to at least {4 * pre}")
                raise ConfigError(
                    f"link.window_ui = {self.window_ui}: the pulse response still reaches "
                    f"{p.dropped_peak:.2g} of its peak beyond the {span} UI that half the "
                    f"window can hold; set link.window_ui to {2 * self.window_ui}")
            span = min(2 * span, limit)

    def _pre_cursor_ui(self, tol: float) -> int:
        """How many UI before the main cursor the response reaches ``tol`` of its peak."""
        full = self._pulse_window
        cells, c0 = ui_cells(full, self.m)
        big = np.nonzero(cells[:c0] >= tol * float(np.max(full)))[0]
        return int(c0 - big[0]) if big.size else 0

    @cached_property
    def vga_gain(self) -> float:
        """Gain that puts +-clip_sigma x (rms ADC input) at the ADC full scale."""
        p = self._pulse_unscaled
        h = p.taps
        sig = self.level_power * float(h @ h)
        tx = self.tx_noise_sigma ** 2 * float(h @ h)
        rms = np.sqrt(sig + tx + self._noise_unscaled.variance)
        return float(self.adc.fullscale_v / 2.0 / (self.clip_sigma * rms))

    @cached_property
    def pulse(self) -> Pulse:
        """Pulse response at the ADC input (after the VGA)."""
        p = self._pulse_unscaled
        return Pulse(fine=p.fine * self.vga_gain, m=p.m, phase=p.phase, cursor=p.cursor,
                     dropped_energy=p.dropped_energy, dropped_peak=p.dropped_peak)

    @cached_property
    def aggressor_pulses(self) -> tuple:
        """Each crosstalk aggressor's pulse at the ADC input (:mod:`serdes.crosstalk`)."""
        spec = self.crosstalk_spec
        if not (spec and spec.aggressors):
            return ()  # without importing serdes.crosstalk
        from serdes.crosstalk import AggressorPulse

        return tuple(AggressorPulse(self, a) for a in spec.aggressors)

    @cached_property
    def level_power(self) -> float:
        """E[a^2] of equiprobable symbol levels."""
        return float(np.mean(self.levels ** 2))

    @cached_property
    def tx_noise_sigma(self) -> float:
        """Std of the TX noise per symbol value (unitless, like the levels)."""
        return tx_noise_sigma(self.level_power, self.impairments.tx_snr_db)

    # -- noise --------------------------------------------------------------------------
    @cached_property
    def _noise_unscaled(self) -> Noise:
        psd = self.impairments.eta0_v2_per_hz * np.abs(self.h_rx) ** 2
        return noise_model(psd, self.dt_s, self.m)

    @cached_property
    def noise(self) -> Noise:
        """RX noise at the ADC input (after the VGA)."""
        n = self._noise_unscaled
        g = self.vga_gain
        return Noise(autocorr=n.autocorr * g * g, fir=n.fir * g)

    @cached_property
    def h_rx_impulse(self) -> np.ndarray:
        """Fine-grid FIR of the RX front end incl. the VGA (unit white noise in, volts out
        per sqrt(V^2/Hz) x sqrt(fs/2)); used by the waveform engine."""
        h = np.fft.irfft(self.h_rx * self.vga_gain, n=self.n_fft)
        energy = np.cumsum(h ** 2)
        keep = int(np.searchsorted(energy, energy[-1] * (1 - 1e-10))) + 1
        return np.ascontiguousarray(h[: max(keep, self.m)])

    def sampled_noise_autocorr(self, lags: int) -> np.ndarray:
        """R[k] for k = 0 .. lags-1 of all Gaussian-modelled noise at the ADC output that
        the equalizer design should know (:func:`serdes.impairments.design_autocorr`)."""
        from serdes.impairments import design_autocorr

        return design_autocorr(self, lags)

    def summary(self) -> dict:
        d = self.describe()
        return {
            "symbol_rate_hz": self.symbol_rate_hz,
            "modulation": "pam4" if self.modulation_order == 4 else
                          ("nrz" if self.modulation_order == 2 else f"pam{self.modulation_order}"),
            "channel": d["channel"],
            "tx": d["tx"],
            "rx": d["rx"] + (", polarity inverted" if self.rx_polarity < 0 else ""),
            "rx_polarity": self.rx_polarity,
            "il_nyquist_db": self.il_nyquist_db,
            "pulse_ui": self.pulse.n_ui,
            "window_ui": self.window_ui,
            "cursor_v": float(self.pulse.taps[self.pulse.cursor]),
            "vga_gain_db": 20 * np.log10(self.vga_gain),
            "noise_rms_v": float(np.sqrt(self.noise.variance)),
        }
