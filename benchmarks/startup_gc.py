"""The cyclic collector's share of a short ``serdes run`` and of the serial part of
``serdes run --threads 2``, this tree against a revision, in paired and interleaved
whole processes of the real CLI entry (``serdes.cli.main`` imports numba itself, as the
installed command does), pinned to one core.

    python3 benchmarks/startup_gc.py REV [--rounds 7] [--cpu 1]

Per process: CPU (``time.process_time``, from the process start) and the collector's CPU
and number of collections (``gc.callbacks``). ``short``: the default command with
``link.symbols=100000`` to its end; ``split``: ``--json --threads 2`` at 1e8 symbols up
to the first range handed to the workers (the run stops there: the serial part before
the count). The numba caches and the CTLE choice are filled by one run of each first.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys

from threads_common import ROOT, base_tree

MEASURE = r'''
import contextlib, gc, importlib.abc, importlib.util, io, json, sys, time
sys.path.insert(0, sys.argv[1])
acc = {"gc": 0.0, "n": 0}
t0 = [0.0]
def cb(phase, info):
    if phase == "start":
        t0[0] = time.process_time()
    else:
        acc["gc"] += time.process_time() - t0[0]
        acc["n"] += 1
gc.callbacks.append(cb)
class Stop(Exception):
    pass
def report():
    print(json.dumps(dict(cpu=time.process_time(), gc=acc["gc"], n=acc["n"])), file=sys.stderr)
class Hook(importlib.abc.MetaPathFinder):   # stops a split run where its workers start
    def find_spec(self, name, path, target=None):
        if name != "serdes.engines.blocks_run":
            return None
        sys.meta_path.remove(self)
        spec = importlib.util.find_spec(name)
        inner = spec.loader
        class Loader(importlib.abc.Loader):
            def create_module(self, s):
                return inner.create_module(s)
            def exec_module(self, m):
                inner.exec_module(m)
                def stop(*a, **k):
                    report()
                    raise Stop
                m._drive = stop
        spec.loader = Loader()
        return spec
split = sys.argv[2] == "split"
if split:
    sys.meta_path.insert(0, Hook())
from serdes.cli import main
args = (["run", "--json", "--no-progress", "--set", "link.symbols=100000000", "--set",
         "link.target_errors=0", "--threads", "2"] if split else
        ["run", "--set", "link.symbols=100000", "--no-progress"])
try:
    with contextlib.redirect_stdout(io.StringIO()):
        main(args)
except Stop:
    pass
if not split:
    report()
'''


def _one(script, tree, mode, cpu, cache) -> dict:
    out = subprocess.run(["taskset", "-c", str(cpu), sys.executable, str(script), str(tree),
                          mode], capture_output=True, text=True, check=True,
                         env={**os.environ, "PYTHONPATH": str(tree), "SERDES_CACHE_DIR": cache})
    return json.loads(out.stderr.strip().splitlines()[-1])


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("rev")
    ap.add_argument("--rounds", type=int, default=7)
    ap.add_argument("--cpu", type=int, default=1)
    args = ap.parse_args(argv)
    load0 = os.getloadavg()[0]
    with base_tree(args.rev, MEASURE) as (script, base):
        cache = str(script.parent / "cache")
        trees = {args.rev: base, "this tree": ROOT}
        rows = {(t, m): [] for t in trees for m in ("short", "split")}
        for name, tree in trees.items():   # numba caches, the CTLE choice
            _one(script, tree, "short", args.cpu, cache)
        for r in range(args.rounds):
            for mode in ("short", "split"):
                for name in (list(trees) if r % 2 == 0 else list(trees)[::-1]):
                    rows[name, mode].append(_one(script, trees[name], mode, args.cpu, cache))
    print(f"pinned to CPU {args.cpu}, {args.rounds} interleaved rounds, load average "
          f"{load0:.1f} at the start, {os.getloadavg()[0]:.1f} at the end")
    for mode, what in (("short", "short run (100000 symbols, to its end)"),
                       ("split", "--threads 2 serial part (to the first range)")):
        print(what)
        for name in trees:
            v = rows[name, mode]
            print(f"  {name:>10}: CPU median {statistics.median(x['cpu'] for x in v):.3f} s "
                  + "(" + ", ".join(f"{x['cpu']:.2f}" for x in v) + "); collector median "
                  + f"{statistics.median(x['gc'] for x in v):.3f} s "
                  f"({min(x['gc'] for x in v):.3f}-{max(x['gc'] for x in v):.3f}) in "
                  f"{statistics.median(x['n'] for x in v):.0f} collections")
        d = [a["cpu"] - b["cpu"] for a, b in zip(rows[args.rev, mode], rows["this tree", mode])]
        print(f"  this tree: {statistics.median(d):.3f} s CPU less (paired differences "
              + ", ".join(f"{x:+.2f}" for x in d) + ")")
    return 0


if __name__ == "__main__":
    sys.exit(main())
