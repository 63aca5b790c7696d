"""The COM reference receiver filter: a 4th-order Butterworth low-pass (IEEE 802.3
eq. 93A-20) with its -3 dB point at ``f_r * f_b``.

With ``x = f / (f_r f_b)`` and ``s = j x`` the normalised 4th-order Butterworth is

    H = 1 / ((s^2 + 2 sin(pi/8) s + 1)(s^2 + 2 sin(3 pi/8) s + 1))
      = 1 / (1 - 3.4142 x^2 + x^4 + j 2.6131 (x - x^3)),

so ``|H|^2 = 1 / (1 + x^8)``: -3.01 dB at ``f_r f_b`` and -80 dB/decade above it.
"""

from __future__ import annotations

import math

import numpy as np

from serdes.errors import ConfigError
from serdes.validate import freq_array as _freq_array

__all__ = ["ButterworthFilter", "butterworth_response"]

_B1 = 2.0 * (math.sin(math.pi / 8) + math.sin(3 * math.pi / 8))  # 2.6131
_B2 = 2.0 + 4.0 * math.sin(math.pi / 8) * math.sin(3 * math.pi / 8)  # 3.4142


def butterworth_response(f_hz, f3db_hz: float) -> np.ndarray:
    """The 4th-order Butterworth of eq. 93A-20 with its -3 dB point at ``f3db_hz``."""
    f = _freq_array(f_hz)
    if not (math.isfinite(f3db_hz) and f3db_hz > 0):
        raise ConfigError(f"Butterworth -3 dB frequency = {f3db_hz!r} Hz: must be > 0")
    x = f / float(f3db_hz)
    return (1.0 / (1.0 - _B2 * x ** 2 + x ** 4 + 1j * _B1 * (x - x ** 3))).astype(np.complex128)


class ButterworthFilter:
    """RX stage: the COM reference receiver filter at ``f_r * symbol_rate_hz``."""

    def __init__(self, *, f_r: float, symbol_rate_hz: float):
        if not (math.isfinite(f_r) and 0.05 <= f_r <= 4.0):
            raise ConfigError(f"afe.f_r = {f_r!r} is not allowed: expected a number in [0.05, 4]")
        self.f_r = float(f_r)
        self.symbol_rate_hz = float(symbol_rate_hz)

    @property
    def f3db_hz(self) -> float:
        return self.f_r * self.symbol_rate_hz

    def response(self, f_hz) -> np.ndarray:
        return butterworth_response(f_hz, self.f3db_hz)

    def describe(self) -> str:
        return f"Butterworth 4th order at {self.f_r:g} f_b ({self.f3db_hz / 1e9:.4g} GHz)"
