"""``serdes sweep``: BER over a grid of link parameters, locally or on a Dask cluster."""

from __future__ import annotations

import argparse
import json
import signal
import sys

from serdes.commands.common import (add_cache_option, add_config_options,
                                    check_executor_options, json_safe, load_config)

EPILOG = """\
values:  START:STOP:STEP (STOP included), v1,v2,... or both (10:20:5,30);
         list-valued keys in brackets: --grid tx.ffe=[0,0.9,-0.1],[0,0.8,-0.2]
grids:   the points are the Cartesian product of the --grid axes; all --zip lists
         (of equal length) form one more axis, their values taken side by side.
resume:  run the same command again with the same --out: points already there are
         skipped (errors too, unless --retry-errors).
example: serdes sweep --grid channel.loss_db=10:30:2 --grid ffe.taps=8,16,24 \\
             --set link.symbols=1000000 --out ber.csv
exit:    0 when at least one point succeeded, 1 when every point has status error,
         2 for a bad command line or file, 130 when interrupted.
"""

EXIT_NO_POINT = 1  # the sweep ran, but every point failed (2: a usage or file error)


def add_parser(sub):
    p = sub.add_parser(
        "sweep", help="BER over a grid of link parameters (local processes or Dask)",
        description="Run one link per point of a parameter grid and write one row per "
                    "point (CSV or Parquet) as points finish.",
        epilog=EPILOG, formatter_class=argparse.RawDescriptionHelpFormatter)
    add_config_options(p)
    p.add_argument("--grid", dest="axes", action="append", default=[],
                   type=lambda s: ("grid", s), metavar="SECTION.KEY=VALUES",
                   help="one axis of the grid (repeatable)")
    p.add_argument("--zip", dest="axes", action="append", type=lambda s: ("zip", s),
                   metavar="SECTION.KEY=VALUES",
                   help="lists taken side by side as one axis (repeatable)")
    p.add_argument("--out", "-o", required=True, metavar="FILE",
                   help="result file, .csv or .parquet; an existing one is resumed")
    p.add_argument("--workers", type=int, metavar="N",
                   help="local worker processes (default: the number of cores; 0: run in "
                        "this process); at most one per core and what the available "
                        "memory holds (about 256 MB each)")
    p.add_argument("--scheduler", metavar="ADDRESS",
                   help="run on a Dask cluster: its scheduler, e.g. tcp://10.0.0.5:8786")
    p.add_argument("--timeout", type=float, metavar="SECONDS",
                   help="with --scheduler: how long to wait for the scheduler to answer "
                        "(default 10)")
    p.add_argument("--stat", action="store_true",
                   help="also compute the statistical BER (stat_ber column)")
    p.add_argument("--com", metavar="PRESET",
                   help="also the COM of each point's channel with this preset "
                        "(columns com_db, com_a_s_mv, ...; see serdes com)")
    p.add_argument("--com-set", action="append", default=[], metavar="KEY=VALUE",
                   help="with --com: override one COM parameter (repeatable)")
    p.add_argument("--engine", choices=("pulse", "waveform"), default="pulse",
                   help="engine of the counted BER (default pulse)")
    p.add_argument("--retry-errors", action="store_true",
                   help="run again the points recorded with status 'error'")
    bar = p.add_mutually_exclusive_group()
    bar.add_argument("--progress", dest="progress", action="store_true", default=None,
                     help="always draw the progress bar (default: only on a terminal)")
    bar.add_argument("--no-progress", dest="progress", action="store_false",
                     help="never draw the progress bar")
    p.add_argument("--json", action="store_true",
                   help="print a JSON summary with every row of the grid")
    add_cache_option(p)
    return p


def main(args) -> int:
    from serdes.heap import keep_freed_memory
    from serdes.sweep import SweepError, SweepInterrupted, parse_specs, run_sweep

    keep_freed_memory()  # for --workers 0, where the points run in this process

    cfg = load_config(args, warn=False)  # a point's values may put a setting to use
    grid = parse_specs(args.axes)
    check_executor_options(args.workers, args.scheduler, args.timeout, error=SweepError)
    if args.scheduler is None:   # a cluster's workers may see other files than this machine
        _check_swept_files(grid)
    _warn_unused(cfg, grid)
    if args.com_set and args.com is None:
        raise SweepError("--com-set applies to --com only")
    previous = _terminate_as_interrupt()
    try:
        summary = run_sweep(cfg, grid, args.out, workers=args.workers,
                            scheduler=args.scheduler, stat=args.stat, engine=args.engine,
                            retry_errors=args.retry_errors, progress=args.progress,
                            timeout=args.timeout, cache=args.cache,
                            com=None if args.com is None else (args.com, args.com_set))
    except SweepInterrupted as exc:
        s = exc.summary
        print(f"serdes: interrupted: {s.skipped + s.ran} of {s.points} points are in "
              f"{args.out}; run the same command again to resume", file=sys.stderr)
        return 130
    finally:
        signal.signal(signal.SIGTERM, previous)
    if args.json:
        print(json.dumps(json_safe(summary.to_dict()), allow_nan=False))
    else:
        print(format_summary(summary))
    if summary.points and summary.errors >= summary.points:
        first = next((r.get("message") for r in summary.rows if r.get("message")), None)
        print(f"serdes: error: no point of the sweep succeeded ({summary.errors} with status "
              f"error; see the message column of {args.out})"
              + (f"; the first: {first}" if first else ""), file=sys.stderr)
        return EXIT_NO_POINT
    return 0


def _check_swept_files(grid) -> None:
    """A swept ``channel.file`` that names no file fails the sweep before any point
    runs (one line), instead of an error row hours into it."""
    import os

    from serdes.sweep import SweepError

    for ax in grid.axes:
        if "channel.file" in ax.keys:
            i = ax.keys.index("channel.file")
            for values in ax.values:
                name = values[i]
                if name and not os.path.isfile(name):
                    raise SweepError(f"channel.file (swept) = {name!r}: file not found "
                                     f"(relative to the current folder, {os.getcwd()})")


def _warn_unused(cfg, grid) -> None:
    """A warning for each setting, swept or not, that no point of the sweep uses (every
    point along such an axis gives the same result)."""
    from serdes.config_unused import PointView, unused_everywhere

    base = cfg.to_dict()
    views = (PointView(base, cfg.aggressors, point) for point in grid)
    for u in unused_everywhere(views, given=set(grid.keys)):
        swept = u.key in grid.keys
        print(f"serdes: warning: {u.key}{' (swept)' if swept else f' = {u.value!r}'} is not "
              f"used at any point of the sweep: {u.why}", file=sys.stderr)


def format_summary(s) -> str:
    rate = f"{s.points_per_min:.1f} points/min" if s.ran else "nothing left to run"
    warned = (f", {s.warned} shorter than their warm-up (counted in it: the message "
              "column)" if getattr(s, "warned", 0) else "")
    return (f"sweep: {s.points} points ({s.ran} run now, {s.skipped} already in {s.out}), "
            f"{s.errors} with status error{warned}; {s.elapsed_s:.1f} s, {rate}")


def _terminate_as_interrupt():
    """SIGTERM (a batch scheduler's stop) ends the sweep like Ctrl-C: valid file."""

    def handler(signum, frame):
        raise KeyboardInterrupt

    return signal.signal(signal.SIGTERM, handler)
