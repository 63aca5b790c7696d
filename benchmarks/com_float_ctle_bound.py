"""A per-CTLE-setting bound for the 802.3dj branch and bound with floating RX FFE taps
(tried, not used: it prunes nothing on DPO_12in; docs/com.md, "Speed", "A bound per CTLE
setting"). One relaxed MMSE problem per sampling time shared by every TX setting c: with
u = c * w (span n_span + the TX offsets' range) the cursor and DFE rows, the circular
autocorrelations of the pulse, its slope and each FEXT aggressor (at its least power over
the phases any row takes, per frequency) are exact in u; the kernel's linear
autocorrelations differ from the circular ones by the products across the window's end,
at most omega ||w||^2, absorbed by (1 - omega var_x / P_min) of the RX noise (P_min its
smallest folded spectral value); RX, TX and NEXT noise through |C| <= sum |c_k| = s,
the quantization noise at the smallest V_qc lower bound of the rows. The grouped variant
(``spectral=True``, groups of equal c(-2) and c(1)) divides those noises per frequency by
the group's largest |C(f)|^2 instead. This script compares both with the search's bound
pass (kernel qmode 1) and with the best exact FOM F* of each package case, on every
`--step`-th CTLE setting and the two the search chooses, and checks both against the
exact FOM (every sampling time and placement) of 6 rows per CTLE setting.

Run: NUMBA_NUM_THREADS=1 OPENBLAS_NUM_THREADS=1 PYTHONPATH=. taskset -c 1 python3
benchmarks/com_float_ctle_bound.py [--step 13]
"""

from __future__ import annotations

import json
import os
import sys
import time
from types import SimpleNamespace

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from com_dj_full import SETS  # noqa: E402

from serdes.com import mmse as _m  # noqa: E402
from serdes.com import mmse_grid, quant  # noqa: E402
from serdes.com.core import compute_com  # noqa: E402
from serdes.com.fom import ctle_weights  # noqa: E402
from serdes.kernels import com_mmse_search as _k  # noqa: E402
from serdes.kernels.com_quant import n_lower  # noqa: E402

_REL = 1e-9          # rounding allowance on the quantities the bound takes as smallest


def _circ(t: np.ndarray, nlag: int) -> np.ndarray:
    return _m._circ_acf_rows(t, nlag)


def _wrap(t: np.ndarray, offs: np.ndarray, nu: int) -> np.ndarray:
    """Per row of t: 2 (sum |t| over the samples the first nu UIs of any TX-rolled copy
    read) x (the same for the last nu UIs): bounds the spectral norm of the difference
    between the circular and the linear autocorrelation's Toeplitz matrix (s = 1)."""
    N = t.shape[1]
    head = np.unique(((np.arange(nu)[:, None] - offs[None, :]) % N).ravel())
    tail = np.unique(((np.arange(N - nu, N)[:, None] - offs[None, :]) % N).ravel())
    return 2.0 * np.abs(t[:, head]).sum(axis=1) * np.abs(t[:, tail]).sum(axis=1)


def _near_max(e: np.ndarray) -> np.ndarray:
    """Mask of the entries within rounding of each row's maximum (a kernel's argmax over
    the same values summed in another order is among them)."""
    mx = e.max(axis=1, keepdims=True)
    return e >= mx - _REL * np.abs(mx) - 1e-300


def ctle_bound(p, t, x, C, CC, offs, kw, groups=None, spectral=False):
    """Upper bound on the exact FOM (with quantization noise, any placement of the
    floating taps, every sampling time the search visits) of every row of C at the CTLE
    setting of the tables ``t`` (mmse_grid._Ctle) and ``x`` (its extra tables:
    ``x.rx_full`` the RX noise autocorrelation over the whole window, ``x.slope`` the
    slope's phase table, ``x.fext`` the FEXT aggressors' phase tables). +inf when the
    argument does not apply (the bound never prunes then). ``groups`` (lists of rows):
    one bound per group over its rows (default: one group of every row); ``spectral``:
    the RX, TX, NEXT and quantization noise divided per frequency by the group's largest
    |C(f)|^2 (w^T N w = sum_f N(f) |W(f)|^2 >= sum_f N(f) / max |C(f)|^2 |U(f)|^2) instead
    of by s^2."""
    if groups is None:
        groups = [np.arange(len(C))]
    return np.array([_bound(p, t, x, C, CC, offs, kw, g, spectral) for g in groups])


