"""Burst-aware extrapolation of the frame loss ratio from counted error statistics.

A counted run gives the error *events* of the data symbols: errors closer than
:data:`GAP` symbols belong to one event (a DFE error-propagation burst; with 1/(1+D)
precoding the two data errors at its ends). The model is the renewal process those
events come from (:mod:`serdes.fec.renewal`): at each quiet line symbol an event starts
with the counted probability r, its error pattern is drawn from the counted ones, and
after its last error GAP error-free symbols end it. An event lands on the RS grid (10
bits = 5 PAM4 symbols, times the interleave) at the phase of its start and hits the
symbols of codeword A its errors fall in. The distribution of RS symbol errors per
codeword then follows exactly by dynamic programming over the codeword's line symbols,
and the frame loss ratio is its tail beyond t, summed term by term, so values far below
anything countable (1e-15 and less) keep their digits. With independent errors this is
the binomial (:func:`binomial`) - not a Poisson sum of events, which would count two
independent errors that happen to be close both as a pair and as two singles.

Left out: an event that starts in one interleave group and ends in the next counts all
its hits in the first (rare when events are short against G = 2720 or 5440 symbols), and
the model takes every codeword beyond t as lost (it does not model miscorrection, which
the counted run reports separately).
"""

from __future__ import annotations

from collections import Counter

import numpy as np

from serdes.fec.framing import FecSpec
from serdes.fec.gf import M

GAP = 16  # errors at most this many symbols apart are one event


def events_of(pos: np.ndarray) -> list[np.ndarray]:
    """Split increasing error positions into events (gaps up to :data:`GAP`)."""
    if pos.size == 0:
        return []
    cut = np.nonzero(np.diff(pos) > GAP)[0] + 1
    return np.split(pos, cut)


def hits_by_phase(offsets, spec: FecSpec, m: int) -> np.ndarray:
    """RS symbols of codeword A an event with these error ``offsets`` hits, for each
    start phase 0 .. s * interleave - 1 on the RS grid (s line symbols per RS symbol)."""
    s = M // (1 if m == 2 else 2)
    il = spec.interleave
    r = (np.arange(s * il)[:, None] + np.asarray(offsets, dtype=np.int64)[None, :]) // s
    return np.array([int(np.sum(np.unique(row) % il == 0)) for row in r], dtype=np.int64)


def hit_distribution(patterns: Counter, spec: FecSpec, m: int) -> np.ndarray:
    """q_j: probability that one event hits j symbols of codeword A, every phase equally
    likely (a summary of the patterns; the model itself keeps the phase)."""
    q = np.zeros(spec.n + 1)
    for offs, count in patterns.items():
        for h in hits_by_phase(offs, spec, m):
            q[min(int(h), spec.n)] += count
    return q / q.sum() if q.sum() else q


def binomial(p: float, n: int) -> np.ndarray:
    """P(K = k) for n independent symbols each wrong with probability p."""
    from scipy.stats import binom

    return binom.pmf(np.arange(n + 1), n, p)


def binomial_flr(p: float, n: int, t: int) -> float:
    from scipy.stats import binom

    return float(binom.sf(t, n, p))


def tail(pk: np.ndarray, t: int) -> float:
    return float(np.sum(pk[t + 1:][::-1]))


def post_fec_ber(pk: np.ndarray, t: int, n: int, bits_per_symbol_error: float) -> float:
    """Bit errors left per payload bit: a lost codeword keeps its k errors (k n_bits/10
    of them land in the payload, the same fraction as the payload's share)."""
    k = np.arange(pk.size)
    return float(np.sum((pk * k)[t + 1:][::-1]) * bits_per_symbol_error / (n * M))


KMAX = 64  # the model's last bin holds 64 or more RS symbol errors per codeword


def predict(patterns: Counter, events: int, line_symbols: int, spec: FecSpec, m: int,
            bits_per_symbol_error: float) -> dict:
    """The model's per-codeword error distribution, FLR and post-FEC BER from the counted
    event ``patterns`` (Counter of offset tuples), the number of ``events`` and of
    ``line_symbols`` observed."""
    from serdes.fec.renewal import window_hits

    if events == 0 or line_symbols == 0 or not patterns:
        return {"flr": 0.0, "post_fec_ber": 0.0, "events": int(events), "event_rate": 0.0,
                "errors_per_codeword": [1.0]}
    s = M // (1 if m == 2 else 2)
    classes: dict = {}
    kept = 0
    used = 0.0  # line symbols an event takes: its span, then GAP quiet ones
    for offs, count in patterns.items():
        key = (int(offs[-1]), tuple(hits_by_phase(offs, spec, m)))
        classes[key] = classes.get(key, 0) + count
        kept += count
        used += count * (offs[-1] + 1 + GAP)
    keys = list(classes)
    prob = np.array([classes[k] for k in keys], dtype=np.float64) / kept
    span = np.array([k[0] for k in keys], dtype=np.int64)
    hits = np.array([k[1] for k in keys], dtype=np.int64)
    trials = line_symbols - events * (used / kept - 1.0)  # quiet symbols + event starts
    r = min(1.0, events / trials) if trials > 0 else 1.0
    pk = window_hits(r, prob, span, hits, gap=GAP, window=spec.line_symbols(m),
                     period=s * spec.interleave, kmax=KMAX)
    q = hit_distribution(patterns, spec, m)
    return {"flr": tail(pk, spec.t),
            "post_fec_ber": post_fec_ber(pk, spec.t, spec.n, bits_per_symbol_error),
            "events": int(events), "event_rate": r,
            "symbols_hit_per_event": float(np.dot(np.arange(q.size), q)),
            "errors_per_codeword": [float(v) for v in pk[:2 * spec.t + 2]]}
