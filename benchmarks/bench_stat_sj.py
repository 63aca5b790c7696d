"""Statistical engine with sinusoidal jitter: this checkout against an earlier revision,
in paired runs (CPU time, pinned to one CPU where ``taskset`` exists).

    python3 benchmarks/bench_stat_sj.py REV [--pairs 2] [--cases norj,rj]

The measured report is the statistical part of ``serdes run``'s SJ report on the
default link with SJ 0.1 UI at 1 MHz (each FFE tap sees its own phase of the sine: the
32 quadrature rows are not quasi-static), the calls ``serdes.report`` makes: the BER at
the nominal phase, the eye openings at the report's targets (1e-6, 1e-12, 1e-15 and the
counted eye's 1e-3; heights from the 801-point vertical bathtub, widths from the
64-phase horizontal one, every point averaged over the 32 rows), the ADC clip
probability and the DFE error propagation. With ``--bathtubs`` the whole bathtubs
instead (``bathtub_vertical(801)``, ``bathtub_horizontal(64)``, then the openings from
them; the earlier measure of this benchmark). Cases: ``norj`` (noise.rj_ui = 0) and
``rj`` (0.01 UI RJ, the default). Each pair runs the earlier tree (``git archive``) and
this one, one process after the other, after a warm-up that compiles the kernels;
printed: the CPU seconds of each, the BER and the 1e-6 middle-eye height of each (they
must agree to rounding), the ratio of the best of the pairs and the median of the
per-pair ratios (the order of the two runs alternates from pair to pair). A split of the
time (BER, openings or vertical, horizontal) says where the time goes.
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
rj = sys.argv[2]
whole = sys.argv[3] == "1"
from serdes.build import build
from serdes.config import Config
from serdes.engines.stat import StatisticalEngine, dfe_error_propagation

sj = build(Config.default().with_overrides(["noise.sj_ui=0.1", "noise.sj_hz=1e6",
                                            "noise.rj_ui=" + rj]))
w = StatisticalEngine(sj, jitter_points=4)          # compile the kernels
w.ber(0.0); w.bathtub_vertical(0.0, n_points=3); w.bathtub_horizontal(2)
w.eye_opening(n_phases=2); w.clip_probability(0.0); dfe_error_propagation(w)
TARGETS = (1e-6, 1e-12, 1e-15, 1e-3)     # serdes.report's: DEFAULT_TARGETS + the counted 1e-3
T = time.process_time
t0 = T()
eng = StatisticalEngine(sj)
assert not eng.jitter.quasi_static
b = eng.ber(0.0)
t1 = T()
if whole:
    v = eng.bathtub_vertical(0.0, n_points=801)
    t2 = T()
    h = eng.bathtub_horizontal(64)
    t3 = T()
    op = eng.eye_opening(targets=TARGETS, vertical=v, horizontal=h)
else:
    op = eng.eye_opening(targets=TARGETS)
    t2 = t3 = T()
    eng.clip_probability(0.0)
    dfe_error_propagation(eng)
t4 = T()
print("%.4f %.17e %.4f %.4f %.4f %.17e" % (t4 - t0, b.ber, t1 - t0, t2 - t1, t3 - t2,
                                            float(op.height[0, 1])))
'''


def main(argv=None) -> int:
    ap = parser(__doc__, pairs=2)
    ap.add_argument("--cases", default="norj,rj")
    ap.add_argument("--bathtubs", action="store_true",
                    help="time the whole bathtubs, not the report's calls")
    args = ap.parse_args(argv)
    cases = {"norj": "0", "rj": "0.01"}
    with tempfile.TemporaryDirectory() as tmp:
        old, script = export_with_script(args.rev, tmp, MEASURE, "serdes")
        for case in args.cases.split(","):
            rows = {"old": [], "new": []}
            trees = (("old", old), ("new", ROOT))
            for i in range(args.pairs):
                for name, tree in (trees if i % 2 == 0 else trees[::-1]):
                    out = measure(args.cpu, script, tree, cases[case],
                                  "1" if args.bathtubs else "0")
                    r = tuple(float(x) for x in out)
                    rows[name].append(r)
                    print(f"{case} {name}: {r[0]:.2f} s CPU (BER {r[1]:.10e}, eye height "
                          f"1e-6 middle {r[5]:.10f}; ber {r[2]:.2f} s, "
                          + (f"vertical {r[3]:.2f} s, horizontal {r[4]:.2f} s)"
                             if args.bathtubs else f"openings, clip, propagation "
                             f"{r[0] - r[2]:.2f} s)"), flush=True)
            so = min(r[0] for r in rows["old"])
            sn = min(r[0] for r in rows["new"])
            rel = abs(rows["new"][0][1] / rows["old"][0][1] - 1)
            hrel = abs(rows["new"][0][5] / rows["old"][0][5] - 1)
            pr = sorted(o[0] / n[0] for o, n in zip(rows["old"], rows["new"]))
            print(f"{case}: best of {args.pairs}: {so:.2f} -> {sn:.2f} s CPU "
                  f"({so / sn:.2f}x); median of the pair ratios {statistics.median(pr):.2f}x "
                  f"({pr[0]:.2f}-{pr[-1]:.2f}); BER relative difference {rel:.1e}, eye height "
                  f"{hrel:.1e}", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
