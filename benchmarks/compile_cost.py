"""numba's compile cost of a test run from a cold cache (a fresh clone, as in CI).

Runs the given test files (default: the whole tests/ dir) in ONE process with an empty
NUMBA_CACHE_DIR, listens to numba's "numba:compile" events and prints, per dispatcher,
how many signatures it compiled and their compile CPU and wall seconds: the total (with
the helpers it compiled while typing itself) and its self time (minus those nested
compiles), plus the seconds spent holding the LLVM lock (optimisation and machine code)
in its own compile. Sorted by self CPU; then the same summed per module.

    python3 benchmarks/compile_cost.py tests/test_com_dj.py tests/test_com.py
    python3 benchmarks/compile_cost.py -k some_test --sigs tests/test_com_rxfloat.py
    python3 benchmarks/compile_cost.py --json out.json tests/

The cache dir is a fresh temporary one unless NUMBA_CACHE_DIR is set to an empty dir
(an existing non-empty one is refused: warm kernels would not be counted).
"""

import argparse
import json
import atexit
import os
import shutil
import signal
import sys
import tempfile
import time
from pathlib import Path


def _cache_dir():
    given = os.environ.get("NUMBA_CACHE_DIR")
    if given:
        p = Path(given)
        if p.exists() and any(p.iterdir()):
            sys.exit(f"NUMBA_CACHE_DIR={given} is not empty: a cold run needs an empty dir")
        return given
    made = tempfile.mkdtemp(prefix="numba-cold-")
    atexit.register(shutil.rmtree, made, True)
    return made


class _Frame:
    __slots__ = ("key", "sig", "cpu0", "wall0", "child_cpu", "child_wall", "llvm")

    def __init__(self, key, sig):
        self.key, self.sig = key, sig
        self.cpu0, self.wall0 = time.process_time(), time.perf_counter()
        self.child_cpu = self.child_wall = self.llvm = 0.0


def _recorder():
    """Listeners for numba:compile and numba:llvm_lock; returns (install, rows)."""
    from numba.core import event as ev

    stack, rows = [], {}
    llvm_depth = [0, 0.0]

    class Compile(ev.Listener):
        def on_start(self, event):
            d = event.data["dispatcher"]
            f = d.py_func
            sig = "(" + ", ".join(str(a) for a in event.data["args"]) + ")"
            stack.append(_Frame(f"{f.__module__}.{f.__qualname__}", sig))

        def on_end(self, event):
            fr = stack.pop()
            cpu = time.process_time() - fr.cpu0
            wall = time.perf_counter() - fr.wall0
            if stack:
                stack[-1].child_cpu += cpu
                stack[-1].child_wall += wall
            r = rows.setdefault(fr.key, {"sigs": [], "cpu": 0.0, "wall": 0.0,
                                         "self_cpu": 0.0, "self_wall": 0.0, "llvm": 0.0})
            r["sigs"].append(fr.sig)
            r["cpu"] += cpu
            r["wall"] += wall
            r["self_cpu"] += cpu - fr.child_cpu
            r["self_wall"] += wall - fr.child_wall
            r["llvm"] += fr.llvm

    class Llvm(ev.Listener):       # the outermost hold only; given to the compile on top
        def on_start(self, event):
            if llvm_depth[0] == 0:
                llvm_depth[1] = time.perf_counter()
            llvm_depth[0] += 1

        def on_end(self, event):
            llvm_depth[0] -= 1
            if llvm_depth[0] == 0 and stack:
                stack[-1].llvm += time.perf_counter() - llvm_depth[1]

    def install():
        ev.register("numba:compile", Compile())
        ev.register("numba:llvm_lock", Llvm())

    return install, rows


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("paths", nargs="*", default=["tests"])
    ap.add_argument("-k", default=None, help="pytest -k expression")
    ap.add_argument("--top", type=int, default=40, help="dispatchers to print")
    ap.add_argument("--sigs", action="store_true", help="print each signature")
    ap.add_argument("--json", default=None, help="write the rows to this file")
    a = ap.parse_args(argv)
    os.environ["NUMBA_CACHE_DIR"] = _cache_dir()
    import pytest  # (numba is imported after NUMBA_CACHE_DIR is set)

    install, rows = _recorder()
    install()
    args = ["-q", "-p", "no:cacheprovider", *a.paths] + (["-k", a.k] if a.k else [])
    cpu0, wall0 = time.process_time(), time.perf_counter()
    # kill -USR1 PID prints the table so far (a long run stopped early still reports)
    signal.signal(signal.SIGUSR1, lambda *_: _report(rows, a, None, cpu0, wall0))
    rc = pytest.main(args)
    _report(rows, a, rc, cpu0, wall0)
    return int(rc)


def _report(rows, a, rc, cpu0, wall0):
    cpu, wall = time.process_time() - cpu0, time.perf_counter() - wall0
    items = sorted(rows.items(), key=lambda kv: -kv[1]["self_cpu"])
    tot = sum(r["self_cpu"] for r in rows.values())
    tot_w = sum(r["self_wall"] for r in rows.values())
    print(f"\npytest rc={rc}  run: {cpu:.1f} s CPU, {wall:.1f} s wall;  numba compile: "
          f"{tot:.1f} s CPU, {tot_w:.1f} s wall ({len(rows)} dispatchers, "
          f"{sum(len(r['sigs']) for r in rows.values())} signatures)")
    print(f"{'self cpu':>9} {'self wall':>9} {'llvm':>7} {'tot cpu':>8} {'n':>3}  dispatcher")
    for key, r in items[:a.top]:
        print(f"{r['self_cpu']:9.2f} {r['self_wall']:9.2f} {r['llvm']:7.2f} {r['cpu']:8.2f} "
              f"{len(r['sigs']):3d}  {key}")
        if a.sigs:
            for s in r["sigs"]:
                print(f"{'':42}{s}")
    mods = {}
    for key, r in rows.items():
        m = mods.setdefault(key.rsplit(".", 1)[0], [0.0, 0])
        m[0] += r["self_cpu"]
        m[1] += len(r["sigs"])
    print(f"\n{'self cpu':>9} {'n':>4}  module")
    for mod, (c, n) in sorted(mods.items(), key=lambda kv: -kv[1][0])[:a.top]:
        print(f"{c:9.2f} {n:4d}  {mod}")
    sys.stdout.flush()
    if a.json:
        Path(a.json).write_text(json.dumps({"rc": None if rc is None else int(rc),
                                            "cpu": cpu, "wall": wall, "rows": rows},
                                           indent=1))


if __name__ == "__main__":
    sys.exit(main())
