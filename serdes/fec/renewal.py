"""Kernel of the burst model: the distribution of RS symbol errors of one codeword when
error events follow a renewal process along the line symbols (see
:mod:`serdes.fec.model`).

At each quiet line symbol an event starts with probability ``r``; it is of class ``c``
(probability ``prob[c]``), hits ``hits[c, phase]`` symbols of the codeword for its start
phase on the RS grid (``phase = position % period``) and its last error is ``span[c]``
symbols after its start; then ``gap`` error-free symbols follow (that is what ends an
event) before the line is quiet again. For independent errors this is exactly the
process the counted clusters come from, so the result is the binomial, not a Poisson
approximation that would count close pairs twice.
"""

from __future__ import annotations

import numpy as np
from numba import njit

from serdes.errors import ConfigError


@njit(cache=True)
def _window_hits(r, prob, span, hits, gap, window, period, kmax):
    nc = prob.shape[0]
    f = np.zeros((window + 1, kmax + 1))
    f[0, 0] = 1.0
    for pos in range(window):
        row = f[pos]
        tot = 0.0
        for k in range(kmax + 1):
            tot += row[k]
        if tot == 0.0:
            continue
        nxt = f[pos + 1]
        for k in range(kmax + 1):
            nxt[k] += (1.0 - r) * row[k]
        ph = pos % period
        for c in range(nc):
            w = r * prob[c]
            if w == 0.0:
                continue
            h = hits[c, ph]
            to = pos + span[c] + gap + 1
            if to > window:
                to = window
            dst = f[to]
            for k in range(kmax + 1):
                kk = k + h
                if kk > kmax:
                    kk = kmax
                dst[kk] += w * row[k]
    return f[window].copy()


def window_hits(r: float, prob, span, hits, *, gap: int, window: int, period: int,
                kmax: int) -> np.ndarray:
    """P(K = k), k = 0..kmax (the last bin: kmax or more) for one codeword."""
    if not 0.0 <= r <= 1.0:
        raise ConfigError(f"event probability r = {r!r}: must be in 0..1")
    prob = np.ascontiguousarray(prob, dtype=np.float64)
    span = np.ascontiguousarray(span, dtype=np.int64)
    hits = np.ascontiguousarray(hits, dtype=np.int64)
    if hits.ndim != 2 or hits.shape != (prob.shape[0], int(period)) or span.shape != prob.shape:
        raise ConfigError("window_hits: prob, span (classes) and hits (classes x period) "
                          "do not match")
    return _window_hits(float(r), prob, span, hits, int(gap), int(window), int(period),
                        int(kmax))
