"""Could a search by the C2M window's COM be pruned? A rigorous upper bound, measured.

With T_O and the C2M sheet's Min_VEO_Test set, the IEEE COM code picks its candidate by
the COM over the timing window without crosstalk, 20 log10(2 A_s / (2 A_s - EH))
(docs/com.md, "Not done (yet)"); ours picks by the FOM. Searching all 2 x 204,215
candidates by that COM needs one window eye each (``eye.eye_over_window``, about 0.1 s in
NumPy), so it would need a cheap upper bound that rules most of them out. This one:

* the pooled distribution of a level over the window is the weighted sum of the
  offsets' distributions, so each of its DER_0 quantiles is bounded through lower
  bounds on every offset's tail probabilities;
* at one offset the noise is Y = G + I (G the Gaussian part: TX, RX noise, RJ; I the
  ISI after the DFE and the dual-Dirac terms, each symmetric and independent). Given
  the K largest terms' sum s, P(Y >= x) >= Q((x - s) / sigma_G) for x >= s and >= 1/2
  below (G is symmetric unimodal, the rest symmetric: adding it can only raise the
  tail beyond 0), so P(Y >= x) >= sum over s of P(s) times that (the K terms' PMF).

Each bound is valid; the script prints, for random candidates (TX setting x allowed CTLE
setting, package case 1 of the C2M thru), the window COM without crosstalk and the
bound's COM, and how many bounds reach a given value (the best window COM is at least
3.06 dB there, ``com_c2m_window_cells.py``).

    PYTHONPATH=. python3 benchmarks/com_c2m_window_bound.py [N [K [SEED]]]   (40, 12, 0)
"""

from __future__ import annotations

import math
import sys
import time
from pathlib import Path

import numpy as np
from scipy.special import erfc

from serdes.com import fom as F
from serdes.com import noise as N
from serdes.com.core import _apply_tx
from serdes.com.eye import eye_over_window, window_weights
from serdes.com.params import preset
from serdes.com.pulse import ComGrid, h_r

CH = Path(__file__).resolve().parents[1].parent / "shared" / "channels"
THRU = CH / "ieee8023ck_C2M_mellitz_3ck_01_0518" / "C2M__Z100_IL14_WC_BOR_H_L_H_THRU.s4p"


def victim_base(p, grid):
    """The thru's pulses for the CTLE basis, package case 1 (com_c2m_mode's)."""
    from com_c2m_mode import victim

    return victim(p, grid, p.cases[0], THRU)


