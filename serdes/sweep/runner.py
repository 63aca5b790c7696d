"""Running a grid: local worker processes or a Dask cluster, rows written as they finish.

Local execution runs the points in ``workers`` processes, started with ``spawn`` (clean
whatever the parent holds) and with one BLAS/OpenMP thread each, like the workers of a
Dask cluster (whose nannies set the same). A point then gives the same numbers to the
last bit however many workers run the sweep: a multi-threaded BLAS sums in another
order, which moves the last digits of float results such as ``snr_db``. ``workers=0``
runs the points in this process instead (no start-up; for debugging and quick tries;
its float columns may then differ from a worker's in the last digits; the counts do
not). With a scheduler address the points run on an existing Dask distributed cluster
whose workers have serdes installed. Either way at most a window of points is in flight, so
a grid of a million points does not create a million futures at once.
"""

from __future__ import annotations

import os
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from serdes.sweep.grid import Grid, SweepError, point_id, sweep_id
from serdes.sweep.progress import Progress
from serdes.sweep.cluster import _DaskExecutor
from serdes.sweep.local import _LocalExecutor, available_memory_bytes, cap_workers
from serdes.sweep.results import COUNTED, TAIL, ResultFile, order_columns


# this process keeps every row of the grid (the file's and the summary's) and the points:
# 4.4 KB per point with a CSV file and 4.8 KB with Parquet (peak RSS over 5e4-1e5
# points of 26 columns); a grid that would take more than ROW_MEMORY_SHARE of the
# available memory is refused before any point runs
ROW_BYTES = 5000
ROW_MEMORY_SHARE = 0.8


def check_memory(points: int) -> None:
    """Refuse a grid whose rows would not fit in the available memory."""
    avail = available_memory_bytes()
    need = points * ROW_BYTES
    if avail is not None and need > ROW_MEMORY_SHARE * avail:
        raise SweepError(
            f"a grid of {points:,} points keeps about {need / 1e9:.1f} GB of rows in this "
            f"process ({ROW_BYTES / 1e3:.0f} KB per point) and {avail / 1e9:.1f} GB are "
            "available: run it as several sweeps over parts of one key, each with its own "
            "--out")


@dataclass
class SweepSummary:
    """What a sweep did: ``points`` in the grid, ``skipped`` (already in the file),
    ``ran`` now, ``errors`` among the grid's rows (all of them once the sweep is done,
    those run now if it was interrupted), ``warned``: rows with status ok and a message
    (a point shorter than its warm-up, counted in it). ``rows``: the grid's rows in
    grid order."""

    out: Path | None
    points: int
    skipped: int
    ran: int
    errors: int
    elapsed_s: float
    rows: list[dict[str, Any]] = field(default_factory=list, repr=False)
    interrupted: bool = False
    warned: int = 0

    @property
    def points_per_min(self) -> float:
        return 60.0 * self.ran / self.elapsed_s if self.elapsed_s > 0 else float("nan")

    def to_dict(self, rows: bool = True) -> dict[str, Any]:
        d = {"out": None if self.out is None else str(self.out), "points": self.points,
             "skipped": self.skipped, "ran": self.ran, "errors": self.errors,
             "elapsed_s": self.elapsed_s, "points_per_min": self.points_per_min,
             "interrupted": self.interrupted, "warned": self.warned}
        if rows:
            d["rows"] = self.rows
        return d


class SweepInterrupted(KeyboardInterrupt):
    """Ctrl-C (or SIGTERM in the CLI) during a sweep; the result file is valid."""

    def __init__(self, summary: SweepSummary):
        super().__init__("sweep interrupted")
        self.summary = summary


