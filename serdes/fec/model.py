"""Burst-aware extrapolation of the frame loss ratio from counted error statistics.

A counted run gives the error *events* of the data symbols: errors closer than
:data:`GAP` symbols belong to one event (a DFE error-propagation burst; with 1/(1+D)
precoding the two data errors at its ends). Events are taken to arrive independently
at the counted rate rho per line symbol, each with an error pattern drawn from the
counted ones. One interleave group spans G line symbols; an event lands on a uniform
phase of the RS symbol grid (10 bits = 5 PAM4 symbols, times the interleave) and hits
``j`` symbols of codeword A with probability q_j (from the counted patterns over all
phases). The number of RS symbol errors of a codeword is then compound Poisson,
exp(rho G (Q(z) - 1)), evaluated exactly by the Panjer recursion
P_k = (lambda / k) sum_j j q_j P_{k-j}; the frame loss ratio is the tail sum beyond t
(summed term by term, so values far below what can be counted keep their digits).
With single-symbol events and no interleave (q_1 = 1) it is the Poisson limit of the
binomial (N, p) of independent symbol errors, to which :func:`binomial` gives the
exact form.

Left out: events straddling two interleave groups are treated as if inside one (they
are rare when events are short against G = 2720 or 5440 symbols), and the model
assumes the decoder never miscorrects (it counts any codeword beyond t as lost).
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


def hit_distribution(patterns: Counter, spec: FecSpec, m: int) -> np.ndarray:
    """q_j: probability that one event hits j symbols of codeword A of its group, from
    ``patterns`` (Counter of offset tuples -> count), every RS-grid phase equally likely."""
    s = M // (1 if m == 2 else 2)       # line symbols per RS symbol
    il = spec.interleave
    phases = np.arange(s * il)
    q = np.zeros(spec.n + 1)
    total = 0
    for offs, count in patterns.items():
        o = np.asarray(offs, dtype=np.int64)
        r = (phases[:, None] + o[None, :]) // s
        for row in r:
            u = np.unique(row)
            q[min(int(np.sum(u % il == 0)), spec.n)] += count
        total += count * phases.size
    return q / total if total else q


def compound_poisson(lam: float, q: np.ndarray, n: int) -> np.ndarray:
    """P(K = k), k = 0..n, of a Poisson(lam) sum of independent hits distributed as q."""
    p = np.zeros(n + 1)
    p[0] = np.exp(-lam * (1.0 - q[0]))
    jq = np.arange(q.size) * q
    for k in range(1, n + 1):
        j = np.arange(1, min(k, q.size - 1) + 1)
        p[k] = lam / k * float(np.sum(jq[j] * p[k - j]))
    return p


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


def predict(patterns: Counter, events: int, line_symbols: int, spec: FecSpec, m: int,
            bits_per_symbol_error: float) -> dict:
    """The model's per-codeword error distribution, FLR and post-FEC BER."""
    if events == 0 or line_symbols == 0:
        return {"flr": 0.0, "post_fec_ber": 0.0, "events": 0, "event_rate": 0.0,
                "errors_per_codeword": [1.0]}
    q = hit_distribution(patterns, spec, m)
    rate = events / line_symbols
    lam = rate * spec.line_symbols(m)
    pk = compound_poisson(lam, q, spec.n)
    return {"flr": tail(pk, spec.t),
            "post_fec_ber": post_fec_ber(pk, spec.t, spec.n, bits_per_symbol_error),
            "events": int(events), "event_rate": rate,
            "symbols_hit_per_event": float(np.dot(np.arange(q.size), q) / max(1e-300, 1 - q[0]))
            if q[0] < 1 else 0.0,
            "errors_per_codeword": [float(v) for v in pk[:2 * spec.t + 1]]}
