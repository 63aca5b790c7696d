"""The time/frequency grid every analog stage is evaluated on.

One window of ``window_ui`` UI sampled ``samples_per_ui`` times per UI: the fine time
step is ``dt_s = ui_s / samples_per_ui`` and the frequencies are the rfft grid of that
window, ``f_hz = k / (window_ui * ui_s)``, k = 0 .. n_fft/2.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import cached_property

import numpy as np

from serdes.errors import ConfigError

BULK_DELAY_UI = 8  # shift so that TX pre-cursor taps never wrap around the window


@dataclass(frozen=True)
class Grid:
    """Symbol rate, oversampling and FFT window of a link model."""

    symbol_rate_hz: float = 53.125e9
    samples_per_ui: int = 32
    window_ui: int = 1024

    def __post_init__(self):
        if not (np.isfinite(self.symbol_rate_hz) and self.symbol_rate_hz > 0):
            raise ConfigError(f"symbol_rate_hz = {self.symbol_rate_hz!r}: must be > 0")
        for name in ("samples_per_ui", "window_ui"):
            v = getattr(self, name)
            if isinstance(v, bool) or not isinstance(v, (int, np.integer)) or v < 2:
                raise ConfigError(f"{name} = {v!r}: must be an integer >= 2")

    @property
    def m(self) -> int:
        """Samples per UI (the oversampling factor)."""
        return int(self.samples_per_ui)

    @property
    def ui_s(self) -> float:
        return 1.0 / self.symbol_rate_hz

    @property
    def dt_s(self) -> float:
        return self.ui_s / self.m

    @property
    def n_fft(self) -> int:
        return int(self.window_ui) * self.m

    @property
    def nyquist_hz(self) -> float:
        return self.symbol_rate_hz / 2.0

    @cached_property
    def f_hz(self) -> np.ndarray:
        return np.fft.rfftfreq(self.n_fft, self.dt_s)

    def with_window(self, window_ui: int) -> "Grid":
        return Grid(self.symbol_rate_hz, self.samples_per_ui, int(window_ui))