def run_sweep(config, grid: Grid, out: str | os.PathLike | None = None, *,
              workers: int | None = None, scheduler: str | None = None,
              stat: bool = False, engine: str = "pulse", retry_errors: bool = False,
              progress: bool | None = None, timeout: float | None = None,
              com: tuple | None = None, cache: bool = False) -> SweepSummary:
    """Run every point of ``grid`` on ``config`` (a :class:`~serdes.config.Config`).

    ``out``: a ``.csv`` or ``.parquet`` file; points already in it are skipped (rows
    with status "error" too, unless ``retry_errors``). ``None`` keeps rows in memory.
    ``workers``: local processes (default: the cores; 0: in this process), capped at
    the cores and the available memory (:func:`cap_workers`, with a line on stderr);
    ``scheduler``: the address of a Dask scheduler (``tcp://host:port``) to run the
    points on instead.
    ``progress``: draw the progress bar (default: when stderr is a terminal).
    ``timeout``: seconds to wait for the scheduler's answer (default DASK_TIMEOUT_S).
    ``com``: ``(preset, overrides)``: also the COM of each point's channel (columns
    :data:`serdes.com.columns.COM_COLUMNS`), computed once per distinct channel set
    before the points run.
    ``cache``: each point's link build may take its CTLE choice from the on-disk cache
    (:mod:`serdes.buildcache`, as ``serdes run`` does; the same rows, bit for bit).
    """
    if engine not in ("pulse", "waveform"):
        raise SweepError(f"engine {engine!r}: expected 'pulse' or 'waveform'")
    base = config.to_dict()
    keys = list(grid.keys)
    if com is not None:
        from serdes.com.params import apply_overrides, preset as com_preset

        com = (com[0], tuple(com[1]))
        apply_overrides(com_preset(com[0], "--com"), list(com[1]))   # a bad preset fails here
    sid = sweep_id(base, keys, engine, stat, com)
    check_memory(len(grid))
    points = list(grid)
    ids = [point_id(p) for p in points]
    index = {pid: i for i, pid in enumerate(ids)}
    t0 = time.monotonic()

    store = _MemoryResults(keys) if out is None else ResultFile(out, keys)
    store.open()
    try:
        foreign = {r.get("sweep") for r in store.rows} - {sid}
        if foreign:
            raise SweepError(
                f"{out} holds results of another sweep (a different base config, engine, "
                "--stat or set of swept keys); choose another --out or delete the file")
        if retry_errors:
            keep = [r for r in store.rows
                    if not (r.get("status") != "ok" and r.get("point") in index)]
            if len(keep) != len(store.rows):
                store.replace_rows(keep)
        done = {r["point"]: r.get("status") for r in store.rows if r.get("point") in index}
        todo = [p for p, pid in zip(points, ids) if pid not in done]
        first = keys + list(COUNTED) + (["stat_ber"] if stat else []) + list(TAIL)
        store.start(first)
        bar = Progress(len(points), len(points) - len(todo),
                       sum(1 for s in done.values() if s != "ok"), enabled=progress)
        summary = SweepSummary(out=None if out is None else Path(out), points=len(points),
                               skipped=len(points) - len(todo), ran=0, errors=0, elapsed_s=0.0)
        kwargs = dict(base=base, engine=engine, stat=stat, sweep=sid)
        if cache:
            kwargs["cache"] = True
        if scheduler:
            executor = _DaskExecutor(scheduler, timeout)
        else:
            if workers is not None and workers < 0:
                raise SweepError(f"--workers {workers}: expected 0 (in this process) or more")
            n_workers, note = cap_workers(workers)
            if note and todo:
                print(f"serdes: {note}", file=sys.stderr)
            executor = _LocalExecutor(n_workers)
            if com is not None and todo and bar.enabled:   # a cluster's caches are its own
                from serdes.com.warm import first_run_note

                compile_note = first_run_note(com[0])
                if compile_note:
                    print(compile_note, file=sys.stderr)
        bar.draw(force=True)
        try:
            with executor:
                coms = (None if com is None else
                        _com_sets(executor, todo, base, config.aggressors, com, sid, bar))
                for row in executor.run(todo, kwargs, size=len(todo)):
                    if coms is not None:
                        _add_com(row, coms)
                    store.append(row)
                    summary.ran += 1
                    summary.errors += row["status"] != "ok"
                    summary.warned += row["status"] == "ok" and bool(row.get("message"))
                    bar.update(row["status"])
        except KeyboardInterrupt:
            bar.close()
            summary.elapsed_s = time.monotonic() - t0
            summary.interrupted = True
            raise SweepInterrupted(summary) from None
        bar.close()
        # grid order, so that an interrupted and resumed sweep leaves the same file
        n = len(index)
        order = sorted(range(len(store.rows)),
                       key=lambda i: (index.get(store.rows[i].get("point"), n + i)))
        if order != list(range(len(store.rows))):
            store.replace_rows([store.rows[i] for i in order])
        summary.elapsed_s = time.monotonic() - t0
        summary.rows = [store.values(r) for r in store.rows if r.get("point") in index]
        summary.errors = sum(1 for r in summary.rows if r.get("status") != "ok")
        summary.warned = sum(1 for r in summary.rows
                             if r.get("status") == "ok" and r.get("message"))
        return summary
    finally:
        store.close()


def _com_sets(executor, todo, base, aggressors, com, sid, bar=None) -> dict:
    """The COM columns of every distinct channel set among the points ``todo``
    (:func:`serdes.build.com_channel_args`, read from each point's
    :class:`~serdes.config_unused.PointView` without building its config), each computed
    once on the executor, by point id: ``{point id: row of com_point}``. A set's COM runs
    on its first point whose config builds (a point the config refuses fails in its run
    with the config's own message, and gets no COM)."""
    from serdes.build import com_channel_args
    from serdes.config_unused import PointView
    from serdes.sweep.point import com_point, point_config

    sets: dict = {}
    for p in todo:
        sets.setdefault(com_channel_args(PointView(base, aggressors, p)), []).append(p)
    first, key_of = {}, {}
    for k, members in sets.items():
        for p in members:
            try:
                point_config(base, p)
            except Exception:
                continue
            first[k] = p
            key_of.update((point_id(q), k) for q in members)
            break
    kw = dict(base=base, com=com, sweep=sid)
    by_key: dict = {}

    def stage():   # the bar says what it waits for
        if bar is not None:
            bar.stage = (f"COM {len(by_key)}/{len(first)} channel sets"
                         if len(by_key) < len(first) else "")
            bar.draw(force=True)

    stage()
    for r in executor.run(list(first.values()), kw, fn=com_point, tag="com", size=len(todo)):
        by_key[key_of[r["point"]]] = r
        stage()
    return {pid: by_key[k] for pid, k in key_of.items()}


def _add_com(row: dict[str, Any], coms: dict) -> None:
    """A point's row with the COM columns of its channel set (or, when that COM
    failed, status "error" and its message)."""
    c = coms.get(row.get("point"))
    if c is None or row.get("status") != "ok":
        return
    if c["status"] != "ok":
        row["status"], row["message"] = "error", c["message"]
        return
    row.update({k: v for k, v in c.items() if k not in ("point", "sweep", "status",
                                                        "message")})


class _MemoryResults:
    """The ResultFile interface without a file (``out=None``)."""

    def __init__(self, keys):
        self.keys = list(keys)
        self.rows: list[dict[str, Any]] = []
        self.columns: list[str] = []

    def open(self):
        pass

    def close(self):
        pass

    def start(self, columns):
        self.columns = order_columns(self.keys, columns)

    def append(self, row):
        self.columns = order_columns(self.keys, self.columns + list(row))
        self.rows.append(dict(row))

    def replace_rows(self, rows):
        self.rows = list(rows)

    def values(self, row):
        return {c: row.get(c) for c in self.columns}
