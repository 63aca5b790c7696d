"""How far the C2M candidate chosen by the FOM is from the best one by the window's COM.

With T_O set and the C2M sheet's Min_VEO_Test, the IEEE COM code picks its candidate by
the COM over the timing window, 20 log10(2 A_s / (2 A_s - EH)) (docs/com.md, "Method",
eye.py); the search by the FOM of eq. 93A-36 (the code's with Min_VEO_Test = 0; ours with
``eye_min_veo_test_mv=0``, as run here) reports that window COM at its candidate. The
preset's 5 mV now runs the code's search (serdes/com/c2m_search.py), which this lower
bound predates and which reaches at least it.
This runs COM once per CTLE setting of the preset's grid (the TX FFE searched by the FOM
within it) and prints each setting's window COM
per package case: their maximum is a lower bound on what a search by the window's COM
reaches (it would also search the TX settings by it), beside the value at our
candidate.

    OPENBLAS_NUM_THREADS=1 PYTHONPATH=. python3 benchmarks/com_c2m_window_cells.py [THRU]
"""

from __future__ import annotations

import dataclasses
import sys
from pathlib import Path

from serdes.com.core import compute_com
from serdes.com.params import preset
from serdes.errors import SerdesError

CH = Path(__file__).resolve().parents[1].parent / "shared" / "channels"
THRU = CH / "ieee8023ck_C2M_mellitz_3ck_01_0518" / "C2M__Z100_IL14_WC_BOR_H_L_H_THRU.s4p"


def main(thru: str = str(THRU)) -> None:
    # the search by the FOM in every cell (the preset's Min_VEO_Test would run the
    # C2M-mode search, which this predates and now checks)
    p = dataclasses.replace(preset("802.3ck-c2m"), eye_min_veo_test_mv=0.0)
    full = compute_com(thru, preset=p)
    ours = {c.package_case: c for c in full.cases}
    best = {n: (-1e9, None) for n in ours}
    for g1 in p.g_dc:
        for g2 in p.g_dc2:
            try:
                res = compute_com(thru, preset=p, overrides=[f"g_dc={g1}", f"g_dc2={g2}"])
            except SerdesError:       # not one of the sheet's G_Qual / G2_Qual pairs
                continue
            row = []
            for c in res.cases:
                w = c.eye_window["com_db"]
                row.append(f"case {c.package_case}: FOM {c.fom_db:.3f} dB, COM at T_s "
                           f"{c.eye_window['com_t_s_db']:.3f} dB, window COM {w:.3f} dB")
                if w > best[c.package_case][0]:
                    best[c.package_case] = (w, (g1, g2, c.tx_taps))
            print(f"g_DC {g1:g}, g_DC2 {g2:g}: " + "; ".join(row), flush=True)
    for n, c in ours.items():
        w, (g1, g2, tx) = best[n]
        print(f"case {n}: ours (by the FOM) g_DC {c.g_dc_db:g}, g_DC2 {c.g_dc2_db:g}, window "
              f"COM {c.eye_window['com_db']:.3f} dB; best CTLE setting by the window COM "
              f"g_DC {g1:g}, g_DC2 {g2:g}, TX {[round(x, 3) for x in tx]}: {w:.3f} dB "
              f"(+{w - c.eye_window['com_db']:.3f} dB)")


if __name__ == "__main__":
    main(*sys.argv[1:])
