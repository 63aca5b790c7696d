"""COM with the MLSD reference receiver (802.3dj 178A.1.10, ``serdes/com/mlsd.py``) on the
earlier 802.3dj set (``serdes.com.params.dj_early``: the parameters of PyChOpMarg's
``IEEE_8023dj``, no floating taps, N_qb 0) with ``mlsd = true``, against PyChOpMarg 3.4's
``calc_mlsd`` (that configuration with ``mlsd=True``) on the same reduced grid; --lines
uses the 802.3dj-kr preset (D3.3) as it stands.

    PYTHONPATH=. python3 benchmarks/com_mlsd.py dpo4 dpo12 ca ex2 [--ours-only]
    PYTHONPATH=. python3 benchmarks/com_mlsd.py --lines 20 25 30 35

(--lines: synthetic Annex 93A lines of that loss at 53.125 GHz, ours only, the same grid
with TX c(-1), c(1) in {-0.1, -0.05, 0} and 4 x 2 CTLE settings)

Prints one JSON line per set: ours (COM_DFE, the MLSD gain, DER_MLSD, g_an, COM) and,
unless --ours-only, PyChOpMarg's.
"""

from __future__ import annotations

import dataclasses
import json
import os
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
os.environ.setdefault("PYCHOPMARG_PROCS", "1")

from com_pychopmarg_dj import CH, SETS, _ours_overrides  # noqa: E402

from serdes.com.core import compute_com  # noqa: E402
from serdes.com.params import dj_early  # noqa: E402

#: TX FFE off, 2 CTLE settings (as tests/test_com_dj.py's comparison)
GRID = {"g_dc": [-12.0, -9.0], "g_dc2": [-2.0], "tx_min": [0.0] * 6, "tx_max": [0.0] * 6,
        "tx_step": [0.0] * 6, "f_step_ghz": 0.05}


def pcm_mlsd(thru, fext, nxt, grid):
    from pychopmarg.com import COM
    from pychopmarg.config.ieee_8023dj import IEEE_8023dj
    cp = dataclasses.replace(IEEE_8023dj, g_DC=list(grid["g_dc"]), g_DC2=list(grid["g_dc2"]),
                             tx_taps_min=list(grid["tx_min"]), tx_taps_max=list(grid["tx_max"]),
                             tx_taps_step=list(grid["tx_step"]), fstep=float(grid["f_step_ghz"]),
                             mlsd=True)
    com = COM(cp, {"THRU": [thru], "FEXT": list(fext), "NEXT": list(nxt)})
    com.n_procs = 1
    val = com()
    r = com.com_rslts
    return {"com_db": float(val), "com_dfe_db": float(r["COM_DFE"]),
            "gain_db": float(r["delta_COM_mlsd"]), "der_mlsd": float(r["DER_MLSD"]),
            "g_an": float(r["g_an"]), "terms": int(r["mlsd_terms"]),
            "g_dc_db": float(com.gDC), "dfe_taps": [float(x) for x in com.dfe_taps]}


def run(key, grid=GRID, pcm=True):
    thru, fext, nxt = SETS[key]
    thru, fext, nxt = str(CH / thru), [str(CH / f) for f in fext], [str(CH / f) for f in nxt]
    t = time.process_time()
    res = compute_com(thru, fext, nxt, dj_early(), {**_ours_overrides(grid), "mlsd": "true"})
    cpu = time.process_time() - t
    out = {"set": key, "ours": [dict(c.mlsd, package_case=c.package_case, g_dc_db=c.g_dc_db,
                                     a_s_v=c.a_s_v, a_ni_v=c.a_ni_v) for c in res.cases],
           "ours_cpu_s": cpu}
    if pcm:
        out["pychopmarg"] = pcm_mlsd(thru, fext, nxt, grid)
    return out


LINE_GRID = {"g_dc": [-12.0, -9.0, -6.0, -3.0], "g_dc2": [-2.0, 0.0],
             "tx_min": [0.0, 0.0, -0.1, -0.1, 0.0, 0.0], "tx_max": [0.0] * 6,
             "tx_step": [0.0, 0.0, 0.05, 0.05, 0.0, 0.0], "f_step_ghz": 0.05}


def run_line(loss_db, out_dir):
    from com_loss_sweep import write_line
    fn = write_line(Path(out_dir) / f"line_{loss_db:g}dB.s2p", loss_db, fb_gbd=106.25)
    res = compute_com(fn, preset="802.3dj-kr",
                      overrides={**_ours_overrides(LINE_GRID), "mlsd": "true"})
    return {"line_loss_db": loss_db,
            "cases": [dict(c.mlsd, package_case=c.package_case, g_dc_db=c.g_dc_db,
                           tx_taps=c.tx_taps) for c in res.cases]}


if __name__ == "__main__":
    if "--lines" in sys.argv:
        import tempfile
        tmp = tempfile.mkdtemp()
        for x in [float(a) for a in sys.argv[1:] if not a.startswith("--")]:
            print(json.dumps(run_line(x, tmp), default=float), flush=True)
        sys.exit(0)
    args = [a for a in sys.argv[1:] if not a.startswith("--")]
    for key in args or list(SETS):
        print(json.dumps(run(key, pcm="--ours-only" not in sys.argv), default=float), flush=True)
