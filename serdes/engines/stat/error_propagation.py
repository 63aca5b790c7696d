"""DFE error propagation: a Markov model over the previous symbol's decision error, fed by
the statistical slicer distribution."""

from __future__ import annotations

import numpy as np

from serdes.engines.stat.txjitter import replace_means

# the rows that together carry less than this share of the correct-feedback error rate
# take the other rows' ratios (with propagation, precoded) instead of chains of their own:
# an error far below the model's own (5-19 %, docstring); on the README's 64-lane example
# with a supply tone 477 of 2048 rows get chains (1046 at 1e-6)
SKIP_SHARE = 1e-3


def dfe_error_propagation(engine, offset_ui: float = 0.0,
                          max_burst: int = 16) -> dict | None:
    """Markov model of DFE error propagation (first DFE tap only).

    State: the error e = (decided - sent) level of the previous symbol. Given e, the
    DFE subtracts b_1 (a + e) instead of b_1 a, i.e. shifts the slicer input by
    -b_1 e. The next symbol's decision probabilities come from the statistical
    distribution shifted by that amount (symbols and noise taken as independent of
    the previous error, which is the model's approximation). Returns the predicted
    BER with propagation, its ratio to the error-free-feedback BER, the distribution of
    burst lengths (runs of consecutive symbol errors) and ``ber_precoded``, the BER the
    same link would count with 1/(1+D) precoding (two one-bit errors per burst).

    Measured bias (``benchmarks/mlse_fair.py --only propagation``, 2e6 symbols, RJ 0,
    counted decision-fed BER over the counted genie-fed BER of the same taps): the model
    *under-estimates* the ratio by 5-19 % and the mean burst by up to 0.85 symbols, more
    as the first tap grows - 28 dB (b1 0.60): ratio 2.35 vs 2.57 counted, mean burst 2.34
    vs 2.57; 30 dB: 2.71 vs 2.86; 33 dB: 3.06 vs 3.49; 35 dB (b1 0.78): 3.16 vs 3.88,
    burst 3.19 vs 4.04; 35 dB with 2 taps: 3.90 vs 4.14, burst 3.81 vs 3.75 (the model
    sees b1 only). The missing part is the error's dependence on the noise and ISI that
    caused the previous error (neglected here), not the Markov chain itself.

    A precoded link (``link.precoding``; "auto" turns it on for a first tap >= 0.55)
    counts decoded symbols: compare its count with ``ber_precoded``, not
    ``ber_with_propagation``. On the RJ-limited DFE links of
    tests/test_statistical_rj.py (0.02-0.05 UI RJ, b1 0.62-0.77, precoded) counted /
    ``ber_precoded`` is 0.99-1.09, every model value inside the count's 95 % interval;
    against ``ber_with_propagation`` the same counts read 0.56x (the unprecoded link's
    BER, which those links do not have).

    Jitter rows (SJ phases, dual-Dirac signs, a CDR's wander points, aggressors' SJ
    points; an interleaved ADC's output phases) each get their own chain, averaged with
    the rows' weights as the BER averages them (``engine.weighted_rows``). Against counts
    with SJ 0.1 UI and dual-Dirac 0.05 UI (1-tap DFE, 1e7 symbols) and 4 mismatched lanes
    (precoded): counted / model 0.86 (SJ, BER 1.1e-3, unprecoded), 1.02 (SJ, precoded),
    0.99 (dual-Dirac), 1.00 (lanes); ``tests/test_statistical.py``,
    ``tests/test_tiadc_ber.py``. The rows that together carry less than
    :data:`SKIP_SHARE` of the correct-feedback error rate take the others' ratios instead
    of a chain of their own.
    """
    b = engine.b
    if b.shape[0] == 0 or not np.any(b):
        return None
    # the jitter rows (SJ phases, dual-Dirac signs, a CDR's wander points, aggressors' SJ
    # points) are slow against a burst (the count holds each for thousands of UI): each
    # row has its own chain, and the rows' results are averaged with their weights, as
    # the BER is (before, the one row at the nominal phase: with SJ its "BER with
    # propagation" could be orders of magnitude below the correct-feedback BER). An
    # interleaved ADC's output phases are rows too: there the lane changes every symbol,
    # so a chain per phase is an approximation (the rates of its errors are the phases')
    m, bits = engine.m_levels, engine.bit_errors
    # two passes over the rows, none kept here (outside a holding_rows() scope one output
    # phase's rows are alive at a time): each row's correct-feedback rate, then the
    # chains of the rows that carry all but SKIP_SHARE of it
    rates = [(float(w), float((dist.decision_matrix() * bits).sum() / m)
              / dist.bits_per_symbol) for w, dist in engine.weighted_rows(offset_ui)]
    all_rate = sum(w * f for w, f in rates)
    chained, rest, kept = set(), 0.0, 0.0
    for i in sorted(range(len(rates)), key=lambda i: -rates[i][0] * rates[i][1]):
        w, f = rates[i]
        if chained and all_rate - kept <= SKIP_SHARE * all_rate:
            rest += w * f
            continue
        chained.add(i)
        kept += w * f
    chains = [(float(w), _chain(engine, dist, b[0], max_burst))
              for i, (w, dist) in enumerate(engine.weighted_rows(offset_ui)) if i in chained]
    ber_free = sum(w * c["ber_free"] for w, c in chains)
    scale = (1.0 + rest / ber_free) if rest and ber_free > 0 else 1.0
    ber_prop = sum(w * c["ber_prop"] for w, c in chains) * scale
    ber_free += rest
    ber_pre = sum(w * c["ber_pre"] for w, c in chains) * scale
    err_mass = sum(w * c["err_mass"] for w, c in chains)
    err_leave = sum(w * c["err_leave"] for w, c in chains)
    p_ee = float(1.0 - err_leave / err_mass) if err_mass > 0 else 0.0
    # the burst lengths of all rows, each row's share its rate of bursts
    rate = [w * c["bursts"] for w, c in chains]
    total = sum(rate)
    hist: dict[int, float] = {}
    if total > 0:
        for r, (_, c) in zip(rate, chains):
            q = r / total
            for L, pl in c["hist"].items():
                hist[L] = hist.get(L, 0.0) + q * pl
    mean_len = sum(L * p for L, p in hist.items()) / max(sum(hist.values()), 1e-300)
    return {"ber_with_propagation": ber_prop, "ber_correct_feedback": ber_free,
            "ber_precoded": ber_pre,
            "ratio": ber_prop / ber_free if ber_free > 0 else float("nan"),
            "p_error_after_error": p_ee,
            "mean_burst_length": float(mean_len),
            "burst_length_pmf": {int(L): float(p) for L, p in sorted(hist.items())
                                 if p > 1e-9}}


