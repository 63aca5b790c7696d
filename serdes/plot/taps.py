"""Equalizer taps: the FFE relative to its main tap, the DFE in units of the main cursor.

The FFE weights themselves are in 1/V (ADC-input volts in, normalised symbol units
out: a main tap of 15 /V times a 70 mV cursor gives about 1), a scale set by the VGA
and the swing, not by the equalizer's shape; relative to the main tap the shapes of
different designs compare directly. The DFE taps are already in units of the main
cursor at the slicer.
"""

from __future__ import annotations

import numpy as np
from matplotlib.ticker import MaxNLocator

from serdes.plot import new_axes


def ffe_taps(taps, pre: int, ax=None, *, label: str | None = None, shift: float = 0.0,
             colour=None):
    """Stem plot of FFE taps divided by the main tap (index ``pre``), against the tap
    position in UI from the main tap. ``shift`` moves the stems sideways so that
    several designs can share an axis."""
    ax = new_axes(ax)
    w = np.asarray(taps, dtype=np.float64)
    main = float(w[pre])
    if main == 0.0:
        raise ValueError("the main FFE tap is 0: nothing to normalise to")
    k = np.arange(w.shape[0]) - pre
    return _stems(ax, k + shift, w / main, f"{label or 'FFE'} (main {main:.3g} /V)", colour,
                  "FFE tap, UI from the main tap", "tap / main tap",
                  "FFE taps (relative to the main tap)")


def dfe_taps(taps, ax=None, *, label: str | None = None, shift: float = 0.0, colour=None):
    """Stem plot of DFE taps (post-cursors 1, 2, ...) in units of the main cursor."""
    ax = new_axes(ax)
    b = np.asarray(taps, dtype=np.float64)
    return _stems(ax, np.arange(1, b.shape[0] + 1) + shift, b, label or "DFE", colour,
                  "DFE tap (post-cursor, UI)", "tap / main cursor", "DFE taps")


def _stems(ax, x, y, label, colour, xlabel, ylabel, title):
    """The stem plot both tap plots draw: integer ticks, a zero line, grid and legend."""
    stem = ax.stem(x, y, basefmt=" ", label=label)
    if colour is not None:
        stem.markerline.set_color(colour)
        stem.stemlines.set_color(colour)
    ax.axhline(0, color="grey", lw=0.5)
    ax.xaxis.set_major_locator(MaxNLocator(integer=True))
    ax.set_xlabel(xlabel)
    ax.set_ylabel(ylabel)
    ax.set_title(title)
    ax.grid(alpha=0.3)
    ax.legend(fontsize=8)
    return ax
