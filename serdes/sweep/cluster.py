"""Running sweep points on a Dask distributed cluster: the scheduler is probed with a
bounded wait before any client is built, then points are submitted in a window."""

from __future__ import annotations

import time
from typing import Iterator

from serdes.sweep.grid import SweepError, point_id
from serdes.sweep.point import error_message, error_row, run_point

DASK_TIMEOUT_S = 10  # seconds to reach the scheduler


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