def _chain(engine, dist, b1: float, max_burst: int) -> dict:
    """The Markov chain of one row's slicer distribution ``dist`` (module docstring):
    its BERs with and without propagation and precoded, the stationary mass of the
    error states and the rate at which it leaves them, the bursts per symbol and the
    burst-length distribution."""
    m = engine.m_levels
    lv = engine.levels
    bits = engine.bit_errors
    bps = dist.bits_per_symbol
    # error values e = lv[j] - lv[i]; index states by (i, j) pair's difference
    diffs = sorted({round(float(lv[j] - lv[i]), 12) for i in range(m) for j in range(m)})
    idx = {d: k for k, d in enumerate(diffs)}
    ns = len(diffs)
    T = np.zeros((ns, ns))       # T[s, s'] = P(next error state s' | state s)
    bit_rate = np.zeros(ns)      # expected bit errors of the next symbol given state s
    for s, e in enumerate(diffs):
        shift = -b1 * e
        shifted = replace_means(dist, dist.means + shift)
        P = shifted.decision_matrix()
        for i in range(m):
            P[i, i] = 1.0 - P[i].sum() + P[i, i]
            P[i, i] = max(P[i, i], 0.0)
        for i in range(m):
            for j in range(m):
                T[s, idx[round(float(lv[j] - lv[i]), 12)]] += P[i, j] / m
        bit_rate[s] = float((P * bits).sum() / m)
    s0 = idx[0.0]
    err = np.arange(ns) != s0
    pi = _stationary(T, s0, err)
    # burst lengths: start from the error state distribution right after a clean symbol
    start = T[s0].copy()
    start[s0] = 0.0
    p_start = start.sum()
    hist = {}
    if p_start > 0:
        cur = start / p_start
        Te = T.copy()
        for L in range(1, max_burst + 1):
            stop = float(cur @ Te[:, s0])     # the next symbol is clean
            hist[L] = stop
            cur = cur @ Te
            cur[s0] = 0.0
            if cur.sum() < 1e-12:
                break
    # with 1/(1+D) precoding a burst of line errors that alternate (e, -e, ..: what a
    # large b1 makes) decodes to two symbol errors of one level, one bit each (Gray),
    # at its ends: BER ~ 2 x (bursts per symbol) / bits per symbol
    bursts_per_symbol = float(pi[s0] * p_start)
    return {"ber_prop": float(pi @ bit_rate) / bps, "ber_free": float(bit_rate[s0]) / bps,
            "ber_pre": 2.0 * bursts_per_symbol / bps,
            "err_mass": float(pi[err].sum()), "err_leave": float(pi[err] @ T[err, s0]),
            "bursts": bursts_per_symbol, "hist": hist}


def _stationary(T: np.ndarray, s0: int, err: np.ndarray) -> np.ndarray:
    """The stationary distribution of T, from the error states' balance: pi_err =
    pi_0 a (I - T_ee)^-1 with a = T[s0, err], every term non-negative, so the error
    states' mass keeps its relative precision however small (an eigenvector of T has
    an absolute error near 1e-16: at BER 1e-18 that was the whole answer, and a BER
    could come out negative); the eigenvector where that system is singular (an error
    state that never returns)."""
    a = T[s0, err]
    try:
        x = np.linalg.solve(np.eye(a.shape[0]) - T[np.ix_(err, err)].T, a)
    except np.linalg.LinAlgError:
        x = None
    if x is None or not np.all(np.isfinite(x)):
        evals, evecs = np.linalg.eig(T.T)
        pi = np.real(evecs[:, int(np.argmin(np.abs(evals - 1.0)))])
        return pi / pi.sum()
    x = np.maximum(x, 0.0)
    pi = np.empty(T.shape[0])
    pi[s0] = 1.0 / (1.0 + x.sum())
    pi[err] = pi[s0] * x
    return pi
