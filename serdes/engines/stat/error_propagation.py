"""DFE error propagation: a Markov model over the last symbols' decision errors (one per
DFE tap, up to MAX_STATES states), fed by the statistical slicer distribution."""

from __future__ import annotations

from contextlib import nullcontext

import numpy as np

from serdes.engines.stat.distribution import SlicerDistribution
from serdes.engines.stat.txjitter import ParityMixture, replace_means

# the rows that together carry less than this share of the correct-feedback error rate
# take the other rows' ratios (with propagation, precoded) instead of chains of their own:
# an error far below the model's own (5-19 %, docstring); on the README's 64-lane example
# with a supply tone 477 of 2048 rows get chains (1046 at 1e-6)
SKIP_SHARE = 1e-3

# the pre-cursor symbols the chain's state carries (the next symbols, whose pre-cursor
# ISI made the error they follow likelier). More would not be better while the noise's
# own correlation (which shortens bursts) is left out: with 3 or 4 the five links of
# benchmarks/mlse_fair.py --only propagation read model / counted 0.98-1.06 / 0.99-1.09
# (1-tap DFEs; the 2-tap link 1.24 / 1.27, its second tap dropped for the symbols)
# against 0.98-1.05 with 2, where an unprecoded link with pre-cursors of about 1 % at
# five positions (4 mismatched lanes, SJ 0.05 UI; tests/test_tiadc_ber.py) moves from
# counted / model 1.15 to 1.07 / 1.02
PRE_SYMBOLS = 2

# the chain's states: those pre-cursor symbols (levels ** PRE_SYMBOLS) times the last
# decision errors of as many DFE taps as keep the number within this (error values **
# taps): PAM4 (7 error values) 2 taps with the pre-cursors, 3 without; NRZ 4 and 6; PAM4
# with mismatched levels (9) 1 and 3
MAX_STATES = 800


