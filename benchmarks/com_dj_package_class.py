"""802.3dj-kr (P802.3dj/D3.3) COM with the package classes of Table 178-14: class A (the
preset's default) and class B (``package_class=B``: four line segments, Test 1 45 / 44 mm,
Test 2 30 / 29 mm TX / RX), the full official grid and every other value of the preset
(quantization noise, MLSD), both package cases (Test 1, Test 2), on real channel sets and
on synthetic Annex 93A lines (loss given at f_b / 2 = 53.125 GHz, 1 ns delay).

Run: OPENBLAS_NUM_THREADS=1 PYTHONPATH=. python3 benchmarks/com_dj_package_class.py \
        [dpo4|dpo12|ca ...] [--lines 15,20,...]
Prints one JSON line per (set, class) with each case's COM, A_s, A_ni, unequalized peak and
chosen equalization, and the CPU (all threads) and wall time of compute_com.
"""

from __future__ import annotations

import json
import os
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from com_loss_sweep import write_line  # noqa: E402
from com_pychopmarg_dj import CH, SETS  # noqa: E402

from serdes.com.core import compute_com  # noqa: E402


def run(label, thru, fext, nxt, cls):
    t, w = time.process_time(), time.perf_counter()
    r = compute_com(thru, fext, nxt, "802.3dj-kr", {"package_class": cls})
    cpu, wall = time.process_time() - t, time.perf_counter() - w
    cases = [{"case": c.package_case, "z_p_tx_rx_mm": [c.lengths["tx"][0], c.lengths["rx"][0]],
              "com_db": c.com_db, "a_s_mv": 1e3 * c.a_s_v, "a_ni_mv": 1e3 * c.a_ni_v,
              "unequalized_peak_mv": 1e3 * c.unequalized_peak_v, "fom_db": c.fom_db,
              "g_dc_db": c.g_dc_db, "g_dc2_db": c.g_dc2_db, "tx_taps": c.tx_taps,
              "dfe_taps": c.dfe_taps, "mlsd_gain_db": (c.mlsd or {}).get("gain_db")}
             for c in r.cases]
    print(json.dumps({"set": label, "package_class": cls, "com_db": r.com_db, "cases": cases,
                      "cpu_s": cpu, "wall_s": wall, "loadavg": os.getloadavg()[0]}), flush=True)


if __name__ == "__main__":
    args = sys.argv[1:]
    lines = []
    if "--lines" in args:
        i = args.index("--lines")
        lines = [float(x) for x in args[i + 1].split(",") if x]
        del args[i:i + 2]
    for key in args:
        thru, fext, nxt = SETS[key]
        for cls in ("A", "B"):
            run(key, str(CH / thru), [str(CH / f) for f in fext], [str(CH / f) for f in nxt], cls)
    tmp = Path(tempfile.mkdtemp())
    for loss in lines:
        fn = write_line(tmp / f"line_{loss:g}dB.s2p", loss, fb_gbd=106.25)
        for cls in ("A", "B"):
            run(f"line {loss:g} dB", str(fn), [], [], cls)
