"""Clock recovery: the loop settings and the linear loop model.

The loop runs once per UI (the ADC's recovered clock). A baud-rate phase detector gives
e_k, ~ Kpd (theta_k - phi_k) near lock (theta: the data's phase, phi: the sampling
phase, both in UI; Kpd measured on the link, :mod:`serdes.engines.cdr`). The output
reaches the loop filter ``latency_ui`` UI later; a proportional + integral filter moves
the phase:

    I_{k+1}   = I_k + ki e_{k-L}
    phi_{k+1} = phi_k + kp e_{k-L} + I_{k+1}

and the phase interpolator applies phi rounded to 1 / ``pi_steps`` UI. For the first
``acquire_symbols`` the gains are kp g and ki g^2 (``acquire_gear`` g: the bandwidth g
times larger, same damping), so that a frequency offset is pulled in before the loop
slips many cycles; then the loop runs at its tracking bandwidth. Open loop
G(z) = Kpd z^-L (kp + ki z / (z - 1)) / (z - 1); jitter transfer H = G / (1 + G) (the
part of the data's jitter the sampler follows); 1 - H = 1 / (1 + G) is what reaches the
sampler untracked.

Gains from ``bandwidth_hz`` and ``damping``: the continuous-time limit of G is the
type-II loop (2 zeta wn s + wn^2) / s^2 with 2 zeta wn = Kpd kp / T and wn^2 = Kpd ki / T^2,
and the -3 dB bandwidth of its H is w3 = wn sqrt(1 + 2 zeta^2 + sqrt((1 + 2 zeta^2)^2 + 1)).
So wn = 2 pi bandwidth / that factor, kp = 2 zeta wn T / Kpd, ki = (wn T)^2 / Kpd. The
loop latency and the sampled update move the real bandwidth and peaking a little; the
model below (:func:`jitter_transfer`) includes both and is what the tests compare with.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from serdes.errors import ConfigError
from serdes.validate import whole_number

MODES = ("off", "mm", "ssmm", "bb")


@dataclass(frozen=True)
class CdrSettings:
    """Loop settings (see the module notes); ``mode = "off"``: fixed sampling phase."""

    mode: str = "off"
    bandwidth_hz: float = 4e6
    damping: float = 0.7
    kp: float = 0.0
    ki: float = 0.0
    latency_ui: int = 32
    pi_steps: int = 64
    lock: str = "peak"
    initial_phase_ui: float = 0.0
    warmup_symbols: int = 131072
    acquire_gear: float = 4.0
    acquire_symbols: int = 65536

    def __post_init__(self):
        if self.mode not in MODES:
            raise ConfigError(f"cdr.mode = {self.mode!r} is not allowed: expected one of "
                              + ", ".join(repr(m) for m in MODES))
        if self.lock not in ("peak", "mm"):
            raise ConfigError(f"cdr.lock = {self.lock!r}: expected 'peak' or 'mm'")
        for name, lo, open_lo in (("bandwidth_hz", 0.0, True), ("damping", 0.0, True),
                                  ("kp", 0.0, False), ("ki", 0.0, False),
                                  ("acquire_gear", 1.0, False)):
            x = getattr(self, name)
            if not (math.isfinite(x) and (x > lo if open_lo else x >= lo)):
                raise ConfigError(f"cdr.{name} = {x!r}: must be a finite number "
                                  f"{'>' if open_lo else '>='} {lo:g}")
        if not math.isfinite(self.initial_phase_ui):
            raise ConfigError(f"cdr.initial_phase_ui = {self.initial_phase_ui!r}: must be "
                              "finite")
        for name, lo in (("latency_ui", 0), ("pi_steps", 2), ("warmup_symbols", 0),
                         ("acquire_symbols", 0)):
            object.__setattr__(self, name, whole_number(f"cdr.{name}", getattr(self, name),
                                                        lo, 1 << 40))
        if self.ki > 0 and self.kp <= 0:
            raise ConfigError(f"cdr.ki = {self.ki:g} needs cdr.kp > 0 (kp > 0 gives the "
                              "gains explicitly; ki = 0 then makes a first-order loop)")

    @property
    def active(self) -> bool:
        return self.mode != "off"


def natural_frequency(bandwidth_hz: float, damping: float) -> float:
    """wn (rad/s) of the continuous type-II loop whose H has this -3 dB bandwidth."""
    z2 = 1.0 + 2.0 * damping ** 2
    return 2 * np.pi * bandwidth_hz / np.sqrt(z2 + np.sqrt(z2 * z2 + 1.0))


def gains(settings: CdrSettings, kpd: float, ui_s: float) -> tuple[float, float]:
    """(kp, ki): the explicit ones, or those of ``bandwidth_hz``/``damping`` for a phase
    detector of gain ``kpd`` (PD output per UI of phase error)."""
    if settings.kp > 0:
        return float(settings.kp), float(settings.ki)
    if not kpd > 0:
        raise ConfigError(f"cdr: the phase detector gain on this link is {kpd:.3g} (not "
                          "> 0): the loop cannot lock; give cdr.kp and cdr.ki or another "
                          "cdr.mode")
    wn_t = natural_frequency(settings.bandwidth_hz, settings.damping) * ui_s
    return 2 * settings.damping * wn_t / kpd, wn_t * wn_t / kpd


def open_loop(f_hz, kpd: float, kp: float, ki: float, latency: int, ui_s: float):
    """G(e^{j 2 pi f T}) of the sampled loop (see the module notes)."""
    z = np.exp(2j * np.pi * np.asarray(f_hz, dtype=np.float64) * ui_s)
    return kpd * z ** (-latency) * (kp + ki * z / (z - 1.0)) / (z - 1.0)


def jitter_transfer(f_hz, kpd: float, kp: float, ki: float, latency: int, ui_s: float):
    """H(f): the share of the data's phase the sampling phase follows (complex)."""
    g = open_loop(f_hz, kpd, kp, ki, latency, ui_s)
    return g / (1.0 + g)