def dfe_error_propagation(engine, offset_ui: float = 0.0,
                          max_burst: int = 16) -> dict | None:
    """Markov model of DFE error propagation.

    State: the errors e_k = (decided - sent) level of the last K symbols, K the DFE's
    taps, and the next P = :data:`PRE_SYMBOLS` symbols a_n .. a_(n+P-1)
    (:func:`model_shape`: at most :data:`MAX_STATES` states, so PAM4 follows 2 taps
    with the symbols, NRZ 4). Given the errors the DFE subtracts sum_k b_k (a_k + e_k)
    instead of sum_k b_k a_k, i.e. shifts the slicer input by -sum_k b_k e_k; the
    symbols after the one decided add their pre-cursor ISI, sum_p f[d - p] a_(n+p),
    which the rows leave out of their distribution (``engine.precursors_apart``). The
    next decision's probabilities come from that distribution shifted by both; each
    step draws the symbol P ahead (the rest of the ISI and the noise are taken as
    independent of the previous errors). An engine that cannot set the pre-cursors
    apart gets the chain over the errors alone (K up to 3), the symbols drawn afresh;
    the interleaved ADC's sets them apart at every output phase. Returns the predicted BER
    with propagation, its ratio to the error-free-feedback BER, the distribution of
    burst lengths (runs of consecutive symbol errors) and ``ber_precoded``, the BER the
    same link counts with 1/(1+D) mod M precoding (the decoded error (d_n + d_(n-1))
    mod M of the chain's line errors d, in level indices; 1 bit for +-1, 2 for 2).

    Why the next symbols: an error happens where the disturbance leans toward a
    threshold, and a pre-cursor's symbol is part of it, so the symbols after an error
    are biased, and which symbol comes next decides whether the DFE's wrong feedback
    makes another error. ``benchmarks/propagation_replay.py`` replays a link's genie-fed
    slicer inputs (the earlier default at 35 dB, 1-tap DFE b1 0.77, no precoding, 2e6
    symbols) through a decision-fed DFE: in order they give the count again (1.3668e-2
    against 1.3665e-2); shuffled in time (i.i.d., what a chain with fresh symbols can
    know) 1.128e-2; with only the pre-cursor ISI in order 1.500e-2, with only the
    post-cursor ISI in order 1.094e-2, with only the noise and quantization in order
    1.024e-2 (their correlation, -0.21 at one UI, shortens bursts; not modelled). The
    pre-cursors there are 1-3 % of the cursor. The chain with the next two symbols
    gives 1.374e-2; with fresh symbols it gave 1.114e-2.

    Against counts where the model's assumptions hold exactly
    (``tests/test_propagation_chain.py``: i.i.d. symbols, white Gaussian noise, DFE
    taps and pre-cursor ISI, nothing else; 2e6 symbols each): counted / model 0.98-1.01
    with 2-4 taps and no pre-cursors, 0.99-1.02 with two pre-cursors, and the decoded
    count of the same line precoded 0.99-1.02; a chain of the first tap alone was
    outside the count's 99 % interval in every case (counted / model 0.81-2.26), one
    with fresh symbols gave 0.60-0.91 of the count.

    On real links (``benchmarks/mlse_fair.py --only propagation``: the counted
    decision-fed BER over the counted genie-fed BER of the same taps, 2e6 symbols, RJ 0;
    model/counted): 28 dB (b1 0.60) 2.70 vs 2.77, 0.98; 30 dB 3.20 vs 3.06, 1.05; 33 dB
    3.75 vs 3.65, 1.03; 35 dB (b1 0.78) 3.85 vs 3.76, 1.02; 35 dB with 2 taps 4.07 vs
    4.00, 1.02; the mean bursts 2.70 / 3.21 / 3.79 / 3.96 / 3.64 against 2.77 / 3.08 /
    3.70 / 3.91 / 3.63 counted. With fresh symbols the model was 9-17 % under on all
    five. On the unprecoded 2-tap links of ``benchmarks/stat_vs_counted_fuzz.py 7 16
    --dfe`` (counted BER 1.6e-3 to 1.0e-1) counted / model is 0.95-0.99 on four and 1.11
    on an NRZ link with b1 0.92 (fresh symbols: 1.08-1.20 and 1.78); one link stays
    off, 1.64 (8-tap FFE, 71 % of the slicer's variance residual ISI, a post-cursor of
    6 % beyond the DFE; four pre-cursor symbols would give 1.42).

    A precoded link (``link.precoding``; "auto" turns it on for a first tap >= 0.55)
    counts decoded symbols: compare its count with ``ber_precoded``, not
    ``ber_with_propagation``. On the RJ-limited DFE links of
    tests/test_statistical_rj.py (0.02-0.05 UI RJ, b1 0.62-0.77, precoded) counted /
    ``ber_precoded`` is 0.995-1.09, every model value inside the count's 95 % interval.

    Jitter rows (SJ phases, dual-Dirac signs, a CDR's wander points, aggressors' SJ
    points; an interleaved ADC's output phases) each get their own chain, averaged with
    the rows' weights as the BER averages them (``engine.weighted_rows``). Against counts
    with SJ 0.1 UI and dual-Dirac 0.05 UI (1-tap DFE, 1e7 symbols) and 4 mismatched lanes:
    counted / model 0.96 (SJ, BER 1.1e-3, unprecoded), 1.02 (SJ, precoded), 1.06
    (dual-Dirac), 1.00 (lanes, precoded), 1.15 (lanes with SJ 0.05 UI, unprecoded, 4006
    errors; 1.29 with the chain over the errors alone); ``tests/test_statistical.py``,
    ``tests/test_tiadc_ber.py``. A chain per output phase keeps that phase's rows at
    every step, where the lane changes every symbol. The rows that together carry less than
    :data:`SKIP_SHARE` of the correct-feedback error rate take the others' ratios instead
    of a chain of their own. Each chain's rates are scaled to its row's own BER, so
    ``ber_correct_feedback`` is the engine's BER: a row without its pre-cursors forms
    its ISI on another grid (its correct-feedback BER, averaged over the pre-cursor
    symbols, within 0.3 % of the full row's without RX RJ,
    ``tests/test_propagation_chain.py``), and with RX RJ its jitter classes, joint with
    the ISI it holds (:mod:`serdes.engines.stat.rj_joint`), lose the part of that
    correlation the pre-cursor symbols carried: +1.6 % on the default link's nominal
    row, 9-44 % below the full rows on SJ 0.1 UI rows at 36 dB, where the slope is
    steep. The chains there see less jitter where the pre-cursors lean toward a
    threshold than the link has; against counts with RJ (the SJ, dual-Dirac and fuzz
    links above, 0.01-0.03 UI) the model stays within the figures quoted.
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
    # the chains' rows leave the first pre-cursors out of their ISI and carry the
    # symbols those multiply in the state (an engine that cannot: none)
    n_pre = min(PRE_SYMBOLS, int(getattr(engine, "d", 0)))
    apart = getattr(engine, "precursors_apart", None)
    scope = apart(n_pre) if apart is not None and n_pre else nullcontext(None)
    chains = []
    with scope as held:
        for i, (w, dist) in enumerate(engine.weighted_rows(offset_ui, wanted=chained)):
            if i not in chained:
                continue
            pre = precursor_values(dist) if held is not None else None
            k, p = model_shape(b, engine.levels, 0 if pre is None else pre.shape[0])
            c = (_chain(engine, dist, b[:k], max_burst) if p == 0 else
                 _chain_pre(engine, dist, b[:k], p, max_burst))
            # each chain's rates in the units of the row's own BER (a row without its
            # pre-cursors forms its ISI on another grid, and with RX RJ loses part of
            # its jitter classes' correlation: the docstring's last paragraph)
            f = rates[i][1]
            g = f / c["ber_free"] if c["ber_free"] > 0 else 1.0
            for key in ("ber_prop", "ber_pre", "err_mass", "err_leave", "bursts"):
                c[key] *= g
            c["ber_free"] = f
            chains.append((float(w), c))
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
    # symbol errors per burst from the chains' rates (the histogram stops at max_burst)
    mean_len = err_mass / total if total > 0 else 0.0
    return {"ber_with_propagation": ber_prop, "ber_correct_feedback": ber_free,
            "ber_precoded": ber_pre,
            "ratio": ber_prop / ber_free if ber_free > 0 else float("nan"),
            "p_error_after_error": p_ee,
            "mean_burst_length": float(mean_len),
            "burst_length_pmf": {int(L): float(p) for L, p in sorted(hist.items())
                                 if p > 1e-9}}


def _chain(engine, dist, b: np.ndarray, max_burst: int) -> dict:
    """The Markov chain of one row's slicer distribution ``dist`` over the last
    ``len(b)`` decision errors (:func:`dfe_error_propagation`): its BERs with and
    without propagation and precoded, the stationary mass of the states whose last
    symbol was wrong and the rate at which it leaves them, the bursts per symbol and the
    burst-length distribution."""
    m, bits = engine.m_levels, engine.bit_errors
    diffs, zero, pair = _error_values(engine)
    ns, K = diffs.shape[0], b.shape[0]
    # state: the last K errors, digit k (base ns) the error k + 1 symbols back
    S = ns ** K
    codes = np.arange(S)
    digits = (codes[:, None] // ns ** np.arange(K)[None, :]) % ns
    err = diffs[digits]                              # (S, K) error values
    # the DFE subtracts b_k (a + e_k) instead of b_k a: the slicer input moves by
    # -sum_k b_k e_k (for one tap, -b_1 e as before)
    shifts = -b[0] * err[:, 0]
    for k in range(1, K):
        shifts = shifts - b[k] * err[:, k]
    uniq, which = np.unique(shifts, return_inverse=True)
    Ps = _with_diagonals(shifted_decision_matrices(dist, uniq))
    succ = (codes % ns ** (K - 1)) * ns              # the state after a new error digit
    T = np.zeros((S, S))         # T[s, s'] = P(next state s' | state s)
    # the m x m (sent, decided) pairs of every state, added in that order
    np.add.at(T, (np.repeat(codes, m * m), (succ[:, None] + pair.ravel()[None, :]).ravel()),
              (Ps[which].reshape(S, m * m) / m).ravel())
    # expected bit errors of the next symbol given each state
    per_shift = np.array([float((P * bits).sum() / m) for P in Ps])
    bit_rate = per_shift[which]
    s0 = int(sum(zero * ns ** k for k in range(K)))
    pi = _stationary(T, s0, codes != s0)
    return _chain_result(engine, T, pi, bit_rate, bit_rate[s0], digits[:, 0],
                         dist.bits_per_symbol, max_burst)


def _chain_pre(engine, dist, b: np.ndarray, P: int, max_burst: int) -> dict:
    """:func:`_chain` with the next P symbols in the state: ``dist`` is the row
    without its first P pre-cursors (``precursors_apart``), whose values (f[d - 1], ..,
    ``precursor_values``) multiply the symbols after the one decided. A state is the
    last K errors and the symbols a_n .. a_(n+P-1) (a_n the one decided next, drawn
    P symbols earlier); each step draws a_(n+P). So an error that the pre-cursor ISI
    of a_(n+1) made likelier leaves a state where a_(n+1) is what made it so: the next
    symbols are not drawn afresh, as they are in :func:`_chain`."""
    m, bits = engine.m_levels, engine.bit_errors
    lv = np.asarray(engine.levels, dtype=np.float64)
    diffs, zero, pair = _error_values(engine)
    ns, K = diffs.shape[0], b.shape[0]
    E, Q = ns ** K, m ** P
    e_digits = (np.arange(E)[:, None] // ns ** np.arange(K)[None, :]) % ns
    s_digits = (np.arange(Q)[:, None] // m ** np.arange(P)[None, :]) % m
    dfe = -(diffs[e_digits] @ b)                      # (E,) -sum_k b_k e_k
    # the pre-cursor symbols of a decision, a_(n+1) .. a_(n+P), coded as the state's
    # symbols after the step (digit p - 1: a_(n+p)); the decision matrix of every
    # (errors, pre-cursor symbols) pair
    grid = _with_diagonals(_pair_matrices(dist, dfe, lv[s_digits], P).reshape(E * Q, m, m))
    S = E * Q                                         # state e * Q + symbols
    st = np.repeat(np.arange(S), m)                   # (state, drawn symbol u) pairs
    u = np.tile(np.arange(m), S)
    e_code, s_code = st // Q, st % Q
    i_now = s_code % m                                # a_n
    t_code = s_code // m + u * m ** (P - 1)           # a_(n+1) .. a_(n+P)
    rows = grid[e_code * Q + t_code, i_now]                         # (S m, m)
    e_next = pair[i_now] + ns * (e_code % ns ** (K - 1))[:, None]   # (S m, m)
    T = np.zeros((S, S))
    np.add.at(T, (np.repeat(st, m), (e_next * Q + t_code[:, None]).ravel()),
              (rows / m).ravel())
    bit_rate = np.zeros(S)
    np.add.at(bit_rate, st, (rows * bits[i_now]).sum(axis=1) / m)
    clean = np.zeros(S, dtype=bool)
    clean[int(sum(zero * ns ** k for k in range(K))) * Q + np.arange(Q)] = True
    pi = _stationary_set(T, clean)
    return _chain_result(engine, T, pi, bit_rate, bit_rate[clean].mean(),
                         np.repeat(e_digits[:, 0], Q), dist.bits_per_symbol, max_burst)


def _pair_matrices(dist, dfe: np.ndarray, pre_levels: np.ndarray, P: int) -> np.ndarray:
    """(E, Q, m, m): the decision matrices of ``dist`` moved by dfe[e] plus the pre-cursor
    ISI of symbol tuple q, pre_levels[q] @ (its first P pre-cursor values). A mixture
    whose parts hold their own values (the two DCD parities: each its own response)
    moves each part by its own and averages them, as its decision matrix does."""
    own = getattr(dist, "precursor_values", None)
    if own is None:
        move = dist.means - dist._base          # a moved mixture moves its parts so
        acc = 0
        for w, p in zip(dist.wts, dist.parts):
            moved = p if not np.any(move) else _with_means(p, p.means + move)
            acc = acc + w * _pair_matrices(moved, dfe, pre_levels, P)
        return acc
    shifts = (dfe[:, None] + (pre_levels @ np.asarray(own, dtype=np.float64)[:P])[None, :])
    uniq, which = np.unique(shifts.ravel(), return_inverse=True)
    Ps = shifted_decision_matrices(dist, uniq)
    m = Ps.shape[1]
    return Ps[which].reshape(dfe.shape[0], pre_levels.shape[0], m, m)


def _with_means(dist, means):
    """``replace_means`` keeping the row's pre-cursor values."""
    out = replace_means(dist, means)
    out.precursor_values = getattr(dist, "precursor_values", None)
    return out


