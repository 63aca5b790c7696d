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

import multiprocessing as mp
import pickle
import signal


def _child(conn, fn, args) -> None:
    signal.signal(signal.SIGINT, signal.SIG_IGN)  # Ctrl-C is the parent's to handle
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
        proc = ctx.Process(target=_child, args=(send, fn, args), daemon=True)
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
