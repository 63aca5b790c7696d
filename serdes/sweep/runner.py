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

import contextlib
import os
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Iterator

from serdes.sweep.grid import Grid, SweepError, point_id, sweep_id
from serdes.sweep.point import error_message, error_row, run_point
from serdes.sweep.progress import Progress
from serdes.sweep.results import COUNTED, TAIL, ResultFile, order_columns

DASK_TIMEOUT_S = 10  # seconds to reach the scheduler


@dataclass
class SweepSummary:
    """What a sweep did: ``points`` in the grid, ``skipped`` (already in the file),
    ``ran`` now, ``errors`` among the grid's rows (all of them once the sweep is done,
    those run now if it was interrupted). ``rows``: the grid's rows in grid order."""

    out: Path | None
    points: int
    skipped: int
    ran: int
    errors: int
    elapsed_s: float
    rows: list[dict[str, Any]] = field(default_factory=list, repr=False)
    interrupted: bool = False

    @property
    def points_per_min(self) -> float:
        return 60.0 * self.ran / self.elapsed_s if self.elapsed_s > 0 else float("nan")

    def to_dict(self, rows: bool = True) -> dict[str, Any]:
        d = {"out": None if self.out is None else str(self.out), "points": self.points,
             "skipped": self.skipped, "ran": self.ran, "errors": self.errors,
             "elapsed_s": self.elapsed_s, "points_per_min": self.points_per_min,
             "interrupted": self.interrupted}
        if rows:
            d["rows"] = self.rows
        return d


class SweepInterrupted(KeyboardInterrupt):
    """Ctrl-C (or SIGTERM in the CLI) during a sweep; the result file is valid."""

    def __init__(self, summary: SweepSummary):
        super().__init__("sweep interrupted")
        self.summary = summary


def default_workers() -> int:
    try:
        return max(1, len(os.sched_getaffinity(0)))
    except AttributeError:  # pragma: no cover - not Linux
        return max(1, os.cpu_count() or 1)


# resident memory of one worker process running a default point (numba, numpy, scipy
# loaded; 4e6 symbols in 65536-symbol chunks, statistical eye): 231 MB measured
WORKER_MEMORY_BYTES = 256 << 20


def available_memory_bytes() -> int | None:
    """Memory available to new processes: MemAvailable of /proc/meminfo (else the free
    physical pages), and no more than the cgroup's limit minus its use; None if unknown."""
    avail = None
    try:
        with open("/proc/meminfo") as f:
            for line in f:
                if line.startswith("MemAvailable:"):
                    avail = int(line.split()[1]) * 1024
                    break
    except (OSError, ValueError, IndexError):
        pass
    if avail is None:
        try:
            avail = os.sysconf("SC_AVPHYS_PAGES") * os.sysconf("SC_PAGE_SIZE")
        except (AttributeError, OSError, ValueError):
            avail = None
    try:  # cgroup v2: a container's limit is lower than the host's free memory
        with open("/sys/fs/cgroup/memory.max") as f:
            limit = f.read().strip()
        if limit != "max":
            with open("/sys/fs/cgroup/memory.current") as f:
                room = int(limit) - int(f.read().strip())
            avail = room if avail is None else min(avail, room)
    except (OSError, ValueError):
        pass
    return None if avail is None else max(0, avail)


