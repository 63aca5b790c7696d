"""Where the bound pass of the 802.3dj branch and bound with floating RX FFE taps spends
its time (kernel qmode 1: every TX setting's relaxed whole-span bound at each of its 33
sampling times): DPO_12in with its 8 aggressors, g_DC -20, g_DC2 -4, the 1308 TX
settings of package case 1, one thread. Three drivers loop over the same (row, sampling
time) pairs as the kernel and call its helpers: (1) the tables alone (_ts_tables: the
victim's and the noise's autocorrelation over the 87 lags, the cursor and DFE rows),
(3) the tables and the relaxed bound (_relaxed_span: Schur's recursion over the span),
(2) the tables and the whole qmode-1 step (_quant_solve: V_qc's lower bound, then the
relaxed bound). CPU time per sampling time, modes interleaved, 5 repetitions (the FEXT
crosstalk per row is left out: it is formed once per row, not per sampling time).

Run: NUMBA_NUM_THREADS=1 OPENBLAS_NUM_THREADS=1 PYTHONPATH=. taskset -c 1 python3
benchmarks/com_float_profile.py
"""

import json
import os
import sys
import time

import numpy as np
from numba import njit

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from com_dj_full import SETS  # noqa: E402

from serdes.com import quant  # noqa: E402
from serdes.com.core import compute_com  # noqa: E402
from serdes.com.fom import ctle_weights  # noqa: E402
from serdes.kernels import com_mmse_search as K  # noqa: E402
from serdes.kernels.com_quant import n_lower  # noqa: E402


@njit
def drive(mode, C, CC, gv, gj, r_base, axt, t0, t0r, offs, noffs, pk, dw, nb, nwt, nw, k_j,
          k_rj, var_x,
          wmin, wmax, bmin, bmax, rlm, L, qden, m_lb, p_half, a1, m):
    P = CC.shape[1]
    av, rn, hr = np.empty(nwt), np.empty(nwt), np.empty((nb + 1, nwt))
    R, lo = np.empty((nwt, nwt)), np.empty((nwt, nwt))
    Y, G = np.empty((max(nb, 1), nwt)), np.empty((max(nb, 1), nb + 1))
    y, z, w, b = np.empty(nwt), np.empty(nwt), np.empty(nwt), np.empty(max(nb, 1))
    cols, valid = np.arange(nwt), np.empty(nwt, dtype=np.int64)
    chosen = np.empty(8, dtype=np.int64)
    top, hq = np.empty(max(m_lb, 1)), np.empty(K._QWIN)
    lv, gram = np.empty((3, nwt + nb + 1)), np.empty((nb + 1, nb + 1))
    hist, pb = np.empty((0, nb + 1, nb + 1)), np.empty(0)
    acc = 0.0
    for r in range(C.shape[0]):
        for dt in range(-(m // 2), m // 2 + 1):
            ts = pk[r] + dt
            dh = ts // m
            ph = ts - dh * m
            K._ts_tables(C, CC, gv, gj, r_base, axt, t0r, noffs, r, ph, dh, dw, nb, nwt,
                         k_j, av, rn, hr)
            if mode == 2:
                acc += K._quant_solve(
                    C[r], t0, offs, ph, dh, av, rn, hr, nw, dw, nb, wmin, wmax, bmin, bmax,
                    var_x, rlm, L, R, lo, Y, G, y, z, w, b, 1, qden, m_lb, p_half, 2001,
                    (k_rj - k_j) * K._slope_e0(CC, gj, r, ph, nwt, P), a1, -np.inf, top, hq,
                    cols, nwt, 2, 4, chosen, valid, lv, gram, hist, pb)
            elif mode == 3:
                acc += K._relaxed_span(av, rn, hr, nwt, nb, bmin, bmax, var_x, rlm, L, lv,
                                       gram, G, b)
    return acc


def main():
    cap = {}

    def sq(p, parts, ctles, C, CC, offs, kw):      # capture the search's tables
        cap["run"] = (p, parts, C, CC, offs, kw)
        raise StopIteration

    real = quant.search_quant
    quant.search_quant = sq
    thru, fext, nxt = SETS["dpo12"]
    try:
        compute_com(thru, fext, nxt, "802.3dj-kr",
                    {"mlsd": "false", "rx_ffe_n_wg": "2", "g_dc": "-20", "g_dc2": "-4"})
    except StopIteration:
        pass
    quant.search_quant = real
    p, parts, C, CC, offs, kw = cap["run"]
    t = parts.at(ctle_weights(-20, -4))
    var_x = kw["var_x"]
    args = (C, CC, np.ascontiguousarray(t.gv), np.ascontiguousarray(t.gj), t.r_base,
            t.acf_next.copy(), t.t0, np.ascontiguousarray(t.t0[:, ::-1]), offs, -offs,
            t.idx0 + (C @ t.S).argmax(axis=1), kw["dw"],
            kw["nb"], kw["n_span"], kw["nw"], kw["k_j"], var_x * p.sigma_rj ** 2, var_x,
            np.asarray(kw["wmin"], float), np.asarray(kw["wmax"], float), kw["bmin"],
            kw["bmax"], kw["rlm"], float(kw["levels"]), float(2 ** p.n_qb - 1),
            n_lower(p.levels, p.p_qc), p.p_qc / 2, np.ascontiguousarray(np.abs(t.t0).sum(axis=1)),
            kw["m"])
    names = {1: "tables", 3: "tables_and_relaxed_bound", 2: "tables_and_qmode1_step"}
    for mode in names:
        drive(mode, *args)                          # compile
    us = {v: [] for v in names.values()}
    n_ts = len(C) * (kw["m"] // 2 * 2 + 1)
    for _ in range(5):
        for mode, name in names.items():
            c0 = time.process_time()
            drive(mode, *args)
            us[name].append(round((time.process_time() - c0) / n_ts * 1e6, 2))
    med = {k: float(np.median(v)) for k, v in us.items()}
    print(json.dumps({"us_per_sampling_time": us, "median": med,
                      "relaxed_bound_us": med["tables_and_relaxed_bound"] - med["tables"],
                      "v_qc_lower_bound_and_rest_us": med["tables_and_qmode1_step"]
                      - med["tables_and_relaxed_bound"], "load": os.getloadavg()[0]}))


if __name__ == "__main__":
    main()
