"""A one-line progress bar on stderr: points done, errors, rate and ETA (a sweep), or
symbols simulated, counted, bit errors and BER (one long ``serdes run``).

It draws only when the stream is a terminal (or when forced), at most ten times a
second, and erases itself when the sweep or run ends; a forked process's copy (a
helper of the statistical views, :mod:`serdes.forked`) draws nothing.
"""

from __future__ import annotations

import os
import sys
import threading
import time

# Every write of a line holds this lock, and so does a fork (os.register_at_fork): a
# ticker thread (Progress.start_ticker) is then never inside the stream's own lock when
# the statistical views fork a helper, whose copy of it would stay locked.
_DRAW = threading.Lock()
if hasattr(os, "register_at_fork"):
    os.register_at_fork(before=_DRAW.acquire, after_in_parent=_DRAW.release,
                        after_in_child=_DRAW.release)


def _clock(seconds: float) -> str:
    seconds = int(round(seconds))
    h, rem = divmod(seconds, 3600)
    m, s = divmod(rem, 60)
    return f"{h}:{m:02d}:{s:02d}" if h else f"{m}:{s:02d}"


class Progress:
    def __init__(self, total: int, done: int = 0, errors: int = 0, *, stream=None,
                 enabled: bool | None = None, width: int = 28):
        self.stream = sys.stderr if stream is None else stream
        if enabled is None:
            isatty = getattr(self.stream, "isatty", None)
            enabled = bool(isatty and isatty())
        self.enabled = enabled
        self.total = total
        self.done = done
        self.errors = errors
        self.width = width
        self._start_done = done
        self._stage = ""   # work before the points, shown after the bar (e.g. COM 1/4)
        self._t0 = self._r0 = time.monotonic()
        self._last = 0.0
        self._shown = False
        self._pid = os.getpid()   # a forked helper's copy draws nothing
        self._ticker = None

    @property
    def stage(self) -> str:
        return self._stage

    @stage.setter
    def stage(self, text: str) -> None:
        """Work before the points (its text replaces the rate and ETA); when it ends
        (empty text) the rate counts from then."""
        if self._stage and not text:
            self._r0 = time.monotonic()
        self._stage = text

    def update(self, status: str = "ok") -> None:
        self.done += 1
        if status != "ok":
            self.errors += 1
        self.draw()

    def text(self) -> str:
        frac = self.done / self.total if self.total else 1.0
        fill = int(round(frac * self.width))
        bar = "#" * fill + "-" * (self.width - fill)
        now = time.monotonic()
        elapsed, counting = now - self._t0, now - self._r0
        ran = self.done - self._start_done
        if ran > 0 and counting > 0:
            rate = ran / counting
            eta = f"ETA {_clock((self.total - self.done) / rate)}"
            speed = f"{rate * 60:.1f} pt/min"
        else:
            eta, speed = "ETA --:--", "-- pt/min"
        if self._stage:
            return (f"[{bar}] {self.done}/{self.total} points  {self._stage}  "
                    f"{_clock(elapsed)} elapsed")
        return (f"[{bar}] {self.done}/{self.total} points  {self.errors} errors  "
                f"{_clock(elapsed)} elapsed  {eta}  {speed}")

    def draw(self, force: bool = False) -> None:
        if not self.enabled or os.getpid() != self._pid:
            return
        now = time.monotonic()
        if not force and now - self._last < 0.1 and self.done < self.total:
            return
        self._last = now
        with _DRAW:
            self.stream.write("\r" + self.text() + "\x1b[K")
            self.stream.flush()
        self._shown = True

    TICK_S = 1.0

    def start_ticker(self) -> None:
        """Redraw every TICK_S from a thread (the elapsed time moves while the work runs
        between updates) until :meth:`stop_ticker` or :meth:`close`."""
        if not self.enabled or os.getpid() != self._pid or self._ticker is not None:
            return
        stop = threading.Event()

        def tick():
            while not stop.wait(self.TICK_S):
                self.draw(force=True)

        self._ticker = (stop, threading.Thread(target=tick, name="serdes-progress",
                                               daemon=True))
        self._ticker[1].start()

    def stop_ticker(self) -> None:
        if self._ticker is not None and os.getpid() == self._pid:
            self._ticker[0].set()
            self._ticker[1].join()
        self._ticker = None

    def note(self, text: str) -> None:
        """One line of ``text`` above the bar (which is drawn again below it); nothing
        where the bar is not drawn."""
        if not self.enabled or os.getpid() != self._pid:
            return
        with _DRAW:
            self.stream.write("\r\x1b[K" + text + "\n")
            self.stream.flush()
        self.draw(force=True)

    def close(self) -> None:
        self.stop_ticker()
        if self.enabled and self._shown:
            with _DRAW:
                self.stream.write("\r\x1b[K")
                self.stream.flush()


def _count(n: int) -> str:
    for unit, scale in (("G", 1e9), ("M", 1e6), ("k", 1e3)):
        if n >= scale:
            return f"{n / scale:.4g}{unit}"
    return str(n)


class RunProgress(Progress):
    """The bar of one counted run: ``update(simulated, total, counted, bit_errors,
    bits)`` is :func:`serdes.engines.run.simulate`'s ``progress`` callback;
    ``set_stage(text)`` (:func:`serdes.report.run_report`'s ``stage``) names the work
    after the count, whose time the line then shows, redrawn every second ("" ends it)."""

    def __init__(self, total: int, **kwargs):
        super().__init__(total, **kwargs)
        self.counted = self.bit_errors = self.bits = 0
        self._first: tuple[float, int] | None = None
        self._stage_t0 = 0.0

    def update(self, simulated: int, total: int, counted: int, bit_errors: int,
               bits: int) -> None:  # type: ignore[override]
        if self._first is None:  # the rate counts from the first chunk's end: the set-up
            self._first = (time.monotonic(), simulated)   # and compiling come before it
        self.done, self.total = simulated, total
        self.counted, self.bit_errors, self.bits = counted, bit_errors, bits
        self.draw()

    def set_stage(self, text: str) -> None:
        if text == self._stage:
            return
        self.stage = text
        self._stage_t0 = time.monotonic()
        if text:
            self.start_ticker()
            self.draw(force=True)
        else:   # (the line stays as it was: the count's rate no longer means anything)
            self.stop_ticker()

    def text(self) -> str:
        frac = self.done / self.total if self.total else 1.0
        fill = int(round(frac * self.width))
        bar = "#" * fill + "-" * (self.width - fill)
        now = time.monotonic()
        elapsed = now - self._t0
        t1, d1 = self._first or (now, self.done)
        if self.done > d1 and now > t1:
            rate = (self.done - d1) / (now - t1)
            eta = f"ETA {_clock((self.total - self.done) / rate)}"
            speed = f"{rate / 1e6:.2f} M symbols/s"
        else:
            eta, speed = "ETA --:--", "-- M symbols/s"
        ber = f"BER {self.bit_errors / self.bits:.2e}" if self.bits else "BER --"
        head = (f"[{bar}] {_count(self.done)}/{_count(self.total)} symbols  "
                f"{self.counted:,} counted  {self.bit_errors:,} bit errors  {ber}  ")
        if self._stage:
            return f"{head}{self._stage} {_clock(now - self._stage_t0)}  {_clock(elapsed)} elapsed"
        return f"{head}{_clock(elapsed)} elapsed  {eta}  {speed}"
