"""Jitter tolerance curve (``serdes jtol``) against the 802.3 template, log-log."""

from __future__ import annotations

import numpy as np

from serdes.plot import new_axes


def plot_jtol(out: dict, symbol_rate_hz: float, ax=None):
    """The tolerated SJ amplitude per frequency (statistical and counted where present)
    and the template (:func:`serdes.jtol.template_ui`) on log axes."""
    from serdes.jtol import template_ui

    ax = new_axes(ax)
    pts = out["points"]
    f = np.array([p["sj_hz"] for p in pts])
    stat = np.array([p.get("stat_sj_ui", np.nan) for p in pts], dtype=float)
    ax.loglog(f, stat, "o-", label=f"statistical, BER {out['target_ber']:.0e}")
    if any(p.get("counted_sj_ui") is not None for p in pts):
        cnt = np.array([p.get("counted_sj_ui") or np.nan for p in pts], dtype=float)
        ax.loglog(f, cnt, "s--", label=f"counted, BER {out['target_ber']:.0e}")
    ff = np.logspace(np.log10(f.min()), np.log10(f.max()), 200)
    ax.loglog(ff, template_ui(ff, symbol_rate_hz), "k:", label="802.3 template (peak)")
    ax.set_xlabel("SJ frequency (Hz)")
    ax.set_ylabel("SJ amplitude (UI, peak)")
    ax.grid(True, which="both", alpha=0.3)
    ax.legend()
    return ax