def _error_values(engine):
    """The error values e = lv[j] - lv[i] (sorted, one per level difference), the
    index of e = 0 and pair[i, j], the index of each (sent i, decided j) pair's."""
    m, lv = engine.m_levels, engine.levels
    diffs = sorted({round(float(lv[j] - lv[i]), 12) for i in range(m) for j in range(m)})
    idx = {d: k for k, d in enumerate(diffs)}
    pair = np.array([[idx[round(float(lv[j] - lv[i]), 12)] for j in range(m)]
                     for i in range(m)])
    return np.asarray(diffs), idx[0.0], pair


def _with_diagonals(Ps: np.ndarray) -> np.ndarray:
    """Decision matrices (n, m, m) with their diagonals (correct decisions) filled in."""
    for i in range(Ps.shape[1]):
        Ps[:, i, i] = np.maximum(1.0 - Ps[:, i].sum(axis=1) + Ps[:, i, i], 0.0)
    return Ps


def _chain_result(engine, T, pi, bit_rate, free, last, bps, max_burst) -> dict:
    """A chain's outputs from its transitions T, stationary pi, expected bit errors per
    state, correct-feedback bit errors ``free`` and each state's last error (its index
    among :func:`_error_values`): a burst (a run of symbol errors) starts on a move into
    a state whose last symbol was wrong and ends on the move out."""
    diffs, zero, pair = _error_values(engine)
    wrong = last != zero
    into_clean = T[:, ~wrong].sum(axis=1)
    start = (pi[~wrong] @ T[~wrong]) * wrong
    bursts_per_symbol = float(start.sum())
    hist = {}
    if bursts_per_symbol > 0:
        cur = start / bursts_per_symbol
        for L in range(1, max_burst + 1):
            hist[L] = float(cur @ into_clean)    # the next symbol is clean
            cur = (cur @ T) * wrong
            if cur.sum() < 1e-12:
                break
    # with 1/(1+D) mod M precoding the decoded symbol is the sum of two line symbols, so
    # its error is (d_n + d_(n-1)) mod M, d the line errors in level indices; bits
    # under the Gray code: 1 for +-1, 2 for 2 (the cycle 00 01 11 10)
    m = engine.m_levels
    steps = np.zeros(diffs.shape[0], dtype=np.int64)   # each error value's index step
    for i in range(m):
        for j in range(m):
            steps[pair[i, j]] = j - i
    gray = np.array([0, 1, 2, 1]) if m == 4 else np.array([0, 1])
    decoded = gray[(steps[last][:, None] + steps[last][None, :]) % m]   # [s, s']
    ber_pre = float(pi @ (T * decoded).sum(axis=1)) / bps
    return {"ber_prop": float(pi @ bit_rate) / bps, "ber_free": float(free) / bps,
            "ber_pre": ber_pre, "err_mass": float(pi[wrong].sum()),
            "err_leave": float(pi[wrong] @ into_clean[wrong]),
            "bursts": bursts_per_symbol, "hist": hist}


