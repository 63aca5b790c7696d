"""The IEEE COM code's C2M-mode search on the C2M thru, by brute force (slow: ~30 min a case).

With T_O and the C2M sheet's Min_VEO_Test (5 mV) set, the IEEE code (4.50,
`optimize_fom` with do_C2M) chooses its candidate by the window's COM without crosstalk
where ours chooses by the FOM of eq. 93A-36 (docs/com.md, "Not done (yet)"). This
replays that search over the whole grid of `802.3ck-c2m` (TX settings x allowed CTLE
settings, the cursor by Mueller-Mueller, no sampling-time sweep: the sheet sets no
sample_adjustment), as read in the code:

* its first test: EH_1st = 2 (A_s - Q^-1(DER_0) sigma) with sigma^2 the FOM's noise
  (TX, RX, jitter, crosstalk: none for a thru alone) and its ISI in C2M mode: the
  precursors at the cursor, the DFE span and the far cursors sampled T_O = floor(T_O /
  1000 x M) samples earlier (the DFE's clipped taps still from the cursor's own samples);
  a candidate with EH_1st <= Min_VEO_Test - 1 mV is skipped;
* then the window's eye height EH (ours: ``eye.eye_over_window``, without crosstalk, as
  the code's COM_eye_width there) and its COM 20 log10(2 A_s / (2 A_s - EH)); a candidate
  with EH <= Min_VEO_Test is skipped; the largest COM wins.

The code's two skips on 20 log10(A_s / sigma_ISI) below the best FOM so far compare an
ISI-only ratio with a window COM; a candidate they skip has N_i < sigma_ISI, which the
ISI's own spread rules out for the best one, so they are left out. Prints, per package
case, the code's choice and its COM beside the candidate of our FOM search (whose window
COM was our case COM before the search was built, `eye_min_veo_test_mv=0` now); the
search (serdes/com/c2m_search.py, the preset's default) must pick what this picks. Run:

    OPENBLAS_NUM_THREADS=1 PYTHONPATH=. python3 benchmarks/com_c2m_mode.py [CELLS] [--dump=PREFIX]
        [--thru=FILE]

(CELLS: only the first CELLS CTLE settings, for a quick check; the two cases run in
two processes; --dump writes every evaluated candidate's window COM to PREFIX_caseN.npy;
--thru another thru than the C2M one. It ends with the search's choice, which must be
the same.)
"""

from __future__ import annotations

import math
import sys
import time
from concurrent.futures import ProcessPoolExecutor
from pathlib import Path
from types import SimpleNamespace

import numpy as np
from scipy.special import erfcinv

from serdes.com import fom as F
from serdes.com.c2m_search import tx_samples
from serdes.com.core import _apply_tx, _channel, compute_com
from serdes.com.eye import eye_over_window
from serdes.com.params import preset
from serdes.com.pulse import ComGrid, channel_vtf, h_r, xsinc

CH = Path(__file__).resolve().parents[1].parent / "shared" / "channels"
THRU = CH / "ieee8023ck_C2M_mellitz_3ck_01_0518" / "C2M__Z100_IL14_WC_BOR_H_L_H_THRU.s4p"
MIN_VEO_TEST_V = 0.005          # the C2M sheet's Min_VEO_Test, 5 mV


def victim(p, grid, case, thru=THRU):
    """The thru's pulses for the CTLE basis, oriented and delayed as core does."""
    m = grid.m
    vtf = channel_vtf(p, grid, _channel(str(thru), "thru"), case)
    xs = xsinc(grid)
    raw = np.fft.irfft(xs * vtf)
    if raw[int(np.argmax(np.abs(raw)))] < 0:
        vtf = -vtf
    pk0 = int(np.argmax(np.fft.irfft(xs * vtf)))
    if pk0 < 20 * m or pk0 > grid.n_t // 2:
        d = (20 * m - pk0) % grid.n_t
        vtf = vtf * np.exp(-2j * np.pi * grid.f * d * grid.ui / m)
    basis = F.ctle_basis(p, grid.f)
    return np.fft.irfft(xs * vtf * basis, axis=1) * p.a_v, basis


