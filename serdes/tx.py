"""Transmitter: FFE, driver edge (20-80 % rise time), TX noise.

The driver sends a rectangular pulse of one UI with amplitude ``swing_v`` per unit
symbol (outer PAM levels at +-swing_v). Its edges are shaped by a Gaussian filter
whose step response has the requested 20-80 % rise time:

    H_r(f) = exp(-2 (pi f T_r / 1.6832)^2),   1.6832 = 2 * Phi^-1(0.8)

(the form of IEEE 802.3 Annex 93A). The FFE is a symbol-spaced FIR, modelled in the
frequency domain as sum_i c_i exp(-j 2 pi f (i - main) T). TX noise is white noise on
the symbol values with variance E[a^2] 10^(-SNR_TX/10), so it reaches the receiver
through the same pulse response as the data (as in COM).
"""

from __future__ import annotations

import numpy as np

from serdes.errors import ConfigError
from serdes.validate import finite_float, float_in, whole_number

RISE_20_80 = 1.6832  # 20-80 % rise time of a Gaussian step, in units of its sigma
EDGE_LEAD_SIGMA = 5.0  # the edge filter's reach before t = 0, in sigmas


def rise_filter(f_hz, rise_time_s):
    """Gaussian edge filter with the given 20-80 % rise time (1 at DC)."""
    f_hz = np.asarray(f_hz, dtype=np.float64)
    return np.exp(-2.0 * (np.pi * f_hz * rise_time_s / RISE_20_80) ** 2).astype(np.complex128)


def ffe_response(f_hz, taps, main, ui_s):
    """Frequency response of a symbol-spaced TX FFE whose tap ``main`` is at t = 0."""
    f_hz = np.asarray(f_hz, dtype=np.float64)
    h = np.zeros(f_hz.shape, dtype=np.complex128)
    for i, c in enumerate(taps):
        h += c * np.exp(-2j * np.pi * f_hz * (i - main) * ui_s)
    return h


def tx_noise_sigma(level_power, snr_db):
    """Standard deviation of the TX noise added to each symbol value."""
    return float(np.sqrt(level_power * 10.0 ** (-snr_db / 10.0)))


class TxFfe:
    """TX FFE stage: symbol-spaced taps ``taps`` with ``taps[main]`` the cursor c(0)."""

    def __init__(self, *, taps, main: int, symbol_rate_hz: float):
        self.taps = [finite_float("TX FFE tap", c, "finite taps") for c in taps]
        if not any(self.taps):
            raise ConfigError(f"TX FFE taps = {self.taps}: allowed a list with a non-zero "
                              "tap")
        self.main = whole_number("TX FFE main", main, 0, len(self.taps) - 1)
        self.ui_s = 1.0 / float_in("TX FFE symbol_rate_hz", symbol_rate_hz, "a rate > 0 Bd",
                                   above=0.0)

    def response(self, f_hz) -> np.ndarray:
        return ffe_response(f_hz, self.taps, self.main, self.ui_s)

    @property
    def lead_s(self) -> float:
        """The earliest non-zero pre-cursor tap's advance (s)."""
        first = next((i for i, c in enumerate(self.taps) if c != 0.0), self.main)
        return max(self.main - first, 0) * self.ui_s

    def describe(self) -> str:
        return "TX FFE [" + ", ".join(f"{c:g}" for c in self.taps) + "]"


class TxEdge:
    """Driver edge stage: Gaussian filter with a 20-80 % rise time ``rise_time_s``."""

    def __init__(self, *, rise_time_s: float):
        self.rise_time_s = float_in("rise_time_s", rise_time_s, "a finite time >= 0 s",
                                    at_least=0.0)

    def response(self, f_hz) -> np.ndarray:
        return rise_filter(f_hz, self.rise_time_s)

    @property
    def lead_s(self) -> float:
        """The zero-phase Gaussian reaches before t = 0: 5 sigma, where it is 3.7e-6 of
        its peak."""
        return EDGE_LEAD_SIGMA * self.rise_time_s / RISE_20_80

    def describe(self) -> str:
        return f"TX edge {self.rise_time_s * 1e12:g} ps"
