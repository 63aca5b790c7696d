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

from dataclasses import dataclass
from functools import cached_property

import numpy as np

from serdes import tx as txm
from serdes.adc import Adc
from serdes.config import Config
from serdes.errors import ConfigError
from serdes.signal.pam import levels as pam_levels

BULK_DELAY_UI = 8  # shift so that TX pre-cursor taps never wrap around the window
TRIM_TOL = 1e-4    # pulse UIs below this fraction of the peak are trimmed at the ends
DROP_TOL = 1e-2    # no UI left out of the kept pulse may reach this fraction of the peak
WRAP_TOL = 1e-3    # response beyond the FFT window (would wrap around), fraction of the peak
MAX_WINDOW_UI = 16384


@dataclass(frozen=True)
class Pulse:
    """A pulse response on the fine grid, with its symbol-spaced samples.

    ``fine[phase + j*m]`` is the j-th symbol-spaced sample ``taps[j]``; the main
    cursor is ``taps[cursor]``. Units: volts at the ADC input per unit symbol value.
    """

    fine: np.ndarray
    m: int
    phase: int
    cursor: int
    dropped_energy: float  # energy fraction trimmed away
    dropped_peak: float = 0.0  # largest |p| in a UI left out, as a fraction of the peak

    @property
    def n_ui(self) -> int:
        return self.fine.shape[0] // self.m

    @property
    def taps(self) -> np.ndarray:
        return np.ascontiguousarray(self.fine[self.phase::self.m][: self.n_ui])

    def at_offset(self, offset_fine: float) -> np.ndarray:
        """Symbol-spaced samples taken ``offset_fine`` fine samples after the phase."""
        from serdes.kernels.fir import interp_cubic

        pos = self.phase + offset_fine + self.m * np.arange(self.n_ui, dtype=np.float64)
        return interp_cubic(self.fine, pos)


@dataclass(frozen=True)
class Noise:
    """Coloured RX noise at the ADC input, sampled at the symbol rate."""

    autocorr: np.ndarray  # R[k], k = 0 .. window_ui - 1 (V^2), circular
    fir: np.ndarray       # symbol-rate FIR g with (g * g~)[k] = R[k] for unit white input

    @property
    def variance(self) -> float:
        return float(self.autocorr[0])


