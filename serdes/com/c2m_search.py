"""The IEEE COM code's C2M-mode search (``eye_min_veo_test_mv`` > 0 with T_O set).

With T_O and the C2M sheet's Min_VEO_Test set, the IEEE code (4.50, ``optimize_fom``
with do_C2M) chooses the candidate (TX FFE x CTLE setting, cursor by Mueller-Mueller)
with the largest COM over the timing window without crosstalk, 20 log10(2 A_s / (2 A_s
- EH)), where the search of ``fom.py`` takes the largest FOM (eq. 93A-36). In order:

1. its first test, on every candidate: EH_1st = 2 (A_s - Q^-1(DER_0) sigma), sigma^2 the
   FOM's noise (TX, RX, jitter, crosstalk) with the ISI of its C2M mode: the precursors
   at the cursor, the DFE span and the far cursors sampled floor(T_O / 1000 M) samples
   earlier, the DFE's clipped taps still from the cursor's own samples; a candidate
   with EH_1st <= Min_VEO_Test - 1 mV is skipped;
2. the window's eye height EH (``eye.eye_over_window`` without crosstalk, as the code's
   COM_eye_width there); a candidate with EH <= Min_VEO_Test is skipped;
3. the largest COM wins; when no candidate is left the search runs again with
   Min_VEO_Test = 0.

A window eye costs about 0.1 s, and thousands of candidates pass the first test, so the
eyes are pruned with an upper bound on EH (``kernels.com_eye_bound``: every offset's
tail through its K largest ISI and dual-Dirac terms exactly, the rest through the
Gaussian's tail), first with few terms for every candidate, then with more for those
still above the best COM found; a candidate is evaluated only when its bound reaches
it. The code's two skips on 20 log10(A_s / sigma_ISI) below the best FOM so far (an
ISI-only ratio against a window COM) are left out: a candidate they skip has
N_i < sigma_ISI, which the ISI's own spread rules out for the best one.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from types import SimpleNamespace

import numpy as np
from scipy.special import erfcinv

from serdes.com import fom as _fom
from serdes.com.eye import eye_over_window, window_weights
from serdes.com.noise import FILTER_REL
from serdes.kernels.com_eye_bound import eye_height_bound
from serdes.kernels.threads import run_chunks

__all__ = ["C2mChoice", "search"]

K_FIRST, C_FIRST = 16, 8      # terms per offset and lattice (grid steps) of the bound
K_SECOND, C_SECOND = 32, 2     # every candidate gets, and of the one before an eye
SLACK_STEPS = 2     # grid steps added to each bound (rounding of the terms' last bits)
N_SEED = 8          # candidates whose eye is formed first (the highest first bounds)
UI_PRE, UI_POST = 40, 240   # the UIs around the cursor the bound's terms come from


@dataclass
class C2mChoice:
    g_dc: float
    g_dc2: float
    tx_taps: np.ndarray      # all taps, cursor included
    com_db: float            # the window's COM without crosstalk (the code's C2M FOM)
    eye_height_v: float
    eh_1st_v: float
    min_veo_test_mv: float   # the test the choice passed (the parameter, or 0)
    first_test: int          # candidates past the code's first test (EH_1st)
    bounded: int             # ... whose first bound reached the best, given the second
    eyes: int                # ... whose window eye was formed


def _prefix_grams(su, t) -> np.ndarray:
    """G[pair, ph, N] = mult x sum over n < N of q[ph, n - k] q[ph, n - l] for the tap
    pair (k, l) (fom's pair order and multipliers): the energy of the TX-equalized pulse's
    samples at phase ph before UI N is CC_r @ G[:, ph, N]."""
    q, n_ui = t.q, su.n_ui
    sh = []
    for k in su.offs:            # Q_k[ph, u] = q[ph, u - k], 0 outside the window
        k = int(k)
        z = np.zeros_like(q)
        if k >= 0:
            z[:, k:] = q[:, :n_ui - k]
        else:
            z[:, :n_ui + k] = q[:, -k:]
        sh.append(z)
    out = np.zeros((len(su.iu[0]), q.shape[0], n_ui + 1))
    for i, (a, b) in enumerate(zip(*su.iu)):
        np.cumsum(sh[a] * sh[b], axis=1, out=out[i, :, 1:])
    return out * su.mult[:, None, None]


def tx_samples(q, C, offs, m: int, ixs, nn):
    """The TX-filtered pulse's samples pv[ixs[r] + n m] for n in nn, row r of every TX
    setting C (q: the phase table of the pulse without TX FFE, (m, n_ui); offs the TX
    taps' UI offsets; samples outside the table are 0)."""
    n_ui = q.shape[1]
    ph, nc = ixs % m, ixs // m
    cols = nc[:, None, None] + nn[None, :, None] - offs[None, None, :]
    ok = (cols >= 0) & (cols < n_ui)
    vals = q[ph[:, None, None], np.clip(cols, 0, n_ui - 1)] * ok
    return np.einsum("rnk,rk->rn", vals, C)


def _candidates(p, su, t, veo_v: float):
    """Every TX setting of one CTLE setting (tables t) past the first test: rows, cursor
    sample, h0, clipped DFE taps, TX noise variance, EH_1st."""
    m, L, offs, C, q = su.m, su.L, su.offs, su.C, t.q
    nb = su.nb
    cur = _fom.locate_cursor(C @ t.S, m, su.bmin[0] if nb else 0.0, su.bmax[0] if nb else 0.0)
    ix = t.idx[0] + cur
    rr = np.arange(len(C))
    t_o = max(0, int(math.floor(p.eye_t_o_mui / 1000.0 * m)))

    def samples(ixs, nn):
        return tx_samples(q, C, offs, m, ixs, nn)

    nn = np.arange(0, nb + 1)                   # the cursor and the DFE span
    h = samples(ix, nn)
    h0 = h[:, 0]
    with np.errstate(divide="ignore", invalid="ignore"):
        dfe = np.clip(h[:, 1:] / h0[:, None], su.bmin, su.bmax)
    ix2 = ix - t_o
    h2 = samples(ix2, nn)
    # every precursor's energy from the prefix Grams (a pulse far into its window has
    # thousands: gathered one by one they took most of a run)
    pg = _prefix_grams(su, t)
    pre = np.einsum("rp,pr->r", su.CC, pg[:, ix % m, ix // m])
    pre2 = np.einsum("rp,pr->r", su.CC, pg[:, ix2 % m, ix2 // m])
    e2 = (su.CC @ t.g_isi)[rr, ix2 % m]          # every sample at the earlier phase
    span2 = h2[:, 1:]
    far2 = e2 - pre2 - h2[:, 0] ** 2 - np.sum(span2 ** 2, axis=1)
    isi = pre + np.sum((span2 - dfe * h0[:, None]) ** 2, axis=1) + far2
    jit = (su.CC @ t.g_j)[rr, ix % m]
    xt = np.full(len(C), t.xt_next)
    for g in t.g_fext:
        xt += np.max(su.CC @ g, axis=1)
    var_tx = h0 ** 2 * 10 ** (-p.snr_tx_db / 10)
    var_x = su.var_x
    sigma = np.sqrt(np.maximum(var_x * isi + (p.a_dd ** 2 + p.sigma_rj ** 2) * var_x * jit
                               + var_x * xt + t.var_n + var_tx, 0.0))
    a_s = p.rlm * h0 / (L - 1)
    eh1 = 2.0 * (a_s - math.sqrt(2.0) * float(erfcinv(2.0 * p.der0)) * sigma)
    keep = np.nonzero((h0 > 0) & (eh1 > veo_v - 1e-3))[0]
    return keep, ix[keep], h0[keep], dfe[keep], var_tx[keep], eh1[keep]


def _bounds(p, su, t, rows, ix, h0, dfe, var_tx, k_terms: int, coarse: int) -> np.ndarray:
    """Upper bounds (V) on the window's eye height of the candidates (TX rows ``rows``
    of CTLE tables t), from K terms per offset (``kernels.com_eye_bound``)."""
    m, L, offs, p0 = su.m, su.L, su.offs, t.p0
    n = len(rows)
    if n == 0:
        return np.empty(0)
    spu = float(p.eye_samples_per_ui)
    nw = len(window_weights(p)) // 2
    var_x = su.var_x
    a_s = p.rlm * h0 / (L - 1)
    ystep = np.minimum(a_s / 1000.0, 1e-5)
    thr = FILTER_REL * a_s
    lv = 2.0 * np.arange(L) / (L - 1) - 1.0
    ks = np.arange(-UI_PRE, UI_POST + 1)
    c0 = UI_PRE
    base = ix[:, None] + ks[None, :] * m                    # (n, K_ui)
    cr = su.C[rows]
    n_t = len(p0)
    pv = {}

    def at_int(d):              # the pulse at base + d, every candidate
        if d not in pv:
            acc = 0.0
            for c, k in zip(cr.T, offs):
                acc = acc + c[:, None] * p0[(base + d - int(k) * m) % n_t]
            pv[d] = acc
        return pv[d]

    def at(a):                  # linear interpolation at base + a (a the same for all)
        fl = math.floor(a)
        fr = a - fl
        y0 = at_int(fl)
        return y0 + fr * (at_int(fl + 1) - y0)

    J = 2 * nw + 1
    kk = min(k_terms, 2 * len(ks))
    sh = np.zeros((n, J, kk, L), dtype=np.int64)
    nterms = np.zeros((n, J), dtype=np.int64)
    ls = np.zeros((n, J, L), dtype=np.int64)
    var = np.zeros((n, J))
    nb = dfe.shape[1]
    for jj, j in enumerate(range(-nw, nw + 1)):
        a = (j / spu) * m
        isi = at(a).copy()
        h0j = isi[:, c0].copy()
        isi[:, c0] = 0.0
        isi[:, c0 + 1:c0 + 1 + nb] -= dfe * h0[:, None]
        hs = (at(a + m / spu) - at(a - m / spu)) / 2.0 * spu
        var[:, jj] = (var_tx + t.var_n + p.sigma_rj ** 2 * var_x * np.sum(hs ** 2, axis=1)) \
            / ystep ** 2
        terms = np.concatenate((isi, p.a_dd * hs), axis=1)
        terms = np.where(np.abs(terms) > thr[:, None], terms, 0.0)
        top = np.argpartition(-np.abs(terms), kk - 1, axis=1)[:, :kk]
        val = np.take_along_axis(terms, top, axis=1)
        nterms[:, jj] = np.count_nonzero(val, axis=1)
        order = np.argsort(val == 0.0, axis=1, kind="stable")     # used terms first
        val = np.take_along_axis(val, order, axis=1)
        sh[:, jj] = np.round(val[:, :, None] * lv[None, None, :] / ystep[:, None, None])
        ls[:, jj] = np.round(p.rlm * h0j[:, None] * lv[None, :] / ystep[:, None])
    eh = eye_height_bound(sh, nterms, ls, var, window_weights(p), p.der0, L, coarse)
    return (eh + SLACK_STEPS) * ystep


def _window_com(eh, a_s):
    with np.errstate(divide="ignore", invalid="ignore"):
        return np.where(eh < 2 * a_s, 20 * np.log10(2 * a_s / (2 * a_s - eh)), np.inf)


def _eye(p, su, t, row, ix, h0, dfe, var_tx):
    """The window's eye (``eye_over_window``) without crosstalk, at one candidate."""
    pv = _fom.apply_tx(t.p0, su.C[row], su.offs, su.m)
    a_s = p.rlm * h0 / (su.L - 1)
    stub = SimpleNamespace(h0=float(h0), a_s=float(a_s), sigma_tx=math.sqrt(var_tx),
                           sigma_n=math.sqrt(t.var_n), dfe_taps=dfe,
                           y=np.array([0.0, min(a_s / 1000.0, 1e-5)]),
                           parts={"p_xt": np.array([1.0])})
    return eye_over_window(p, su.m, pv, int(ix), stub)


def search(p, grid, vtfs: list, kinds: list, threads: int | None = None) -> C2mChoice | None:
    """The C2M-mode choice (see the module doc); None when no candidate is left even
    with Min_VEO_Test = 0. ``threads``: for the bounds and the eyes (default numba's
    thread count); the choice is the same on any count."""
    import numba

    n_thr = numba.get_num_threads() if threads is None else max(1, int(threads))
    su = _fom.setup(p, grid, vtfs, kinds)
    cells = [(a, b) for a in p.g_dc for b in p.g_dc2 if p.ctle_allowed(a, b)]
    for veo_mv in (p.eye_min_veo_test_mv, 0.0):
        veo = veo_mv / 1000.0
        cand = []               # (first bound's COM, cell, row, ix, h0, dfe, var_tx, eh1)
        tabs = {}
        n_first = 0
        for ci, (gdc, gdc2) in enumerate(cells):
            t = _fom.cell_tables(su, gdc, gdc2)
            rows, ix, h0, dfe, var_tx, eh1 = _candidates(p, su, t, veo)
            n_first += len(rows)
            if not len(rows):
                continue
            tabs[ci] = t
            eh = _bounds(p, su, t, rows, ix, h0, dfe, var_tx, K_FIRST, C_FIRST)
            a_s = p.rlm * h0 / (su.L - 1)
            ok = eh > veo
            w1 = _window_com(eh, a_s)
            for k in np.nonzero(ok)[0]:
                cand.append((float(w1[k]), ci, int(rows[k]), int(ix[k]), float(h0[k]),
                             dfe[k], float(var_tx[k]), float(eh1[k])))
        cand.sort(key=lambda c: -c[0])
        best, best_w, n_b2, n_eye = None, -np.inf, 0, 0

        def take(c, ew):
            nonlocal best, best_w, n_eye
            n_eye += 1
            if ew["eye_height_v"] > veo and ew["com_db"] is not None and ew["com_db"] > best_w:
                best_w = ew["com_db"]
                best = (c[1], c[2], ew["eye_height_v"], c[7])

        for c in cand[:N_SEED]:         # a first best from the highest first bounds
            take(c, _eye(p, su, tabs[c[1]], *c[2:7]))
        # the second bound of every candidate whose first still reaches the best, by
        # CTLE setting (one call each), then the eyes in the order of the second bound
        second = []
        live = [c for c in cand[N_SEED:] if c[0] > best_w]
        n_b2 = len(live)
        by_cell = {}
        for c in live:
            by_cell.setdefault(c[1], []).append(c)
        for ci, cs in by_cell.items():
            eh2 = _bounds(p, su, tabs[ci], np.array([c[2] for c in cs]),
                          np.array([c[3] for c in cs]), np.array([c[4] for c in cs]),
                          np.array([c[5] for c in cs]), np.array([c[6] for c in cs]),
                          K_SECOND, C_SECOND)
            w2 = _window_com(eh2, p.rlm * np.array([c[4] for c in cs]) / (su.L - 1))
            second += [(float(w2[k]), c) for k, c in enumerate(cs) if eh2[k] > veo]
        second.sort(key=lambda x: -x[0])
        # the eyes in that order, as many at a time as there are threads (the FFTs and
        # the PMFs' numba kernel let go of the GIL), each batch's results taken in order;
        # a batch may form an eye the one-by-one loop would not, never miss one it would
        k = 0
        while k < len(second) and second[k][0] > best_w:
            batch = [c for w2, c in second[k:k + n_thr] if w2 > best_w]
            k += n_thr
            eyes = [None] * len(batch)

            def chunk(first, stride, batch=batch, eyes=eyes):
                for i in range(first, len(batch), stride):
                    _, ci, row, ix, h0, dfe, var_tx, _ = batch[i]
                    eyes[i] = _eye(p, su, tabs[ci], row, ix, h0, dfe, var_tx)

            run_chunks(chunk, (), len(batch), n_thr)
            for c, ew in zip(batch, eyes):
                take(c, ew)
        if best is not None:
            ci, row, eh, eh1 = best
            return C2mChoice(g_dc=float(cells[ci][0]), g_dc2=float(cells[ci][1]),
                             tx_taps=su.C[row].copy(), com_db=float(best_w),
                             eye_height_v=float(eh), eh_1st_v=float(eh1),
                             min_veo_test_mv=float(veo_mv), first_test=n_first,
                             bounded=n_b2, eyes=n_eye)
        if veo_mv == 0.0:
            break
    return None
