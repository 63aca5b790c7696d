"""How tight the floating-tap FOM bounds are on real data: rows that the exact pass of
``benchmarks/com_float_search.py`` evaluates (DPO_12in with its 8 aggressors, g_DC -20,
g_DC2 -4, floating RX FFE taps and quantization noise on, MLSD off; 12 rows drawn with
seed 0), at each of their 33 sampling times with the exact V_qc: the relaxed bound
(kernel ``_relaxed_span``: the whole span free, no tap limits), the bound that keeps the
tap limits (``_box_bound``, 0 / 1 / 3 active-set steps), the bound over the placements'
sets of floating taps (the largest relaxed FOM over the fixed taps plus at most 2
disjoint windows, by NumPy over every such set; and ``_pair_bound``'s verdict at the
row's threshold) and the exact FOM of the IEEE placement (``mmse_float.place``): the
median and smallest gap of each bound over the exact FOM, and at how many sampling
times each bound reaches the row's threshold (the exact pass solves a sampling time
only there).

Run: NUMBA_NUM_THREADS=1 OPENBLAS_NUM_THREADS=1 PYTHONPATH=. taskset -c 1 python3
benchmarks/com_float_boxgap.py      (a few minutes)
"""

import json
import os
import sys

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from com_dj_full import SETS  # noqa: E402

from serdes.com import mmse_float, mmse_grid, quant  # noqa: E402
from serdes.com.core import compute_com  # noqa: E402
from serdes.com.params import apply_overrides, preset  # noqa: E402
from serdes.kernels import com_mmse_search as K  # noqa: E402

thru, fext, nxt = SETS["dpo12"]
cap = []
real = quant.mmse_block


def spy(*a, **kw):
    out = real(*a, **kw)
    if kw.get("qmode") == 2:
        cap.append((a, kw))
    return out


quant.mmse_block = spy
ov = {"g_dc": "-20", "g_dc2": "-4", "mlsd": "false", "rx_ffe_n_wg": "2"}
compute_com(thru, fext, nxt, "802.3dj-kr", ov)
p = apply_overrides(preset("802.3dj-kr"), ov)
wmin, wmax = mmse_float.limits(p)
L = float(p.levels)
var_x = (L ** 2 - 1) / (3.0 * (L - 1) ** 2)
bmin, bmax = np.asarray(p.dfe_min, float), np.asarray(p.dfe_max, float)
n, nb, dw = mmse_float.span(p), len(p.dfe_max), p.rx_ffe_pre
rows = [(a, kw, i) for a, kw in cap for i in range(len(a[0]))]
nfix, nwf = len(p.rx_ffe_max), p.rx_ffe_n_wf
st = range(nfix, n - nwf + 1)
sets = np.array([list(range(nfix)) + list(range(a_, a_ + nwf)) + list(range(c_, c_ + nwf))
                 for a_ in st for c_ in st if c_ >= a_ + nwf])


def pair_max(av, rn, hr, lv, gram, G, b):
    """The largest relaxed FOM over the fixed taps and every pair of disjoint windows
    (the pairs' sets contain the single windows' and the fixed taps')."""
    R = (av + rn / var_x)[np.abs(sets[:, :, None] - sets[:, None, :])]
    Hs = np.swapaxes(hr[:, sets], 0, 1)
    grams = Hs @ np.linalg.solve(R, np.swapaxes(Hs, 1, 2))
    return max(K._gram_fom(np.ascontiguousarray(g), nb, bmin, bmax, var_x, p.rlm, L, lv, G,
                           b) for g in grams)


rng = np.random.default_rng(0)
out = []
for k in rng.choice(len(rows), 12, replace=False):
    a, kw, i = rows[k]
    C, gv, gj, gf, r_base, acf_next, t0, S, idx0, offs = (a[0],) + a[2:]
    m = kw["m"]
    t = type("T", (), dict(gv=gv, gj=gj, gf=gf, r_base=r_base, acf_next=acf_next, t0=t0,
                           var_x=var_x))()
    pk = idx0 + int(np.argmax(C[i] @ S))
    for d in range(-(m // 2), m // 2 + 1):
        av, rn, hr = (np.ascontiguousarray(x) for x in
                      mmse_grid._ts_problem(p, t, C[i], offs, pk + d, quant=True))
        lv, gram, G, b = np.empty((3, n + nb + 1)), np.empty((2, 2)), np.empty((1, 2)), np.empty(1)
        fr = K._relaxed_span(av, rn, hr, n, nb, bmin, bmax, var_x, p.rlm, L, lv, gram, G, b)
        fx = [K._box_bound(av, rn, hr, n, dw, nb, wmin, wmax, bmin, bmax, var_x, p.rlm, L, it)
              for it in (0, 1, 3)]
        fp = pair_max(av, rn, hr, lv, gram, G, b)
        thr = kw["thr"][i]
        fk = K._pair_bound(av, rn, hr, nfix, n, 2, nwf, nb, bmin, bmax, var_x, p.rlm, L,
                           thr - K._SLACK_DB, lv, gram, G, b,
                           np.empty((n, nb + 1, nb + 1))) + K._SLACK_DB
        fe = mmse_float.place(av, rn, hr, p)[1]
        out.append([thr, fr, *fx, fp, fe, fk])
s = np.array(out)
res = {}
for j, name in ((1, "relaxed"), (2, "box_0_steps"), (3, "box_1_step"), (4, "box_3_steps"),
                (5, "pairs")):
    g = s[:, j] - s[:, 6]
    res[name] = {"gap_median_db": round(float(np.median(g)), 4),
                 "gap_min_db": round(float(g.min()), 4),
                 "times_reaching_thr": int((s[:, j] >= s[:, 0]).sum())}
print(json.dumps({"sampling_times": len(s), **res,
                  "exact_reaching_thr": int((s[:, 6] >= s[:, 0]).sum()),
                  "pair_kernel_reaching_thr": int((s[:, 7] >= s[:, 0]).sum()),
                  "pair_kernel_invalid": int(((s[:, 7] < s[:, 0]) & (s[:, 7] < s[:, 6])).sum()),
                  "load": os.getloadavg()[0]}))
