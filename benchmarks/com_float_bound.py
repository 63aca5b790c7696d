"""Cost of the floating-tap FOM bound of the 802.3dj COM branch and bound (every position
of the 87-tap span free, kernel ``_relaxed_span``, Levinson-Durbin on the Toeplitz R)
against the same bound by the 87 x 87 Cholesky solve it replaces (``_solve_one``,
relaxed) and against the exact floating placement (``_float_solve``), per sampling time,
CPU time (time.process_time) of 5 interleaved repetitions over the same 200 random
problems of the D3.3 sizes (N_fix 15, N_max 87, 1 DFE tap); the largest difference of
the two bounds and the smallest margin of the bound over the exact FOM; and the exact
placement with the exact pass's pruning of placements against prefix bounds
(``_prefix_bounds`` + ``_float_solve`` with pb, no threshold: the same FOM); and the
bound over the placements' sets (``_pair_bound``) at a threshold 0.1 dB above the exact
FOM: its cost and on how many problems it is below that threshold.

Run: NUMBA_NUM_THREADS=1 PYTHONPATH=. taskset -c 1 python3 benchmarks/com_float_bound.py
"""

import dataclasses
import json
import os
import time

import sys
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tests"))
from test_com_rxfloat import _problem, _scratch  # noqa: E402

from serdes.com import mmse_float  # noqa: E402
from serdes.com.params import preset  # noqa: E402
from serdes.kernels import com_mmse_search as K  # noqa: E402

p = dataclasses.replace(preset("802.3dj-kr"), rx_ffe_n_wg=2, n_qb=0, mlsd=False)
n, nfix, nb, dw = mmse_float.span(p), len(p.rx_ffe_max), len(p.dfe_max), p.rx_ffe_pre
wmin, wmax = mmse_float.limits(p)
L = float(p.levels)
var_x = (L ** 2 - 1) / (3.0 * (L - 1) ** 2)
bmin, bmax = np.asarray(p.dfe_min, float), np.asarray(p.dfe_max, float)
R, lo, Y, G, y, z, w, b, lv, gram, hist, pb, chosen, valid = _scratch(n, nb)


def problem(rng):
    """UI samples: cursor, decaying tail, 1-3 echoes in the span, colored noise (the
    generator of tests/test_com_rxfloat.py)."""
    return tuple(np.ascontiguousarray(x) for x in _problem(rng, p))


def chol(pr):
    return K._solve_one(*pr, np.arange(n), n, dw, nb, wmin, wmax, bmin, bmax, var_x, p.rlm, L,
                        R, lo, Y, G, y, z, w, b, True)


def lev(pr):
    return K._relaxed_span(*pr, n, nb, bmin, bmax, var_x, p.rlm, L, lv, gram, G, b)


def exact(pr):
    return K._float_solve(*pr, nfix, n, p.rx_ffe_n_wg, p.rx_ffe_n_wf, dw, nb, wmin, wmax, bmin,
                          bmax, var_x, p.rlm, L, R, lo, Y, G, y, z, w, b, np.arange(n), chosen,
                          valid, -np.inf, np.empty(0))


def pruned(pr):
    """The exact placement with the exact pass's prefix-bound pruning (no threshold)."""
    K._prefix_bounds(*pr, n, nb, bmin, bmax, var_x, p.rlm, L, lv, gram, G, b, hist, pb)
    return K._float_solve(*pr, nfix, n, p.rx_ffe_n_wg, p.rx_ffe_n_wf, dw, nb, wmin, wmax, bmin,
                          bmax, var_x, p.rlm, L, R, lo, Y, G, y, z, w, b, np.arange(n), chosen,
                          valid, -np.inf, pb)


rng = np.random.default_rng(3)
probs = [problem(rng) for _ in range(200)]
vals = {f.__name__: np.array([f(pr) for pr in probs]) for f in (chol, lev, exact, pruned)}
thr_pairs = {id(pr): fe + 0.1 for pr, fe in zip(probs, vals["exact"])}


def pairs(pr):
    """_pair_bound at a threshold 0.1 dB above the exact FOM (a time the exact pass would
    skip if the bound shows it)."""
    return K._pair_bound(*pr, nfix, n, p.rx_ffe_n_wg, p.rx_ffe_n_wf, nb, bmin, bmax, var_x,
                         p.rlm, L, thr_pairs[id(pr)], lv, gram, G, b, hist)


vals["pairs"] = np.array([pairs(pr) for pr in probs])
times = {"chol": [], "lev": [], "exact": [], "pruned": [], "pairs": []}
for rep in range(5):
    for f in (chol, lev) + ((exact, pruned, pairs) if rep < 2 else ()):
        c0 = time.process_time()
        for pr in probs:
            f(pr)
        times[f.__name__].append((time.process_time() - c0) / len(probs) * 1e6)
med = {k: float(np.median(v)) for k, v in times.items()}
print(json.dumps({"us_per_solve_median": med, "runs_us": times,
                  "ratio_chol_over_lev": [c / l for c, l in zip(times["chol"], times["lev"])],
                  "ratio_exact_over_lev": med["exact"] / med["lev"],
                  "ratio_exact_over_pruned": [e / q for e, q in zip(times["exact"],
                                                                    times["pruned"])],
                  "pruned_equals_exact": bool(np.array_equal(vals["pruned"], vals["exact"])),
                  "ratio_exact_over_pairs": [e / q for e, q in zip(times["exact"],
                                                                   times["pairs"])],
                  "pairs_pruning_at_exact_plus_0p1_db": int((vals["pairs"] < np.array(
                      list(thr_pairs.values()))).sum()),
                  "max_abs_bound_diff_db": float(np.max(np.abs(vals["lev"] - vals["chol"]))),
                  "min_bound_minus_exact_db": float(np.min(vals["lev"] - vals["exact"])),
                  "load": os.getloadavg()[0]}))