def untracked(f_hz, kpd: float, kp: float, ki: float, latency: int, ui_s: float):
    """|1 - H(f)|: the fraction of an SJ amplitude that reaches the sampler."""
    return np.abs(1.0 / (1.0 + open_loop(f_hz, kpd, kp, ki, latency, ui_s)))


def bandwidth_and_peaking(kpd: float, kp: float, ki: float, latency: int, ui_s: float,
                          f_lo: float = 1e3) -> tuple[float, float]:
    """(-3 dB frequency of |H| in Hz, peaking max |H| in dB) of the model, on a fine
    log grid refined around the crossing."""
    f = np.logspace(np.log10(f_lo), np.log10(0.25 / ui_s), 4000)
    mag = np.abs(jitter_transfer(f, kpd, kp, ki, latency, ui_s))
    peak_db = float(20 * np.log10(mag.max()))
    below = np.nonzero(mag < 10 ** (-3 / 20))[0]
    below = below[f[below] > f[np.argmax(mag)]]
    if not below.size:
        return float("nan"), peak_db
    i = int(below[0])
    # log-linear interpolation of the crossing between f[i - 1] and f[i]
    m0, m1 = 20 * np.log10(mag[i - 1]), 20 * np.log10(mag[i])
    t = (-3.0 - m0) / (m1 - m0)
    return float(10 ** (np.log10(f[i - 1]) + t * np.log10(f[i] / f[i - 1]))), peak_db


def noise_gain(kpd: float, kp: float, ki: float, latency: int) -> float:
    """sum_k h_k^2 of the closed loop's impulse response (theta -> phi), the loop run in
    the time domain until its response has died out (:func:`serdes.kernels.cdr.impulse_energy`;
    Parseval's mean of |H|^2 over the unit circle is the test's independent check). White
    PD noise of variance s^2 (PD units) moves the phase by the variance s^2 sum h^2 / Kpd^2
    (2 B_L T). An unstable loop has no finite value: then the mean of |H|^2 over 2^20
    frequencies, a finite stand-in, as before."""
    from serdes.kernels.cdr import impulse_energy

    g = impulse_energy(kpd, kp, ki, latency)
    if np.isfinite(g):
        return float(g)
    n = 1 << 20
    f = (np.arange(n) + 0.5) / n - 0.5
    return float(np.mean(np.abs(jitter_transfer(f, kpd, kp, ki, latency, 1.0)) ** 2))


def sj_integrator(sj_ui: float, w: float, phase: float, kpd: float, kp: float, ki: float,
                  latency: int) -> float:
    """The integrator's steady-state value (UI per UI) at the SJ's symbol 0 under a data
    phase theta_k = ``sj_ui`` sin(``w`` k + ``phase``) (``w`` rad per UI): the loop's
    start under TX SJ (:class:`serdes.engines.cdr.CdrFrontEnd`).

    Jitter tolerance is the SJ a locked receiver survives: the SJ is on while the loop
    tracks it, so the loop starts in that steady state. With the integrator at zero a
    large slow SJ was a frequency step of 2 pi f A at a random SJ phase: at 10 kHz,
    818 UI (seed 1, SJ phase near pi: 967 ppm) the loop slipped 9 UI in its first 16 k
    symbols, past the sampler's 8-UI slip window, and held a false lock there (BER
    5e-2). In the loop of the module notes I = ki Kpd z^(1-L) (1 - H) / (z - 1) theta:
    far below the bandwidth the SJ's slope A w cos(phase), far above it ~0 (the loop
    does not follow; preloading the slope there would be a frequency step of its own).
    A first-order loop (ki = 0) keeps its integrator at zero."""
    if not (sj_ui > 0 and ki > 0):
        return 0.0
    z = np.exp(1j * w)
    g = kpd * z ** (-latency) * (kp + ki * z / (z - 1.0)) / (z - 1.0)
    t_i = ki * kpd * z ** (1 - latency) / ((1.0 + g) * (z - 1.0))
    return float(np.imag(t_i * sj_ui * np.exp(1j * phase)))
