"""The figure-of-merit search of Annex 93A.1.6 over the whole TX FFE x CTLE grid, vectorized.

For one CTLE setting the victim pulse without TX FFE, p0, is computed once. A TX FFE
setting c (taps at UI offsets k) gives p_c(t) = sum_k c_k p0(t - kT), so every
quantity the FOM needs is exact linear algebra on p0:

* the pulse near its peak (cursor search, eqs. 93A-25/26) is C @ S, S the shifted
  windows of p0;
* the energy of all samples at a phase m is the quadratic form c^T G_m c with
  G_m[k, l] = R_m[k - l], R_m the autocorrelation of p0's samples at phase m (for the
  ISI, eq. 93A-31, the jitter slopes of eq. 93A-32 and the FEXT aggressors, eq. 93A-33,
  which carry the victim's TX FFE);
* the cursor and DFE-span samples are gathered explicitly and the DFE (clipped to its
  limits, eqs. 93A-26/27) removes its part.

So all TX settings of a CTLE setting cost a few small matrix products, instead of one
FFT and one pulse per setting.
"""

from __future__ import annotations

from dataclasses import dataclass
from types import SimpleNamespace

import numpy as np

from serdes.com import floating as _floating
from serdes.com.params import ComParams
from serdes.com.pulse import ComGrid, h_r, xsinc

__all__ = ["FomBest", "search", "tx_offsets", "full_taps", "locate_cursor"]

MM_EPS = 1e-3  # V: a Mueller-Mueller residual below this counts as an exact solution


@dataclass
class FomBest:
    fom_db: float
    g_dc: float
    g_dc2: float
    tx_taps: np.ndarray      # all taps, cursor included, in offset order
    cursor_offset: int       # cursor sample index relative to the base pulse's peak
    landscape: np.ndarray    # best FOM (dB) per (g_dc, g_dc2)
    tx_fom_at_best: np.ndarray  # FOM of every TX setting at the best CTLE
    n_evaluated: int
    parts: dict
    landscape_bound: bool = False   # every FOM of this search is exact


def tx_offsets(p: ComParams) -> np.ndarray:
    n_post = len(p.tx_min) - p.tx_n_pre
    return np.concatenate((np.arange(-p.tx_n_pre, 0), [0], np.arange(1, n_post + 1))).astype(int)


def full_taps(p: ComParams, grid_rows: np.ndarray) -> np.ndarray:
    """Rows of non-cursor taps -> rows of all taps (cursor 1 - sum |c| inserted)."""
    c0 = 1.0 - np.abs(grid_rows).sum(axis=1, keepdims=True)
    return np.concatenate((grid_rows[:, :p.tx_n_pre], c0, grid_rows[:, p.tx_n_pre:]), axis=1)


def _phase_table(x: np.ndarray, m: int, n_ui: int) -> np.ndarray:
    """Q[ph, n] = x[ph + n m] (zero beyond the end)."""
    pad = np.zeros(n_ui * m)
    pad[: len(x)] = x[: n_ui * m]
    return pad.reshape(n_ui, m).T.copy()


def _gram(q: np.ndarray, offs: np.ndarray) -> np.ndarray:
    """G[ph, i, j] = sum_n Q[ph, n - k_i] Q[ph, n - k_j] = R_ph[k_i - k_j]."""
    span = int(offs.max() - offs.min())
    n = q.shape[1]
    r = np.empty((q.shape[0], span + 1))
    for d in range(span + 1):
        r[:, d] = np.einsum("pn,pn->p", q[:, : n - d], q[:, d:])
    diff = np.abs(offs[:, None] - offs[None, :])
    return r[:, diff]


def apply_tx(p0: np.ndarray, taps: np.ndarray, offs: np.ndarray, m: int) -> np.ndarray:
    """The pulse with TX FFE taps at UI offsets offs (circular, as the pulses' window)."""
    return sum(c * np.roll(p0, int(k) * m) for c, k in zip(taps, offs))


