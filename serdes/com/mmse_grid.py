"""The 802.3dj (Annex 178A) COM search over the CTLE x TX FFE grid with the numba kernel
:mod:`serdes.kernels.com_mmse`: the same candidates, the same MMSE solve and the same
result as :func:`serdes.com.mmse.search_grid_fast` (every point, every sampling time
within +-M/2 of the pulse peak), without the NumPy stacks: per CTLE setting the tables
of that function (quadratic forms of the victim, its slope and the FEXT aggressors in the
TX taps, noise autocorrelations per phase, the pulse's phase table) are formed once, and
the kernel runs over the TX settings in parallel, one Cholesky factorisation per
(TX setting, sampling time). The tables are quadratic in the 4 CTLE weights, so they are
formed as 10 parts once per channel set and combined per CTLE setting
(:class:`_CtleParts`; :class:`_Ctle` forms them directly, the reference).
"""

from __future__ import annotations

import numpy as np

from serdes.com import mmse as _m
from serdes.com import mmse_float as _mf
from serdes.kernels.com_mmse import mmse_block

__all__ = ["search_grid_numba"]


class _Ctle:
    """The tables of one CTLE setting (as in mmse.search_grid_fast)."""

    def __init__(self, p, wt, pulses, basis, kinds, hr_f, f, m, offs, iu, mult):
        nw = _mf.span(p)
        L = p.levels
        self.var_x = var_x = (L ** 2 - 1) / (3.0 * (L - 1) ** 2)
        k_tx = 10 ** (-p.snr_tx_db / 10)
        r_rx = _m.rx_noise_acf(p.eta0, hr_f * (wt @ basis), f, m, nw)
        p0 = wt @ pulses[0]
        self.t0 = t0 = _m.phase_table(p0, m)
        self.t0r = np.ascontiguousarray(t0[:, ::-1])
        self.gv = _m._pair_forms(t0, offs, nw, iu, mult)
        self.gj = _m._pair_forms(_m.slope_table(p0, m), offs, nw, iu, mult)
        self.acf_next = np.zeros(nw)
        gf = []
        for bv, k in zip(pulses[1:], kinds):
            a = wt @ bv
            if k == "next":
                self.acf_next += var_x * _m.acf(_m.agg_samples(a, m)[1], nw)
            else:
                gf.append(_m._pair_forms(_m.phase_table(a, m), offs, nw, iu, mult))
        self.gf = np.stack(gf) if gf else np.zeros((0, len(iu[0]), m * nw))
        self.r_base = r_rx[None, :] + k_tx * _m.acf_rows(t0, nw)
        w = 4 * m
        pk0 = int(np.argmax(p0))
        self.idx0 = pk0 - w
        idx = pk0 + np.arange(-w, w + 1)
        self.S = np.stack([p0[(idx - k * m) % len(p0)] for k in offs])


def _quad_parts(fn, xs: list) -> list:
    """Parts P_kl (k <= l) with fn(sum_k w_k xs[k]) = sum_{k <= l} w_k w_l P_kl for any
    ``fn`` quadratic in its argument (polarization: P_kk = fn(x_k),
    P_kl = fn(x_k + x_l) - fn(x_k) - fn(x_l))."""
    d = [fn(x) for x in xs]
    out = []
    for k in range(len(xs)):
        for l in range(k, len(xs)):
            out.append(d[k] if k == l else fn(xs[k] + xs[l]) - d[k] - d[l])
    return np.stack(out)


def _combine(parts: np.ndarray, wt: np.ndarray) -> np.ndarray:
    """sum_{k <= l} w_k w_l P_kl of the parts stacked along axis 0: one matrix-vector
    product (a sum of 10 scaled copies of each table before)."""
    n = len(wt)
    w2 = np.array([wt[k] * wt[l] for k in range(n) for l in range(k, n)])
    return np.tensordot(w2, parts, axes=1)


