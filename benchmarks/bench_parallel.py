"""One run on N worker processes against the same run in one thread (same process,
same warm kernels): wall-clock ratio, and the CPU-time efficiency (one thread's CPU
seconds over the split run's, workers included), which is what the ratio would be per
core on idle cores; on a shared machine the wall ratio is the lower of the two.

Run: pytest benchmarks/bench_parallel.py --benchmark-only -s
  or python benchmarks/bench_parallel.py [SYMBOLS [THREADS [--set key=value ...]]]
                                         [--rounds R] [--json]
     (R rounds in this process, the first round's kernels warm for the rest; the
     summary gives the medians and ranges of the wall and per-core ratios; --json
     prints them as one JSON object instead, as speed_table.py reads it)
  or python benchmarks/bench_parallel.py --cold-start [key=value ...]  (DFE re-convergence)
(default 1e7 symbols on all cores, the default link with its 0.01 UI RJ, no target).
"""

from __future__ import annotations

import os
import resource
import sys
import time

from serdes.build import build
from serdes.config import Config
from serdes.engines.blocks_run import simulate_split
from serdes.engines.run import simulate

SYMBOLS = int(float(os.environ.get("SERDES_BENCH_PARALLEL_SYMBOLS", "1e7")))


def _cpu() -> float:
    s, c = resource.getrusage(resource.RUSAGE_SELF), resource.getrusage(resource.RUSAGE_CHILDREN)
    return s.ru_utime + s.ru_stime + c.ru_utime + c.ru_stime


def measure(symbols: int, threads: int | None = None, sets=()) -> dict:
    threads = threads or os.cpu_count() or 1
    system = build(Config.default().with_overrides(
        [f"link.symbols={symbols}", "link.target_errors=0", *sets]))
    simulate(system, symbols=200_000)  # compile / load the kernels outside the timing
    c0, t0 = _cpu(), time.perf_counter()
    one = simulate(system)
    t1, c1 = time.perf_counter() - t0, _cpu() - c0
    c0, t0 = _cpu(), time.perf_counter()
    many, _, how = simulate_split(system, threads=threads)
    tn, cn = time.perf_counter() - t0, _cpu() - c0
    assert (one.bit_errors, one.symbols, one.bursts) == (many.bit_errors, many.symbols,
                                                          many.bursts)
    return dict(symbols=symbols, threads=how.threads, tasks=how.tasks, warmup=how.warmup,
                one_s=t1, split_s=tn, ratio=t1 / tn, one_cpu_s=c1, split_cpu_s=cn,
                cpu_efficiency=c1 / cn, per_core_ratio=how.threads * c1 / cn,
                one_symbols_per_s=symbols / t1, bit_errors=one.bit_errors,
                load=os.getloadavg()[0])


def cold_start_ui(sets=(), symbols: int = 1_200_000, span: int = 20_000,
                  step: int = 23_456) -> tuple[int, int]:
    """How many UIs after a cold start (every history empty) a pipeline's decisions can
    still differ from the single run's: the worst over cold starts every ``step`` UI.
    Returns (worst UI, number of starts). The warm-up of a split run is far longer."""
    import numpy as np

    from serdes.engines.run import design_equalizer, pipeline

    system = build(Config.default().with_overrides(list(sets)))
    taps = design_equalizer(system)

    def decisions(start, end):
        pipe = pipeline(system, taps, seed=system.run.seed)
        pipe.transmitter.seek(start)
        out, k = [], start
        while k < end:
            n = min(1 << 16, end - k)
            _, _, a = pipe.transmitter.next(n)
            out.append(pipe.rx(pipe.front(a, k), k).decisions)
            k += n
        return np.concatenate(out)

    ref = decisions(0, symbols)
    starts = range(span, symbols - span, step)
    worst = 0
    for p in starts:
        bad = np.flatnonzero(decisions(p, p + span) != ref[p:p + span])
        worst = max(worst, int(bad[-1]) + 1 if bad.size else 0)
    return worst, len(starts)


def report(r: dict) -> str:
    return (f"{r['symbols']:.0e} symbols: 1 thread {r['one_s']:.2f} s "
            f"({r['one_symbols_per_s'] / 1e6:.2f} M/s), {r['threads']} threads "
            f"{r['split_s']:.2f} s ({r['tasks']} ranges, warm-up {r['warmup']} UI): "
            f"wall ratio {r['ratio']:.2f}x; CPU {r['one_cpu_s']:.2f} s vs "
            f"{r['split_cpu_s']:.2f} s, efficiency {r['cpu_efficiency']:.3f} -> "
            f"{r['per_core_ratio']:.2f}x on {r['threads']} idle cores; same "
            f"{r['bit_errors']} bit errors; load average {r['load']:.1f}")


def summarize(runs: list[dict]) -> dict:
    """The median round (by wall ratio) with the ranges of both ratios and of the load."""
    import statistics

    med = statistics.median
    out = dict(sorted(runs, key=lambda r: r["ratio"])[len(runs) // 2])
    out.update(rounds=len(runs), ratio=med(r["ratio"] for r in runs),
               per_core_ratio=med(r["per_core_ratio"] for r in runs),
               one_cpu_s=med(r["one_cpu_s"] for r in runs),
               one_symbols_per_s=med(r["one_symbols_per_s"] for r in runs),
               ratio_lo=min(r["ratio"] for r in runs), ratio_hi=max(r["ratio"] for r in runs),
               per_core_lo=min(r["per_core_ratio"] for r in runs),
               per_core_hi=max(r["per_core_ratio"] for r in runs),
               load_lo=min(r["load"] for r in runs), load_hi=max(r["load"] for r in runs))
    return out


def test_threads_ratio(benchmark):
    r = benchmark.pedantic(measure, args=(SYMBOLS,), rounds=1, iterations=1)
    benchmark.extra_info.update(r)
    print("\n" + report(r))


if __name__ == "__main__":
    argv = sys.argv[1:]
    if argv and argv[0] == "--cold-start":  # e.g. --cold-start channel.loss_db=38 dfe.taps=8
        worst, n = cold_start_ui(argv[1:])
        print(f"{' '.join(argv[1:]) or 'default link'}: decisions equal the single run's "
              f"from {worst} UI after a cold start on ({n} starts)")
        sys.exit(0)
    n = int(float(argv[0])) if argv and not argv[0].startswith("--") else SYMBOLS
    t = int(argv[1]) if len(argv) > 1 and not argv[1].startswith("--") else None
    sets = [argv[i + 1] for i, a in enumerate(argv) if a == "--set"]
    rounds = int(argv[argv.index("--rounds") + 1]) if "--rounds" in argv else 1
    runs = []
    for _ in range(rounds):
        runs.append(measure(n, t, sets))
        if "--json" not in argv:
            print(report(runs[-1]), flush=True)
    summary = summarize(runs)
    if "--json" in argv:
        import json

        print(json.dumps(summary))
    elif rounds > 1:
        print(f"median of {rounds} rounds: wall ratio {summary['ratio']:.2f}x "
              f"({summary['ratio_lo']:.2f}-{summary['ratio_hi']:.2f}), per core from CPU "
              f"time {summary['per_core_ratio']:.2f}x ({summary['per_core_lo']:.2f}-"
              f"{summary['per_core_hi']:.2f}); load average {summary['load_lo']:.1f}-"
              f"{summary['load_hi']:.1f}")