def locate_cursor(win: np.ndarray, m: int, b1_min: float, b1_max: float) -> np.ndarray:
    """Cursor index in each row of ``win`` (fine pulse windows): the Mueller-Mueller
    condition h(-1) = h(1) - b1 h(0) (eq. 93A-25, b1 clipped as eq. 93A-26) within one
    UI of the peak; an exact solution (residual < MM_EPS) closest before the peak
    first, else the first after it, else the smallest residual."""
    rows, width = win.shape
    pk = np.argmax(win, axis=1)
    lo = max(int(pk.min()) - m, m)
    hi = min(int(pk.max()) + m, width - m)
    cand = np.arange(lo, hi)
    h0, hm, hp = win[:, lo:hi], win[:, lo - m:hi - m], win[:, lo + m:hi + m]
    rel = cand[None, :] - pk[:, None]
    valid = (rel >= -m) & (rel < m) & (h0 > 0)
    with np.errstate(divide="ignore", invalid="ignore"):
        b1 = np.clip(hp / h0, b1_min, b1_max)
    res = np.where(valid, np.abs(hm - (hp - b1 * h0)), np.inf)
    exact = res < MM_EPS
    pre = exact & (rel <= 0)
    post = exact & (rel > 0)
    n = len(cand)
    out = np.argmin(res, axis=1)
    out = np.where(post.any(axis=1), np.argmax(post, axis=1), out)
    out = np.where(pre.any(axis=1), n - 1 - np.argmax(pre[:, ::-1], axis=1), out)
    return cand[out]


def ctle_basis(p: ComParams, f: np.ndarray) -> np.ndarray:
    """The eq. 93A-22 CTLE is (g1 + jf/f_z)(g2 + jf/f_LF) / D(f): with w = (g1 g2, g1, g2, 1)
    it is sum_i w_i B_i(f), B = (1, jf/f_LF, jf/f_z, (jf/f_z)(jf/f_LF)) / D. So the pulse of
    any (g_DC, g_DC2) is the same combination of four pulses computed once."""
    jf = 1j * f
    fz, flf = p.f_z_ghz * 1e9, p.f_lf_ghz * 1e9
    d = (1 + jf / (p.f_p1_ghz * 1e9)) * (1 + jf / (p.f_p2_ghz * 1e9)) * (1 + jf / flf)
    return np.stack([1 / d, (jf / flf) / d, (jf / fz) / d, (jf / fz) * (jf / flf) / d])


def ctle_weights(g_dc: float, g_dc2: float) -> np.ndarray:
    g1, g2 = 10 ** (g_dc / 20), 10 ** (g_dc2 / 20)
    return np.array([g1 * g2, g1, g2, 1.0])


def _pairs(k: int):
    iu = np.triu_indices(k)
    return iu, np.where(iu[0] == iu[1], 1.0, 2.0)


def _sym(g: np.ndarray, iu, mult) -> np.ndarray:
    """(P, K, K) symmetric -> (n_pairs, P) so that c^T G_p c = (c_k c_l)_pairs @ out."""
    return (g[:, iu[0], iu[1]] * mult).T.copy()


@dataclass
class Setup:
    """What every CTLE setting of a search shares (``setup``)."""
    m: int
    L: int
    var_x: float
    offs: np.ndarray
    C: np.ndarray            # every TX setting, all taps
    iu: tuple
    mult: np.ndarray
    CC: np.ndarray           # the products of tap pairs (quadratic forms)
    nb: int
    bmin: np.ndarray
    bmax: np.ndarray
    n_ui: int
    w: int                   # half width (samples) of the cursor search window
    base: list               # per channel, the pulses of the CTLE basis
    basis: np.ndarray
    noise_gram: np.ndarray   # w^T N w = the RX noise variance for CTLE weights w
    kinds: list