class _CtleParts:
    """The tables of :class:`_Ctle` for every CTLE setting from parts formed once: each
    pulse is linear in the CTLE weights (``wt @ basis pulses``), so every table (quadratic
    forms of the victim, its slope and the FEXT aggressors, the TX-noise, NEXT and RX-noise
    autocorrelations) is a quadratic form in the 4 weights, kept as its 10 parts
    (:func:`_quad_parts`); a CTLE setting combines them (:meth:`at`)."""

    def __init__(self, p, pulses, basis, kinds, hr_f, f, m, offs, iu, mult):
        nw = _mf.span(p)
        L = p.levels
        self.var_x = (L ** 2 - 1) / (3.0 * (L - 1) ** 2)
        self.k_tx = 10 ** (-p.snr_tx_db / 10)
        self.m, self.pulses0 = m, pulses[0]
        self.r_rx = _quad_parts(lambda h: _m.rx_noise_acf(p.eta0, hr_f * h, f, m, nw), list(basis))
        b0 = list(pulses[0])
        self.gv = _quad_parts(lambda x: _m._pair_forms(_m.phase_table(x, m), offs, nw, iu, mult), b0)
        self.gj = _quad_parts(lambda x: _m._pair_forms(_m.slope_table(x, m), offs, nw, iu, mult), b0)
        self.acf_g = _quad_parts(lambda x: _m.acf_rows(_m.phase_table(x, m), nw), b0)
        self.nxt = [_quad_parts(lambda x: _m.acf_rows(_m.phase_table(x, m), nw), list(bv))
                    for bv, k in zip(pulses[1:], kinds) if k == "next"]
        gf = [_quad_parts(lambda x: _m._pair_forms(_m.phase_table(x, m), offs, nw, iu, mult),
                          list(bv)) for bv, k in zip(pulses[1:], kinds) if k == "fext"]
        self.gf = np.stack(gf, axis=1) if gf else None    # (parts, FEXT, pairs, M N_w)
        self.n_pairs, self.nw = len(iu[0]), nw
        self.offs = offs

    def at(self, wt: np.ndarray) -> "_Ctle":
        t = _Ctle.__new__(_Ctle)
        m, nw = self.m, self.nw
        t.var_x = self.var_x
        p0 = wt @ self.pulses0
        t.t0 = _m.phase_table(p0, m)
        t.t0r = np.ascontiguousarray(t.t0[:, ::-1])       # the kernel's reversed rows
        t.a1 = np.abs(t.t0).sum(axis=1)                   # the kernel's sum |t0| per phase
        t.gv = _combine(self.gv, wt)
        t.gj = _combine(self.gj, wt)
        t.acf_next = np.zeros(nw)
        for parts in self.nxt:
            a = _combine(parts, wt)                       # acf per phase (M x N_w)
            t.acf_next += self.var_x * a[int(np.argmax(a[:, 0]))]
        t.gf = (np.ascontiguousarray(_combine(self.gf, wt)) if self.gf is not None
                else np.zeros((0, self.n_pairs, m * nw)))
        t.r_base = _combine(self.r_rx, wt)[None, :] + self.k_tx * _combine(self.acf_g, wt)
        w = 4 * m
        pk0 = int(np.argmax(p0))
        t.idx0 = pk0 - w
        idx = pk0 + np.arange(-w, w + 1)
        t.S = np.stack([p0[(idx - k * m) % len(p0)] for k in self.offs])
        return t


