"""serdes com with the earlier 802.3dj parameter set (serdes.com.params.dj_early, not the
802.3dj-kr preset, which follows P802.3dj/D3.3) against PyChOpMarg 3.4's own 802.3dj run
(its IEEE_8023dj configuration, MMSE RX FFE), both searching the same equalization grid.

The full 802.3dj grid (16 g_DC x 11 g_DC2 x 794,640 TX settings, 1.4e8 candidates, each
with a 33-point sampling-time search) is out of reach of both programs, so both search
the reduced grid below (every point of it); the grid is printed with the results.

Run: PYTHONPATH=. python3 benchmarks/com_pychopmarg_dj.py [dpo4|dpo12|ca|ex2] (needs
pychopmarg and the channel folder ../shared/channels).
"""

from __future__ import annotations

import dataclasses
import json
import os
import sys
import time
from pathlib import Path

import numpy as np

os.environ.setdefault("PYCHOPMARG_PROCS", "1")
from pychopmarg.com import COM  # noqa: E402
from pychopmarg.config.ieee_8023dj import IEEE_8023dj  # noqa: E402

from serdes.com.core import compute_com  # noqa: E402
from serdes.com.params import dj_early  # noqa: E402

CH = Path(__file__).resolve().parents[1].parent / "shared" / "channels"
KR = "ieee8023ck_KR_ortho_tracy_3ck_02_0119/"
CR = "ieee8023ck_CR_mellitz_3ck_04_1119/"
SETS = {
    "dpo4": (KR + "DPO_4in_Meg7_THRU.s4p", [], []),
    "dpo12": (KR + "DPO_12in_Meg7_THRU.s4p",
              [KR + f"DPO_12in_Meg7_{n}.s4p" for n in ("FENG89", "FENG1415", "FENH89", "FENH1112",
                                                      "FENH1415")],
              [KR + f"DPO_12in_Meg7_{n}.s4p" for n in ("NENF89", "NENF1112", "NENF1415")]),
    "ca": (CR + "CA_19p75dB_thru.s4p", [CR + f"CA_19p75dB_fext{n}.s4p" for n in range(1, 8)],
           [CR + f"CA_19p75dB_next{n}.s4p" for n in range(1, 9)]),
    "ex2": ("pychopmarg_example2_vita682/example2_THRU.s4p",
            [f"pychopmarg_example2_vita682/example2_FEXT{n}.s4p" for n in (1, 2)],
            [f"pychopmarg_example2_vita682/example2_NEXT{n}.s4p" for n in (1, 2, 3)]),
}

#: the reduced grid both programs search (every point)
GRID = {"g_dc": [-12.0, -9.0, -6.0, -3.0], "g_dc2": [-2.0, 0.0],
        "tx_min": [0.0, 0.0, -0.1, -0.1, 0.0, 0.0], "tx_max": [0.0, 0.0, 0.0, 0.0, 0.0, 0.0],
        "tx_step": [0.0, 0.0, 0.05, 0.05, 0.0, 0.0]}


def _ours_overrides(grid):
    return {k: ",".join(str(x) for x in v) if isinstance(v, list) else str(v)
            for k, v in grid.items()}


def pcm_run(thru, fext, nxt, grid):
    cp = dataclasses.replace(IEEE_8023dj, g_DC=list(grid["g_dc"]), g_DC2=list(grid["g_dc2"]),
                             tx_taps_min=list(grid["tx_min"]), tx_taps_max=list(grid["tx_max"]),
                             tx_taps_step=list(grid["tx_step"]),
                             fstep=float(grid.get("f_step_ghz", IEEE_8023dj.fstep)))
    com, val, el = pcm_com(cp, thru, fext, nxt)
    return {**pcm_fields(com, val), "fom_evaluations": int(com.n_fom_evals), "elapsed_s": el}


def pcm_com(cp, thru, fext, nxt, **devices):
    """PyChOpMarg's COM of one channel set with the parameters ``cp`` (and its device
    keywords), in one process: (the COM object, COM in dB, wall seconds)."""
    t = time.perf_counter()
    com = COM(cp, {"THRU": [thru], "FEXT": list(fext), "NEXT": list(nxt)}, **devices)
    com.n_procs = 1
    val = com()
    return com, val, time.perf_counter() - t


def pcm_fields(com, val):
    """What the PyChOpMarg comparisons report of a finished run: COM, signal and noise
    amplitudes, FOM, the CTLE, TX, RX FFE and DFE settings it chose."""
    r, f = com.com_rslts, com.fom_rslts
    return {"com_db": float(val), "a_s_v": float(r["As"]), "a_ni_v": float(r["Ani"]),
            "fom_db": float(f["FOM"]), "g_dc_db": float(com.gDC), "g_dc2_db": float(com.gDC2),
            "tx_taps": [float(x) for x in com._tx_combs[com.tx_ix]],
            "rx_ffe_taps": [float(x) for x in com.rx_taps],
            "dfe_taps": [float(x) for x in com.dfe_taps]}


def compare(key, grid=GRID):
    thru, fext, nxt = SETS[key]
    thru, fext, nxt = str(CH / thru), [str(CH / f) for f in fext], [str(CH / f) for f in nxt]
    ours = compute_com(thru, fext, nxt, dj_early(), _ours_overrides(grid))
    c = ours.cases[0]
    ref = pcm_run(thru, fext, nxt, grid)
    tx = [x for i, x in enumerate(c.tx_taps) if i != 3]
    return {"set": key, "grid": grid,
            "ours": {"com_db": c.com_db, "a_s_v": c.a_s_v, "a_ni_v": c.a_ni_v, "fom_db": c.fom_db,
                     "g_dc_db": c.g_dc_db, "g_dc2_db": c.g_dc2_db, "tx_taps": tx,
                     "rx_ffe_taps": c.rx_ffe_taps, "dfe_taps": c.dfe_taps,
                     "fom_evaluations": c.n_fom, "elapsed_s": ours.elapsed_s,
                     "unequalized_peak_v": c.unequalized_peak_v},
            "pychopmarg": ref, "delta_com_db": c.com_db - ref["com_db"],
            "delta_fom_db": c.fom_db - ref["fom_db"],
            "max_rx_tap_diff": float(np.max(np.abs(np.subtract(c.rx_ffe_taps, ref["rx_ffe_taps"]))))}


if __name__ == "__main__":
    for key in sys.argv[1:] or list(SETS):
        print(json.dumps(compare(key), default=float), flush=True)