def cap_workers(requested: int | None) -> tuple[int, str | None]:
    """The number of local worker processes to start for ``requested`` (None: one per
    core): at most one per core and as many as the available memory holds at
    WORKER_MEMORY_BYTES each (at least one). Returns (workers, a one-line note when
    fewer than requested are started, else None)."""
    cores = default_workers()
    if requested == 0:
        return 0, None
    want = cores if requested is None else requested
    mem = available_memory_bytes()
    by_mem = None if mem is None else max(1, mem // WORKER_MEMORY_BYTES)
    n = min(want, cores, by_mem if by_mem is not None else want)
    if n >= want:
        return want, None
    why = [f"{cores} core{'s' if cores != 1 else ''}"]
    if by_mem is not None:
        why.append(f"{mem / 2**30:.1f} GB of memory available at about "
                   f"{WORKER_MEMORY_BYTES / 2**20:.0f} MB per worker")
    asked = f"--workers {requested}" if requested is not None else "one worker per core"
    return n, f"{asked}: starting {n} worker process{'es' if n != 1 else ''} ({', '.join(why)})"


def run_sweep(config, grid: Grid, out: str | os.PathLike | None = None, *,
              workers: int | None = None, scheduler: str | None = None,
              stat: bool = False, engine: str = "pulse", retry_errors: bool = False,
              progress: bool | None = None, timeout: float | None = None) -> SweepSummary:
    """Run every point of ``grid`` on ``config`` (a :class:`~serdes.config.Config`).

    ``out``: a ``.csv`` or ``.parquet`` file; points already in it are skipped (rows
    with status "error" too, unless ``retry_errors``). ``None`` keeps rows in memory.
    ``workers``: local processes (default: the cores; 0: in this process), capped at
    the cores and the available memory (:func:`cap_workers`, with a line on stderr);
    ``scheduler``: the address of a Dask scheduler (``tcp://host:port``) to run the
    points on instead.
    ``progress``: draw the progress bar (default: when stderr is a terminal).
    ``timeout``: seconds to wait for the scheduler's answer (default DASK_TIMEOUT_S).
    """
    if engine not in ("pulse", "waveform"):
        raise SweepError(f"engine {engine!r}: expected 'pulse' or 'waveform'")
    base = config.to_dict()
    keys = list(grid.keys)
    sid = sweep_id(base, keys, engine, stat)
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
        if scheduler:
            executor = _DaskExecutor(scheduler, timeout)
        else:
            if workers is not None and workers < 0:
                raise SweepError(f"--workers {workers}: expected 0 (in this process) or more")
            n_workers, note = cap_workers(workers)
            if note and todo:
                print(f"serdes: {note}", file=sys.stderr)
            executor = _LocalExecutor(n_workers)
        bar.draw(force=True)
        try:
            with executor:
                for row in executor.run(todo, kwargs):
                    store.append(row)
                    summary.ran += 1
                    summary.errors += row["status"] != "ok"
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
        return summary
    finally:
        store.close()


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


# -- executors ----------------------------------------------------------------------
# Points run side by side in processes, so each should use one thread: a multi-threaded
# BLAS in every worker only burns the cores the other workers need (measured: OpenBLAS
# threads doubled the CPU time of a point and gave no speed).
THREAD_VARS = ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS",
               "NUMBA_NUM_THREADS")


@contextlib.contextmanager
def _single_threaded_children():
    """Processes started inside inherit 1 thread per library (unless the user set one)."""
    added = [k for k in THREAD_VARS if k not in os.environ]
    for k in added:
        os.environ[k] = "1"
    try:
        yield
    finally:
        for k in added:
            os.environ.pop(k, None)


def _worker_init() -> None:
    import signal
    import threading

    # Ctrl-C goes to the whole process group; the parent stops the workers itself
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    parent = os.getppid()

    def watch():  # a worker whose parent was killed (kill -9) must not linger
        while True:
            time.sleep(1.0)
            if os.getppid() != parent:
                os._exit(1)

    threading.Thread(target=watch, name="serdes-parent-watch", daemon=True).start()


class _LocalExecutor:
    def __init__(self, workers: int):
        if workers < 0:
            raise SweepError(f"--workers {workers}: expected 0 (in this process) or more")
        self.workers = workers
        self._pool = None

    def __enter__(self):
        return self

    def __exit__(self, exc_type, exc, tb):
        pool, self._pool = self._pool, None
        if pool is None:
            return
        if exc_type is None:
            pool.shutdown(wait=True)
            return
        # interrupted or failed: stop the running points now
        for proc in list((getattr(pool, "_processes", None) or {}).values()):
            try:
                proc.terminate()
            except Exception:  # pragma: no cover - already gone
                pass
        pool.shutdown(wait=False, cancel_futures=True)

    def run(self, points: list[dict], kwargs: dict) -> Iterator[dict]:
        if self.workers == 0:
            for p in points:
                yield run_point(point=p, **kwargs)
            return
        n = min(self.workers, len(points))
        if n == 0:
            return
        import multiprocessing
        from concurrent.futures import FIRST_COMPLETED, ProcessPoolExecutor, wait
        from concurrent.futures.process import BrokenProcessPool

        self._pool = ProcessPoolExecutor(max_workers=n, initializer=_worker_init,
                                         mp_context=multiprocessing.get_context("spawn"))
        window = 4 * n
        todo = iter(points)
        pending: dict = {}

        def fill():
            while len(pending) < window:
                p = next(todo, None)
                if p is None:
                    return
                pending[self._pool.submit(run_point, point=p, **kwargs)] = p

        with _single_threaded_children():  # the first submits start every worker
            fill()
        while pending:
            finished, _ = wait(pending, return_when=FIRST_COMPLETED)
            for fut in finished:
                p = pending.pop(fut)
                try:
                    row = fut.result()
                except BrokenProcessPool:
                    raise SweepError("a worker process died (out of memory? or, from "
                                     "Python, a main script that new processes cannot "
                                     "import); the points done so far are saved: run the "
                                     "same sweep again to resume") from None
                except Exception as exc:
                    row = error_row(p, error_message(exc), base=kwargs["base"],
                                    sweep=kwargs["sweep"])
                yield row
            fill()


