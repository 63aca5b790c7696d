"""serdes run as a command: interruption, progress, the summary text; serdes config."""

from __future__ import annotations

import json
import re
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest

from serdes.cli import main as cli_main
from serdes.commands.common import json_safe
from serdes.commands.run import format_summary, run_link
from serdes.config import Config
from serdes.engines.run import simulate
from serdes.build import build
from serdes.sweep.progress import RunProgress

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
    assert "Ctrl-C: the count stops at its next chunk" in text  # heard at once


def test_a_stopped_run_counts_exactly_the_chunks_it_ran():
    """Stopped after three chunks = a run of three chunks: the partial numbers are the
    numbers of what was simulated, not an estimate."""
    cfg = Config.default().with_overrides(["link.chunk_symbols=65536",
                                           "link.target_errors=0"])
    system = build(cfg)
    calls = []

    def stop():
        calls.append(1)
        return len(calls) > 3

    seen = []
    part = simulate(system, symbols=10**9, should_stop=stop,
                    progress=lambda *a: seen.append(a))
    full = simulate(system, symbols=3 * 65536)
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
    text = format_summary(r)
    assert "(interrupted)" in text and "nothing counted" in text and "nan" not in text


@pytest.mark.parametrize("symbols", [1000, 2000, 4100, 4200, 4500])
def test_a_short_run_counts_after_its_warm_up(symbols):
    """Runs shorter than the warm-up, the 4096-decision alignment window and the delay
    search: at most 4096 symbols counted nothing, and 4100-4200 raised a NumPy error
    while aligning (its window began before the symbols it was compared with). Each now
    counts every decision after the warm-up (231 on the default link, as a long run),
    the alignment window shortened to what is left."""
    system = build(Config.default().with_overrides([f"link.symbols={symbols}"]))
    res = simulate(system, symbols=symbols)
    long = simulate(system, symbols=20_000)
    warm = 20_000 - long.symbols
    assert res.symbols == symbols - warm
    assert res.bit_errors == 0   # the default link at its SNR: none in 1e4 bits


class _Tty:
    """A terminal for the progress line: keeps what is written."""

    def __init__(self):
        self.text = ""

    def write(self, s):
        self.text += s

    def flush(self):
        pass


def test_count_progress_text():
    s = _Tty()
    bar = RunProgress(4_000_000, stream=s, enabled=True)
    bar.update(1_000_000, 4_000_000, 990_000, 12, 1_980_000)
    assert "1M/4M symbols" in s.text and "990,000 counted" in s.text
    assert "12 bit errors" in s.text and "BER 6.06e-06" in s.text
    bar.close()
    assert s.text.endswith("\r\x1b[K")
    quiet = _Tty()
    bar = RunProgress(10, stream=quiet)  # not a terminal: nothing drawn
    bar.update(5, 10, 5, 0, 10)
    bar.close()
    assert quiet.text == ""


def test_run_progress_shows_a_stage_s_time_and_a_first_rate_without_set_up(monkeypatch):
    """The line's rate counts from the first chunk's end (the first chunk had shown
    2087 M symbols/s: its symbols over the microseconds since the callback began);
    a stage replaces rate and ETA with its own time, redrawn every TICK_S by a thread
    that ``set_stage("")`` and ``close`` stop."""
    import threading
    import time as _time

    from serdes.sweep.progress import RunProgress

    s = _Tty()
    bar = RunProgress(4_000_000, stream=s, enabled=True)
    bar.update(65_536, 4_000_000, 0, 0, 0)
    assert "-- M symbols/s" in s.text.split("\r")[-1]
    monkeypatch.setattr(RunProgress, "TICK_S", 0.01)
    bar.set_stage("statistical eye and BER")
    n0 = s.text.count("\r")
    _time.sleep(0.3)
    assert s.text.count("\r") >= n0 + 5             # the thread redraws
    line = s.text.split("\r")[-1]
    assert "statistical eye and BER 0:00" in line and "M symbols/s" not in line
    bar.set_stage("")
    assert not any(t.name == "serdes-progress" for t in threading.enumerate())
    bar.set_stage("statistical BER")
    bar.close()
    assert not any(t.name == "serdes-progress" for t in threading.enumerate())
    assert s.text.endswith("\r\x1b[K")


