"""One computation in a forked process, its value collected later (``serdes run``'s
statistical sections beside a split run's counting).

:class:`Forked` starts ``fn(*args)`` in a child forked from this process (it inherits
the built link and every kernel already loaded; nothing is pickled on the way in) and
:meth:`Forked.result` takes its value back through a pipe. The child is a plain worker
of the parent's: whatever goes wrong there (an exception, a value that does not pickle,
the child killed) gives no value, and :meth:`Forked.result` then computes ``fn(*args)``
in this process, so an error reaches the user from the parent as it would without the
child, and the value is the same either way. Without ``fork`` (not Linux), or where no
child can be started (the caller is itself a daemonic worker process), the value is
computed in this process, when it is asked for.

Why: on two cores a split run's serial part (imports, link build, equalizer design,
the counting kernels loaded for the workers' fork) leaves one core idle, and on a first
run after install the statistical engine's kernels compile for about 12 s while the
counting kernels compile for about 5 s; in a child both overlap.
"""

from __future__ import annotations

import contextlib
import contextvars
import multiprocessing as mp
import pickle
import signal
import time

# forked helper processes the statistical views may use (:func:`split_map`); 0 unless
# a command that was given the cores sets it (:func:`helpers`)
_HELPERS = contextvars.ContextVar("serdes_forked_helpers", default=0)
# a first item (a phase of the statistical views) that took this long makes the rest
# worth a fork (about 10-50 ms each, and the values pickled back)
FORK_AFTER_S = 0.2


def _ended(signum, frame):
    raise SystemExit(128 + signum)


def _child(conn, fn, args) -> None:
    signal.signal(signal.SIGINT, signal.SIG_IGN)  # Ctrl-C is the parent's to handle
    # ended by the parent (close): unwind, so that the helpers it started are ended too
    signal.signal(signal.SIGTERM, _ended)
    _HELPERS.set(0)   # none unless fn allows them (the report's statistical child)
    try:
        value = fn(*args)
    except BaseException:   # noqa: BLE001 - the parent computes it again and reports
        payload = None
    else:
        try:
            payload = pickle.dumps(value, protocol=pickle.HIGHEST_PROTOCOL)
        except Exception:   # noqa: BLE001 - unpicklable: the parent computes it
            payload = None
    try:
        conn.send_bytes(b"" if payload is None else payload)
    except OSError:         # the parent is gone, or has stopped waiting
        pass
    conn.close()


class Forked:
    """``fn(*args)`` computed in a forked child from now on; :meth:`result` its value."""

    def __init__(self, fn, *args):
        self._fn, self._args, self._proc, self._conn = fn, args, None, None
        self._done, self._value = False, None
        if "fork" not in mp.get_all_start_methods():
            return
        ctx = mp.get_context("fork")
        recv, send = ctx.Pipe(duplex=False)
        # not daemonic, so that it may fork helpers of its own (split_map); every
        # caller ends it (close) in a finally, so none outlives the caller's block
        proc = ctx.Process(target=_child, args=(send, fn, args), daemon=False)
        try:
            proc.start()
        except (AssertionError, OSError):   # a daemonic caller (no children), no memory
            recv.close()
            return
        finally:
            send.close()
        self._proc, self._conn = proc, recv

    @property
    def forked(self) -> bool:
        return self._proc is not None

    def ready(self) -> bool:
        """Whether the child has answered or ended (True where there is no child)."""
        return self._done or self._proc is None or self._conn.poll()

    def result(self):
        """The child's value (waiting for it), or ``fn(*args)`` computed here when the
        child gave none (or there is no child); computed once."""
        if self._done:
            return self._value
        ok, value = False, None
        if self._proc is not None:
            try:
                payload = self._conn.recv_bytes()
                ok = bool(payload)
                if ok:
                    value = pickle.loads(payload)
            except EOFError:    # the child died without an answer
                ok = False
            finally:
                self.close()
        self._value = value if ok else self._fn(*self._args)
        self._done = True
        return self._value

    def close(self) -> None:
        """Stop waiting: the child (if still running) is ended."""
        if self._proc is None:
            return
        proc, self._proc = self._proc, None
        self._conn.close()
        if proc.is_alive():
            proc.join(0.05)
        if proc.is_alive():
            proc.terminate()
        proc.join()


@contextlib.contextmanager
def helpers(n: int | None):
    """Within the block, :func:`split_map` may fork up to ``n`` helpers (None: one per
    core beyond this process's; 0 or less: none)."""
    import os

    n = (os.cpu_count() or 1) - 1 if n is None else int(n)
    token = _HELPERS.set(max(0, n))
    try:
        yield
    finally:
        _HELPERS.reset(token)


def helpers_allowed() -> int:
    """How many forked helpers the caller may start now (:func:`helpers`)."""
    return _HELPERS.get()


def _map(fn, items):
    return [fn(x) for x in items]


def split_map(fn, items, slow_s: float | None = None) -> list:
    """``[fn(x) for x in items]``, the same values. Where helpers are allowed
    (:func:`helpers`) and the items left would take at least ``slow_s`` at the first
    one's pace (default :data:`FORK_AFTER_S`; <= 0: at once, without timing one), they
    are cut into contiguous parts and all but the first are computed in forked children
    while this process computes the first (with the helpers left). Each item's value
    must not depend on which others this process computed before it (caches of exact
    values only)."""
    items, head = list(items), []
    slow_s = FORK_AFTER_S if slow_s is None else slow_s
    if items and slow_s > 0:
        t = time.perf_counter()
        head = [fn(items[0])]
        items = items[1:]
        if (time.perf_counter() - t) * len(items) < slow_s:   # the rest, at that pace
            return head + _map(fn, items)
    allowed = _HELPERS.get()
    n = min(allowed, len(items) - 1)
    if n < 1:
        return head + _map(fn, items)
    cut = [round(i * len(items) / (n + 1)) for i in range(n + 2)]
    kids = []
    try:
        for i in range(1, n + 1):
            kids.append(Forked(_map, fn, items[cut[i]:cut[i + 1]]))
        with helpers(allowed - n):   # the cores the children took are not this part's
            out = head + _map(fn, items[:cut[1]])
        for kid in kids:
            out += kid.result()
    finally:
        for kid in kids:
            kid.close()
    return out
