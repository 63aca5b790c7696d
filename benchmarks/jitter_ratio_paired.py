"""The default link with 0.01 UI RJ against the same link without jitter, this tree
beside an earlier revision, in interleaved runs pinned to one CPU.

    python3 benchmarks/jitter_ratio_paired.py REV [--rounds 5] [--symbols 10000000] [--cpu 1]

Each round runs four processes one after the other (the order rotates between rounds):
earlier tree with RJ, this tree with RJ, this tree without jitter, earlier tree without
jitter; each builds the link, warms its kernels up on 20k symbols and then times one
counted run of ``--symbols`` in CPU time (``time.process_time``). Printed: the median
CPU time of each, the median over rounds of the within-round ratios RJ / no jitter (the
issue's goal 1: <= 1.3) for both trees and this / earlier with RJ.
"""

from __future__ import annotations

import statistics
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
from serdes.engines.run import simulate
extra = ["link.target_errors=0"] + (["noise.rj_ui=0"] if sys.argv[2] == "flat" else [])
s = build(Config.default().with_overrides(extra))
simulate(s, symbols=20_000)
t = time.process_time()
r = simulate(s, symbols=int(sys.argv[3]))
print(time.process_time() - t, r.bit_errors)
'''


def main(argv=None) -> int:
    ap = parser(__doc__, rounds=5)
    ap.add_argument("--symbols", type=int, default=10_000_000)
    args = ap.parse_args(argv)
    with tempfile.TemporaryDirectory() as tmp:
        old, script = export_with_script(args.rev, tmp, MEASURE)
        runs = [("earlier", old, "rj"), ("this", ROOT, "rj"), ("this", ROOT, "flat"),
                ("earlier", old, "flat")]
        t = {(name, kind): [] for name, _, kind in runs}
        errors = {}
        for r in range(args.rounds):
            for name, tree, kind in runs[r % 4:] + runs[:r % 4]:
                out = measure(args.cpu, script, tree, kind, args.symbols)
                t[name, kind].append(float(out[0]))
                errors.setdefault((name, kind), set()).add(int(out[1]))
    med = {k: statistics.median(v) for k, v in t.items()}
    print(f"{args.symbols:.0e} symbols, CPU s, median of {args.rounds} rounds "
          f"(bit errors per run in brackets)")
    for k, v in med.items():
        print(f"  {k[0]:8s} {k[1]:5s} {v:7.3f}  all {' '.join(f'{x:.2f}' for x in t[k])}  "
              f"{sorted(errors[k])}")
    for name in ("earlier", "this"):
        ratios = [a / b for a, b in zip(t[name, "rj"], t[name, "flat"])]
        print(f"  {name:8s} RJ / no jitter: median {statistics.median(ratios):.3f} "
              f"(rounds {' '.join(f'{x:.2f}' for x in ratios)})")
    sp = [a / b for a, b in zip(t["earlier", "rj"], t["this", "rj"])]
    print(f"  RJ run, earlier / this: median {statistics.median(sp):.3f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
