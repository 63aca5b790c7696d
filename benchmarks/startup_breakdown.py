"""Where a warm short ``serdes run`` spends its CPU, phase by phase, in one process.

    python3 benchmarks/startup_breakdown.py [--symbols 100000]

Run it twice (the first run fills numba's cache and the CTLE choice's cache); set
PYTHONPATH to the tree to measure. Printed: wall and CPU (``time.process_time``) of
importing NumPy, numba, the CLI, the run command's modules, then the build, the counted
run with the report's counted sections, and the statistical sections; then every numba
dispatcher that loaded (or compiled) a kernel in the process, with its CPU time. The first
one carries numba's own start-up (its registries and its BLAS check, which imports
scipy.linalg); ``benchmarks/startup_floor.py`` measures that floor on its own. Also: how
many of our modules the run imported and the CPU spent compiling them from source (where
PYTHONDONTWRITEBYTECODE=1 and no bytecode is stored, every run does), and the same run a
second time in the same process: its own work, with every module and kernel loaded.
The runs are in one thread (``--threads 1``): a split run computes its statistical
sections in a forked child, out of this process's clocks.
"""

from __future__ import annotations

import argparse
import contextlib
import io
import sys
import time

T0 = (time.perf_counter(), time.process_time())


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--symbols", type=int, default=100_000)
    args = ap.parse_args(argv)
    marks = []

    def mark(name):
        marks.append((name, time.perf_counter(), time.process_time()))

    __import__("numpy")  # the import is what is timed
    mark("import numpy")
    import numba.core.dispatcher as nd
    mark("import numba")
    loads = []
    compile_ = nd.Dispatcher.compile

    def timed_compile(self, sig):
        t = time.process_time()
        out = compile_(self, sig)
        loads.append((f"{self.py_func.__module__}.{self.py_func.__name__}",
                      time.process_time() - t))
        return out

    nd.Dispatcher.compile = timed_compile
    import importlib.machinery as im
    compiled = []
    to_code = im.SourceFileLoader.source_to_code

    def timed_to_code(self, data, path, *a, **k):
        t = time.process_time()
        out = to_code(self, data, path, *a, **k)
        compiled.append((str(path), time.process_time() - t))
        return out

    im.SourceFileLoader.source_to_code = timed_to_code
    import serdes.cli
    mark("import serdes.cli")
    import serdes.build
    import serdes.commands.run  # noqa: F401
    import serdes.report as report
    mark("import the run command's modules")
    build = serdes.build.build

    def timed_build(*a, **k):
        mark("command line, config")
        out = build(*a, **k)
        mark("build (with the first kernel: numba start-up)")
        return out

    serdes.build.build = timed_build
    stat_parts = report._stat_parts

    def timed_stat(*a, **k):
        mark("counted run and counted sections")
        out = stat_parts(*a, **k)
        mark("statistical sections")
        return out

    report._stat_parts = timed_stat
    with contextlib.redirect_stdout(io.StringIO()):
        serdes.cli.main(["run", "--set", f"link.symbols={args.symbols}", "--no-progress",
                         "--threads", "1"])
    mark("text summary")
    ours = [m for m in sys.modules if m == "serdes" or m.startswith("serdes.")]
    serdes.build.build, report._stat_parts = build, stat_parts  # no marks in the second run
    with contextlib.redirect_stdout(io.StringIO()):
        serdes.cli.main(["run", "--set", f"link.symbols={args.symbols}", "--no-progress",
                         "--threads", "1"])
    again = (time.perf_counter(), time.process_time())
    prev = T0
    for name, w, c in marks:
        print(f"  {name:48s} wall {w - prev[0]:6.3f} s  CPU {c - prev[1]:6.3f} s")
        prev = (w, c)
    print(f"  {'total (after the interpreter)':48s} wall {marks[-1][1] - T0[0]:6.3f} s  "
          f"CPU {marks[-1][2] - T0[1]:6.3f} s")
    print(f"  our modules imported: {len(ours)}; compiled from source: "
          f"{sum(1 for p, _ in compiled if '/serdes/' in p)}, "
          f"{sum(t for p, t in compiled if '/serdes/' in p):.3f} s CPU (others compiled: "
          f"{sum(1 for p, _ in compiled if '/serdes/' not in p)}, "
          f"{sum(t for p, t in compiled if '/serdes/' not in p):.3f} s)")
    print(f"  the same run again in this process (its own work): wall "
          f"{again[0] - marks[-1][1]:.3f} s  CPU {again[1] - marks[-1][2]:.3f} s")
    print(f"  numba kernels loaded: {len(loads)}, {sum(t for _, t in loads):.3f} s CPU")
    for name, t in loads:
        print(f"    {t * 1e3:7.1f} ms  {name}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
