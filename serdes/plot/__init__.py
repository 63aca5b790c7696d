"""Plots. matplotlib is imported only by the modules of this package, and they are
imported only when used: ``import serdes`` and ``import serdes.plot`` stay free of it.

Every plot function takes ``ax=`` (a matplotlib Axes; a new figure when omitted) and
returns the Axes. Eye diagrams and bathtubs: :mod:`serdes.plot.eye`; equalizer
taps: :mod:`serdes.plot.taps`.
"""

from __future__ import annotations

import importlib

_EYE = ("analog_eye", "statistical_eye", "equalized_eye", "horizontal_bathtub",
        "vertical_bathtub", "save_figure")
_TAPS = ("ffe_taps", "dfe_taps")


def __getattr__(name):  # lazy: serdes.plot.analog_eye imports serdes.plot.eye on first use
    if name in _EYE:
        return getattr(importlib.import_module("serdes.plot.eye"), name)
    if name in _TAPS:
        return getattr(importlib.import_module("serdes.plot.taps"), name)
    raise AttributeError(f"module 'serdes.plot' has no attribute {name!r}")


def new_axes(ax=None, *, figsize=(7.0, 4.5), file_backend: bool = False):
    """``ax`` itself, or the Axes of a new figure (Agg backend when ``file_backend``)."""
    if ax is not None:
        return ax
    import matplotlib

    if file_backend:
        matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    _, ax = plt.subplots(figsize=figsize)
    return ax
