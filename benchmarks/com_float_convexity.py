"""Would strong convexity tighten the whole-span bound of the floating-tap search on a
thru? The relaxed MSE q(w, b) of ``_relaxed_span`` is a convex quadratic on the feasible
set (h0^T w = 1, the DFE tap in its limits), so for any taps z on a placement P
(zero off the fixed taps and P's two windows) q(z) >= q* + lambda_min ||w*_off||^2,
with w* the whole span's optimum, lambda_min the smallest eigenvalue of q's Hessian on
h0^T d = 0 (or, smaller, of the noise's Toeplitz matrix) and ||w*_off||^2 the energy of
w*'s floating taps outside the best two windows. This prints how much that term lowers
the bound against the exact FOM of the IEEE placement (``mmse_float.place``) on rows
the exact pass visits: DPO_4in's thru, 802.3dj-kr (floating taps, quantization noise),
g_DC -12, g_DC2 -2, the whole TX grid, MLSD off; 10 rows drawn with seed 0, each at
its 33 sampling times, dense NumPy.

Run: NUMBA_NUM_THREADS=2 OPENBLAS_NUM_THREADS=1 PYTHONPATH=. python3
benchmarks/com_float_convexity.py      (about a minute)
"""

import json
import os
import sys

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from com_dj_full import KR  # noqa: E402

from serdes.com import mmse_float, mmse_grid, quant  # noqa: E402
from serdes.com.core import compute_com  # noqa: E402
from serdes.com.params import apply_overrides, preset  # noqa: E402

cap = []
real = quant.mmse_block


def spy(*a, **kw):
    out = real(*a, **kw)
    if kw.get("qmode") == 2:        # the exact pass's calls: rows it visits
        cap.append((a, kw))
    return out


quant.mmse_block = spy
ov = {"g_dc": "-12", "g_dc2": "-2", "mlsd": "false"}
compute_com(KR / "DPO_4in_Meg7_THRU.s4p", [], [], "802.3dj-kr", ov)
p = apply_overrides(preset("802.3dj-kr"), ov)
L = float(p.levels)
var_x = (L ** 2 - 1) / (3.0 * (L - 1) ** 2)
b_lo, b_hi = float(p.dfe_min[0]), float(p.dfe_max[0])
n, nfix, nwf = mmse_float.span(p), len(p.rx_ffe_max), p.rx_ffe_n_wf
lag = np.abs(np.arange(n)[:, None] - np.arange(n)[None, :])


def fom(q):
    return 20 * np.log10(p.rlm / (L - 1) / np.sqrt(var_x * q))


def span_optimum(R, h0, h1):
    """q* and w* of the whole span, no FFE limits, the one DFE tap clipped (the
    relaxation of _relaxed_span): q = w^T R w - 2 b h1^T w + b^2 - 1, h0^T w = 1."""
    z = np.linalg.solve(R - np.outer(h1, h1), h0)
    w = z / (h0 @ z)
    b = h1 @ w
    if not b_lo <= b <= b_hi:
        b = min(max(b, b_lo), b_hi)
        y, z0 = np.linalg.solve(R, h1 * b), np.linalg.solve(R, h0)
        w = y + (1 - h0 @ y) / (h0 @ z0) * z0
    return w @ R @ w - 2 * b * (h1 @ w) + b * b - 1, w


rows = [(a, kw, i) for a, kw in cap for i in range(len(a[0]))]
out = []
for k in np.random.default_rng(0).choice(len(rows), 10, replace=False):
    a, kw, i = rows[k]
    C, gv, gj, gf, r_base, acf_next, t0, S, idx0, offs = (a[0],) + a[2:]
    t = type("T", (), dict(gv=gv, gj=gj, gf=gf, r_base=r_base, acf_next=acf_next, t0=t0,
                           var_x=var_x))()
    pk = idx0 + int(np.argmax(C[i] @ S))
    m = kw["m"]
    for d in range(-(m // 2), m // 2 + 1):
        av, rn, hr = mmse_grid._ts_problem(p, t, C[i], offs, pk + d, quant=True)
        R, N = av[lag] + rn[lag] / var_x, rn[lag] / var_x
        q, w = span_optimum(R, hr[0], hr[1])
        H = np.zeros((n + 1, n + 1))            # q's Hessian / 2 in (w, b)
        H[:n, :n], H[:n, n], H[n, :n], H[n, n] = R, -hr[1], -hr[1], 1.0
        basis = np.linalg.qr(np.column_stack([np.r_[hr[0], 0.0], np.eye(n + 1)]))[0][:, 1:]
        lam_h = np.linalg.eigvalsh(basis.T @ H @ basis)[0]
        lam_n = np.linalg.eigvalsh(N)[0]
        e = np.convolve(w[nfix:] ** 2, np.ones(nwf), "valid")   # window energies
        pair = max(e[x] + e[y] for x in range(len(e)) for y in range(x + nwf, len(e)))
        off = float((w[nfix:] ** 2).sum() - pair)
        exact = mmse_float.place(av, rn, hr, p)[1]
        out.append([fom(q) - exact, fom(q + lam_h * off) - exact, lam_h, lam_n, off, q])
s = np.array(out)
print(json.dumps({
    "sampling_times": len(s),
    "whole_span_bound_above_exact_db_median": round(float(np.median(s[:, 0])), 4),
    "with_convexity_term_db_median": round(float(np.median(s[:, 1])), 4),
    "largest_tightening_db": round(float((s[:, 0] - s[:, 1]).max()), 4),
    "lambda_hessian_median": float(np.median(s[:, 2])),
    "lambda_noise_median": float(np.median(s[:, 3])),
    "off_window_energy_median": float(np.median(s[:, 4])),
    "q_star_median": float(np.median(s[:, 5])),
    "load": os.getloadavg()[0]}))
