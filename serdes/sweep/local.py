"""Local execution of sweep points: how many worker processes the machine can hold,
and the executor that runs points in them (``spawn``, one BLAS/OpenMP thread each)."""

from __future__ import annotations

import contextlib
import os
import time
from typing import Iterator

from serdes.sweep.grid import SweepError
from serdes.sweep.point import error_message, error_row, run_point

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

    from serdes.heap import keep_freed_memory

    # A point's chunks reuse the pages of the one before (serdes/heap.py). Without it a
    # worker that runs the precompiled kernels (it never imports numba, whose import
    # happens to raise glibc's thresholds) faults in every 512 KB chunk array afresh.
    keep_freed_memory()
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

    def run(self, points: list[dict], kwargs: dict, fn=None, tag: str = "point",
            size: int | None = None) -> Iterator[dict]:
        """Rows of ``fn(point=p, **kwargs)`` (default: a sweep point) as they finish.
        The worker processes are started by the first call (at most ``size`` of them,
        default ``len(points)``) and kept for the next calls until the executor
        closes."""
        fn = run_point if fn is None else fn
        if self.workers == 0:
            for p in points:
                yield fn(point=p, **kwargs)
            return
        if not points:
            return
        import multiprocessing
        from concurrent.futures import FIRST_COMPLETED, ProcessPoolExecutor, wait
        from concurrent.futures.process import BrokenProcessPool

        if self._pool is None:
            self._n = min(self.workers, max(len(points), size or 0))
            self._pool = ProcessPoolExecutor(max_workers=self._n, initializer=_worker_init,
                                             mp_context=multiprocessing.get_context("spawn"))
        window = 4 * self._n
        todo = iter(points)
        pending: dict = {}

        def fill():
            while len(pending) < window:
                p = next(todo, None)
                if p is None:
                    return
                pending[self._pool.submit(fn, point=p, **kwargs)] = p

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