def test_a_fork_never_splits_a_progress_line_s_write(monkeypatch):
    """A fork waits for the ticker's write in progress and the child's copy of the
    line's lock is free: a ticker thread caught inside the stream's lock at a fork would
    leave that lock held in the helper the statistical views forked."""
    import os
    import time as _time

    from serdes.sweep import progress as prog

    class Slow:
        def write(self, s):
            _time.sleep(0.02)

        def flush(self):
            pass

    monkeypatch.setattr(prog.RunProgress, "TICK_S", 0.001)
    bar = prog.RunProgress(10, stream=Slow(), enabled=True)
    bar.set_stage("statistical eye and BER")
    try:
        for _ in range(5):
            pid = os.fork()
            if pid == 0:       # the child: the lock must be free at once
                os._exit(0 if prog._DRAW.acquire(timeout=1.0) else 1)
            assert os.waitpid(pid, 0)[1] == 0
    finally:
        bar.close()


# -- serdes config ------------------------------------------------------------------------
EXAMPLE = Path(__file__).resolve().parents[1] / "examples" / "link.toml"


def _cli(*args, cwd=None):
    return subprocess.run([sys.executable, "-m", "serdes.cli", *args], capture_output=True,
                          text=True, timeout=HANG_GUARD_S, cwd=cwd)


def test_config_prints_commented_toml_that_run_accepts(tmp_path):
    import tomllib

    from serdes.config import SCHEMA

    r = _cli("config")
    assert r.returncode == 0 and r.stderr == ""
    text = r.stdout
    toml = tmp_path / "x.toml"
    toml.write_text(text)
    assert Config.from_toml(toml) == Config.default()
    # every key is written, each with its meaning as a comment above it
    data = tomllib.loads(text)
    assert {s: set(v) for s, v in data.items()} == {s: set(v) for s, v in SCHEMA.items()}
    lines = text.splitlines()
    for i, line in enumerate(lines):
        if " = " in line and not line.startswith(("#", "[")):
            assert lines[i - 1].startswith("# "), line
    # serdes run takes it unchanged and reports the same link as without a file
    a = _cli("run", str(toml), "--set", "link.symbols=20000", "--json")
    b = _cli("run", "--set", "link.symbols=20000", "--json")
    assert a.returncode == 0 and b.returncode == 0, a.stderr
    ja, jb = json.loads(a.stdout), json.loads(b.stdout)
    for key in ("symbols", "bit_errors", "ber", "ffe_taps", "dfe_taps", "link"):
        assert ja[key] == jb[key]


def test_config_of_a_file_with_overrides_round_trips(tmp_path, capsys):
    src = tmp_path / "a.toml"
    src.write_text('[channel]\nloss_db = 30.0\n[ffe]\ntaps = 16\n')
    assert cli_main(["config", str(src), "--set", "tx.ffe=[0.1, 0.8, -0.1]",
                     "--set", "tx.main=1", "--seed", "7"]) == 0
    out = capsys.readouterr().out
    dst = tmp_path / "b.toml"
    dst.write_text(out)
    want = Config.from_toml(src).with_overrides(["tx.ffe=[0.1, 0.8, -0.1]", "tx.main=1",
                                                 "link.seed=7"])
    assert Config.from_toml(dst) == want
    assert "# loss model: insertion loss at Nyquist (dB); a number in [0, 60]; default 25.0" \
        in out


def test_config_keys_lists_type_default_range_and_meaning(capsys):
    from serdes.config import AGGRESSOR, SCHEMA

    assert cli_main(["config", "--keys"]) == 0
    out = capsys.readouterr().out.splitlines()
    assert len(out) == 1 + sum(len(v) for v in SCHEMA.values()) + len(AGGRESSOR)
    assert any(x.startswith("[[aggressor]].kind ") for x in out)
    line = next(x for x in out if x.startswith("channel.loss_db "))
    for word in ("float", "25.0", "a number in [0, 60]", "insertion loss at Nyquist"):
        assert word in line
    line = next(x for x in out if x.startswith("ctle.model "))
    assert "str" in line and '"ieee"' in line and "'zpk'" in line


def test_config_errors_are_one_line(tmp_path):
    r = _cli("config", "--set", "ffe.tapz=3")
    assert r.returncode == 2 and r.stderr.count("\n") == 1 and "ffe.tapz" in r.stderr


