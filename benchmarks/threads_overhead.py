"""The split run's extra CPU, `serdes run --threads N` against `--threads 1`, for this tree
and a base revision in the same session: whole CLI processes (worker processes
included, from RUSAGE_CHILDREN), paired and interleaved (the order reverses every round),
with the wall ratio and the load average beside each. On a shared machine both CPU
times grow with the load (shared caches), so compare the overheads (CPU N - CPU 1) of
the two trees round by round, not single numbers.

Run: python benchmarks/threads_overhead.py BASE_REV [SYMBOLS [ROUNDS [THREADS]]]
     (default 1e8 symbols, 2 rounds, 2 threads; the default link, no error target;
     the base is extracted with `git archive` and its numba cache filled by a short run)
"""

from __future__ import annotations

import json
import os
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def one(tree: Path, symbols: str, threads: int) -> tuple[float, float, float, int, float]:
    """(wall s, CPU s, system CPU s, bit errors, load average) of one CLI run."""
    r0, t0 = resource.getrusage(resource.RUSAGE_CHILDREN), time.perf_counter()
    out = subprocess.run([sys.executable, "-m", "serdes.cli", "run", "--json", "--no-progress",
                          "--set", f"link.symbols={symbols}", "--set", "link.target_errors=0",
                          "--threads", str(threads)], capture_output=True, text=True,
                         check=True, cwd=tree, env={**os.environ, "PYTHONPATH": str(tree)})
    wall, r1 = time.perf_counter() - t0, resource.getrusage(resource.RUSAGE_CHILDREN)
    sys_s = r1.ru_stime - r0.ru_stime
    cpu = r1.ru_utime - r0.ru_utime + sys_s
    return wall, cpu, sys_s, json.loads(out.stdout)["bit_errors"], os.getloadavg()[0]


def main(argv) -> None:
    base = argv[0]
    symbols = str(int(float(argv[1]))) if len(argv) > 1 else "100000000"
    rounds = int(argv[2]) if len(argv) > 2 else 2
    threads = int(argv[3]) if len(argv) > 3 else 2
    with tempfile.TemporaryDirectory() as tmp:
        old = Path(tmp)
        arch = subprocess.run(["git", "-C", str(ROOT), "archive", base], check=True,
                              capture_output=True).stdout
        subprocess.run(["tar", "-x", "-C", str(old)], input=arch, check=True)
        for tree in (old, ROOT):  # numba caches and the CTLE choice filled first
            one(tree, "300000", 1)
            one(tree, "3000000", threads)
        runs = [(name, tree, t) for name, tree in ((base, old), ("this tree", ROOT))
                for t in (1, threads)]
        got = {(n, t): [] for n, _, t in runs}
        for r in range(rounds):
            for name, tree, t in (runs if r % 2 == 0 else runs[::-1]):
                x = one(tree, symbols, t)
                got[name, t].append(x)
                print(f"round {r}: {name}, {t} thread(s): {x[0]:.2f} s wall, {x[1]:.2f} s CPU "
                      f"({x[2]:.2f} s system), {x[3]} bit errors, load average {x[4]:.1f}",
                      flush=True)
    for name in (base, "this tree"):
        one_, many = got[name, 1], got[name, threads]
        assert {x[3] for x in one_} == {x[3] for x in many}, "split counts differ"
        over = [m[1] - o[1] for o, m in zip(one_, many)]
        ratio = [o[0] / m[0] for o, m in zip(one_, many)]
        print(f"{name}: {symbols} symbols, CPU {threads} threads - 1 thread per round "
              + ", ".join(f"{d:+.2f}" for d in over) + f" s (median {statistics.median(over):+.2f}"
              f" s; CPU 1 thread median {statistics.median(x[1] for x in one_):.2f} s); wall "
              "ratio per round " + ", ".join(f"{q:.2f}x" for q in ratio))


if __name__ == "__main__":
    main(sys.argv[1:])
