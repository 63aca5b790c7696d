"""Sweep throughput: points per minute of a 64-point grid, local, 1 and 2 workers.

The grid is channel.loss_db (8 values) x ffe.taps (4) x dfe.taps (2). Each sweep starts
from nothing, so the time includes starting the worker processes and loading the
numba cache in each (a few seconds), as a user's sweep does.

Run:  pytest benchmarks/bench_sweep.py -s
      python benchmarks/bench_sweep.py [--symbols 100000] [--workers 1 2 4]
"""

from __future__ import annotations

import argparse
import tempfile
from pathlib import Path

GRID = ["channel.loss_db=16:30:2", "ffe.taps=8,12,16,24", "dfe.taps=0,1"]
SYMBOLS = 100_000


def throughput(workers: int, symbols: int = SYMBOLS) -> dict:
    """Run the 64-point grid into a fresh file; points/min and the mean point time."""
    from serdes.config import Config
    from serdes.sweep import Grid, run_sweep

    cfg = Config.default().with_overrides([f"link.symbols={symbols}"])
    grid = Grid.parse(GRID)
    with tempfile.TemporaryDirectory() as tmp:
        s = run_sweep(cfg, grid, Path(tmp) / "bench.csv", workers=workers, progress=False)
    assert s.ran == len(grid) == 64 and s.errors == 0
    busy = sum(r["elapsed_s"] for r in s.rows)
    return {"workers": workers, "symbols": symbols, "points": s.ran,
            "elapsed_s": s.elapsed_s, "points_per_min": s.points_per_min,
            "mean_point_s": busy / s.ran}


def test_sweep_throughput(benchmark):
    results = {}

    def run():
        for w in (1, 2):
            results[w] = throughput(w)

    benchmark.pedantic(run, rounds=1, iterations=1)
    for w, r in results.items():
        benchmark.extra_info[f"points_per_min_{w}_workers"] = r["points_per_min"]
        print(f"\n64 points x {r['symbols']:,} symbols, {w} worker(s): {r['elapsed_s']:.1f} s, "
              f"{r['points_per_min']:.0f} points/min (mean point {r['mean_point_s']:.2f} s)")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--symbols", type=int, default=SYMBOLS)
    ap.add_argument("--workers", type=int, nargs="+", default=[1, 2])
    args = ap.parse_args()
    for w in args.workers:
        r = throughput(w, args.symbols)
        print(f"64 points x {r['symbols']:,} symbols, {w} worker(s): {r['elapsed_s']:.1f} s, "
              f"{r['points_per_min']:.0f} points/min (mean point {r['mean_point_s']:.2f} s)")


if __name__ == "__main__":
    main()
