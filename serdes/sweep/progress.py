"""A one-line progress bar on stderr: points done, errors, rate and ETA.

It draws only when the stream is a terminal (or when forced), at most ten times a
second, and erases itself when the sweep ends.
"""

from __future__ import annotations

import sys
import time


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
        self._t0 = time.monotonic()
        self._last = 0.0
        self._shown = False

    def update(self, status: str = "ok") -> None:
        self.done += 1
        if status != "ok":
            self.errors += 1
        self.draw()

    def text(self) -> str:
        frac = self.done / self.total if self.total else 1.0
        fill = int(round(frac * self.width))
        bar = "#" * fill + "-" * (self.width - fill)
        elapsed = time.monotonic() - self._t0
        ran = self.done - self._start_done
        if ran > 0 and elapsed > 0:
            rate = ran / elapsed
            eta = f"ETA {_clock((self.total - self.done) / rate)}"
            speed = f"{rate * 60:.1f} pt/min"
        else:
            eta, speed = "ETA --:--", "-- pt/min"
        return (f"[{bar}] {self.done}/{self.total} points  {self.errors} errors  "
                f"{_clock(elapsed)} elapsed  {eta}  {speed}")

    def draw(self, force: bool = False) -> None:
        if not self.enabled:
            return
        now = time.monotonic()
        if not force and now - self._last < 0.1 and self.done < self.total:
            return
        self._last = now
        self.stream.write("\r" + self.text() + "\x1b[K")
        self.stream.flush()
        self._shown = True

    def close(self) -> None:
        if self.enabled and self._shown:
            self.stream.write("\r\x1b[K")
            self.stream.flush()