def test_the_example_config_is_the_default_and_runs(tmp_path):
    assert EXAMPLE.is_file()
    assert Config.from_toml(EXAMPLE) == Config.default()
    assert "# " in EXAMPLE.read_text()  # commented
    # the README's command, as written, from the repository root
    r = _cli("run", "examples/link.toml", "--set", "link.symbols=20000", "--seed", "7",
             "--json", cwd=EXAMPLE.parents[1])
    assert r.returncode == 0, r.stderr
    assert json.loads(r.stdout)["seed"] == 7


def test_config_is_a_listed_command():
    from serdes.cli import COMMANDS

    assert "config" in COMMANDS


# -- the summary and the help texts -------------------------------------------------------
ROOT = Path(__file__).resolve().parents[1]


def test_summary_says_unlimited_bandwidth_and_no_g_dc_without_ctle(capsys):
    assert cli_main(["run", "--set", "link.symbols=20000", "--set", "ctle.model=none",
                     "--set", "afe.bandwidth_hz=0"]) == 0
    rx = next(x for x in capsys.readouterr().out.splitlines() if x.startswith("rx "))
    assert "CTLE none," in rx and "g_dc" not in rx
    assert "BW unlimited" in rx and "0 GHz" not in rx
    assert cli_main(["run", "--set", "link.symbols=20000", "--set", "ctle.auto=false"]) == 0
    rx = next(x for x in capsys.readouterr().out.splitlines() if x.startswith("rx "))
    assert "CTLE ieee (g_dc -8 dB)" in rx and "BW 40 GHz" in rx
    assert cli_main(["run", "--set", "link.symbols=20000"]) == 0  # ctle.auto by default
    rx = next(x for x in capsys.readouterr().out.splitlines() if x.startswith("rx "))
    assert re.search(r"CTLE ieee \(g_dc -\d+ dB, g_dc2 -?\d+ dB, auto\)", rx), rx


def test_readme_example_output_has_the_lines_run_prints(capsys):
    text = (ROOT / "README.md").read_text()
    block = text.split("design. It prints", 1)[1].split("```", 2)[1]
    readme = [x.split()[0] for x in block.strip().splitlines()]
    assert cli_main(["run", "--set", "link.symbols=20000"]) == 0
    printed = [x.split()[0] for x in capsys.readouterr().out.strip().splitlines()]
    assert readme == printed


@pytest.mark.parametrize("sets, words", [
    ([], "correct DFE feedback, the count adds error propagation"),
    (["link.precoding=true"], "correct DFE feedback, and precoding counts each error about"),
    (["dfe.taps=0"], None),
])
def test_stat_ber_line_says_what_it_leaves_to_the_count(sets, words, capsys):
    """The statistical BER takes the DFE's decisions as correct; the count has the error
    propagation (a precoded link counts each error about twice: 1.95x at 1.4e-4 on a
    30 dB link with a 5-bit ADC). The summary line says so where a DFE decides, and
    points to the JSON's propagation model."""
    args = ["run", "--set", "link.symbols=20000"]
    for x in sets:
        args += ["--set", x]
    assert cli_main(args) == 0
    line = next(x for x in capsys.readouterr().out.splitlines() if x.startswith("stat BER"))
    if words is None:
        assert line.endswith("(statistical engine)")
    else:
        assert words in line and "stat.dfe_error_propagation" in line


def test_help_texts(capsys):
    from serdes.cli import build_parser

    with pytest.raises(SystemExit):
        cli_main(["plot", "--help"])
    out = capsys.readouterr().out
    assert "95% confidence" in out and "%%" not in out
    sub = next(a for a in build_parser()._actions if a.dest == "command")
    with_dpi = []
    for name, parser in sub.choices.items():
        for action in parser._actions:
            if "--dpi" in action.option_strings:
                with_dpi.append(name)
                assert action.help and "dots per inch" in action.help, name
    assert "plot" in with_dpi


def test_notebook_02_writes_its_result_file_to_a_temporary_folder():
    import tempfile

    nbformat = pytest.importorskip("nbformat")
    nb = nbformat.read(ROOT / "notebooks" / "02_ber_sweep.ipynb", as_version=4)
    at = next(i for i, c in enumerate(nb.cells)
              if "parameters" in c.metadata.get("tags", []))
    ns: dict = {}
    exec(nb.cells[at].source, ns)  # the default parameters
    exec(nb.cells[at + 1].source, ns)  # the set-up cell that names the result file
    out = Path(ns["out"]).resolve()
    assert out.parent != (ROOT / "notebooks").resolve()
    assert Path(tempfile.gettempdir()).resolve() in out.parents
    out.parent.rmdir()


