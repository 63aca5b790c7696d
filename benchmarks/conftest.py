"""Benchmark helpers: timings are taken after a warm-up call (numba compile time and
cache loading stay out of the numbers); ratios are computed within one run."""

import time


def best_time(fn, repeat=5):
    fn()  # warm up (compile / load the numba cache)
    best = float("inf")
    for _ in range(repeat):
        t0 = time.perf_counter()
        fn()
        best = min(best, time.perf_counter() - t0)
    return best