def search_grid_numba(p, grid, vtfs: list, kinds: list, block: int = 65536,
                      stage=None) -> _m.MmseBest:
    """Best MMSE FOM over g_DC x g_DC2 x the TX FFE grid (``vtfs[0]`` the thru, the rest
    aggressors of ``kinds``): the result of mmse.search_grid_fast (same fields; the best
    candidate's RX FFE and DFE taps are solved again by mmse.solve_rows_batch).
    ``stage(text)``: called as the search moves on (CTLE settings, exact candidates)."""
    from serdes.com.fom import _pairs, ctle_basis, ctle_weights, full_taps, tx_offsets
    from serdes.com.pulse import h_r, xsinc
    import scipy.fft as sf

    m = grid.m
    C_all = full_taps(p, p.tx_grid)
    # taps that are zero in every setting of the grid (c(2), c(3) in the preset) add
    # exact zeros: leave them out of the kernel's sums
    live = np.flatnonzero(np.any(C_all != 0.0, axis=0))
    offs = tx_offsets(p)[live]
    C = np.ascontiguousarray(C_all[:, live])
    iu, mult = _pairs(len(offs))
    CC = np.ascontiguousarray(C[:, iu[0]] * C[:, iu[1]])
    basis = ctle_basis(p, grid.f)
    xs = xsinc(grid)
    amps = [p.a_v] + [p.a_ne if k == "next" else p.a_fe for k in kinds]
    # scipy's FFT over the 4 basis rows at once: the same values as numpy's row by row
    # (both pocketfft), half the time of numpy's along an axis
    pulses = [sf.irfft(xs * v * basis, axis=1) * a for v, a in zip(vtfs, amps)]
    hr_f = h_r(p, grid.f)
    nw, dw, nb = len(p.rx_ffe_max), p.rx_ffe_pre, len(p.dfe_max)
    L = p.levels
    var_x = (L ** 2 - 1) / (3.0 * (L - 1) ** 2)
    wmin, wmax = _mf.limits(p)
    kw = dict(m=m, nw=nw, dw=dw, nb=nb, wmin=wmin, wmax=wmax, bmin=np.asarray(p.dfe_min, float),
              bmax=np.asarray(p.dfe_max, float), var_x=var_x,
              k_j=var_x * (p.a_dd ** 2 + p.sigma_rj ** 2), rlm=p.rlm, levels=L,
              **({"n_wg": p.rx_ffe_n_wg, "n_wf": p.rx_ffe_n_wf, "n_span": _mf.span(p)}
                 if p.rx_ffe_n_wg else {}))
    landscape = np.full((len(p.g_dc), len(p.g_dc2)), -np.inf)
    best = None
    n_eval = 0
    parts = _CtleParts(p, pulses, basis, kinds, hr_f, grid.f, m, offs, iu, mult)
    if p.n_qb:       # quantization noise: branch and bound (quant.py)
        return _search_quant(p, parts, C, C_all, CC, offs, kw, landscape, stage)
    n_ctle = sum(p.ctle_allowed(a, b) for a in p.g_dc for b in p.g_dc2)
    k_ctle = 0
    for i, gdc in enumerate(p.g_dc):
        for j, gdc2 in enumerate(p.g_dc2):
            if not p.ctle_allowed(gdc, gdc2):   # the sheet's G_Qual pairs
                continue
            if stage is not None:
                stage(f"{k_ctle}/{n_ctle} CTLE")
            k_ctle += 1
            t = parts.at(ctle_weights(gdc, gdc2))
            foms = np.empty(len(C))
            tss = np.empty(len(C), dtype=np.int64)
            for s0 in range(0, len(C), block):
                sl = slice(s0, min(len(C), s0 + block))
                foms[sl], tss[sl], _ = mmse_block(C[sl], CC[sl], t.gv, t.gj, t.gf, t.r_base,
                                                  t.acf_next, t.t0, t.S, t.idx0, offs, **kw)
            n_eval += len(C)
            k = int(np.argmax(foms))
            landscape[i, j] = foms[k]
            if best is None or foms[k] > best.fom_db:
                w_k, b_k = _taps_at(p, t, C[k], offs, int(tss[k]))
                sol = _m.MmseSolution(float(foms[k]), float("nan"), w_k, b_k, int(tss[k]))
                best = _m.MmseBest(float(foms[k]), float(gdc), float(gdc2), C_all[k].copy(), sol,
                                   landscape, foms.copy(), 0)
    best.n_evaluated = n_eval
    best.landscape = landscape
    return best


