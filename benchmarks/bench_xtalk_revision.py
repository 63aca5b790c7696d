"""CPU time of the pulse engine with 15 crosstalk aggressors (thru copies, the short
direct-FIR path) against an earlier revision, in paired, interleaved runs.

    python3 benchmarks/bench_xtalk_revision.py REV [--pairs 5] [--cpu 1] [--symbols 1000000]

The revision is exported with ``git archive`` into a temporary folder. Each pair runs
one process on the earlier tree and one on this checkout, one after the other, pinned
to the same CPU (``taskset``); each process builds the link, warms up (numba cache), and
times ``simulate`` of ``--symbols`` symbols three times as CPU time
(``time.process_time``), keeping the best. Printed per pair: M symbols/s of both and the
ratio (this / earlier); at the end the median ratio. The same is done for the link
without aggressors (the victim alone) as the yardstick: its ratio should stay ~1.
"""

from __future__ import annotations

import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

from revision import export_tree, parser, pinned

ROOT = Path(__file__).resolve().parents[1]

MEASURE = r'''
import sys, time
sys.path.insert(0, sys.argv[1])
from serdes.build import build
from serdes.config import Config
from serdes.engines.run import simulate
k, n = int(sys.argv[2]), int(sys.argv[3])
aggs = [dict(kind="next" if i % 2 else "fext", model="copy", coupling_db=-30 - i,
             delay_ui=2.5 * i) for i in range(k)]
cfg = Config.default().with_overrides(["link.target_errors=0"])
s = build(cfg.with_aggressors(aggs) if k else cfg)
simulate(s, symbols=20_000)
best = 1e9
for _ in range(3):
    t = time.process_time(); simulate(s, symbols=n); best = min(best, time.process_time() - t)
print(n / best / 1e6)
'''


def _rate(tree: Path, k: int, n: int, cpu: int) -> float:
    pin = pinned(cpu)
    out = subprocess.run([*pin, sys.executable, "-c", MEASURE, str(tree), str(k), str(n)],
                         check=True, capture_output=True, text=True, cwd=tree)
    return float(out.stdout.split()[-1])


def main(argv=None) -> int:
    ap = parser(__doc__, pairs=5)
    ap.add_argument("--symbols", type=int, default=1_000_000)
    args = ap.parse_args(argv)
    with tempfile.TemporaryDirectory() as tmp:
        base = export_tree(args.rev, Path(tmp) / "base")
        for k in (15, 0):
            ratios = []
            for p in range(args.pairs):
                old = _rate(base, k, args.symbols, args.cpu)
                new = _rate(ROOT, k, args.symbols, args.cpu)
                ratios.append(new / old)
                print(f"{k:2d} aggressors pair {p}: {args.rev} {old:.3f} M sym/s, this "
                      f"{new:.3f} M sym/s, ratio {new / old:.3f}", flush=True)
            print(f"{k:2d} aggressors: median ratio {statistics.median(ratios):.3f} "
                  f"(min {min(ratios):.3f}, max {max(ratios):.3f})", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
