"""End to end `serdes run --threads N` against `--threads 1`: whole CLI processes
(imports, link build with the CTLE search, counting, the report's statistical sections),
paired and interleaved, wall clock and CPU time (worker processes included), with the
load average. `bench_parallel.py` times the counting alone in one process.

Run: python benchmarks/bench_threads_cli.py [SYMBOLS [ROUNDS [THREADS]]] [--json]
                                             [--set KEY=VALUE ...] [--engine waveform]
     (default 1e8 symbols, 3 rounds, 2 threads; the default link, no error target;
     --json: the rounds go to stderr and one JSON object of the medians to stdout;
     --set: a config override for both runs, e.g. tx_jitter.rj_ui=0.01 or fec.mode=kp4;
     --engine: serdes run's engine for both runs, pulse (default) or waveform)
The CTLE choice comes from the on-disk cache after the first run, as in a user's
repeated runs; SERDES_CACHE_DIR=off measures every run with its search. One short
untimed run of each thread count first compiles the kernels and fills that cache.
"""

from __future__ import annotations

import json
import os
import resource
import statistics
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def one(symbols: str, threads: int, sets=(), engine: str = "pulse"
        ) -> tuple[float, float, int, float]:
    """(wall s, CPU s, bit errors, load average) of one CLI run."""
    r0, t0 = resource.getrusage(resource.RUSAGE_CHILDREN), time.perf_counter()
    extra = [a for kv in sets for a in ("--set", kv)] + ["--engine", engine]
    out = subprocess.run([sys.executable, "-m", "serdes.cli", "run", "--json", "--no-progress",
                          "--set", f"link.symbols={symbols}", "--set", "link.target_errors=0",
                          *extra, "--threads", str(threads)], capture_output=True, text=True,
                         check=True, env={**os.environ, "PYTHONPATH": str(ROOT)})
    wall, r1 = time.perf_counter() - t0, resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = r1.ru_utime - r0.ru_utime + r1.ru_stime - r0.ru_stime
    return wall, cpu, json.loads(out.stdout)["bit_errors"], os.getloadavg()[0]


def main(argv) -> None:
    as_json = "--json" in argv
    argv = [a for a in argv if a != "--json"]
    sets = [argv[i + 1] for i, a in enumerate(argv) if a == "--set" and i + 1 < len(argv)]
    engines = [argv[i + 1] for i, a in enumerate(argv) if a == "--engine" and i + 1 < len(argv)]
    engine = engines[-1] if engines else "pulse"
    argv = [a for i, a in enumerate(argv) if a not in ("--set", "--engine")
            and (i == 0 or argv[i - 1] not in ("--set", "--engine"))]
    symbols = argv[0] if argv else "1e8"
    rounds = int(argv[1]) if len(argv) > 1 else 3
    threads = int(argv[2]) if len(argv) > 2 else 2
    symbols = str(int(float(symbols)))
    say = (lambda m: print(m, file=sys.stderr, flush=True)) if as_json else (
        lambda m: print(m, flush=True))
    ratios, cpus, walls, loads, errors = [], [], [], [], None
    # warm-up, untimed: a fresh install's first run compiles the kernels and fills the
    # CTLE cache (a first round read 3.72x with it inside), which no later run pays
    for t in (1, threads):
        one("200000", t, sets, engine)
    for r in range(rounds):
        order = (1, threads) if r % 2 == 0 else (threads, 1)
        got = {t: one(symbols, t, sets, engine) for t in order}
        (w1, c1, e1, l1), (wn, cn, en, ln) = got[1], got[threads]
        assert e1 == en, "a split run must count what one thread counts"
        errors = e1
        ratios.append(w1 / wn)
        cpus.append((c1, cn))
        walls.append((w1, wn))
        loads += [l1, ln]
        say(f"round {r}: 1 thread {w1:.2f} s wall {c1:.2f} s CPU; {threads} threads "
            f"{wn:.2f} s wall {cn:.2f} s CPU ({cn / threads:.2f} s per thread); ratio "
            f"{w1 / wn:.2f}x, from CPU per thread {c1 / (cn / threads):.2f}x; {e1} bit errors; "
            f"load average {max(l1, ln):.1f}")
    say(f"{symbols} symbols, {threads} threads against 1: wall ratio median "
        f"{statistics.median(ratios):.2f}x (" + ", ".join(f"{x:.2f}" for x in ratios)
        + f"); CPU {statistics.median(c for c, _ in cpus):.2f} s against "
        f"{statistics.median(c for _, c in cpus):.2f} s")
    if as_json:
        print(json.dumps(dict(symbols=int(symbols), threads=threads, rounds=rounds,
                              ratio=statistics.median(ratios), ratios=ratios,
                              one_wall_s=[w for w, _ in walls], n_wall_s=[w for _, w in walls],
                              one_cpu_s=[c for c, _ in cpus], n_cpu_s=[c for _, c in cpus],
                              bit_errors=errors, load_lo=min(loads), load_hi=max(loads))))


if __name__ == "__main__":
    main(sys.argv[1:])
