"""Eye height / VEC of the C2M timing window (``eye_t_o_mui``, serdes/com/eye.py) on real
channels: COM's full grid once (T_O = 0), then, at each package case's chosen
equalization, the eye over T_s +- T_O for several T_O.

    OPENBLAS_NUM_THREADS=1 PYTHONPATH=. python3 benchmarks/com_eye_window.py [PRESET] [T_O ...]
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

from serdes.com.core import compute_com

CH = Path(__file__).resolve().parents[1].parent / "shared" / "channels"
FILES = {"802.3ck-c2m": "ieee8023ck_C2M_mellitz_3ck_01_0518/C2M__Z100_IL14_WC_BOR_H_L_H_THRU.s4p"}


def run(preset="802.3ck-c2m", t_os=(10.0, 25.0, 50.0, 100.0)):
    path = str(CH / FILES[preset])
    full = compute_com(path, preset=preset)
    rows = []
    for c in full.cases:
        tx = [x for i, x in enumerate(c.tx_taps) if i != full.params.tx_n_pre]
        fixed = {"g_dc": str(c.g_dc_db), "g_dc2": str(c.g_dc2_db),
                 "tx_min": ",".join(map(str, tx)), "tx_max": ",".join(map(str, tx)),
                 "tx_step": ",".join("0" for _ in tx), "c0_min": "0"}
        row = {"package_case": c.package_case, "com_db": c.com_db, "a_s_v": c.a_s_v,
               "eye_height_v": c.eye_height_v, "vec_db": c.vec_db, "window": []}
        for t in t_os:
            r = compute_com(path, preset=preset, overrides={**fixed, "eye_t_o_mui": str(t)})
            cc = r.cases[c.package_case - 1]
            assert abs(cc.com_db - c.com_db) < 1e-9     # the same equalization
            row["window"].append(cc.eye_window)
        rows.append(row)
    return {"preset": preset, "file": FILES[preset], "elapsed_full_s": full.elapsed_s, "cases": rows}


if __name__ == "__main__":
    args = sys.argv[1:]
    pre = args[0] if args and not args[0][0].isdigit() else "802.3ck-c2m"
    t_os = [float(a) for a in args if a[0].isdigit()] or [10.0, 25.0, 50.0, 100.0]
    print(json.dumps(run(pre, t_os), default=float, indent=1))