def test_notebook_result_files_are_ignored_by_git():
    if subprocess.run(["git", "-C", str(ROOT), "rev-parse"], capture_output=True).returncode:
        pytest.skip("not a git checkout")
    r = subprocess.run(["git", "-C", str(ROOT), "check-ignore", "-q",
                        "notebooks/02_ber_sweep.csv"], capture_output=True)
    assert r.returncode == 0


def test_sj_is_documented_as_untracked():
    """Untracked with the CDR off (the fixed phase), followed by the CDR otherwise."""
    from serdes.config import SCHEMA

    assert "untracked" in SCHEMA["noise"]["sj_ui"].doc
    assert "cdr.mode = off" in SCHEMA["noise"]["sj_ui"].doc
    for doc in ("README.md", "docs/architecture.md"):
        text = (ROOT / doc).read_text()
        assert "untracked" in text and 'cdr.mode = "off"' in text


@pytest.mark.parametrize("sets, named, not_named", [
    (["tx_jitter.rj_ui=0.02"], "tx_jitter.rj_ui = 0.02", "cdr.mode"),
    (["cdr.mode=mm", "tx_jitter.ppm=-3"], "cdr.mode = 'mm', tx_jitter.ppm = -3", "rj_ui"),
])
def test_waveform_engine_refusal_names_the_keys_set(sets, named, not_named, capsys):
    """The waveform engine has no clock recovery or TX jitter: the one-line refusal names
    the settings the user turned on, not a key left at its default."""
    args = ["run", "--engine", "waveform", "--no-stat", "--threads", "1"]
    rc = cli_main(args + [a for s in sets for a in ("--set", s)])
    err = capsys.readouterr().err.strip()
    assert rc == 2 and len(err.splitlines()) == 1, err
    assert named in err and not_named not in err, err


def test_stat_ber_line_of_a_lost_loop_says_it_assumes_a_held_lock(capsys):
    """The statistical BER takes the loop at its lock point; where the run's loop was
    lost (samples past the slip window: the IEEE KR DPO_4in thru with the MM loop, whose
    peak-biased S-curve only touches zero at the peak) the line says so, beside the cdr
    line's "the BER is not valid"."""
    assert cli_main(["run", "--json", "--threads", "1", "--set", "cdr.mode=mm",
                     "--set", "link.symbols=200000"]) == 0
    r = json.loads(capsys.readouterr().out)
    held = next(x for x in format_summary(r).splitlines() if x.startswith("stat BER"))
    assert r["cdr"]["outside_window_symbols"] == 0 and "did not" not in held
    r["cdr"]["outside_window_symbols"] = 1000
    lost = next(x for x in format_summary(r).splitlines() if x.startswith("stat BER"))
    assert "which this run's loop did not" in lost


def test_the_summary_says_the_prediction_leaves_out_an_adaptive_canceller():
    """With rc.mode = 'adaptive' the canceller's taps are placed at run time, so the MMSE
    prediction is the FFE/DFE's alone (19.0 dB against 24.8 dB counted with a -20 dB echo
    at 30 UI); the summary says so, and does not for taps placed from the pulse."""
    base = ["rc.taps=2", "reflections.echo_delay_ui=30", "link.symbols=30000",
            "ctle.auto=false"]
    for mode, said in (("adaptive", True), ("pulse", False)):
        r = run_link(Config.default().with_overrides(base + [f"rc.mode={mode}"]), stat=False,
                     eye=False)
        assert ("without the canceller" in format_summary(r)) is said


@pytest.mark.parametrize("argv, hinted", [
    (["com", "thru.s4p", "--fext", "a.s4p", "b.s4p", "c.s4p"], True),
    (["run", "--next", "a.s4p", "--set", "link.symbols=1000", "cfg.toml", "b.s4p"], False),
    (["run", "--fext", "a.s4p", "--bogus"], False),
])
def test_files_after_one_aggressor_flag_get_a_hint(argv, hinted, capsys):
    """`--fext A B`: the flag takes one file, argparse leaves B over; the one-line error
    says to repeat the flag, and only when every word left over is such a file."""
    with pytest.raises(SystemExit) as exc:
        cli_main(argv)
    err = capsys.readouterr().err
    assert exc.value.code == 2 and err.count("\n") == 1
    assert err.startswith("serdes: error: unrecognized arguments: ")
    assert ("--fext A --fext B" in err) == hinted