def _stationary_set(T: np.ndarray, clean: np.ndarray) -> np.ndarray:
    """:func:`_stationary` with a set of clean states C (no error in the state): the
    chain censored to C, T_C = T_CC + T_CE (I - T_EE)^-1 T_EC, has entries near 1 / |C|
    and an ordinary stationary vector pi_C; then pi_E = pi_C T_CE (I - T_EE)^-1, every
    term non-negative, so the error states keep their relative precision."""
    err = ~clean
    A = np.eye(int(err.sum())) - T[np.ix_(err, err)]
    M = np.linalg.solve(A.T, T[np.ix_(clean, err)].T).T          # T_CE (I - T_EE)^-1
    TC = T[np.ix_(clean, clean)] + M @ T[np.ix_(err, clean)]
    q = TC.shape[0]
    lhs = np.vstack([(TC - np.eye(q)).T[:-1], np.ones(q)])
    rhs = np.zeros(q)
    rhs[-1] = 1.0
    pc = np.maximum(np.linalg.solve(lhs, rhs), 0.0)
    pi = np.empty(T.shape[0])
    pi[clean] = pc
    pi[err] = np.maximum(pc @ M, 0.0)
    return pi / pi.sum()


def model_shape(b: np.ndarray, levels: np.ndarray, n_pre: int) -> tuple[int, int]:
    """(DFE taps, pre-cursor symbols) the chain's state follows: up to ``n_pre``
    pre-cursor symbols and then as many taps as keep the states (levels ** pre-cursors
    x error values ** taps) within :data:`MAX_STATES` (at least one tap; fewer
    pre-cursors where one tap does not fit), not the trailing zero taps."""
    m = levels.shape[0]
    ns = len({round(float(levels[j] - levels[i]), 12) for i in range(m) for j in range(m)})
    p = n_pre
    while p > 0 and ns * m ** p > MAX_STATES:
        p -= 1
    k = 1
    while k < b.shape[0] and ns ** (k + 1) * m ** p <= MAX_STATES:
        k += 1
    while k > 1 and b[k - 1] == 0:
        k -= 1
    return k, p


