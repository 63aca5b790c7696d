"""Where the extra CPU of a split run (`serdes run --threads N`) goes, in CPU seconds
(time.process_time, so other users of the machine inflate but do not add to them):

1. ranges: the split run's ranges run one after another in THIS process (kernels warm,
   no workers) against the same run in one piece, paired and interleaved: the cost of
   cutting the stream (a pipeline built per range, its warm-up, the latency search,
   the per-block tally), per range and in total;
2. worker start: the first range in a freshly forked process against the same range in
   the parent (kernels the parent has not run are loaded from numba's cache there);
3. BLAS threads seen by a worker (the counting kernels are numba, single-threaded).

What these do not account for of `bench_threads_cli.py`'s CPU difference is the cost of
two cores being busy at once (shared caches; on a virtual machine possibly one core's
two hardware threads) and the machine's other load; `bench_parallel.py` gives the whole
split run's CPU against one thread in one process.

Run: taskset -c 1 python benchmarks/threads_breakdown.py [SYMBOLS [ROUNDS [THREADS]]]
     (default 3e7 symbols, 3 rounds, 2 threads; the default link, no error target)
"""

from __future__ import annotations

import multiprocessing as mp
import os
import statistics
import sys
import time

from serdes.build import build
from serdes.config import Config
from serdes.engines.run import design_equalizer, pipeline, simulate
from serdes.parallel import plan, run_range

_STATE: tuple = ()


def _first_range(q) -> None:
    system, taps, task = _STATE
    c0 = time.process_time()
    run_range(system, taps, "pulse", task, 0)
    blas = {k: os.environ.get(k) for k in ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS",
                                           "NUMBA_NUM_THREADS")}
    q.put((time.process_time() - c0, blas))


def main(argv) -> None:
    global _STATE
    symbols = int(float(argv[0])) if argv else 30_000_000
    rounds = int(argv[1]) if len(argv) > 1 else 3
    threads = int(argv[2]) if len(argv) > 2 else 2
    cfg = Config.default().with_overrides([f"link.symbols={symbols}", "link.target_errors=0"])
    system = build(cfg, cache=True)
    taps = design_equalizer(system)
    pipe = pipeline(system, taps, engine="pulse", seed=system.run.seed)
    tasks = list(plan(system, pipe, threads))

    # 2 first: a fork before this process has run the counting kernels loads them as
    # a worker does; then the same range here, kernels loaded.
    _STATE = (system, taps, tasks[1])
    ctx = mp.get_context("fork")
    q = ctx.Queue()
    p = ctx.Process(target=_first_range, args=(q,))
    p.start()
    fresh, blas = q.get()
    p.join()
    run_range(system, taps, "pulse", tasks[1], 0)
    c0 = time.process_time()
    run_range(system, taps, "pulse", tasks[1], 0)
    warm = time.process_time() - c0

    one, split = [], []
    for r in range(rounds):
        for kind in (("one", "split") if r % 2 == 0 else ("split", "one")):
            c0 = time.process_time()
            if kind == "one":
                errors = simulate(system, engine="pulse").bit_errors
                one.append(time.process_time() - c0)
            else:
                for t in tasks:
                    run_range(system, taps, "pulse", t, 0)
                split.append(time.process_time() - c0)
        print(f"round {r}: one piece {one[-1]:.2f} s, {len(tasks)} ranges in sequence "
              f"{split[-1]:.2f} s CPU; load average {os.getloadavg()[0]:.1f}", flush=True)
    d = [s - o for s, o in zip(split, one)]
    print(f"{symbols} symbols ({errors} bit errors), {len(tasks)} ranges for {threads} "
          f"threads: ranges cost {statistics.median(d):+.2f} s CPU (median of "
          + ", ".join(f"{x:+.2f}" for x in d) + f"), {1e3 * statistics.median(d) / len(tasks):.1f}"
          f" ms per range, {100 * statistics.median(d) / statistics.median(one):.1f} % of "
          f"one piece ({statistics.median(one):.2f} s)")
    print(f"worker start: first range in a fresh fork {fresh:.3f} s CPU against {warm:.3f} s "
          f"in the parent ({fresh - warm:+.3f} s per worker); worker environment {blas}")


if __name__ == "__main__":
    main(sys.argv[1:])
