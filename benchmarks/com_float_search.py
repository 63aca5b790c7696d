"""The 802.3dj COM search with the floating RX FFE taps on (``rx_ffe_n_wg=2``) and the
quantization noise (the preset's N_qb 6), on one CTLE setting (g_DC -20, g_DC2 -4: the
full grid's choice on this set) x the full TX grid (1308 settings), both package cases,
DPO_12in with its 8 aggressors, MLSD off: CPU time (time.process_time) of the kernel's
bound pass (qmode 1: every candidate, the whole span free) and exact pass (qmode 2: the
candidates the bound does not prune), the number evaluated exactly, and COM / FOM.

Run: NUMBA_NUM_THREADS=1 OPENBLAS_NUM_THREADS=1 PYTHONPATH=. taskset -c 1 python3
benchmarks/com_float_search.py [n_wg]     (n_wg 2 default; 0: no floating taps)
For a paired comparison with another tree, alternate runs with PYTHONPATH set to each.
"""

import json
import os
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from com_dj_full import SETS  # noqa: E402

from serdes.com import quant  # noqa: E402
from serdes.com.core import compute_com  # noqa: E402

thru, fext, nxt = SETS["dpo12"]
real = quant.mmse_block
acc = {}


def spy(*a, **kw):
    c0 = time.process_time()
    out = real(*a, **kw)
    d = acc.setdefault(str(kw.get("qmode")), [0.0, 0])
    d[0] += time.process_time() - c0
    d[1] += len(a[0])
    return out


quant.mmse_block = spy
wg = sys.argv[1] if len(sys.argv) > 1 else "2"
ov = {"g_dc": "-20", "g_dc2": "-4", "mlsd": "false", "rx_ffe_n_wg": wg}
compute_com(thru, fext[:1], nxt[:1], "802.3dj-kr", {**ov, "tx_max": "0,0,0,0,0,0"})   # cache
acc.clear()
c0 = time.process_time()
r = compute_com(thru, fext, nxt, "802.3dj-kr", ov)
cpu = time.process_time() - c0
print(json.dumps({"n_wg": wg, "tree": os.environ.get("PYTHONPATH"), "cpu_s": round(cpu, 2),
                  "bound_pass": {"cpu_s": round(acc["1"][0], 3), "candidates": acc["1"][1],
                                 "ms_per_candidate": round(1e3 * acc["1"][0] / acc["1"][1], 3)},
                  "exact_pass": {"cpu_s": round(acc["2"][0], 3), "candidates": acc["2"][1]},
                  "cases": [{"com_db": c.com_db, "fom_db": c.fom_db, "tx_taps": c.tx_taps,
                             "exact": c.quant["exact_candidates"],
                             "float_ui": (c.rx_ffe_float or {}).get("ui_after_cursor")}
                            for c in r.cases],
                  "load": os.getloadavg()[0]}))
