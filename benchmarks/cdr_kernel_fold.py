"""CPU time of the clock-recovery sampler kernels against an earlier revision, in paired
runs: one converter with the MM loop and with the bang-bang detector (an edge sample per
symbol), and 16 interleaved lanes with per-lane tables, gains and offsets.

    python3 benchmarks/cdr_kernel_fold.py REV [--pairs 3] [--cpu 1]

Both trees are measured by the same script (``git archive REV`` in a temporary folder,
each its own numba cache folder), one process after the other (alternating which goes
first), pinned to one CPU with ``taskset``; the time is ``time.process_time`` of the best of 3 calls on 400,000 symbols
(the kernels compiled first). Prints the ratio this tree / REV per case and pair.
"""

from __future__ import annotations

import argparse
import os
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]

MEASURE = r'''
import sys, time
sys.path.insert(0, sys.argv[1])
import numpy as np
from serdes.kernels import cdr as kc
try:
    from serdes.kernels import cdr_ti as kt
except ImportError:
    kt = kc
g = np.random.default_rng(1)
n_ui, P, Q, n = 24, 8, 256, 400_000
hist = n_ui - 1 + 2 * P
lev = np.array([-1, -1 / 3, 1 / 3, 1.0])
table = g.normal(size=(Q + 3, n_ui)) * 0.05
table[:, 5] += 1
nod = np.zeros((0, n_ui))
a = lev[g.integers(0, 4, n + hist)]
tau = np.zeros(n + hist)
drx = 0.01 * g.normal(size=n)
w = 0.02 * g.normal(size=n)
tabs = np.stack([table * (1 + 0.01 * i) for i in range(16)])
gd = 1 + 0.01 * g.normal(size=n)
od = 0.002 * g.normal(size=n)


def single(mode):
    return lambda m: kc.cdr_sampler(a[:m + hist], tau[:m + hist], drx[:m], w[:m], table, nod,
                                     nod, Q, P, lev, 1.0, mode, 0.0, 4e-4, 1e-7, 64, 0,
                                     np.array([0.1, 0, 0, 0, 0.0]), np.zeros(33),
                                     we=w[:m] if mode == 3 else None)


def lanes(m):
    return kt.cdr_ti_sampler(a[:m + hist], tau[:m + hist], drx[:m], w[:m], tabs,
                             np.zeros((16, 0, n_ui)), np.zeros((16, 0, n_ui)), 0, Q, P, lev,
                             1.0, 1, 0.0, 4e-4, 1e-7, 64, 0, np.array([0.1, 0, 0, 0, 0.0]),
                             np.zeros(33), gd[:m], od[:m])


out = []
for f in (single(1), single(3), lanes):
    f(1000)
    best = 1e9
    for _ in range(3):
        t = time.process_time(); f(n); best = min(best, time.process_time() - t)
    out.append(best)
print(" ".join("%.4f" % v for v in out))
'''
CASES = ("mm", "bb", "lanes16")


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("rev", help="the earlier revision (commit, tag, branch)")
    ap.add_argument("--pairs", type=int, default=3)
    ap.add_argument("--cpu", type=int, default=1, help="CPU to pin both runs to")
    args = ap.parse_args(argv)
    tmp = Path(tempfile.mkdtemp(prefix="cdr_fold_"))
    try:
        old = tmp / "old"
        old.mkdir()
        arch = subprocess.run(["git", "-C", str(ROOT), "archive", args.rev], check=True,
                              capture_output=True).stdout
        subprocess.run(["tar", "-x", "-C", str(old)], input=arch, check=True)
        script = tmp / "measure.py"
        script.write_text(MEASURE)
        pin = ["taskset", "-c", str(args.cpu)] if shutil.which("taskset") else []

        def measure(tree, cache):
            env = dict(os.environ, NUMBA_CACHE_DIR=str(tmp / cache), PYTHONPATH=str(tree))
            r = subprocess.run([*pin, sys.executable, str(script), str(tree)], env=env,
                               check=True, capture_output=True, text=True)
            return [float(v) for v in r.stdout.split()]

        print(f"CPU s per {400_000} symbols (best of 3), {args.rev} vs this tree; ratio new/old")
        ratios = {c: [] for c in CASES}
        for p in range(args.pairs):
            # alternate which tree goes first, so a drift of the machine's load does
            # not favour one of them
            if p % 2:
                nw = measure(ROOT, "c_new")
                o = measure(old, "c_old")
            else:
                o = measure(old, "c_old")
                nw = measure(ROOT, "c_new")
            for c, vo, vn in zip(CASES, o, nw):
                ratios[c].append(vn / vo)
                print(f"pair {p}: {c:8s} old {vo:.4f}  new {vn:.4f}  ratio {vn / vo:.3f}")
        for c in CASES:
            r = sorted(ratios[c])
            print(f"{c:8s} median ratio {r[len(r) // 2]:.3f} (range {r[0]:.3f}-{r[-1]:.3f})")
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
