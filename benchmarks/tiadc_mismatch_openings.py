"""The statistical sections of ``serdes run`` (``report._stat_parts``: BER, eye openings,
clip probability, DFE error propagation) for interleaved ADCs whose lanes are mismatched
(uncalibrated: their output phases differ, so the openings read the bathtubs averaged
over the phases): this checkout against an earlier revision, CPU time, the cases one
after the other in one process per tree, and whether both trees give the same BER,
widths and heights.

    python3 benchmarks/tiadc_mismatch_openings.py REV [--cases A B C D E]

Cases (the default link with these overrides, 200,000 symbols, the designed taps):
A  8 lanes, 2 ps skew, 2 mV offsets, 0.01 UI RJ (an open eye)
B  4 lanes, a 10 mV / 10 MHz supply tone, DCD 0.02 UI, DD 0.02 UI, 32 dB, no CTLE,
   802.3dj-kr packages, 8 RC taps, precoding (closed at 1e-6)
C  4 lanes with gain mismatch, DCD 0.02 UI, 20 dB
D  4 lanes, the supply tone, CTLE at -4 dB (closed at 1e-6)
E  2 lanes, 3 mV offsets, SJ 0.05 UI at 10 MHz, 18 dB
"""

from __future__ import annotations

import sys

from threads_common import STAT_PARTS, cases_of_both_trees

MEASURE = r'''
import json, sys
sys.path.insert(0, sys.argv[1])
from serdes.build import build
from serdes.config import Config
''' + STAT_PARTS + r'''
CASES = {
    "A": ["adc.lanes=8", "adc.skew_rms_s=2e-12", "adc.offset_rms_v=2e-3", "noise.rj_ui=0.01"],
    "B": ["channel.loss_db=32", "ctle.model=none", "package.preset=802.3dj-kr",
          "noise.dd_ui=0.02", "tx_jitter.dcd_ui=0.02", "adc.lanes=4", "adc.skew_rms_s=1e-12",
          "adc.offset_rms_v=2e-3", "rc.taps=8", "link.precoding=true", "supply.ripple_mv=[10]",
          "supply.ripple_hz=[1e7]", "supply.delay_ps_per_mv=0.3"],
    "C": ["channel.loss_db=20", "tx_jitter.dcd_ui=0.02", "adc.lanes=4", "adc.skew_rms_s=1e-12",
          "adc.offset_rms_v=2e-3", "adc.gain_rms=0.01"],
    "D": ["ctle.auto=false", "ctle.g_dc_db=-4", "adc.lanes=4", "adc.skew_rms_s=1e-12",
          "adc.offset_rms_v=2e-3", "supply.ripple_mv=[10]", "supply.ripple_hz=[1e7]",
          "supply.delay_ps_per_mv=0.3"],
    "E": ["channel.loss_db=18", "adc.lanes=2", "adc.offset_rms_v=3e-3", "noise.sj_ui=0.05",
          "noise.sj_hz=1e7"],
}
out = {}
for name in sys.argv[2:]:
    out[name] = stat_parts(build(Config.default().with_overrides(
        CASES[name] + ["link.symbols=200000"])))
print(json.dumps(out))
'''


def main(argv=None) -> int:
    cases, runs = cases_of_both_trees(__doc__, MEASURE, "ABCDE", argv)
    for c in cases:
        a, b = runs["new"][c], runs["old"][c]
        rel = max((abs(x - y) / abs(y) if y else abs(x))
                  for ha, hb in zip(a["height"], b["height"]) for x, y in zip(ha, hb))
        print(f"{c}: CPU {a['cpu_s']:.1f} s against {b['cpu_s']:.1f} s "
              f"({b['cpu_s'] / a['cpu_s']:.1f}x); BER {a['ber']:.6e} "
              f"{'same' if a['ber'] == b['ber'] else 'DIFFERS: %.6e' % b['ber']}; "
              f"widths {'identical' if a['width_ui'] == b['width_ui'] else 'DIFFER'}; "
              f"heights within {rel:.1e} relative")
    return 0


if __name__ == "__main__":
    sys.exit(main())
