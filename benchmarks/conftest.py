"""Benchmark helpers: timings are taken after a warm-up call (numba compile time and
cache loading stay out of the numbers); ratios are computed within one run."""

import os
import sys
import time
from pathlib import Path

import numpy as np
import pytest

# the slow references of the kernels (tests/naive.py) serve as baselines here too
sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tests"))


@pytest.hookimpl(tryfirst=True)
def pytest_xdist_auto_num_workers(config):
    """pyproject's `-n auto` runs the tests on every core; a benchmark runs in this one
    process (pytest-benchmark times nothing under xdist, and `-s` prints the ratios)."""
    return 0


# normalised PAM4 levels and slicer thresholds used by the kernel benchmarks
LEVELS = np.array([-1.0, -1 / 3, 1 / 3, 1.0])
THRESH = np.array([-2 / 3, 0.0, 2 / 3])


# SERDES_BENCH_CLOCK=cpu: best_time counts the process' CPU time (time.process_time, all
# its threads), which a loaded machine inflates less than the wall clock
# (benchmarks/speed_table.py sets it, with pytest-benchmark's --benchmark-timer)
CLOCK = time.process_time if os.environ.get("SERDES_BENCH_CLOCK") == "cpu" else time.perf_counter


def best_time(fn, repeat=5):
    fn()  # warm up (compile / load the numba cache)
    best = float("inf")
    for _ in range(repeat):
        t0 = CLOCK()
        fn()
        best = min(best, CLOCK() - t0)
    return best


def compare_links(benchmark, base, cases, symbols, extra=lambda r: ""):
    """Count BER on each case (config overrides on top of ``base``) in one benchmark
    round; print one line per case with its 95 % interval and store it in extra_info."""
    from serdes.config import Config
    from serdes.engines.run import simulate
    from serdes.build import build

    links = {k: build(Config.default().with_overrides(base + v)) for k, v in cases.items()}
    results = {}

    def run_all():
        for name, link in links.items():
            results[name] = simulate(link, symbols=symbols)

    benchmark.pedantic(run_all, rounds=1, iterations=1)
    width = max(len(k) for k in cases)
    print()
    for name, r in results.items():
        print(f"{name:{width}s} BER {r.ber:.3e} 95% CI [{r.ber_ci[0]:.3e}, {r.ber_ci[1]:.3e}] "
              f"({r.bit_errors} errors{extra(r)})")
        benchmark.extra_info[name] = {"ber": r.ber, "ber_ci": list(r.ber_ci),
                                      "symbols_per_s": r.symbols_per_s, "rc_lags": r.rc_lags}
    return results
