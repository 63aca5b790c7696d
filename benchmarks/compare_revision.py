"""End-to-end speed of this checkout against an earlier revision, in paired runs.

    python3 benchmarks/compare_revision.py REV [--pairs 3] [--cpu 1]

The revision is exported with ``git archive`` into a temporary folder; each pair runs
the same measurement script on the earlier tree and on this one, one process after the
other, pinned to one CPU (``taskset``, where available) so both see the same core.
Absolute numbers on a shared machine drift by up to 2x between processes; compare the
best of several pairs, and the NumPy convolution of the same run as the yardstick.
"""

from __future__ import annotations

import sys
import tempfile
from pathlib import Path

from revision import export_with_script, measure, parser

ROOT = Path(__file__).resolve().parents[1]

MEASURE = r'''
import sys, time
root = sys.argv[1]
sys.path.insert(0, root)
import numpy as np
from serdes.config import Config
from serdes.engines.run import simulate
try:
    from serdes.build import build as make
except ImportError:  # revisions before the builder: Link(config)
    from serdes.link import Link as make


def best(f, r=3):
    b = 1e9
    for _ in range(r):
        t = time.perf_counter(); f(); b = min(b, time.perf_counter() - t)
    return b


out = []
for extra in (["noise.rj_ui=0"], []):
    s = make(Config.default().with_overrides(["link.target_errors=0"] + extra))
    simulate(s, symbols=20_000)  # compile / load the cache first
    n = 1_000_000
    out.append(n / best(lambda: simulate(s, symbols=n)) / 1e6)
x = np.random.default_rng(0).normal(size=1 << 20)
out.append(len(x) / best(lambda: np.convolve(x, np.ones(24), "valid"), 7) / 1e6)
print("%.3f %.3f %.3f" % tuple(out))
'''


def main(argv=None) -> int:
    ap = parser(__doc__, pairs=3)
    args = ap.parse_args(argv)
    with tempfile.TemporaryDirectory() as tmp:
        old, script = export_with_script(args.rev, tmp, MEASURE)
        rows = {"earlier": [], "this": []}
        for _ in range(args.pairs):
            for name, tree in (("earlier", old), ("this", ROOT)):
                rows[name].append([float(v) for v in measure(args.cpu, script, tree)])
    print(f"{'tree':8s} {'no jitter (M sym/s)':>20s} {'RJ 0.01 UI (M sym/s)':>21s} "
          f"{'numpy.convolve (M/s)':>21s}   best of {args.pairs} pairs")
    for name, runs in rows.items():
        b = [max(r[i] for r in runs) for i in range(3)]
        print(f"{name:8s} {b[0]:20.2f} {b[1]:21.2f} {b[2]:21.1f}")
    e, t = ([max(r[i] for r in rows[k]) for i in range(2)] for k in ("earlier", "this"))
    print(f"this / earlier: {t[0] / e[0]:.2f} without jitter, {t[1] / e[1]:.2f} with RJ")
    return 0


if __name__ == "__main__":
    sys.exit(main())