class Link:
    """The analog link of a :class:`Config`, with derived pulse and noise models."""

    def __init__(self, config: Config | None = None, *, _window_ui: int | None = None):
        self.config = config or Config.default()
        c = self.config
        self.symbol_rate_hz = c["link"]["symbol_rate_hz"]
        self.ui_s = 1.0 / self.symbol_rate_hz
        self.m = c["link"]["samples_per_ui"]
        self.dt_s = self.ui_s / self.m
        if _window_ui is not None:  # a probe on a given window (no wrap check)
            self.__dict__["window_ui"] = int(_window_ui)
        self.modulation_order = 4 if c["link"]["modulation"] == "pam4" else 2
        self.levels = pam_levels(self.modulation_order, c["tx"]["rlm"])
        self.adc = Adc(bits=c["adc"]["bits"], fullscale_v=c["adc"]["fullscale_v"],
                       enob=c["adc"]["enob"])

    # -- FFT window -----------------------------------------------------------------------
    @cached_property
    def window_ui(self) -> int:
        """The FFT window (UI): ``link.window_ui``, doubled while the response reaches past
        it by more than WRAP_TOL of its peak (it would wrap around)."""
        w = self.config["link"]["window_ui"]
        while True:
            probe = Link(self.config, _window_ui=2 * w)
            if "_channel" in self.__dict__ or self.config["channel"]["model"] == "touchstone":
                probe.__dict__["_channel"] = self._channel  # read the file once
            full = probe._pulse_window
            beyond = float(np.max(np.abs(full[w * self.m:]))) / float(np.max(full))
            if beyond < WRAP_TOL:
                return w
            if 2 * w > MAX_WINDOW_UI:
                raise ConfigError(
                    f"link.window_ui = {self.config['link']['window_ui']}: the pulse response "
                    f"still holds {beyond:.2g} of its peak after {w} UI (delays longer than "
                    f"the FFT window wrap around) and the window stops at {MAX_WINDOW_UI} UI"
                    + ("; shorten the reflection delays" if self.reflections.active else
                       ": the channel response does not decay"))
            w *= 2

    @cached_property
    def n_fft(self) -> int:
        return self.window_ui * self.m

    @cached_property
    def f_hz(self) -> np.ndarray:
        return np.fft.rfftfreq(self.n_fft, self.dt_s)

    # -- analog stages ------------------------------------------------------------------
    @property
    def nyquist_hz(self) -> float:
        return self.symbol_rate_hz / 2.0

    @cached_property
    def h_tx(self) -> np.ndarray:
        t = self.config["tx"]
        return (txm.rise_filter(self.f_hz, t["rise_time_s"])
                * txm.ffe_response(self.f_hz, t["ffe"], t["main"], self.ui_s))

    @cached_property
    def _channel(self):
        ch = self.config["channel"]
        if ch["model"] == "touchstone":
            from serdes.channel.touchstone import TouchstoneChannel

            # used as the thru; the data must reach Nyquist (see TouchstoneChannel)
            return TouchstoneChannel(ch["file"], ports=ch["ports"], thru=True,
                                     f_needed_hz=self.nyquist_hz)
        return None

    @cached_property
    def reflections(self):
        """The [reflections] stage (T-line cascade, via stubs, echo) in series with the
        channel model."""
        from serdes.channel.reflections import Reflections

        return Reflections.from_config(self.config["reflections"], self.symbol_rate_hz)

    @cached_property
    def h_channel(self) -> np.ndarray:
        h = self._h_channel_model
        return h * self.reflections.response(self.f_hz) if self.reflections.active else h

    @cached_property
    def _h_channel_model(self) -> np.ndarray:
        ch = self.config["channel"]
        if ch["model"] == "ideal":
            return np.ones(self.f_hz.shape, dtype=np.complex128)
        if ch["model"] == "loss":
            from serdes.channel.loss import loss_channel_response

            return loss_channel_response(self.f_hz, loss_db=ch["loss_db"],
                                         f_ref_hz=self.nyquist_hz, include_delay=False)
        return self._channel.response(self.f_hz)

    @cached_property
    def il_nyquist_db(self) -> float:
        """Channel insertion loss at the Nyquist frequency (dB)."""
        ch = self.config["channel"]
        if ch["model"] == "ideal":
            return 0.0
        if ch["model"] == "loss":
            return float(ch["loss_db"])
        return float(self._channel.il_db(self.nyquist_hz))

    @cached_property
    def h_ctle(self) -> np.ndarray:
        c = self.config["ctle"]
        if c["model"] == "none":
            return np.ones(self.f_hz.shape, dtype=np.complex128)
        from serdes.analog import ctle

        if c["model"] == "zpk":
            return ctle.zpk_response(self.f_hz, np.asarray(c["zeros_hz"], dtype=complex),
                                     np.asarray(c["poles_hz"], dtype=complex), c["gain"])
        fb = self.symbol_rate_hz
        return ctle.ctle_ieee(self.f_hz, g_dc_db=c["g_dc_db"], g_dc2_db=c["g_dc2_db"],
                              f_z_hz=c["f_z_hz"] or fb / 2.5, f_p1_hz=c["f_p1_hz"] or fb / 2.5,
                              f_p2_hz=c["f_p2_hz"] or fb, f_lf_hz=c["f_lf_hz"] or fb / 80.0)

    @cached_property
    def h_afe(self) -> np.ndarray:
        from serdes.analog.peaking import shunt_peaking_response

        a = self.config["afe"]
        if a["bandwidth_hz"] == 0:
            return np.ones(self.f_hz.shape, dtype=np.complex128)
        return shunt_peaking_response(self.f_hz, m=a["peaking_m"], bandwidth_hz=a["bandwidth_hz"])

    @cached_property
    def h_rx(self) -> np.ndarray:
        """Receiver front end (CTLE x AFE), before the VGA."""
        return self.h_ctle * self.h_afe

    @cached_property
    def h_total(self) -> np.ndarray:
        """TX FFE and edge, channel, CTLE, AFE; without the VGA gain."""
        delay = np.exp(-2j * np.pi * self.f_hz * BULK_DELAY_UI * self.ui_s)
        return self.h_tx * self.h_channel * self.h_rx * delay

    # -- pulse response -------------------------------------------------------------------
    @cached_property
    def _pulse_window(self) -> np.ndarray:
        swing = self.config["tx"]["swing_v"]
        rect = np.zeros(self.n_fft)
        rect[: self.m] = swing
        full = np.fft.irfft(np.fft.rfft(rect) * self.h_total, n=self.n_fft)
        if not np.all(np.isfinite(full)):
            raise ConfigError("the link's pulse response is not finite: check the channel "
                              "and CTLE settings")
        return full

    def pulse_full(self) -> tuple[np.ndarray, np.ndarray]:
        """(t_s, p): the untrimmed pulse response over the whole window, before the VGA,
        with t = 0 at the start of the transmitted UI (the bulk delay removed)."""
        shift = BULK_DELAY_UI * self.m
        p = np.roll(self._pulse_window, -shift)
        return np.arange(self.n_fft) * self.dt_s, p

    @cached_property
    def _pulse_unscaled(self) -> Pulse:
        """Pulse response of one UI of value 1 (times swing) without the VGA.

        ``link.pulse_ui`` UI are kept, or more where the response needs them: while a UI
        left out reaches DROP_TOL of the peak (a reflection beyond the span), the span
        doubles (the pre-cursor part stays at most ``pulse_ui // 4``), up to half the
        window."""
        span = pulse_ui = self.config["link"]["pulse_ui"]
        limit = self.window_ui // 2
        while True:
            p = trim_pulse(self._pulse_window, self.m, span, max_pre=pulse_ui // 4)
            if p.dropped_peak < DROP_TOL:
                return p
            if span >= limit:
                raise ConfigError(
                    f"link.window_ui = {self.window_ui}: the pulse response still reaches "
                    f"{p.dropped_peak:.2g} of its peak beyond the {span} UI that half the "
                    f"window can hold; set link.window_ui to {2 * self.window_ui}")
            span = min(2 * span, limit)

    @cached_property
    def vga_gain(self) -> float:
        """Gain that puts +-clip_sigma x (rms ADC input) at the ADC full scale."""
        p = self._pulse_unscaled
        h = p.taps
        sig = self.level_power * float(h @ h)
        tx = self.tx_noise_sigma ** 2 * float(h @ h)
        rms = np.sqrt(sig + tx + self._noise_unscaled.variance)
        return float(self.config["adc"]["fullscale_v"] / 2.0
                     / (self.config["adc"]["clip_sigma"] * rms))

    @cached_property
    def pulse(self) -> Pulse:
        """Pulse response at the ADC input (after the VGA)."""
        p = self._pulse_unscaled
        return Pulse(fine=p.fine * self.vga_gain, m=p.m, phase=p.phase, cursor=p.cursor,
                     dropped_energy=p.dropped_energy, dropped_peak=p.dropped_peak)

    @cached_property
    def level_power(self) -> float:
        """E[a^2] of equiprobable symbol levels."""
        return float(np.mean(self.levels ** 2))

    @cached_property
    def tx_noise_sigma(self) -> float:
        """Std of the TX noise per symbol value (unitless, like the levels)."""
        return txm.tx_noise_sigma(self.level_power, self.config["tx"]["snr_db"])

    # -- noise --------------------------------------------------------------------------
    @cached_property
    def _noise_unscaled(self) -> Noise:
        eta0 = self.config["noise"]["eta0_v2_per_ghz"] * 1e-9  # V^2/Hz, one-sided
        psd = eta0 * np.abs(self.h_rx) ** 2
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
        """R[k] for k = 0 .. lags-1 of all white-ish noise at the ADC output that the
        equalizer design should know: coloured RX noise, TX noise through the pulse,
        ADC quantization/ENOB noise and random jitter through the pulse slope."""
        r = np.zeros(lags)
        n = min(lags, self.noise.autocorr.shape[0])
        r[:n] = self.noise.autocorr[:n]
        h = self.pulse.taps
        ac = np.correlate(h, h, mode="full")[h.shape[0] - 1:]
        n = min(lags, ac.shape[0])
        r[:n] += self.tx_noise_sigma ** 2 * ac[:n]
        r[0] += self.adc.noise_v2
        rj = self.config["noise"]["rj_ui"]
        if rj > 0:
            slope = (self.pulse.at_offset(0.5) - self.pulse.at_offset(-0.5)) * self.m
            r[0] += (rj ** 2) * self.level_power * float(slope @ slope)
        return r

    def summary(self) -> dict:
        c = self.config
        return {
            "symbol_rate_hz": self.symbol_rate_hz,
            "modulation": c["link"]["modulation"],
            "channel": c["channel"]["model"] + (f" {c['channel']['file']}"
                                               if c["channel"]["model"] == "touchstone" else ""),
            "il_nyquist_db": self.il_nyquist_db,
            "pulse_ui": self.pulse.n_ui,
            "window_ui": self.window_ui,
            "cursor_v": float(self.pulse.taps[self.pulse.cursor]),
            "vga_gain_db": 20 * np.log10(self.vga_gain),
            "noise_rms_v": float(np.sqrt(self.noise.variance)),
        }


def trim_pulse(full: np.ndarray, m: int, max_ui: int, tol: float = TRIM_TOL,
               max_pre: int | None = None) -> Pulse:
    """Cut a fine-grid pulse to the UIs around its peak that matter.

    The sampling phase is the fine-grid position of the peak (the phase that
    maximizes the main cursor). UIs are kept while their largest sample is at least
    ``tol`` of the peak; at most ``max_ui`` UIs, trimming pre-cursors first, and at
    most ``max_pre`` (default ``max_ui // 4``) UIs before the cursor.
    """
    n_ui_all = full.shape[0] // m
    ipk = int(np.argmax(full))
    phase = ipk % m
    c0 = ipk // m
    # UI cell j covers fine samples centred on the sampling instant phase + j*m
    half = m // 2
    start0 = phase - half
    padded = np.concatenate([full, full])  # circular window
    cells = np.array([np.max(np.abs(padded[(start0 + j * m) % full.shape[0]:][:m]))
                      for j in range(n_ui_all)])
    peak = full[ipk]
    big = np.nonzero(cells >= tol * peak)[0]
    first, last = int(big[0]), int(big[-1])
    first = max(first, c0 - (max_ui // 4 if max_pre is None else max_pre))
    last = min(last, first + max_ui - 1)
    n_ui = last - first + 1
    start = start0 + first * m
    idx = (start + np.arange(n_ui * m)) % full.shape[0]
    fine = np.ascontiguousarray(full[idx])
    dropped = 1.0 - float(fine @ fine) / float(full @ full)
    out = np.concatenate([cells[:first], cells[last + 1:]]) if n_ui < n_ui_all else cells[:0]
    dropped_peak = float(np.max(out)) / peak if out.size else 0.0
    return Pulse(fine=fine, m=m, phase=half, cursor=c0 - first, dropped_energy=max(dropped, 0.0),
                 dropped_peak=dropped_peak)


def noise_model(psd_one_sided: np.ndarray, dt_s: float, m: int) -> Noise:
    """Autocorrelation at symbol spacing and a colouring FIR for a one-sided PSD (V^2/Hz)
    given on an rfft grid of a window of n_fft = 2 (len - 1) fine samples."""
    n_fft = 2 * (psd_one_sided.shape[0] - 1)
    # R(tau) = int_0^inf S(f) cos(2 pi f tau) df  ->  irfft with the trapezoid weights
    r_fine = np.fft.irfft(psd_one_sided, n=n_fft) / (2.0 * dt_s)
    r_sym = np.ascontiguousarray(r_fine[::m])
    if not np.any(r_sym):
        return Noise(autocorr=r_sym, fir=np.zeros(1))
    s_sym = np.maximum(np.fft.rfft(r_sym).real, 0.0)  # symbol-rate (aliased) PSD
    g = np.fft.irfft(np.sqrt(s_sym), n=r_sym.shape[0])  # zero-phase, circular
    half = r_sym.shape[0] // 2
    g = np.roll(g, half)
    e = g ** 2
    total = e.sum()
    # smallest symmetric span around the centre holding all but 1e-12 of the energy
    k = 0
    while k < half - 1 and e[half - k:half + k + 1].sum() < total * (1 - 1e-12):
        k += 1
    fir = np.ascontiguousarray(g[half - k:half + k + 1])
    return Noise(autocorr=r_sym, fir=fir)
