"""Statistical BER of a 64-lane interleaved ADC with a supply tone, calibrated and not:
this checkout against an earlier revision, in paired runs (CPU time, pinned to one CPU
where ``taskset`` exists).

    python3 benchmarks/bench_tiadc_stat.py REV [--pairs 2] [--cases cal,raw]

The case is the README's: the default link, 64 lanes with 0.3 ps rms skew, a 20 mV
ripple tone at 10 MHz into the clock at 0.5 ps/mV; ``cal`` with the background
calibration (one output phase, the tone's rows times the skew residual's two
Gauss-Hermite offsets), ``raw`` without (every one of the 64 output phases). Each pair
runs the earlier tree (``git archive``) and this one, one process after the other,
after a warm-up that compiles the kernels; printed: the CPU seconds of each, the BER
of each (they must agree to rounding), the ratio of the best of the pairs, and the
calibrated case's time over the uncalibrated one in the new tree.
"""

from __future__ import annotations

import sys
import tempfile
from pathlib import Path

from revision import export_with_script, measure, parser

ROOT = Path(__file__).resolve().parents[1]

MEASURE = r'''
import sys, time
sys.path.insert(0, sys.argv[1])
from serdes.build import build
from serdes.config import Config
from serdes.engines.stat import StatisticalEngine
from serdes.tiadc.stat import statistical_engine

CASE = ["adc.lanes=64", "adc.skew_rms_s=0.3e-12", "supply.ripple_mv=[20]",
        "supply.ripple_hz=[1e7]", "supply.delay_ps_per_mv=0.5"]
extra = ["adc_cal.enabled=true"] if sys.argv[2] == "cal" else []
StatisticalEngine(build(Config.default()), jitter_points=4).ber()   # compile the kernels
system = build(Config.default().with_overrides(CASE + extra))
T = time.process_time
t0 = T()
b = statistical_engine(system).ber()
print("%.4f %.17e" % (T() - t0, b.ber))
'''


def main(argv=None) -> int:
    ap = parser(__doc__, pairs=2)
    ap.add_argument("--cases", default="cal,raw")
    args = ap.parse_args(argv)
    best = {}
    with tempfile.TemporaryDirectory() as tmp:
        old, script = export_with_script(args.rev, tmp, MEASURE, "serdes")
        for case in args.cases.split(","):
            rows = {"old": [], "new": []}
            for _ in range(args.pairs):
                for name, tree in (("old", old), ("new", ROOT)):
                    out = measure(args.cpu, script, tree, case)
                    r = (float(out[0]), float(out[1]))
                    rows[name].append(r)
                    print(f"{case} {name}: {r[0]:.2f} s CPU (BER {r[1]:.10e})", flush=True)
            so = min(r[0] for r in rows["old"])
            sn = min(r[0] for r in rows["new"])
            best[case] = (so, sn)
            rel = abs(rows["new"][0][1] / rows["old"][0][1] - 1)
            print(f"{case}: best of {args.pairs}: {so:.2f} -> {sn:.2f} s CPU "
                  f"({so / sn:.2f}x); BER relative difference {rel:.1e}", flush=True)
    if "cal" in best and "raw" in best:
        print(f"calibrated / uncalibrated: old {best['cal'][0] / best['raw'][0]:.2f}x, "
              f"new {best['cal'][1] / best['raw'][1]:.2f}x")
    return 0


if __name__ == "__main__":
    sys.exit(main())
