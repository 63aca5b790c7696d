"""Why no cheap bound on the floating RX FFE taps' FOM: on DPO_12in (8 aggressors, case
1) at 3 CTLE settings x 4 TX settings (the best by the search's bound, and rows 0, 500,
1000 of the TX grid), each at the bound's sampling time, the relaxed FOM over the 15 fixed
taps, over the whole 87-tap span (the bound the search uses), and the Schur-complement
bounds on the gain of the floating positions: g_87 <= g_15 + |s|^2 / lambda_min(S) and
with lambda_min(R) (g = h0^T M^-1 h0, M = R - h1 h1^T, s the floating positions' part of
h0 after the fixed taps). "inf": the bound's MSE is <= 0 (no bound). No quantization
noise in these NumPy solves (the DFE tap left free).

Run: PYTHONPATH=. python3 benchmarks/com_float_schur.py
"""

import os
import sys

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from com_dj_full import SETS  # noqa: E402

from serdes.com import mmse_float as _mf  # noqa: E402
from serdes.com import mmse_grid as G  # noqa: E402
from serdes.com.core import _channel, apply_overrides  # noqa: E402
from serdes.com.fom import _pairs, ctle_basis, ctle_weights, full_taps, tx_offsets  # noqa: E402
from serdes.com.params import preset  # noqa: E402
from serdes.com.pulse import ComGrid, channel_vtf, h_r, xsinc  # noqa: E402
from serdes.kernels.com_mmse import mmse_block  # noqa: E402

thru, fext, nxt = SETS["dpo12"]
p = apply_overrides(preset("802.3dj-kr"), {"mlsd": "false", "rx_ffe_n_wg": "2"})
grid = ComGrid.of(p)
chans = ([_channel(thru, "thru")] + [_channel(f, "fext") for f in fext]
         + [_channel(f, "next") for f in nxt])
kinds = [c.kind for c in chans[1:]]
m, xs = grid.m, xsinc(grid)
vtfs = [channel_vtf(p, grid, c, p.cases[0]) for c in chans]
pk0 = int(np.argmax(np.fft.irfft(xs * vtfs[0])))
if pk0 < 20 * m or pk0 > grid.n_t // 2:
    sh = np.exp(-2j * np.pi * grid.f * ((20 * m - pk0) % grid.n_t) * grid.ui / m)
    vtfs = [v * sh for v in vtfs]
C_all = full_taps(p, p.tx_grid)
live = np.flatnonzero(np.any(C_all != 0.0, axis=0))
offs = tx_offsets(p)[live]
C = np.ascontiguousarray(C_all[:, live])
iu, mult = _pairs(len(offs))
CC = np.ascontiguousarray(C[:, iu[0]] * C[:, iu[1]])
basis = ctle_basis(p, grid.f)
amps = [p.a_v] + [p.a_ne if k == "next" else p.a_fe for k in kinds]
pulses = [np.fft.irfft(xs * v * basis, axis=1) * a for v, a in zip(vtfs, amps)]
L = p.levels
var_x = (L ** 2 - 1) / (3.0 * (L - 1) ** 2)
wmin, wmax = _mf.limits(p)
kw = dict(m=m, nw=len(p.rx_ffe_max), dw=p.rx_ffe_pre, nb=1, wmin=wmin, wmax=wmax,
          bmin=np.asarray(p.dfe_min, float), bmax=np.asarray(p.dfe_max, float), var_x=var_x,
          k_j=var_x * (p.a_dd ** 2 + p.sigma_rj ** 2), rlm=p.rlm, levels=L,
          n_wg=2, n_wf=4, n_span=_mf.span(p))
parts = G._CtleParts(p, pulses, basis, kinds, h_r(p, grid.f), grid.f, m, offs, iu, mult)
nw = parts.nw


def prob(t, c, ts):
    cc = c[iu[0]] * c[iu[1]]
    dh, ph = divmod(ts, m)
    axt = t.acf_next.copy()
    for g in t.gf:
        ga = (cc @ g).reshape(m, nw)
        axt += var_x * ga[int(np.argmax(ga[:, 0]))]
    av = (cc @ t.gv).reshape(m, nw)[ph]
    rn = t.r_base[ph] + kw["k_j"] * (cc @ t.gj).reshape(m, nw)[ph] + axt
    nn = np.arange(2)[:, None] - np.arange(nw)[None, :]
    cols = (dh + p.rx_ffe_pre + nn[None] - offs[:, None, None]) % t.t0.shape[1]
    return av, rn, np.einsum("k,kbi->bi", c, t.t0[ph][cols])


def fom(g):
    return 20 * np.log10(p.rlm / (L - 1) / np.sqrt(var_x * (1 / g - 1))) if g < 1 else np.inf


F, E = np.arange(15), np.arange(15, nw)
for gdc, gdc2 in [(-20, -4), (-10, -2), (0, 0)]:
    t = parts.at(ctle_weights(gdc, gdc2))
    f, ts, _ = mmse_block(C, CC, t.gv, t.gj, t.gf, t.r_base, t.acf_next, t.t0, t.S, t.idx0,
                          offs, qmode=1, n_qb=6, **kw)
    for r in [int(np.argmax(f)), 0, 500, 1000]:
        av, rn, (h0, h1) = prob(t, C[r], int(ts[r]))
        k = np.abs(np.arange(nw)[:, None] - np.arange(nw)[None, :])
        R = av[k] + rn[k] / var_x
        M = R - np.outer(h1, h1)
        zF = np.linalg.solve(M[np.ix_(F, F)], h0[F])
        g15, g87 = h0[F] @ zF, h0 @ np.linalg.solve(M, h0)
        s = h0[E] - M[np.ix_(E, F)] @ zF
        S = M[np.ix_(E, E)] - M[np.ix_(E, F)] @ np.linalg.solve(M[np.ix_(F, F)], M[np.ix_(F, E)])
        lam_s, lam_r = np.linalg.eigvalsh(S)[0], np.linalg.eigvalsh(R)[0]
        print(f"g_DC {gdc:4d} g_DC2 {gdc2:3d} TX row {r:5d}: FOM 15 taps {fom(g15):7.3f}, "
              f"87 taps {fom(g87):7.3f}, Schur bound lambda_min(S) {fom(g15 + s @ s / lam_s):7.3f}, "
              f"lambda_min(R) {fom(g15 + s @ s / lam_r):7.3f} dB")