def offset_noise(p, m, pv, ix, j, spu, dfe, h0_ts, var_fixed, k_terms):
    """(level amplitude, the K largest noise terms, sigma_G) at window offset j, as
    eye_over_window forms them."""
    L = p.levels
    var_x = (L ** 2 - 1) / (3.0 * (L - 1) ** 2)
    ks = np.arange(-(ix // m), (len(pv) - 1 - ix) // m + 1)
    c0 = ix // m
    pos = ix + (j / spu) * m + ks * m
    at = np.arange(len(pv))
    isi = np.interp(pos, at, pv, left=0.0, right=0.0)
    h0 = float(isi[c0])
    isi[c0] = 0.0
    isi[c0 + 1:c0 + 1 + len(dfe)] -= dfe[:len(isi) - c0 - 1] * h0_ts
    h_j = (np.interp(pos + m / spu, at, pv, left=0.0, right=0.0)
           - np.interp(pos - m / spu, at, pv, left=0.0, right=0.0)) / 2.0 * spu
    var_g = var_fixed + p.sigma_rj ** 2 * var_x * float(np.sum(h_j ** 2))
    terms = np.concatenate((isi, p.a_dd * h_j))
    terms = terms[np.argsort(-np.abs(terms))][:k_terms]
    return p.rlm * h0, terms, math.sqrt(var_g)


class TailLB:
    """x -> a lower bound on P(Y >= x) for Y = (K terms x levels) + G + a symmetric rest."""

    def __init__(self, terms, sig, levels, ystep):
        half = int(np.ceil(np.abs(terms).sum() / ystep)) + len(terms) + 2
        self.pmf = N.delta_pmf(terms, levels, 2 * half + 1, ystep)
        self.y = (np.arange(2 * half + 1) - half) * ystep
        self.sig = sig
        self.slack = 0.5 * ystep * len(terms)       # each term rounded to the grid

    def __call__(self, x):
        z = x + self.slack - self.y
        t = np.where(z >= 0, 0.5 * erfc(z / (self.sig * math.sqrt(2))), 0.5)
        return float(self.pmf @ t)


def eh_bound(p, comps, wts, ystep):
    """Upper bound on the pooled window's eye height (the worst of the L - 1 eyes)."""
    L = p.levels
    lv = 2.0 * np.arange(L) / (L - 1) - 1.0
    lbs = [TailLB(t, s, L, ystep) for _, t, s in comps]
    amps = [a for a, _, _ in comps]
    span = max(a for a in amps) * 2 + 20 * max(s for _, _, s in comps)

    def solve(f):               # the root of a monotone f on [-span, span] (f >= DER)
        lo, hi = -span, span
        for _ in range(60):
            mid = 0.5 * (lo + hi)
            if f(mid):
                hi = mid
            else:
                lo = mid
        return hi

    best = np.inf
    for k in range(L - 1):
        # top of eye k: the smallest y with sum_j w_j P(Y_j >= a_j v_(k+1) - y) >= DER_0
        top = solve(lambda y: sum(w * lb(a * lv[k + 1] - y)
                                  for w, lb, a in zip(wts, lbs, amps)) >= p.der0)
        # bottom: the largest y with sum_j w_j P(Y_j >= y - a_j v_k) >= DER_0
        bot = -solve(lambda y: sum(w * lb(-y - a * lv[k])
                                   for w, lb, a in zip(wts, lbs, amps)) >= p.der0)
        best = min(best, top - bot)
    return best


def main(n: int = 40, k_terms: int = 12, seed: int = 0) -> None:
    p = preset("802.3ck-c2m")
    grid = ComGrid.of(p)
    m = grid.m
    base, basis = victim_base(p, grid)
    offs = F.tx_offsets(p)
    C = F.full_taps(p, p.tx_grid)
    cells = [(a, b) for a in p.g_dc for b in p.g_dc2 if p.ctle_allowed(a, b)]
    wts = window_weights(p)
    wts = wts / wts.sum()
    nw = len(wts) // 2
    rng = np.random.default_rng(seed)
    print(f"{len(C)} TX settings x {len(cells)} CTLE settings; {len(wts)} window offsets, "
          f"weights {np.round(wts, 3).tolist()}; K = {k_terms}")
    rows = []
    for _ in range(n):
        gdc, gdc2 = cells[rng.integers(len(cells))]
        k = int(rng.integers(len(C)))
        wt = F.ctle_weights(gdc, gdc2)
        p0 = wt @ base
        pk = int(np.argmax(p0))
        idx = pk + np.arange(-3 * m, 3 * m + 1)
        S = np.stack([p0[np.clip(idx - o * m, 0, len(p0) - 1)] for o in offs])
        ix = int(idx[0] + F.locate_cursor((C[k] @ S)[None, :], m, p.dfe_min[0],
                                          p.dfe_max[0])[0])
        pv = _apply_tx(p0, C[k], offs, m)
        b = N.budget(p, grid, pv, [], ix, h_r(p, grid.f) * (wt @ basis))
        t0 = time.perf_counter()
        ew = eye_over_window(p, m, pv, ix, b)
        t_eye = time.perf_counter() - t0
        exact = ew["com_db"] if ew["com_db"] is not None else -np.inf
        dfe = np.asarray(b.dfe_taps, dtype=float)
        var_fixed = b.sigma_tx ** 2 + b.sigma_n ** 2
        comps = [offset_noise(p, m, pv, ix, j, float(p.eye_samples_per_ui), dfe, b.h0,
                              var_fixed, k_terms) for j in range(-nw, nw + 1)]
        t0 = time.perf_counter()
        eh = eh_bound(p, comps, wts, b.a_s / 2000)
        t_bound = time.perf_counter() - t0
        bound = (20 * math.log10(2 * b.a_s / (2 * b.a_s - eh)) if eh < 2 * b.a_s
                 else np.inf)
        rows.append((exact, bound, t_eye, t_bound))
        print(f"g_DC {gdc:5.1f} g_DC2 {gdc2:4.1f} TX #{k:4d}: window COM {exact:7.3f} dB, "
              f"bound {bound:7.3f} dB (+{bound - exact:.3f}); eye {1e3 * t_eye:.0f} ms, bound "
              f"{1e3 * t_bound:.0f} ms",
              flush=True)
    r = np.array(rows)
    gap = r[:, 1] - r[:, 0]
    print(f"{n} candidates: bound above the window COM by {np.percentile(gap, [10, 50, 90]).round(2)}"
          f" dB (10th, 50th, 90th percentiles); the window eye {1e3 * np.median(r[:, 2]):.0f} ms,"
          f" the bound {1e3 * np.median(r[:, 3]):.0f} ms (medians, NumPy)")
    for v in (2.90, 3.06):
        print(f"  bounds reaching {v} dB: {int((r[:, 1] >= v).sum())} of {n}; window COMs"
              f" reaching it: {int((r[:, 0] >= v).sum())}")


if __name__ == "__main__":
    main(*(int(a) for a in sys.argv[1:4]))
