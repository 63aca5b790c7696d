"""Reaching a Dask scheduler: a probe with a bounded wait and the client, shared by the
sweep (``serdes sweep --scheduler``) and one split run (``serdes run --scheduler``)."""

from __future__ import annotations

from serdes.errors import SchedulerError


def error_message(exc: BaseException) -> str:
    """One line: the exception's type and the first line of its message."""
    text = str(exc).strip().splitlines()
    text = text[0] if text else ""
    return f"{type(exc).__name__}: {text}" if text else type(exc).__name__


DASK_TIMEOUT_S = 10  # seconds to reach the scheduler


def probe_scheduler(address: str, timeout: float) -> None:
    """Check that ``address`` is a Dask scheduler that answers within ``timeout`` seconds,
    or raise a one-line SchedulerError.

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
        raise SchedulerError(f"--scheduler {address}: {error_message(exc)}; expected e.g. "
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
        raise SchedulerError(f"cannot reach {where}: no answer within {timeout:g} s; is it a "
                         "Dask scheduler? (--timeout sets the wait)")
    if err is not None:
        raise SchedulerError(f"cannot reach {where}: {error_message(err)}")
    reply = result.get("reply")
    kind = reply.get("type") if isinstance(reply, dict) else None
    if kind != "Scheduler":
        what = f"a Dask {kind}" if isinstance(kind, str) else "not a Dask scheduler"
        raise SchedulerError(f"{address} is {what}: give the address of a Dask scheduler "
                         "(e.g. tcp://HOST:8786)")


def connect(address: str, timeout: float):
    """A ``distributed.Client`` for the scheduler at ``address``, after the probe; one-line
    SchedulerErrors for a missing Dask, a bad address or no answer."""
    try:
        from distributed import Client
    except ImportError:
        raise SchedulerError("--scheduler needs Dask distributed: pip install "
                         "'serdes[dask]'") from None
    probe_scheduler(address, timeout)
    try:
        return Client(address, timeout=timeout, set_as_default=False)
    except Exception as exc:  # OSError, TimeoutError, ValueError for a bad address...
        raise SchedulerError(f"cannot reach the Dask scheduler at {address}: "
                         f"{error_message(exc)}") from None
