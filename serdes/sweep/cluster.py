"""Running sweep points on a Dask distributed cluster: the scheduler is probed with a
bounded wait before any client is built, then points are submitted in a window."""

from __future__ import annotations

import time
from typing import Iterator

from serdes.sweep.grid import point_id
from serdes.dask_client import DASK_TIMEOUT_S, connect
from serdes.sweep.point import error_message, error_row, run_point

class _DaskExecutor:
    def __init__(self, address: str, timeout: float | None = None):
        self.address = address
        self.timeout = timeout
        self.client = None
        self._pending: dict = {}  # key -> (future, point)

    def __enter__(self):
        timeout = DASK_TIMEOUT_S if self.timeout is None else self.timeout
        self.client = connect(self.address, timeout)
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

    def run(self, points: list[dict], kwargs: dict, fn=None, tag: str = "point",
            size: int | None = None) -> Iterator[dict]:
        """Rows of ``fn(point=p, **kwargs)`` (default: a sweep point) as they finish;
        ``tag`` names the kind of task in the cluster's keys (a point's COM task and
        its run are different tasks); ``size`` is the local executor's (the cluster's
        workers are there already)."""
        fn = run_point if fn is None else fn
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
                key = f"serdes-{tag}-{kwargs['sweep']}-{point_id(p)}"
                fut = client.submit(fn, point=p, key=key, **kwargs)
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
