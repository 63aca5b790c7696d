"""Python threads for nogil numba kernels that work in chunks of rows (the COM search
kernels), in place of numba's ``parallel=True``.

A kernel made for :func:`run_chunks` takes, as its last two arguments, its first chunk
and the stride: thread j of T runs chunks j, j + T, ... . Each chunk must write only its
own rows, so a result does not depend on the thread count. Why not ``prange``: numba's
parallel compile of the 802.3dj search kernel took about 30 s more on a first run, for
the same run time, and a process forked after a parallel kernel ran under GNU OpenMP (the
``omp`` layer) ended as soon as it ran one ("fork() called from a process already using
GNU OpenMP, this is unsafe"). The pool here is made per process: a forked child makes
its own (the parent's threads do not exist there, and a job given to their pool would
wait for ever). Its threads are daemons, so a caller stopped by a Ctrl-C ends without
waiting for a chunk still running (see :class:`_DaemonPool`). See docs/com.md, "Speed".
"""

from __future__ import annotations

import os
import queue
import threading
from concurrent.futures import Future

from serdes.kernels import args as _a

__all__ = ["run_chunks"]

_POOL: dict = {}
_POOL_LOCK = threading.Lock()


def _forget_pools() -> None:
    """In a forked child: drop the parent's pools (their threads are not here) and the
    lock one of them may have held at the fork."""
    global _POOL_LOCK
    _POOL.clear()
    _POOL_LOCK = threading.Lock()


if hasattr(os, "register_at_fork"):
    os.register_at_fork(after_in_child=_forget_pools)


class _DaemonPool:
    """``workers`` daemon threads taking jobs from one queue. Not ThreadPoolExecutor:
    its threads are joined when the interpreter exits, so a Ctrl-C that stopped the
    caller still waited for the jobs running (on a first run, numba compiling the COM
    kernels for up to a minute, deaf to the signal)."""

    def __init__(self, workers: int):
        self._jobs = queue.SimpleQueue()
        for i in range(workers):
            threading.Thread(target=self._work, name=f"serdes-kernel-{i}", daemon=True).start()

    def _work(self) -> None:
        while True:
            fn, args, fut = self._jobs.get()
            try:
                fut.set_result(fn(*args))
            except BaseException as exc:  # handed to the caller, as the executor does
                fut.set_exception(exc)

    def submit(self, fn, *args) -> Future:
        fut = Future()
        self._jobs.put((fn, args, fut))
        return fut


def _pool(workers: int) -> _DaemonPool:
    """This process's pool of ``workers`` threads (made once per process)."""
    with _POOL_LOCK:
        pool = _POOL.get(workers)
        if pool is None:
            pool = _POOL[workers] = _DaemonPool(workers)
        return pool


def run_chunks(kernel, args: tuple, n_chunks: int, threads: int | None = None) -> list:
    """``kernel(*args, j, T)`` on T = min(``threads``, ``n_chunks``) threads (default
    numba's thread count, ``NUMBA_NUM_THREADS`` or ``numba.set_num_threads``; another
    value must be an integer in [1, 1024]); the kernels' return values, in thread order.
    One thread: called in this thread."""
    if threads is None:
        import numba

        threads = numba.get_num_threads()
    else:
        threads = _a.integer("threads", threads, lo=1, hi=1024)
    workers = max(1, min(threads, n_chunks))
    if workers == 1:
        return [kernel(*args, 0, 1)]
    jobs = [_pool(workers).submit(kernel, *args, j, workers) for j in range(workers)]
    return [job.result() for job in jobs]
