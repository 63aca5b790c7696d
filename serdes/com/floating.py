"""Floating DFE taps of the 802.3ck KR and CR reference receivers (config sheets: N_bg 3
groups of N_bf 3 taps among taps N_b + 1 .. N_f = 40, each within +-bmaxg, KR 0.05, CR
0.03; the taps from N_tail_start = 25 on with a root-sum-square of at most
B_float_RSS_MAX = 0.02), as the IEEE COM code applies them for a receiver without RX
FFE (``optimize_fom``: ``floatingDFE`` / ``findbankloc`` for the positions, the DFE span
becomes N_f taps whose limits are b_min/b_max for the fixed taps, +-bmaxg at the
floating positions and 0 elsewhere, then the tail RSS limit; the same limits give the
residual ISI of the final budget). The positions are chosen per candidate from the
equalized pulse's post-cursors (rule: ``serdes/kernels/com_float.py``), so they enter
the FOM of every TX/CTLE setting and the ISI distribution at the best one.
"""

from __future__ import annotations

import numpy as np

from serdes.kernels.com_float import float_delta_rows, float_taps

__all__ = ["enabled", "span", "tail_index", "dfe_taps", "delta_rows"]


def enabled(p) -> bool:
    return p.dfe_n_bg > 0


def span(p) -> int:
    """Number of DFE taps (fixed and floating positions): N_f with floating taps, else N_b."""
    return p.dfe_n_f if enabled(p) else len(p.dfe_max)


def tail_index(p) -> int:
    """Index of N_tail_start among the floating positions (-1: no tail limit)."""
    return p.dfe_tail_start - len(p.dfe_max) - 1 if p.dfe_tail_start > 0 else -1


def _args(p):
    return p.dfe_n_bf, p.dfe_n_bg, p.dfe_bmaxg, tail_index(p), p.dfe_b_rss_max


def dfe_taps(p, post: np.ndarray, h0: float) -> np.ndarray:
    """All DFE taps (units of the cursor h0) for the post-cursors ``post`` (tap 1, 2, ...):
    the fixed taps clipped to [b_min, b_max] (eq. 93A-26 as ``dfe_clipper``), then with
    floating taps the N_f - N_b positions after them."""
    nb = len(p.dfe_max)
    post = np.asarray(post, dtype=float)
    fixed = np.clip(post[:nb] / h0, np.asarray(p.dfe_min)[:len(post[:nb])],
                    np.asarray(p.dfe_max)[:len(post[:nb])])
    if not enabled(p):
        return fixed
    flo = np.zeros(p.dfe_n_f - nb)
    seg = post[nb:p.dfe_n_f]
    flo[:len(seg)] = seg
    return np.concatenate((fixed, float_taps(flo, h0, *_args(p))))


def delta_rows(p, post_float: np.ndarray, h0: np.ndarray) -> np.ndarray:
    """Per row: the change of ISI energy the floating taps make (rows of the post-cursors
    at taps N_b + 1 .. N_f, cursor h0)."""
    return float_delta_rows(post_float, h0, *_args(p))
