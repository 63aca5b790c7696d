"""The statistical sections of ``serdes run`` (``report._stat_parts``: BER, eye openings,
clip probability, DFE error propagation) for calibrated interleaved ADCs whose jitter rows
the engine forms one by one (TX jitter, the aggressors' SJ points), where the rows that
carry little of the error rate keep the level-only RJ classes (``tiadc.rows.screened_any``):
this checkout against an earlier revision, CPU time, the cases one after the other in one
process per tree, and how far BER, per-eye rates, widths and heights moved.

    python3 benchmarks/tiadc_row_screen.py REV [--cases F G H O]

Cases (the default link with 8 calibrated lanes, 2 % gain spread, and these overrides,
200,000 symbols, the designed taps):
F  DCD 0.02 UI, SJ 0.1 UI at 10 MHz
G  DCD 0.02 UI, a 10 mV / 10 MHz supply tone (0.3 ps/mV)
H  as G with SJ 0.1 UI at 10 MHz, a NEXT aggressor (DPO_12in_Meg7_NENF89 from
   ../shared/channels), CTLE at -4 dB, a -25 dB echo at 12 UI, 8 RC taps (skipped
   without the shared channels)
O  for comparison, the default link's one converter with DCD 0.03 UI and SJ 0.05 UI at
   10 MHz (no calibrated lanes: its rows are formed one by one and all take the joint
   classes)
"""

from __future__ import annotations

import sys

import numpy as np

from threads_common import STAT_PARTS, cases_of_both_trees

MEASURE = r'''
import json, sys
from pathlib import Path
sys.path.insert(0, sys.argv[1])
from serdes.build import build
from serdes.config import Config
''' + STAT_PARTS + r'''
CAL = ["adc.lanes=8", "adc.gain_rms=0.02", "adc_cal.enabled=true"]
NEXT = str(Path(sys.argv[1]).resolve().parents[1] / "shared" / "channels" /
           "ieee8023ck_KR_ortho_tracy_3ck_02_0119" / "DPO_12in_Meg7_NENF89.s4p")
TONE = ["supply.ripple_mv=[10]", "supply.ripple_hz=[1e7]", "supply.delay_ps_per_mv=0.3"]
CASES = {
    "F": CAL + ["tx_jitter.dcd_ui=0.02", "noise.sj_ui=0.1", "noise.sj_hz=1e7"],
    "G": CAL + ["tx_jitter.dcd_ui=0.02"] + TONE,
    "H": CAL + ["tx_jitter.dcd_ui=0.02"] + TONE + [
        "noise.sj_ui=0.1", "noise.sj_hz=1e7", "ctle.auto=false", "ctle.g_dc_db=-4",
        "reflections.echo_delay_ui=12", "reflections.echo_db=-25", "rc.taps=8"],
    "O": ["tx_jitter.dcd_ui=0.03", "noise.sj_ui=0.05", "noise.sj_hz=1e7"],
}
out = {}
for name in sys.argv[2:]:
    if name == "H" and not Path(NEXT).exists():
        continue
    cfg = Config.default().with_overrides(CASES[name] + ["link.symbols=200000"])
    if name == "H":
        cfg = cfg.with_aggressors([{"kind": "next", "file": NEXT}])
    out[name] = stat_parts(build(cfg))
print(json.dumps(out))
'''


def _rel(a, b) -> float:
    a, b = np.ravel(np.asarray(a, dtype=float)), np.ravel(np.asarray(b, dtype=float))
    ok = b != 0
    return float(np.max(np.abs(a[ok] / b[ok] - 1))) if ok.any() else 0.0


def main(argv=None) -> int:
    cases, runs = cases_of_both_trees(__doc__, MEASURE, "FGHO", argv)
    for c in cases:
        if c not in runs["new"]:
            print(f"{c}: skipped (no ../shared/channels)")
            continue
        a, b = runs["new"][c], runs["old"][c]
        print(f"{c}: CPU {a['cpu_s']:.1f} s against {b['cpu_s']:.1f} s "
              f"({b['cpu_s'] / a['cpu_s']:.2f}x); BER {a['ber']:.6e} against {b['ber']:.6e}; "
              f"largest relative change: BER {_rel([a['ber']], [b['ber']]):.1e}, per eye "
              f"{_rel(a['per_eye'], b['per_eye']):.1e}, widths "
              f"{_rel(a['width_ui'], b['width_ui']):.1e}, heights "
              f"{_rel(a['height'], b['height']):.1e}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