def _search_quant(p, parts, C, C_all, CC, offs, kw, landscape, stage=None):
    from serdes.com import quant
    from serdes.com.fom import ctle_weights

    ctles = [(i, j, float(a), float(b)) for i, a in enumerate(p.g_dc)
             for j, b in enumerate(p.g_dc2) if p.ctle_allowed(a, b)]
    fom, n, r, ts, ub, n_exact = quant.search_quant(p, parts, ctles, C, CC, offs, kw, stage)
    for k, (i, j, _, _) in enumerate(ctles):
        landscape[i, j] = ub[k].max()             # upper bounds (exact at the best)
    i, j, gdc, gdc2 = ctles[n]
    landscape[i, j] = fom
    t = parts.at(ctle_weights(gdc, gdc2))
    w_k, b_k = _taps_at(p, t, C[r], offs, ts, quant=True)
    sol = _m.MmseSolution(fom, float("nan"), w_k, b_k, ts)
    tx = ub[n].copy()
    tx[r] = fom
    best = _m.MmseBest(fom, gdc, gdc2, C_all[r].copy(), sol, landscape, tx, len(ctles) * len(C),
                       landscape_bound=True)
    best.n_exact = n_exact
    return best


def _ts_problem(p, t: _Ctle, c: np.ndarray, offs: np.ndarray, ts: int, quant: bool = False):
    """The MMSE problem of one candidate at sampling time ts from the search's tables:
    the victim's UI-sample autocorrelation av, the noise's rn (with the search's
    quantization noise when ``quant``) and the cursor and DFE rows of the convolution
    matrix over the FFE span (the kernel's _ts_tables and _quant_solve, in NumPy)."""
    from serdes.com.fom import _pairs

    m, N = t.t0.shape
    nw, dw, nb = _mf.span(p), p.rx_ffe_pre, len(p.dfe_max)
    iu, _ = _pairs(len(offs))
    cc = c[iu[0]] * c[iu[1]]
    dh, ph = divmod(ts, m)
    axt = t.acf_next.copy()
    for g in t.gf:
        ga = (cc @ g).reshape(m, nw)
        axt += t.var_x * ga[int(np.argmax(ga[:, 0]))]
    k_j = t.var_x * (p.a_dd ** 2 + p.sigma_rj ** 2)
    av = (cc @ t.gv).reshape(m, nw)[ph]
    rn = t.r_base[ph] + k_j * (cc @ t.gj).reshape(m, nw)[ph] + axt
    if quant:
        from serdes.com.quant import search_v_qc
        v = search_v_qc(p, t, c, offs, ts, t.var_x * p.sigma_rj ** 2, k_j, t.var_x, axt)
        rn = rn.copy()
        rn[0] += (2 * v / (2 ** p.n_qb - 1)) ** 2 / 12
    nn = np.arange(nb + 1)[:, None] - np.arange(nw)[None, :]
    cols = (dh + dw + nn[None] - offs[:, None, None]) % N
    rows = np.einsum("k,kbi->bi", c, t.t0[ph][cols])
    return av, rn, rows


def _taps_at(p, t: _Ctle, c: np.ndarray, offs: np.ndarray, ts: int, quant: bool = False,
             with_fom: bool = False):
    """RX FFE and DFE taps of one candidate, solved by mmse.solve_rows_batch from the
    same tables (the reference solve); ``quant``: with the search's quantization noise."""
    av, rn, rows = _ts_problem(p, t, c, offs, ts, quant)
    if p.rx_ffe_n_wg:    # floating taps: placed again (NumPy form of the kernel's rule)
        _, f0, w0, b0 = _mf.place(av, rn, rows, p)
        f, w, b = np.array([f0]), w0[None], b0[None]
    else:
        f, w, b = _m.solve_rows_batch(av[None], rn[None], rows[None], p)
    if with_fom:
        return w[0].copy(), b[0].copy(), float(f[0])
    return w[0].copy(), b[0].copy()
