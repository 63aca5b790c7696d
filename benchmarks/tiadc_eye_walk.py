"""The statistical eye openings of the calibrated 64-lane ADC with a supply tone (the
README's example): this checkout against an earlier revision, in paired runs (CPU
time, pinned to one CPU where ``taskset`` exists).

    python3 benchmarks/tiadc_eye_walk.py REV [--pairs 2] [--full]

Each run builds the case, computes the statistical BER at the nominal phase (what the
text summary prints), then the jitter rows at one more phase (what each phase of the
horizontal walk costs) and, with ``--full``, the whole ``eye_opening`` of
``serdes run --json`` (many minutes per run on the earlier trees). Printed per run:
CPU seconds of each part, the number of phases the horizontal walk evaluated, and the
BER and the 1e-6 widths (they must agree between the trees).
"""

from __future__ import annotations

import argparse
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]

MEASURE = r'''
import sys, time
sys.path.insert(0, sys.argv[1])
from serdes.build import build
from serdes.config import Config
from serdes.engines.stat import StatisticalEngine
from serdes.tiadc.stat import statistical_engine
from serdes.report import COUNTED_EYE_TARGET
from serdes.engines.stat import DEFAULT_TARGETS

CASE = ["adc.lanes=64", "adc.skew_rms_s=0.3e-12", "supply.ripple_mv=[20]",
        "supply.ripple_hz=[1e7]", "supply.delay_ps_per_mv=0.5", "adc_cal.enabled=true"]
StatisticalEngine(build(Config.default()), jitter_points=4).ber()   # compile the kernels
system = build(Config.default().with_overrides(CASE))
T = time.process_time
eng = statistical_engine(system)
seen = []
rd = eng.row_distributions
def counted(off=0.0, grid_step=None):
    seen.append(round(float(off), 12))
    return rd(off, grid_step)
eng.row_distributions = counted
t0 = T()
b = eng.ber(0.0)
t1 = T()
if sys.argv[2] == "full":
    op = eng.eye_opening(targets=DEFAULT_TARGETS + (COUNTED_EYE_TARGET,))
    t2 = T()
    print("ber %.2f s  eye_opening %.2f s  row sets %d  ber %.17e  width_1e-6 %s"
          % (t1 - t0, t2 - t1, len(seen), b.ber, list(op.width_ui[0])))
else:
    eng.row_distributions(1 / 64)
    t2 = T()
    print("ber %.2f s  one more phase %.2f s  ber %.17e" % (t1 - t0, t2 - t1, b.ber))
'''


def _pin(cpu):
    return ["taskset", "-c", str(cpu)] if shutil.which("taskset") else []


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("rev", help="the earlier revision (commit, tag, branch)")
    ap.add_argument("--pairs", type=int, default=2)
    ap.add_argument("--full", action="store_true", help="the whole eye_opening")
    ap.add_argument("--cpu", type=int, default=1, help="CPU to pin both runs to")
    args = ap.parse_args(argv)
    with tempfile.TemporaryDirectory() as tmp:
        old = Path(tmp) / "old"
        old.mkdir()
        arc = subprocess.run(["git", "-C", str(ROOT), "archive", args.rev],
                             check=True, capture_output=True).stdout
        subprocess.run(["tar", "-x", "-C", str(old)], input=arc, check=True)
        script = Path(tmp) / "measure.py"
        script.write_text(MEASURE)
        mode = "full" if args.full else "phase"
        for k in range(args.pairs):
            for name, tree in (("old", old), ("new", ROOT)):
                out = subprocess.run(_pin(args.cpu) + [sys.executable, str(script),
                                                       str(tree), mode],
                                     check=True, capture_output=True, text=True).stdout
                print(f"pair {k} {name}: {out.strip()}", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