def probe_scheduler(address: str, timeout: float) -> None:
    """Check that ``address`` is a Dask scheduler that answers within ``timeout`` seconds,
    or raise a one-line SweepError.

    ``distributed.Client`` alone is not enough: its connection handshake waits for the
    peer's reply without a time limit, so a server that accepts connections and says
    nothing (any non-Dask service on that port) hangs it for ever, and an address it
    refuses leaves a half-built client whose ``__del__`` prints a traceback at exit.
    The probe runs in its own thread and event loop, so it also works where an event
    loop is already running (Jupyter).
    """
    import asyncio
    import threading

    from distributed.comm import connect, parse_address, registry

    where = f"the Dask scheduler at {address}"
    try:
        scheme, _ = parse_address(address)
        registry.get_backend(scheme)
    except (ValueError, TypeError) as exc:
        raise SweepError(f"--scheduler {address}: {error_message(exc)}; expected e.g. "
                         "tcp://HOST:8786") from None

    async def identity():
        comm = None
        try:
            comm = await connect(address, timeout=timeout)
            await comm.write({"op": "identity", "reply": True})
            return await comm.read()
        finally:
            if comm is not None:
                comm.abort()

    result: dict = {}

    def probe():
        async def bounded():
            return await asyncio.wait_for(identity(), timeout)

        try:
            result["reply"] = asyncio.run(bounded())
        except BaseException as exc:  # noqa: BLE001 - reported below
            result["error"] = exc

    thread = threading.Thread(target=probe, name="serdes-dask-probe", daemon=True)
    thread.start()
    thread.join(timeout + 5.0)  # the wait_for above ends it; this is a second guard
    err = result.get("error")
    if thread.is_alive() or isinstance(err, (asyncio.TimeoutError, TimeoutError)):
        raise SweepError(f"cannot reach {where}: no answer within {timeout:g} s; is it a "
                         "Dask scheduler? (--timeout sets the wait)")
    if err is not None:
        raise SweepError(f"cannot reach {where}: {error_message(err)}")
    reply = result.get("reply")
    kind = reply.get("type") if isinstance(reply, dict) else None
    if kind != "Scheduler":
        what = f"a Dask {kind}" if isinstance(kind, str) else "not a Dask scheduler"
        raise SweepError(f"{address} is {what}: give the address of a Dask scheduler "
                         "(e.g. tcp://HOST:8786)")


class _DaskExecutor:
    def __init__(self, address: str, timeout: float | None = None):
        self.address = address
        self.timeout = timeout
        self.client = None
        self._pending: dict = {}  # key -> (future, point)

    def __enter__(self):
        try:
            from distributed import Client
        except ImportError:
            raise SweepError("--scheduler needs Dask distributed: pip install "
                             "'serdes[dask]'") from None
        timeout = DASK_TIMEOUT_S if self.timeout is None else self.timeout
        probe_scheduler(self.address, timeout)
        try:
            self.client = Client(self.address, timeout=timeout, set_as_default=False)
        except Exception as exc:  # OSError, TimeoutError, ValueError for a bad address...
            raise SweepError(f"cannot reach the Dask scheduler at {self.address}: "
                             f"{error_message(exc)}") from None
        return self

    def __exit__(self, exc_type, exc, tb):
        client, self.client = self.client, None
        if client is None:
            return
        try:
            if self._pending:  # interrupted: take the points off the cluster
                client.cancel([f for f, _ in self._pending.values()])
                self._pending.clear()
        finally:
            client.close()

    def _window(self) -> int:
        """Points in flight: four per worker thread (the cluster may grow), at least 64."""
        return max(64, 4 * sum(self.client.nthreads().values()))

    def run(self, points: list[dict], kwargs: dict) -> Iterator[dict]:
        if not points:
            return
        from distributed import as_completed

        client = self.client
        todo = iter(points)
        queue = as_completed([], loop=client.loop)
        window, checked = self._window(), time.monotonic()

        def fill():
            while len(self._pending) < window:
                p = next(todo, None)
                if p is None:
                    return
                key = f"serdes-point-{kwargs['sweep']}-{point_id(p)}"
                fut = client.submit(run_point, point=p, key=key, **kwargs)
                self._pending[key] = (fut, p)
                queue.add(fut)

        fill()
        for fut in queue:
            _, p = self._pending.pop(fut.key)
            try:
                row = fut.result()
            except Exception as exc:  # e.g. KilledWorker: the point crashed its workers
                row = error_row(p, error_message(exc), base=kwargs["base"],
                                sweep=kwargs["sweep"])
            fut.release()
            yield row
            if time.monotonic() - checked > 10.0:
                window, checked = self._window(), time.monotonic()
            fill()
