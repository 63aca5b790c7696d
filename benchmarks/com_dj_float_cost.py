"""Cost of the 802.3dj floating RX FFE taps (``rx_ffe_n_wg=2``: 2 groups of 4 up to N_max
87) in the COM search: CPU time of the numba kernel (``mmse_grid.mmse_block``, timed inside
compute_com) per candidate with and without them, 2 interleaved repetitions, DPO_12in with
its 8 aggressors, one CTLE setting (g_DC -12, g_DC2 -2) x 16 TX settings, both package
cases, n_qb 0, no MLSD; the full grid's 384,552 candidates extrapolated from it (kernel
only, one thread), and the COM of both.

Run: NUMBA_NUM_THREADS=1 OPENBLAS_NUM_THREADS=1 PYTHONPATH=. python3 benchmarks/com_dj_float_cost.py
"""

import json, os, sys, time
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from com_dj_full import SETS
from serdes.com import mmse_grid
from serdes.com.core import compute_com
thru, fext, nxt = SETS["dpo12"]
real = mmse_grid.mmse_block
acc = {"t": 0.0, "n": 0}
def spy(*a, **kw):
    c0 = time.process_time()
    out = real(*a, **kw)
    acc["t"] += time.process_time() - c0
    acc["n"] += len(a[0])
    return out
mmse_grid.mmse_block = spy
base = {"g_dc": "-12", "g_dc2": "-2", "n_qb": "0", "mlsd": "false", "tx_min": "0,0,-0.06,-0.06,0,0",
        "tx_max": "0,0,0,0,0,0", "tx_step": "0,0,0.02,0.02,0,0"}
for wg in ("0", "2"):
    compute_com(thru, fext[:1], nxt[:1], "802.3dj-kr", {**base, "tx_min": "0,0,0,0,0,0", "rx_ffe_n_wg": wg})
res = {"0": [], "2": []}
out = {}
for rep in range(2):
    for wg in ("0", "2"):
        acc.update(t=0.0, n=0)
        c0 = time.process_time()
        r = compute_com(thru, fext, nxt, "802.3dj-kr", {**base, "rx_ffe_n_wg": wg})
        tot = time.process_time() - c0
        res[wg].append((acc["t"] / acc["n"], tot, acc["n"]))
        out[wg] = [(round(c.com_db, 4), round(c.fom_db, 4), c.as_dict().get("rx_ffe_float", {}) and c.as_dict()["rx_ffe_float"]["ui_after_cursor"]) for c in r.cases]
per = {wg: min(x[0] for x in v) for wg, v in res.items()}
print(json.dumps({"kernel_cpu_s_per_candidate": per, "runs": res, "ratio": per["2"] / per["0"],
                  "full_grid_kernel_cpu_s": {wg: round(v * 384552) for wg, v in per.items()},
                  "com": out, "load": os.getloadavg()[0]}))