def precursor_values(dist) -> np.ndarray | None:
    """The pre-cursor values a row formed in ``precursors_apart()`` left out of its ISI
    (a mixture's: its parts' average); None for a row that has them in its ISI."""
    got = getattr(dist, "precursor_values", None)
    if got is not None:
        return np.asarray(got, dtype=np.float64)
    parts = getattr(dist, "parts", None)
    if not parts:
        return None
    each = [precursor_values(p) for p in parts]
    if any(v is None for v in each):
        return None
    return sum(w * v for w, v in zip(dist.wts, each))


def shifted_decision_matrices(dist, shifts: np.ndarray) -> np.ndarray:
    """``replace_means(dist, dist.means + s).decision_matrix()`` for every s of
    ``shifts``, (n, m, m), the same numbers, with each slicer distribution's tails at
    the thresholds in one kernel call for all shifts (one at a time took about 1 ms
    per shift on the default link: 49 or 343 shifts per row with 2 or 3 taps)."""
    return _moved_matrices(dist, dist.means[None, :] + np.asarray(shifts)[:, None])


def _moved_matrices(dist, means: np.ndarray) -> np.ndarray:
    """``replace_means(dist, means[k]).decision_matrix()`` for every row k of means."""
    n, m = means.shape
    if isinstance(dist, ParityMixture):
        move = means - dist._base       # as ParityMixture._moved forms each part's shift
        out = np.empty((n, m, m))
        still = ~np.any(move != 0, axis=1)
        for k in np.flatnonzero(still):   # unmoved parts keep their own tails
            out[k] = replace_means(dist, means[k]).decision_matrix()
        moved = np.flatnonzero(~still)
        if moved.size:
            acc = 0
            for w, p in zip(dist.wts, dist.parts):   # the parts added in order (_avg)
                acc = acc + w * _moved_matrices(p, p.means[None, :] + move[moved])
            out[moved] = acc
        return out
    if not isinstance(dist, SlicerDistribution):
        return np.stack([replace_means(dist, row).decision_matrix() for row in means])
    # the keys the decision matrix reads: P(v_i > t_e) for e >= i, P(v_i < t_e) below
    keys = [(i, e) for i in range(m) for e in range(m - 1)]
    upper = np.array([e >= i for i, e in keys], dtype=np.uint8)
    level = np.array([i for i, _ in keys], dtype=np.int64)
    thr = dist.thresholds[[e for _, e in keys]]
    y = (thr[None, :] - means[:, level]).ravel()
    tails = dist.checked_tails()(y, np.tile(upper, n), np.tile(level, n))
    tt = tails.reshape(n, m, m - 1)              # tt[:, i, e]
    P = np.zeros((n, m, m))
    zero = np.zeros((n, 1))
    for i in range(m):
        if i < m - 1:
            up = np.concatenate([tt[:, i, i:], zero], axis=1)
            P[:, i, i + 1:] = up[:, :-1] - up[:, 1:]
        if i > 0:
            lo = np.concatenate([zero, tt[:, i, :i]], axis=1)
            P[:, i, :i] = lo[:, 1:] - lo[:, :-1]
    return np.maximum(P, 0.0)


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
