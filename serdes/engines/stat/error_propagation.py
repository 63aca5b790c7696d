"""DFE error propagation: a Markov model over the last symbols' decision errors (one per
DFE tap, up to MAX_STATES states), fed by the statistical slicer distribution."""

from __future__ import annotations

import numpy as np

from serdes.engines.stat.distribution import SlicerDistribution
from serdes.engines.stat.txjitter import ParityMixture, replace_means

# the rows that together carry less than this share of the correct-feedback error rate
# take the other rows' ratios (with propagation, precoded) instead of chains of their own:
# an error far below the model's own (5-19 %, docstring); on the README's 64-lane example
# with a supply tone 477 of 2048 rows get chains (1046 at 1e-6)
SKIP_SHARE = 1e-3

# the chain's states are the last decision errors of as many DFE taps as keep their
# number (error values ** taps) within this: PAM4 (7 error values) 3 taps, NRZ 5, PAM4
# with mismatched levels (9) 2
MAX_STATES = 400


def dfe_error_propagation(engine, offset_ui: float = 0.0,
                          max_burst: int = 16) -> dict | None:
    """Markov model of DFE error propagation.

    State: the errors e_k = (decided - sent) level of the last K symbols, K the DFE's
    taps (:func:`modelled_taps`: at most :data:`MAX_STATES` states, so PAM4 follows 3
    taps, NRZ 5). Given them the DFE subtracts sum_k b_k (a_k + e_k) instead of
    sum_k b_k a_k, i.e. shifts the slicer input by -sum_k b_k e_k. The next symbol's
    decision probabilities come from the statistical distribution shifted by that
    amount (symbols and noise taken as independent of the previous errors, which is
    the model's approximation). Returns the predicted BER with propagation, its ratio to
    the error-free-feedback BER, the distribution of burst lengths (runs of consecutive
    symbol errors) and ``ber_precoded``, the BER the same link would count with 1/(1+D)
    precoding (two one-bit errors per burst).

    Where that approximation holds (a slicer input of i.i.d. symbols, white Gaussian
    noise and post-cursors the DFE cancels, nothing else) the chain is exact:
    ``tests/test_propagation_chain.py`` counts such DFEs of 2-4 taps (2e6 symbols)
    and finds the model inside the count's 99 % interval, counted / model 0.98-1.01,
    where the chain of the first tap alone (the model before) is outside it in every
    case (0.81, 2.26 and 1.12 on one long stream of each).

    On real links it is not: the noise and ISI that caused an error make the next
    symbols' errors likelier. Measured bias (``benchmarks/mlse_fair.py --only
    propagation``, 2e6 symbols, RJ 0, counted decision-fed BER over the counted
    genie-fed BER of the same taps): the model *under-estimates* that ratio by 9-17 %
    and the mean burst by 0.3-0.7 symbols - 28 dB (b1 0.60): ratio 2.41 vs 2.77 counted,
    mean burst 2.41 vs 2.77; 30 dB: 2.77 vs 3.06; 33 dB: 3.11 vs 3.65; 35 dB (b1 0.78):
    3.12 vs 3.76, burst 3.19 vs 3.91; 35 dB with 2 taps: 3.36 vs 4.00, burst 3.00 vs
    3.63. The chain of the first tap alone gave 3.90 and 3.81 on the 2-tap link, nearer
    the count: its too long bursts there offset the missing dependence. Likewise on the
    2-tap links without precoding of ``benchmarks/stat_vs_counted_fuzz.py 7 16 --dfe``
    (counted BER 1.6e-3 to 1.0e-1) counted / model moved from 0.98-1.03 to 1.08-1.20.
    On two of them the counted burst lengths have the 2-tap chain's shape (most bursts
    2 symbols long; the one-tap chain's are geometric, most 1 long), with fewer bursts
    of one symbol (0.14 against the chain's 0.26 of the bursts on one). With a first tap near the cursor it is
    worse: counted / model 1.6-2.1 on three such links (b1 0.75-0.95, 2-3 taps;
    genie-fed count / correct-feedback model 0.98-1.13). On one of them (6-tap FFE, 2
    pre-cursor taps) the counted bursts are rarely shorter than 4 symbols, which a chain
    with fresh symbols cannot give; a likely cause (not tested): the symbols after an
    error are those whose pre-cursor ISI caused it.

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
    taps = b[:modelled_taps(b, engine.levels)]
    chains = [(float(w), _chain(engine, dist, taps, max_burst))
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
    m = engine.m_levels
    lv = engine.levels
    bits = engine.bit_errors
    bps = dist.bits_per_symbol
    # error values e = lv[j] - lv[i] (one per level difference)
    diffs = sorted({round(float(lv[j] - lv[i]), 12) for i in range(m) for j in range(m)})
    idx = {d: k for k, d in enumerate(diffs)}
    ns, K = len(diffs), b.shape[0]
    pair = np.array([[idx[round(float(lv[j] - lv[i]), 12)] for j in range(m)]
                     for i in range(m)])
    # state: the last K errors, digit k (base ns) the error k + 1 symbols back
    S = ns ** K
    codes = np.arange(S)
    digits = (codes[:, None] // ns ** np.arange(K)[None, :]) % ns
    err = np.asarray(diffs)[digits]                  # (S, K) error values
    # the DFE subtracts b_k (a + e_k) instead of b_k a: the slicer input moves by
    # -sum_k b_k e_k (for one tap, -b_1 e as before)
    shifts = -b[0] * err[:, 0]
    for k in range(1, K):
        shifts = shifts - b[k] * err[:, k]
    uniq, which = np.unique(shifts, return_inverse=True)
    Ps = shifted_decision_matrices(dist, uniq)
    succ = (codes % ns ** (K - 1)) * ns              # the state after a new error digit
    # each distinct shift's decision matrix with its diagonal (correct decisions)
    for i in range(m):
        Ps[:, i, i] = np.maximum(1.0 - Ps[:, i].sum(axis=1) + Ps[:, i, i], 0.0)
    T = np.zeros((S, S))         # T[s, s'] = P(next state s' | state s)
    # the m x m (sent, decided) pairs of every state, added in that order
    np.add.at(T, (np.repeat(codes, m * m), (succ[:, None] + pair.ravel()[None, :]).ravel()),
              (Ps[which].reshape(S, m * m) / m).ravel())
    # expected bit errors of the next symbol given each state
    per_shift = np.array([float((P * bits).sum() / m) for P in Ps])
    bit_rate = per_shift[which]
    zero = idx[0.0]
    s0 = int(sum(zero * ns ** k for k in range(K)))
    pi = _stationary(T, s0, codes != s0)
    # a state whose last symbol was wrong; a burst (a run of symbol errors) starts on a
    # move from a clean state into one, and ends on the move out
    wrong = digits[:, 0] != zero
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
    # with 1/(1+D) precoding a burst of line errors that alternate (e, -e, ..: what a
    # large b1 makes) decodes to two symbol errors of one level, one bit each (Gray),
    # at its ends: BER ~ 2 x (bursts per symbol) / bits per symbol
    return {"ber_prop": float(pi @ bit_rate) / bps, "ber_free": float(bit_rate[s0]) / bps,
            "ber_pre": 2.0 * bursts_per_symbol / bps,
            "err_mass": float(pi[wrong].sum()),
            "err_leave": float(pi[wrong] @ into_clean[wrong]),
            "bursts": bursts_per_symbol, "hist": hist}


def modelled_taps(b: np.ndarray, levels: np.ndarray) -> int:
    """How many of the DFE taps ``b`` the chain's state follows: all of them while the
    states (error values ** taps) stay within :data:`MAX_STATES`, and not the trailing
    zero taps."""
    m = levels.shape[0]
    ns = len({round(float(levels[j] - levels[i]), 12) for i in range(m) for j in range(m)})
    k = 1
    while k < b.shape[0] and ns ** (k + 1) <= MAX_STATES:
        k += 1
    while k > 1 and b[k - 1] == 0:
        k -= 1
    return k


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
