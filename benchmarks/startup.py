"""Wall time of a short ``serdes run``, cold and warm, and where it goes.

    python3 benchmarks/startup.py [--runs 3] [--symbols 100000]

Cold: the package is copied into a fresh temporary folder, so numba finds no cache
there and compiles every kernel the run needs (a first run after install). Warm: the
same command again in that folder (the kernels and the CTLE choice cached by the cold
run are loaded). Each
run is a new ``python3 -m serdes.cli run --set link.symbols=N --no-stat --no-progress``
process; the best of ``--runs`` warm runs is printed with the median, in wall time and
in CPU time (user + system of the process and its workers).

The phases are timed in one more warm process: Python and NumPy, ``import numba``,
the CLI and its command modules, the first kernel call (numba's start-up: its type
registries, and its BLAS check, which imports scipy.linalg), ``build`` (the CTLE
choice from the cache), and the counted run. ``--bytecode`` keeps Python's own .pyc files (the default
here follows the environment; with PYTHONDONTWRITEBYTECODE=1 every module is compiled
from source in each process, about 0.1 s).
"""

from __future__ import annotations

import argparse
import os
import resource
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]

PHASES = r'''
import sys, time
T = [(time.perf_counter(), time.process_time())]
import numpy as np
T.append((time.perf_counter(), time.process_time()))
import numba
T.append((time.perf_counter(), time.process_time()))
import serdes.cli
serdes.cli.build_parser()
from serdes.build import build
from serdes.config import Config
from serdes.report import run_report
T.append((time.perf_counter(), time.process_time()))
from serdes.kernels.fir import interp_cubic
interp_cubic(np.zeros(8), np.array([2.5]))
T.append((time.perf_counter(), time.process_time()))
system = build(Config.default().with_overrides(["link.symbols=%d"]), cache=True)
T.append((time.perf_counter(), time.process_time()))
run_report(system, stat=False)
T.append((time.perf_counter(), time.process_time()))
names = ("python+numpy", "import numba", "cli+serdes imports",
         "numba start-up (first kernel)", "build", "run")
print("  ".join("%%s %%.3f/%%.3f" %% (n, T[i + 1][0] - T[i][0], T[i + 1][1] - T[i][1])
                for i, n in enumerate(names))
      + "  total %%.3f/%%.3f  (wall/CPU s; the CPU clock starts after the interpreter)"
      %% (T[-1][0] - T[0][0], T[-1][1] - T[0][1])
      + "  scipy.linalg loaded by: %%s"
      %% ("numba" if "scipy.linalg" in sys.modules else "nobody"))
'''


def _run(cmd, env, cwd) -> tuple[float, float]:
    """(wall, CPU) seconds of one process (CPU: user + system, which a loaded machine
    inflates less than the wall clock)."""
    r0 = resource.getrusage(resource.RUSAGE_CHILDREN)
    t = time.perf_counter()
    subprocess.run(cmd, env=env, cwd=cwd, check=True, stdout=subprocess.DEVNULL)
    wall = time.perf_counter() - t
    r1 = resource.getrusage(resource.RUSAGE_CHILDREN)
    return wall, (r1.ru_utime - r0.ru_utime) + (r1.ru_stime - r0.ru_stime)


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--runs", type=int, default=3)
    ap.add_argument("--symbols", type=int, default=100_000)
    ap.add_argument("--bytecode", action="store_true",
                    help="let Python write .pyc files (unset PYTHONDONTWRITEBYTECODE)")
    args = ap.parse_args(argv)
    with tempfile.TemporaryDirectory() as tmp:
        shutil.copytree(ROOT / "serdes", Path(tmp) / "serdes",
                        ignore=shutil.ignore_patterns("__pycache__"))
        # the CTLE choice's cache (serdes/buildcache.py) starts empty too: the cold run
        # searches and stores, the warm runs read it, as a user's repeated runs do
        env = dict(os.environ, PYTHONPATH=tmp, SERDES_CACHE_DIR=str(Path(tmp) / "cache"))
        if args.bytecode:
            env.pop("PYTHONDONTWRITEBYTECODE", None)
        cmd = [sys.executable, "-m", "serdes.cli", "run", "--set",
               f"link.symbols={args.symbols}", "--no-stat", "--no-progress"]
        cold = _run(cmd, env, tmp)
        warm = [_run(cmd, env, tmp) for _ in range(args.runs)]
        wall, cpu = [w for w, _ in warm], [c for _, c in warm]
        print(f"serdes run --set link.symbols={args.symbols} --no-stat: cold {cold[0]:.2f} s "
              f"wall ({cold[1]:.2f} s CPU), warm best {min(wall):.2f} s wall, median "
              f"{statistics.median(wall):.2f} s; CPU best {min(cpu):.2f} s, median "
              f"{statistics.median(cpu):.2f} s ({args.runs} runs; bytecode "
              f"{'kept' if args.bytecode else 'as the env'}; load average "
              f"{os.getloadavg()[0]:.1f})")
        out = subprocess.run([sys.executable, "-c", PHASES % args.symbols], env=env,
                             cwd=tmp, check=True, capture_output=True, text=True)
        print("warm phases (s):", out.stdout.strip())
    return 0


if __name__ == "__main__":
    sys.exit(main())
