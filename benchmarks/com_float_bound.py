"""Cost of the floating-tap FOM bound of the 802.3dj COM branch and bound (every position
of the 87-tap span free, kernel ``_relaxed_span``, Levinson-Durbin on the Toeplitz R)
against the same bound by the 87 x 87 Cholesky solve it replaces (``_solve_one``,
relaxed) and against the exact floating placement (``_float_solve``), per sampling time,
CPU time (time.process_time) of 5 interleaved repetitions over the same 200 random
problems of the D3.3 sizes (N_fix 15, N_max 87, 1 DFE tap); the largest difference of
the two bounds and the smallest margin of the bound over the exact FOM.

Run: NUMBA_NUM_THREADS=1 PYTHONPATH=. taskset -c 1 python3 benchmarks/com_float_bound.py
"""

import dataclasses
import json
import os
import time

import numpy as np

from serdes.com import mmse_float
from serdes.com.params import preset
from serdes.kernels import com_mmse_search as K

p = dataclasses.replace(preset("802.3dj-kr"), rx_ffe_n_wg=2, n_qb=0, mlsd=False)
n, nfix, nb, dw = mmse_float.span(p), len(p.rx_ffe_max), len(p.dfe_max), p.rx_ffe_pre
wmin, wmax = mmse_float.limits(p)
L = float(p.levels)
var_x = (L ** 2 - 1) / (3.0 * (L - 1) ** 2)
bmin, bmax = np.asarray(p.dfe_min, float), np.asarray(p.dfe_max, float)
R, lo = np.empty((n, n)), np.empty((n, n))
Y, G, b = np.empty((nb, n)), np.empty((nb, nb + 1)), np.empty(nb)
y, z, w = np.empty(n), np.empty(n), np.empty(n)
lv, gram = np.empty((3, n + nb + 1)), np.empty((nb + 1, nb + 1))
chosen, valid = np.empty(n, dtype=np.int64), np.empty(n, dtype=np.int64)


def problem(rng, c0=12, m=160):
    """UI samples: cursor, decaying tail, 1-3 echoes in the span, colored noise."""
    h = np.zeros(m)
    h[c0] = 1.0
    h[c0 + 1:c0 + 20] = rng.normal(size=19) * 0.3 * np.exp(-np.arange(19) / 3)
    h[c0 - 3:c0] = rng.normal(size=3) * 0.05
    for _ in range(rng.integers(1, 4)):
        h[c0 + rng.integers(9, n - dw)] += rng.normal() * 0.08
    av = np.array([h[:m - k] @ h[k:] for k in range(n)])
    rn = np.zeros(n)
    rn[:3] = np.array([1.0, 0.3, 0.1]) * rng.uniform(1e-3, 3e-2)
    rows = (c0 + dw + np.arange(nb + 1))[:, None] - np.arange(n)[None, :]
    hr = np.where((rows >= 0) & (rows < m), h[np.clip(rows, 0, m - 1)], 0.0)
    return av, rn, np.ascontiguousarray(hr)


def chol(pr):
    return K._solve_one(*pr, np.arange(n), n, dw, nb, wmin, wmax, bmin, bmax, var_x, p.rlm, L,
                        R, lo, Y, G, y, z, w, b, True)


def lev(pr):
    return K._relaxed_span(*pr, n, nb, bmin, bmax, var_x, p.rlm, L, lv, gram, G, b)


def exact(pr):
    return K._float_solve(*pr, nfix, n, p.rx_ffe_n_wg, p.rx_ffe_n_wf, dw, nb, wmin, wmax, bmin,
                          bmax, var_x, p.rlm, L, R, lo, Y, G, y, z, w, b, np.arange(n), chosen,
                          valid, -np.inf, np.empty(0))


rng = np.random.default_rng(3)
probs = [problem(rng) for _ in range(200)]
vals = {f.__name__: np.array([f(pr) for pr in probs]) for f in (chol, lev, exact)}   # compile
times = {"chol": [], "lev": [], "exact": []}
for rep in range(5):
    for f in (chol, lev) + ((exact,) if rep < 2 else ()):
        c0 = time.process_time()
        for pr in probs:
            f(pr)
        times[f.__name__].append((time.process_time() - c0) / len(probs) * 1e6)
med = {k: float(np.median(v)) for k, v in times.items()}
print(json.dumps({"us_per_solve_median": med, "runs_us": times,
                  "ratio_chol_over_lev": [c / l for c, l in zip(times["chol"], times["lev"])],
                  "ratio_exact_over_lev": med["exact"] / med["lev"],
                  "max_abs_bound_diff_db": float(np.max(np.abs(vals["lev"] - vals["chol"]))),
                  "min_bound_minus_exact_db": float(np.min(vals["lev"] - vals["exact"])),
                  "load": os.getloadavg()[0]}))