def setup(p: ComParams, grid: ComGrid, vtfs: list, kinds: list) -> Setup:
    m = grid.m
    L = p.levels
    offs = tx_offsets(p)
    C = full_taps(p, p.tx_grid)
    iu, mult = _pairs(len(offs))
    f = grid.f
    df_ghz = (f[1] - f[0]) / 1e9
    basis = ctle_basis(p, f)
    xs = xsinc(grid)
    amps = [p.a_v] + [p.a_ne if k == "next" else p.a_fe for k in kinds]
    base = [np.fft.irfft(xs * v * basis, axis=1) * a for v, a in zip(vtfs, amps)]
    hrb = h_r(p, f)[None, :] * basis
    return Setup(m=m, L=L, var_x=(L ** 2 - 1) / (3.0 * (L - 1) ** 2), offs=offs, C=C,
                 iu=iu, mult=mult, CC=C[:, iu[0]] * C[:, iu[1]], nb=len(p.dfe_max),
                 bmin=np.asarray(p.dfe_min), bmax=np.asarray(p.dfe_max),
                 n_ui=-(-grid.n_t // m), w=3 * m, base=base, basis=basis,
                 noise_gram=np.real(hrb @ np.conj(hrb).T) * df_ghz * p.eta0,
                 kinds=list(kinds))


def cell_tables(su: Setup, gdc: float, gdc2: float):
    """One CTLE setting's victim pulse p0, its cursor-search windows S (one row per TX
    tap offset around the peak, sample idx), phase table q, the ISI and jitter Grams,
    the RX noise variance and the crosstalk (NEXT energy, FEXT Grams)."""
    m, offs, n_ui, w = su.m, su.offs, su.n_ui, su.w
    wt = ctle_weights(gdc, gdc2)
    p0 = wt @ su.base[0]
    pk = int(np.argmax(p0))
    idx = pk + np.arange(-w, w + 1)
    S = np.stack([p0[np.clip(idx - k * m, 0, len(p0) - 1)] for k in offs])
    q = _phase_table(p0, m, n_ui)
    dp = (np.roll(p0, -1) - np.roll(p0, 1)) * (m / 2.0)
    xt_next = 0.0
    g_fext = []
    for bv, kind in zip(su.base[1:], su.kinds):
        qa = _phase_table(wt @ bv, m, n_ui)
        if kind == "next":
            xt_next += float(np.max(np.sum(qa ** 2, axis=1)))
        else:
            g_fext.append(_sym(_gram(qa, offs), su.iu, su.mult))
    return SimpleNamespace(
        wt=wt, p0=p0, idx=idx, S=S, q=q, g_isi=_sym(_gram(q, offs), su.iu, su.mult),
        g_j=_sym(_gram(_phase_table(dp, m, n_ui), offs), su.iu, su.mult),
        var_n=float(wt @ su.noise_gram @ wt), xt_next=xt_next, g_fext=g_fext)


def search(p: ComParams, grid: ComGrid, vtfs: list, kinds: list, chunk: int = 8192,
           prune: bool = True) -> FomBest:
    """Best FOM over g_DC x g_DC2 x the TX grid. ``vtfs[0]`` is the thru, the rest
    aggressors of ``kinds`` ("fext"/"next"). ``prune=False``: with floating DFE taps,
    place them for every setting (the same result, slower; for the tests)."""
    su = setup(p, grid, vtfs, kinds)
    m, L, var_x, offs, C, iu, mult, CC = su.m, su.L, su.var_x, su.offs, su.C, su.iu, su.mult, su.CC
    nb, bmin, bmax, n_ui, w = su.nb, su.bmin, su.bmax, su.n_ui, su.w
    npre_x = 0 if p.fom_precursors else 40
    flo = _floating.enabled(p)
    ns = _floating.span(p)      # DFE span: N_b, or N_f with floating taps
    placed = [0]                # candidates whose floating taps were placed

    def cell(gdc, gdc2, prune):
        """FOM of every TX setting at one CTLE setting. With floating DFE taps and
        ``prune``, a setting whose FOM cannot reach the best of the cell (bounded by
        removing every tap's floating-clipped ISI, sum h^2 - max(0, |h| - bmaxg h0)^2)
        keeps its FOM without them (a lower bound); the cell's best is exact."""
        t = cell_tables(su, gdc, gdc2)
        idx, S, q, g_isi, g_j, var_n = t.idx, t.S, t.q, t.g_isi, t.g_j, t.var_n
        xt_next, g_fext = t.xt_next, t.g_fext
        foms = np.empty(len(C))
        curs = np.empty(len(C), dtype=int)
        cell_best = -np.inf
        for s0 in range(0, len(C), chunk):
            c = C[s0:s0 + chunk]
            cc = CC[s0:s0 + chunk]
            rr = np.arange(len(c))
            cur = locate_cursor(c @ S, m, bmin[0] if nb else 0.0, bmax[0] if nb else 0.0)
            ix = idx[0] + cur                          # absolute sample index
            ph, nc = ix % m, ix // m
            nn = np.arange(-npre_x, ns + 1)
            cols = nc[:, None, None] + nn[None, :, None] - offs[None, None, :]
            vals = q[ph[:, None, None], np.clip(cols, 0, n_ui - 1)] * ((cols >= 0) & (cols < n_ui))
            h = np.einsum("rnk,rk->rn", vals, c)
            h0 = h[:, npre_x]
            isi = (cc @ g_isi)[rr, ph] - h0 ** 2
            if nb:
                post = h[:, npre_x + 1:npre_x + 1 + nb]
                with np.errstate(divide="ignore", invalid="ignore"):
                    b = np.clip(post / h0[:, None], bmin, bmax)
                isi += np.sum((post - b * h0[:, None]) ** 2 - post ** 2, axis=1)
            if not p.fom_precursors:
                isi -= np.sum(h[:, :npre_x] ** 2, axis=1)
            jit = (cc @ g_j)[rr, ph]
            xt = np.full(len(c), xt_next)
            for g in g_fext:
                xt += np.max(cc @ g, axis=1)
            a_s = p.rlm * h0 / (L - 1)
            var_tx = h0 ** 2 * 10 ** (-p.snr_tx_db / 10)
            den = (var_tx + var_x * isi + (p.a_dd ** 2 + p.sigma_rj ** 2) * var_x * jit
                   + var_x * xt + var_n)
            with np.errstate(divide="ignore", invalid="ignore"):
                fo = 10 * np.log10(a_s ** 2 / den)
            fo[~(h0 > 0)] = -np.inf
            if flo:
                pf = np.ascontiguousarray(h[:, npre_x + 1 + nb:])
                need = h0 > 0
                if prune:
                    af = np.abs(pf)
                    bf = np.maximum(0.0, af - p.dfe_bmaxg * h0[:, None])
                    red = np.sum(af * af - bf * bf, axis=1)
                    with np.errstate(divide="ignore", invalid="ignore"):
                        fo_ub = 10 * np.log10(a_s ** 2 / np.maximum(den - var_x * red, 0.0))
                    cell_best = max(cell_best, float(np.max(fo)))
                    need &= fo_ub >= cell_best - 1e-9
                if need.any():
                    placed[0] += int(need.sum())
                    d = _floating.delta_rows(p, pf[need], h0[need])
                    with np.errstate(divide="ignore", invalid="ignore"):
                        fo[need] = 10 * np.log10(a_s[need] ** 2 / (den[need] + var_x * d))
                cell_best = max(cell_best, float(np.max(fo)))
            foms[s0:s0 + chunk] = fo
            curs[s0:s0 + chunk] = cur - w
        return foms, curs, var_n

    best = None
    landscape = np.full((len(p.g_dc), len(p.g_dc2)), -np.inf)
    n_eval = 0
    for i, gdc in enumerate(p.g_dc):
        for j, gdc2 in enumerate(p.g_dc2):
            if not p.ctle_allowed(gdc, gdc2):   # the sheet's G_Qual pairs
                continue
            foms, curs, var_n = cell(gdc, gdc2, prune=prune)
            n_eval += len(C)
            k = int(np.argmax(foms))
            landscape[i, j] = foms[k]
            if best is None or foms[k] > best.fom_db:
                best = FomBest(float(foms[k]), float(gdc), float(gdc2), C[k].copy(),
                               int(curs[k]), landscape, foms.copy(), 0, {"var_n": var_n})
    if flo:   # every TX setting's exact FOM at the best CTLE setting (the figure's)
        best.parts["float_placed"] = placed[0]
        best.tx_fom_at_best = cell(best.g_dc, best.g_dc2, prune=False)[0]
    best.n_evaluated = n_eval
    best.landscape = landscape
    return best
