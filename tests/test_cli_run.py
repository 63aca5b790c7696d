"""serdes run as a command: interruption, progress, the summary text; serdes config."""

from __future__ import annotations

import json
import re
import signal
import subprocess
import sys
import threading
import time

import pytest

from serdes.cli import main as cli_main
from serdes.commands.common import json_safe
from serdes.commands.run import format_summary, run_link
from serdes.config import Config
from serdes.engines.run import simulate
from serdes.link import Link
from serdes.sweep.progress import CountProgress

HANG_GUARD_S = 600  # only against a hung process, not a speed limit


# -- Ctrl-C -------------------------------------------------------------------------------
def test_ctrl_c_prints_the_partial_result_and_exits_130():
    """A real `serdes run --json` far longer than the test, sent SIGINT once it counts:
    the JSON object of what it counted, stopped_by "interrupted", exit code 130."""
    proc = subprocess.Popen(
        [sys.executable, "-m", "serdes.cli", "run", "--json", "--progress",
         "--set", "link.symbols=1000000000000", "--set", "link.target_errors=0"],
        stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    err = bytearray()

    def read():
        while chunk := proc.stderr.read1(65536):
            err.extend(chunk)

    reader = threading.Thread(target=read, daemon=True)
    reader.start()
    try:
        deadline = time.monotonic() + HANG_GUARD_S
        counted = 0
        while counted == 0 and proc.poll() is None and time.monotonic() < deadline:
            time.sleep(0.2)
            marks = re.findall(rb"([\d,]+) counted", bytes(err))
            counted = int(marks[-1].replace(b",", b"")) if marks else 0
        assert counted > 0, bytes(err).decode(errors="replace")
        proc.send_signal(signal.SIGINT)
        out = proc.stdout.read()
        proc.wait(timeout=HANG_GUARD_S)
        reader.join(timeout=HANG_GUARD_S)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
    text = bytes(err).decode(errors="replace")
    assert proc.returncode == 130, text
    assert "Traceback" not in text
    r = json.loads(out)
    assert r["stopped_by"] == "interrupted"
    assert r["symbols"] >= counted and r["bits"] == 2 * r["symbols"]
    assert r["symbols"] < 10**12
    lo, hi = r["ber_ci"]
    assert lo <= r["ber"] <= hi and r["bit_errors"] == round(r["ber"] * r["bits"])
    assert f"interrupted after {r['symbols']:,} counted symbols" in text


def test_a_stopped_run_counts_exactly_the_chunks_it_ran():
    """Stopped after three chunks = a run of three chunks: the partial numbers are the
    numbers of what was simulated, not an estimate."""
    cfg = Config.default().with_overrides(["link.chunk_symbols=65536",
                                           "link.target_errors=0"])
    link = Link(cfg)
    calls = []

    def stop():
        calls.append(1)
        return len(calls) > 3

    seen = []
    part = simulate(link, symbols=10**9, should_stop=stop,
                    progress=lambda *a: seen.append(a))
    full = simulate(link, symbols=3 * 65536)
    assert part.stopped_by == "interrupted" and full.stopped_by == "symbols"
    assert (part.symbols, part.bit_errors, part.symbol_errors) == \
        (full.symbols, full.bit_errors, full.symbol_errors)
    assert [a[0] for a in seen] == [65536, 2 * 65536, 3 * 65536]
    assert seen[-1][2:] == (part.symbols, part.bit_errors, part.bits)


def test_stopped_before_counting_reports_nothing_counted():
    cfg = Config.default().with_overrides(["link.symbols=20000"])
    r = run_link(cfg, should_stop=lambda: True)
    assert r["stopped_by"] == "interrupted" and r["symbols"] == 0 and r["bits"] == 0
    d = json_safe(r)
    assert d["ber"] is None and d["snr_db"] is None and d["ber_ci"] == [0.0, 1.0]
    text = format_summary(cfg, r)
    assert "(interrupted)" in text and "nothing counted" in text and "nan" not in text


def test_count_progress_text():
    class Tty:
        def __init__(self):
            self.text = ""

        def write(self, s):
            self.text += s

        def flush(self):
            pass

    s = Tty()
    bar = CountProgress(4_000_000, stream=s, enabled=True)
    bar.update(1_000_000, 4_000_000, 990_000, 12, 1_980_000)
    assert "1M/4M symbols" in s.text and "990,000 counted" in s.text
    assert "12 bit errors" in s.text and "BER 6.06e-06" in s.text
    bar.close()
    assert s.text.endswith("\r\x1b[K")
    quiet = Tty()
    bar = CountProgress(10, stream=quiet)  # not a terminal: nothing drawn
    bar.update(5, 10, 5, 0, 10)
    bar.close()
    assert quiet.text == ""