def run_case(n_case: int, n_cells: int | None, only=None, tx_only=None, dump=None,
             thru=THRU) -> dict:
    p = preset("802.3ck-c2m")
    grid = ComGrid.of(p)
    m, L = grid.m, p.levels
    var_x = (L ** 2 - 1) / (3.0 * (L - 1) ** 2)
    q_der = math.sqrt(2.0) * float(erfcinv(2.0 * p.der0))
    t_o = max(0, int(math.floor(p.eye_t_o_mui / 1000.0 * m)))
    base, basis = victim(p, grid, p.cases[n_case - 1], thru)
    offs = F.tx_offsets(p)
    C = F.full_taps(p, p.tx_grid)
    iu, mult = F._pairs(len(offs))
    CC = C[:, iu[0]] * C[:, iu[1]]
    nb = len(p.dfe_max)
    bmin, bmax = np.asarray(p.dfe_min), np.asarray(p.dfe_max)
    n_ui = -(-grid.n_t // m)
    df_ghz = (grid.f[1] - grid.f[0]) / 1e9
    cells = [(a, b) for a in p.g_dc for b in p.g_dc2 if p.ctle_allowed(a, b)][:n_cells]
    if only is not None:
        cells = [only]
    best = {"com_db": -np.inf}
    every = []
    n_first = n_eye = n_veo = 0
    t0 = time.perf_counter()
    for gdc, gdc2 in cells:
        wt = F.ctle_weights(gdc, gdc2)
        p0 = wt @ base
        hc = wt @ basis
        var_n = p.eta0 * float(np.sum(np.abs(h_r(p, grid.f)[1:] * hc[1:]) ** 2)) * df_ghz
        pk = int(np.argmax(p0))
        w = 3 * m
        idx = pk + np.arange(-w, w + 1)
        S = np.stack([p0[np.clip(idx - k * m, 0, len(p0) - 1)] for k in offs])
        q = F._phase_table(p0, m, n_ui)
        dp = (np.roll(p0, -1) - np.roll(p0, 1)) * (m / 2.0)
        g_isi = F._sym(F._gram(q, offs), iu, mult)
        g_j = F._sym(F._gram(F._phase_table(dp, m, n_ui), offs), iu, mult)
        cur = F.locate_cursor(C @ S, m, bmin[0], bmax[0])
        ix = idx[0] + cur
        rr = np.arange(len(C))

        def samples(ixs, nn):       # pv[ixs + n m] for n in nn, every TX setting
            return tx_samples(q, C, offs, m, ixs, nn)

        npre = int(ix.max() // m) + 1           # every precursor of every setting
        nn = np.arange(-npre, nb + 1)
        h = samples(ix, nn)
        h0 = h[:, npre]
        dfe = np.clip(h[:, npre + 1:] / h0[:, None], bmin, bmax)
        ix2 = ix - t_o
        h2 = samples(ix2, nn)
        e2 = (CC @ g_isi)[rr, ix2 % m]            # every sample at the earlier phase
        pre = np.sum(h[:, :npre] ** 2, axis=1)
        pre2 = np.sum(h2[:, :npre] ** 2, axis=1)
        span2 = h2[:, npre + 1:]
        far2 = e2 - pre2 - h2[:, npre] ** 2 - np.sum(span2 ** 2, axis=1)
        isi = pre + np.sum((span2 - dfe * h0[:, None]) ** 2, axis=1) + far2
        jit = (CC @ g_j)[rr, ix % m]
        var_tx = h0 ** 2 * 10 ** (-p.snr_tx_db / 10)
        sigma = np.sqrt(var_x * isi + (p.a_dd ** 2 + p.sigma_rj ** 2) * var_x * jit
                        + var_n + var_tx)
        a_s = p.rlm * h0 / (L - 1)
        eh1 = 2.0 * (a_s - q_der * sigma)
        keep = np.nonzero((h0 > 0) & (eh1 > MIN_VEO_TEST_V - 0.001))[0]
        if tx_only is not None:     # one TX setting (a check against compute_com)
            keep = [int(np.argmin(np.abs(C - np.asarray(tx_only)).sum(axis=1)))]
        n_first += len(keep)
        cell_best = -np.inf
        for r in keep:
            pv = _apply_tx(p0, C[r], offs, m)
            ystep = min(a_s[r] / 1000.0, 1e-5)
            stub = SimpleNamespace(h0=float(h0[r]), a_s=float(a_s[r]),
                                   sigma_tx=math.sqrt(var_tx[r]), sigma_n=math.sqrt(var_n),
                                   dfe_taps=dfe[r], y=np.array([0.0, ystep]),
                                   parts={"p_xt": np.array([1.0])})
            ew = eye_over_window(p, m, pv, int(ix[r]), stub)
            n_eye += 1
            if not ew["eye_height_v"] > MIN_VEO_TEST_V or ew["com_db"] is None:
                continue
            n_veo += 1
            every.append((gdc, gdc2, int(r), float(ew["com_db"]), float(eh1[r])))
            cell_best = max(cell_best, ew["com_db"])
            if ew["com_db"] > best["com_db"]:
                best = {"com_db": float(ew["com_db"]), "g_dc": gdc, "g_dc2": gdc2,
                        "tx_taps": [round(float(x), 3) for x in C[r]],
                        "eye_height_mv": 1e3 * ew["eye_height_v"], "eh_1st_mv": 1e3 * eh1[r],
                        "a_s_mv": 1e3 * a_s[r]}
        print(f"case {n_case}: g_DC {gdc:5.1f} g_DC2 {gdc2:4.1f}: {len(keep)} of {len(C)} pass"
              f" the first test, best window COM {cell_best:.3f} dB"
              f" ({time.perf_counter() - t0:.0f} s)", flush=True)
    best.update(case=n_case, first_test=n_first, eyes=n_eye, veo=n_veo,
                seconds=time.perf_counter() - t0)
    if dump:      # every evaluated candidate: g_DC, g_DC2, TX row, window COM, EH_1st
        np.save(f"{dump}_case{n_case}.npy", np.array(every))
    return best


def main(n_cells: int | None = None, dump: str | None = None, thru=THRU) -> None:
    with ProcessPoolExecutor(2) as ex:
        res = list(ex.map(run_case, (1, 2), (n_cells, n_cells), (None, None), (None, None),
                          (dump, dump), (thru, thru)))
    ours = compute_com(str(thru), preset="802.3ck-c2m", overrides=["eye_min_veo_test_mv=0"])
    search = compute_com(str(thru), preset="802.3ck-c2m")
    for r, c in zip(res, ours.cases):
        print(f"case {r['case']}: the code's C2M mode picks g_DC {r.get('g_dc')}, g_DC2 "
              f"{r.get('g_dc2')}, TX {r.get('tx_taps')}: window COM {r['com_db']:.3f} dB "
              f"(EH {r.get('eye_height_mv', float('nan')):.2f} mV, EH_1st "
              f"{r.get('eh_1st_mv', float('nan')):.2f} mV); {r['first_test']} candidates"
              f" passed its first test, {r['veo']} the eye's; {r['seconds']:.0f} s. Ours (by "
              f"the FOM): g_DC {c.g_dc_db:g}, g_DC2 {c.g_dc2_db:g}, TX "
              f"{[round(x, 3) for x in c.tx_taps]}: COM {c.com_db:.3f} dB "
              f"({r['com_db'] - c.com_db:+.3f} dB)")
    for r, c in zip(res, search.cases):
        print(f"case {r['case']}: the search (the preset) picks g_DC {c.g_dc_db:g}, g_DC2 "
              f"{c.g_dc2_db:g}, TX {[round(x, 3) for x in c.tx_taps]}: COM {c.com_db:.3f} dB "
              f"({'the same' if math.isclose(c.com_db, r['com_db'], abs_tol=1e-9) else 'NOT the same'}"
              f" as the brute force's)")


if __name__ == "__main__":
    args = [a for a in sys.argv[1:] if not a.startswith("--")]
    opt = dict(a[2:].split("=", 1) for a in sys.argv[1:] if a.startswith("--") and "=" in a)
    main(int(args[0]) if args else None, opt.get("dump"), Path(opt.get("thru", THRU)))