def _gamma(C, offs, n):
    """Largest |C(f)|^2 over the rows of C on the rfft bins of an n-point grid (>= 1e-6:
    a smaller value only lowers the noise the bound keeps)."""
    e = np.exp(-2j * np.pi * np.outer(np.arange(n // 2 + 1), offs) / n)
    return np.maximum((np.abs(C @ e.T) ** 2).max(axis=0), 1e-6)


def _bound(p, t, x, C, CC, offs, kw, sel, spectral):
    C, CC = C[sel], CC[sel]
    m, N = t.t0.shape
    nwt, nb, dw, var_x = kw["n_span"], kw["nb"], kw["dw"], kw["var_x"]
    omin, omax = int(offs.min()), int(offs.max())
    nu = nwt + omax - omin
    s2 = float(np.abs(C).sum(axis=1).max()) ** 2
    nwk = t.gv.shape[1] // m
    # the sampling times the kernel visits: around the peak of each row (near-ties too)
    pkm = _near_max(C @ t.S)
    idx = np.arange(pkm.shape[1])
    lo = t.idx0 + np.where(pkm, idx, pkm.shape[1]).min(axis=1) - m // 2
    hi = t.idx0 + np.where(pkm, idx, -1).max(axis=1) + m // 2
    ts_all = np.arange(lo.min(), hi.max() + 1)
    # each row's noise at lag 0 (bounding the step the V_qc lower bound subtracts)
    e2 = CC @ t.gj.reshape(-1, m, nwk)[:, :, 0]                  # (rows, M) slope energy
    axt0 = np.full(len(C), float(t.acf_next[0]))
    fext_ph = []
    for g in t.gf:
        e = CC @ g.reshape(-1, m, nwk)[:, :, 0]                  # (rows, M)
        axt0 += var_x * e.max(axis=1)
        ph_set = np.flatnonzero(_near_max(e).any(axis=0))
        fext_ph.append(ph_set)
    # FEXT: the least power over the phases any row may take, per frequency
    fext_acf = np.zeros(nu)
    om_f = 0.0
    for a, ph_set in zip(x.fext, fext_ph):
        spec = np.min(np.abs(np.fft.rfft(a[ph_set], axis=1)) ** 2, axis=0)
        fext_acf += np.fft.irfft(spec, n=N)[:nu]
        om_f += float(_wrap(a[ph_set], offs, nu).max())
    if x.n_fine != N * m:      # the RX noise's samples are not one period of UIs
        return np.inf
    pmin = float(np.fft.rfft(x.rx_full).real.min()) * (1.0 - _REL)
    if not pmin > 0.0:
        return np.inf
    acirc = _circ(t.t0, nu)
    scirc = _circ(x.slope, nu)
    om = _wrap(t.t0, offs, nu) + kw["k_j"] / var_x * _wrap(x.slope, offs, nu) + om_f
    tx = x.k_tx * _m.acf_rows(t.t0, nu)
    a1 = np.abs(t.t0).sum(axis=1)
    qden = float(2 ** p.n_qb - 1)
    m_lb = kw["m_lb"]
    lv = np.empty((3, nu + nb + 1))
    gram = np.empty((nb + 1, nb + 1))
    G = np.empty((max(nb, 1), nb + 1))
    b = np.empty(max(nb, 1))
    j = np.arange(omin, nwt + omax)
    l1 = np.abs(C).sum(axis=1)
    if spectral:
        M = 1 << int(np.ceil(np.log2(N + nu)))
        gN, gM = _gamma(C, offs, N) * (1 - _REL), _gamma(C, offs, M) * (1 - _REL)
        rx_g = np.fft.irfft(np.fft.rfft(x.rx_full).real / gN, n=N)[:nu]
        q_g = np.fft.irfft(1.0 / gN, n=N)[:nu]
        spec = x.k_tx * np.abs(np.fft.rfft(t.t0, n=M, axis=1)) ** 2
        spec_nx = sum(t.var_x * np.abs(np.fft.rfft(a, n=M)) ** 2 for a in x.next_samples)
        tx = np.fft.irfft(spec / gM, n=M, axis=1)[:, :nu]
        nx_g = np.fft.irfft(spec_nx / gM, n=M)[:nu]
    best = -np.inf
    for ts in ts_all:
        dh, ph = divmod(int(ts), m)
        eps = om[ph] * s2 * var_x / pmin
        if not eps < 1.0:
            return np.inf
        rows = (lo <= ts) & (hi >= ts)
        # smallest V_qc lower bound (the kernel's) over the rows that visit ts
        sig = np.sqrt(np.maximum(t.r_base[ph, 0] + kw["k_rj"] * e2[rows, ph] + axt0[rows], 0.0))
        dy = 2.0 * (l1[rows] * a1[ph] + 10.0 * sig) / (kw["npts_q"] - 1)
        win = (dh - 8 + np.arange(_k._QWIN)[None, :] - offs[:, None]) % N
        h = C[rows] @ t.t0[ph][win]                                # (rows, QWIN)
        v = np.maximum(np.abs(h) - dy[:, None] / 2.0, 0.0)
        v = -np.partition(-v, m_lb - 1, axis=1)[:, :m_lb] if m_lb < v.shape[1] else v
        d = 2.0 * float(v.sum(axis=1).min()) * (1.0 - _REL) / qden
        if spectral:
            rn = (1.0 - eps) * rx_g + tx[ph] + nx_g + d * d / 12.0 * q_g
        else:
            rn = ((1.0 - eps) * x.rx_full[:nu] + tx[ph] + x.acf_next) / s2
            rn[0] += d * d / 12.0 / s2
        rn = rn + kw["k_j"] * scirc[ph] + var_x * fext_acf
        hr = np.ascontiguousarray(np.stack([t.t0[ph, (dh + dw + r - j) % N] for r in range(nb + 1)]))
        f = _k._relaxed_span(np.ascontiguousarray(acirc[ph]), rn, hr, nu, nb, kw["bmin"],
                             kw["bmax"], var_x, kw["rlm"], float(kw["levels"]), lv, gram, G, b)
        best = max(best, f)
    return best + _k._SLACK_DB


def extra(args, t, nu):
    """The tables ctle_bound needs beside the search's ``t``."""
    p, pulses, basis, kinds, hr_f, f, m = args[:7]
    wt = t.wt
    var_x = t.var_x
    nxt = np.zeros(nu)
    nxs = []
    for bv, k in zip(pulses[1:], kinds):
        if k == "next":
            tb = _m.phase_table(wt @ bv, m)
            a = _m.acf_rows(tb, nu)
            nxt += var_x * a[int(np.argmax(a[:, 0]))]
            nxs.append(tb[int(np.argmax(a[:, 0]))])
    nw = len(t.acf_next)
    assert np.allclose(nxt[:nw], t.acf_next, rtol=1e-9, atol=0)   # the kernel's NEXT
    return SimpleNamespace(
        rx_full=_m.rx_noise_acf(p.eta0, hr_f * (wt @ basis), f, m, t.t0.shape[1]),
        slope=_m.slope_table(wt @ pulses[0], m),
        fext=[_m.phase_table(wt @ bv, m) for bv, k in zip(pulses[1:], kinds) if k == "fext"],
        acf_next=nxt, next_samples=nxs, k_tx=10 ** (-p.snr_tx_db / 10), n_fine=2 * (len(f) - 1))


def main(step: int) -> None:
    cap: dict = {}
    parts_cls = mmse_grid._CtleParts

    class Spy(parts_cls):
        def __init__(self, *a):
            super().__init__(*a)
            cap["args"] = a

        def at(self, wt):
            t = super().at(wt)
            t.wt = wt
            return t

    def sq(p, parts, ctles, C, CC, offs, kw):     # capture, and return the first row
        cap.setdefault("runs", []).append((p, parts, ctles, C, CC, offs, kw, cap["args"]))
        t = parts.at(ctle_weights(ctles[0][2], ctles[0][3]))
        ts = int(t.idx0 + np.argmax(C[0] @ t.S))
        return 0.0, 0, 0, ts, np.zeros((len(ctles), len(C))), 0

    mmse_grid._CtleParts, real_sq = Spy, quant.search_quant
    quant.search_quant = sq
    thru, fext, nxt = SETS["dpo12"]
    ov = {"mlsd": "false", "rx_ffe_n_wg": "2"}
    compute_com(thru, fext, nxt, "802.3dj-kr", ov)
    quant.search_quant = real_sq
    # F*: the best exact FOM of each case (the search at its chosen CTLE setting)
    fstar = [c.fom_db for c in compute_com(thru, fext, nxt, "802.3dj-kr",
                                           {**ov, "g_dc": "-20", "g_dc2": "-4,-3"}).cases]
    mmse_grid._CtleParts = parts_cls
    for ci, (p, parts, ctles, C, CC, offs, kw, args) in enumerate(cap["runs"]):
        qkw = dict(kw, n_qb=p.n_qb, p_qc=p.p_qc, k_rj=kw["var_x"] * p.sigma_rj ** 2,
                   m_lb=n_lower(p.levels, p.p_qc), npts_q=2001)
        nu = kw["n_span"] + int(offs.max() - offs.min())
        rows = []
        t_mb = t_ub = t_gb = 0.0
        # groups of TX settings for the spectral variant: equal c(-2) and c(1)
        key = [tuple(r) for r in np.round(C[:, [0, len(offs) - 1]], 9)]
        groups = [np.flatnonzero([k == u for k in key]) for u in sorted(set(key))]
        gidx = np.empty(len(C), dtype=int)
        for g, sel in enumerate(groups):
            gidx[sel] = g
        sample = sorted(set(range(0, len(ctles), step))
                        | {n for n, c in enumerate(ctles) if c[2] == -20 and c[3] in (-4, -3)})
        for n in sample:
            t = parts.at(ctle_weights(ctles[n][2], ctles[n][3]))
            x = extra(args, t, nu)
            c0 = time.process_time()
            mb = float(ctle_bound(p, t, x, C, CC, offs, qkw)[0])
            c1 = time.process_time()
            gb = ctle_bound(p, t, x, C, CC, offs, qkw, groups, spectral=True)[gidx]
            c2 = time.process_time()
            bkw = {k: v for k, v in qkw.items() if k not in ("m_lb", "npts_q")}
            ub, _, _ = quant.mmse_block(C, CC, t.gv, t.gj, t.gf, t.r_base, t.acf_next, t.t0,
                                        t.S, t.idx0, offs, qmode=1, **bkw)
            t_mb += c1 - c0
            t_gb += c2 - c1
            t_ub += time.process_time() - c2
            # exact FOMs (every sampling time and placement) of 6 rows: the spectral
            # bound must not be below them
            chk = np.unique(np.r_[np.argsort(-ub)[:3], np.argsort(-gb)[:3]])
            fe, _, _ = quant.mmse_block(C[chk], CC[chk], t.gv, t.gj, t.gf, t.r_base, t.acf_next,
                                        t.t0, t.S, t.idx0, offs, qmode=2, prune=False, **bkw)
            assert np.all(gb[chk] >= fe) and mb >= fe.max(), (gb[chk] - fe, mb - fe)
            rows.append({"g_dc": ctles[n][2], "g_dc2": ctles[n][3], "ctle_bound_minus_F": mb - fstar[ci],
                         "bound_pass_max_minus_F": float(ub.max() - fstar[ci]),
                         "ctle_bound_minus_bound_pass_max": float(mb - ub.max()),
                         "rows_bound_pass_below_F": int((ub < fstar[ci]).sum()),
                         "rows_group_bound_below_F": int((gb < fstar[ci]).sum()),
                         "group_minus_bound_pass_median": float(np.median(gb - ub)),
                         "group_minus_exact_min": float((gb[chk] - fe).min())})
        print(json.dumps({"case": ci + 1, "F_star_db": fstar[ci], "ctles": len(rows),
                          "groups": len(groups), "tx_rows": len(C),
                          "pruned_by_ctle_bound": sum(r["ctle_bound_minus_F"] < 0 for r in rows),
                          "bound_pass_below_F": sum(r["bound_pass_max_minus_F"] < 0 for r in rows),
                          "cpu_s_ctle_bound": round(t_mb, 3), "cpu_s_group_bound": round(t_gb, 3),
                          "cpu_s_bound_pass": round(t_ub, 3),
                          "rows": rows, "load": os.getloadavg()[0]}), flush=True)

if __name__ == "__main__":
    main(int(sys.argv[sys.argv.index("--step") + 1]) if "--step" in sys.argv else 13)
