"""Checking wrapper of the 802.3dj (Annex 178A) COM search kernel: the MMSE RX FFE/DFE FOM
of a block of TX FFE settings at one CTLE setting (see serdes/com/mmse.py for the method;
the numba kernel and the helpers it inlines are in :mod:`serdes.kernels.com_mmse_search`).
"""

from __future__ import annotations

import numpy as np

from serdes.errors import ConfigError
from serdes.kernels import args as _a
from serdes.kernels.com_mmse_search import _mmse_block
from serdes.kernels.threads import run_chunks

__all__ = ["mmse_block"]


def mmse_block(C, CC, gv, gj, gf, r_base, acf_xt0, t0, S, idx0, offs, m, nw, dw, nb,
               wmin, wmax, bmin, bmax, var_x, k_j, rlm, levels, chunk=64, n_qb=0,
               p_qc=1e-7, k_rj=0.0, qmode=1, thr=None, npts_q=2001, n_wg=0, n_wf=4, n_span=0,
               prune=True, t0r=None, fbs=None, a1=None, threads=None):
    """FOM (best over the sampling times) and sampling time of every row of C, and the
    number of MMSE solves done; see the module doc. With ``n_qb`` > 0 the quantization
    noise of 178A.1.7.6 (``k_rj`` = sigma_X^2 sigma_RJ^2, the RJ part of ``k_j``):
    ``qmode`` 1 returns an upper bound on each row's FOM, ``qmode`` 2 the exact FOM of
    each row whose FOM can reach ``thr`` (per row; -inf: every row), and for the others a
    value below ``thr``. ``gv``, ``gj`` (pairs x M N_w) and
    ``gf`` (FEXT x pairs x M N_w): the quadratic forms of mmse._pair_forms; ``r_base``
    (M x N_w) the RX and TX noise autocorrelation per phase, ``acf_xt0`` the NEXT's;
    ``t0`` (M x N UI) the phase table of the pulse without TX FFE, S its K shifted
    windows starting at sample ``idx0``. Raises when a TX setting moves the pulse peak
    to the edge of the window S covers.

    Floating RX FFE taps (802.3dj 178A.1.8.1; ``n_wg`` > 0 groups of ``n_wf`` taps among
    positions ``nw`` .. ``n_span`` - 1, ``nw`` the fixed taps): the tables then cover
    N_w = ``n_span`` lags and ``wmin`` / ``wmax`` the whole span (the floating taps'
    limits after the fixed ones); the groups are placed per sampling time as the IEEE
    COM code places them (kernel ``_float_solve``).

    ``prune`` (qmode 2): the sampling times in descending order of their bound, each
    evaluated exactly only while its bound reaches thr and the row's best exact FOM so
    far, and the floating placements pruned with prefix bounds (docs/com.md, "Pruning
    the exact pass"); False: every sampling time and placement (the same FOM and sampling
    time for every row that reaches thr).

    ``t0r``: t0 with its rows reversed (C-contiguous), when the caller keeps it for
    several calls (a 2.7 MB copy per call otherwise).

    ``fbs`` (n x (2 (m // 2) + 1), float64, C-contiguous; qmode 1 and 2 with floating
    taps): qmode 1 writes each row's bound at every sampling time into it, and qmode 2
    reads them from it instead of computing them again (the same numbers: the rows
    of the same CTLE setting's bound pass).
    ``a1``: the sum of |t0| along each row (M values), when the caller keeps it for
    several calls (a pass over t0 per call otherwise).

    ``threads``: how many threads run the chunks of ``chunk`` rows (default numba's
    thread count, ``NUMBA_NUM_THREADS``); the result does not depend on it."""
    C = _a.array("C", C, ndim=2, finite=True)
    CC = _a.array("CC", CC, ndim=2, finite=True)
    n, K = C.shape
    if CC.shape[0] != n:
        raise ConfigError(f"CC: needs {n} rows, got {CC.shape[0]}")
    gv = _a.array("gv", gv, ndim=2)
    gj = _a.array("gj", gj, ndim=2)
    gf = _a.array("gf", gf, ndim=3)
    m = _a.integer("m", m, lo=1)
    nw = _a.integer("nw", nw, lo=1)
    nb = _a.integer("nb", nb, lo=0)
    dw = _a.integer("dw", dw, lo=0, hi=nw - 1)
    n_wg = _a.integer("n_wg", n_wg, lo=0, hi=64)
    n_wf = _a.integer("n_wf", n_wf, lo=1, hi=64)
    nw_fix = nw
    if n_wg:
        nw = _a.integer("n_span", n_span, lo=nw_fix + n_wf, hi=4096)
    for name, g in (("gv", gv), ("gj", gj)):
        if g.shape != (CC.shape[1], m * nw):
            raise ConfigError(f"{name}: expected shape {(CC.shape[1], m * nw)}, got {g.shape}")
    if gf.shape[1:] != (CC.shape[1], m * nw):
        raise ConfigError(f"gf: expected shape (n, {CC.shape[1]}, {m * nw}), got {gf.shape}")
    gv = np.ascontiguousarray(gv)
    gj = np.ascontiguousarray(gj)
    gf = np.ascontiguousarray(gf)
    r_base = _a.array("r_base", r_base, ndim=2)
    if r_base.shape != (m, nw):
        raise ConfigError(f"r_base: expected shape {(m, nw)}, got {r_base.shape}")
    acf_xt0 = _a.array("acf_xt0", acf_xt0, min_len=nw)
    t0 = _a.array("t0", t0, ndim=2)
    if t0.shape[0] != m:
        raise ConfigError(f"t0: expected {m} rows, got {t0.shape[0]}")
    S = _a.array("S", S, ndim=2)
    if S.shape[0] != K:
        raise ConfigError(f"S: expected {K} rows, got {S.shape[0]}")
    offs = _a.array("offs", offs, dtype=np.int64)
    if len(offs) != K:
        raise ConfigError(f"offs: expected {K} values, got {len(offs)}")
    if int(np.abs(offs).max(initial=0)) + nw + nb >= t0.shape[1]:
        raise ConfigError(f"t0: {t0.shape[1]} UI is shorter than the TX and RX FFE spans")
    wmin = _a.array("wmin", wmin, min_len=nw)  # nw: the whole span
    wmax = _a.array("wmax", wmax, min_len=nw)
    bmin = _a.array("bmin", bmin, min_len=nb)
    bmax = _a.array("bmax", bmax, min_len=nb)
    idx0 = _a.integer("idx0", idx0, lo=m)
    if idx0 + S.shape[1] + m // 2 >= m * t0.shape[1]:
        raise ConfigError(f"idx0: {idx0} puts the sampling times beyond the pulse window")
    n_qb = _a.integer("n_qb", n_qb, lo=0, hi=30)
    qmode = _a.integer("qmode", qmode, lo=1, hi=2) if n_qb else 0
    thr = np.full(n, -np.inf) if thr is None else _a.array("thr", thr)
    if len(thr) != n:
        raise ConfigError(f"thr: needs {n} values, got {len(thr)}")
    from serdes.kernels.com_quant import n_lower
    p_qc = _a.real("p_qc", p_qc, positive=True)
    if a1 is None:
        a1 = np.abs(t0).sum(axis=1)
    a1 = _a.array("a1", a1, ndim=1)
    if a1.shape[0] != m:
        raise ConfigError(f"a1: needs {m} values (one per row of t0), got {a1.shape[0]}")
    fom = np.empty(n)
    ts = np.empty(n, dtype=np.int64)
    if t0r is None:      # the kernel reads t0's rows backwards
        t0r = np.ascontiguousarray(t0[:, ::-1])
    elif not (isinstance(t0r, np.ndarray) and t0r.dtype == np.float64 and t0r.shape == t0.shape
              and t0r.flags.c_contiguous and np.array_equal(t0r[:, 0], t0[:, -1])
              and np.array_equal(t0r[:, -1], t0[:, 0])):
        raise ConfigError(f"t0r: expected t0 ({t0.shape}) with its rows reversed, C-contiguous")
    n_ts = 2 * (m // 2) + 1
    if fbs is None or qmode == 0:
        fbs = np.empty((0, n_ts))
    elif not (isinstance(fbs, np.ndarray) and fbs.dtype == np.float64
              and fbs.shape == (n, n_ts) and fbs.flags.c_contiguous and fbs.flags.writeable):
        raise ConfigError(f"fbs: expected a writeable C-contiguous float64 array of shape "
                          f"{(n, n_ts)}")
    chunk = _a.integer("chunk", chunk, lo=1)
    args = (C, CC, gv, gj, gf, r_base, acf_xt0, t0, t0r, S, idx0, offs, m, nw_fix, dw, nb,
            wmin, wmax, bmin, bmax, _a.real("var_x", var_x, positive=True),
            _a.real("k_j", k_j, nonneg=True), _a.real("rlm", rlm, positive=True),
            float(_a.integer("levels", levels, lo=2)), fom, ts, chunk, qmode,
            float(2 ** n_qb - 1), n_lower(int(levels), p_qc), p_qc / 2.0,
            _a.integer("npts_q", npts_q, lo=3) | 1, _a.real("k_rj", k_rj, nonneg=True), a1,
            thr, nw, n_wg, n_wf, bool(prune), fbs)
    # the chunks on Python threads (the kernel releases the GIL), not numba's prange:
    # serdes/kernels/threads.py says why
    out = run_chunks(_mmse_block, args, (n + chunk - 1) // chunk, threads)
    bad, nsolve = sum(o[0] for o in out), sum(o[1] for o in out)
    if bad:
        raise RuntimeError("com: the TX FFE moved the pulse peak out of the search window")
    return fom, ts, int(nsolve)
