"""Waveform engine and statistical SJ report speed of this checkout against an earlier
revision, in paired runs (as compare_revision.py does for the pulse engine).

    python3 benchmarks/compare_engines.py REV [--pairs 3] [--reps 3] [--symbols 200000]

Each pair runs the same script on the earlier tree (``git archive``) and on this one,
one process after the other (the order alternates from pair to pair), pinned to one CPU
where ``taskset`` exists. Printed: the waveform engine's symbols/s on the default link
(noise on, 0.01 UI RJ), and the seconds of a statistical engine's BER plus eye openings
(at the report's targets, 1e-3 included) with SJ 0.1 UI at 1 MHz and no RJ (the
non-quasi-static SJ path: every FFE tap sees its own offset). The SJ report is timed
twice in each process: its first call (after a BER only, so the eye kernels are loaded
from numba's cache inside the timing, as in a fresh ``serdes run``) and, after that,
the median of ``--reps`` warm calls, each on a new engine (``--reps 0``: the waveform
engine alone). The summary gives the medians over the pairs and the median of the
per-pair ratios with their range (the ratio of one pair of sub-second CPU times moves by
30 % or more on a shared machine), for the waveform engine too (each side the best of
2 runs in its process). Times are the
process's CPU time (one thread), which a loaded machine inflates less than the wall
clock.
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
n = int(sys.argv[2])
reps = int(sys.argv[3])
from serdes.build import build
from serdes.config import Config
from serdes.engines.run import simulate
from serdes.engines.stat import StatisticalEngine

s = build(Config.default().with_overrides(["link.target_errors=0"]))
simulate(s, engine="waveform", symbols=20_000)
best = 1e9
for _ in range(2):
    t = time.process_time(); simulate(s, engine="waveform", symbols=n)
    best = min(best, time.process_time() - t)
wave = n / best / 1e6
if reps == 0:  # the waveform engine alone
    print("%.4f nan nan nan" % wave)
    sys.exit(0)
sj = build(Config.default().with_overrides(["noise.sj_ui=0.1", "noise.rj_ui=0"]))
StatisticalEngine(sj).ber(0.0)


def report():
    t = time.process_time()
    eng = StatisticalEngine(sj)
    b = eng.ber(0.0).ber
    eng.eye_opening(targets=(1e-6, 1e-12, 1e-15, 1e-3))   # serdes.report's targets
    return time.process_time() - t, b


first, b = report()
warm = sorted(report()[0] for _ in range(reps))
print("%.4f %.4f %.6e %.4f" % (wave, warm[len(warm) // 2], b, first))
'''


def main(argv=None) -> int:
    ap = parser(__doc__, pairs=3)
    ap.add_argument("--reps", type=int, default=3,
                    help="warm SJ report calls per process (their median is taken); "
                         "0: the waveform engine alone")
    ap.add_argument("--symbols", type=int, default=200_000)
    args = ap.parse_args(argv)
    with tempfile.TemporaryDirectory() as tmp:
        old, script = export_with_script(args.rev, tmp, MEASURE, "serdes")
        rows = {"old": [], "new": []}
        pairs = (("old", old), ("new", ROOT))
        for i in range(args.pairs):
            for name, tree in (pairs if i % 2 == 0 else pairs[::-1]):
                out = measure(args.cpu, script, tree, args.symbols, args.reps)
                rows[name].append(tuple(float(v) for v in out))
                print(name, "waveform %.3f M symbols/s, SJ stat report %.3f s warm (BER "
                      "%.6e), first call in the process %.3f s" % rows[name][-1], flush=True)
        old_r, new_r = rows["old"], rows["new"]
        med = statistics.median
        # the waveform: the median of the per-pair ratios (each side the best of 2 runs in
        # its process); the best of each side over the pairs moved with the machine
        wo, wn = med(r[0] for r in old_r), med(r[0] for r in new_r)
        wr = sorted(n[0] / o[0] for o, n in zip(old_r, new_r))
        print(f"waveform, median of {args.pairs} pairs: {wo:.3f} -> {wn:.3f} M symbols/s "
              f"({med(wr):.2f}x; pair ratios {wr[0]:.2f}-{wr[-1]:.2f})")
        if args.reps == 0:
            return 0
        so, sn = med(r[1] for r in old_r), med(r[1] for r in new_r)
        ratios = sorted(o[1] / n[1] for o, n in zip(old_r, new_r))
        firsts = sorted(o[3] / n[3] for o, n in zip(old_r, new_r))
        assert all(abs(n[2] / o[2] - 1) < 1e-9 for o, n in zip(old_r, new_r)), "BER differs"
        print(f"SJ stat report {so:.2f} -> {sn:.2f} s ({med(ratios):.2f}x; "
              f"median of {args.pairs} pairs, each the median of {args.reps} warm calls; "
              f"pair ratios {ratios[0]:.2f}-{ratios[-1]:.2f}); first call in the process "
              f"{med(r[3] for r in old_r):.2f} -> {med(r[3] for r in new_r):.2f} s "
              f"({med(firsts):.2f}x, pair ratios {firsts[0]:.2f}-{firsts[-1]:.2f})")
    return 0


if __name__ == "__main__":
    sys.exit(main())
