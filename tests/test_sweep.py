"""serdes sweep: grid parsing, seeds, local execution, resumable result files."""

from __future__ import annotations

import csv
import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from serdes.cli import main as cli_main
from serdes.config import Config
from serdes.errors import ConfigError
from serdes.sweep import (Grid, SweepError, SweepInterrupted, parse_specs, point_id,
                          point_seed, read_results, run_point, run_sweep)
from serdes.sweep.progress import Progress
from serdes.sweep.results import ResultFile
from conftest import EARLIER_DEFAULT, earlier_default

SMALL = ["link.symbols=20000"]


def small_config(*more: str) -> Config:
    return earlier_default(*SMALL, *more)  # a link with errors to count


def csv_rows(path, drop=("elapsed_s",)):
    with open(path, newline="") as f:
        rows = list(csv.reader(f))
    header = rows[0]
    keep = [i for i, c in enumerate(header) if c not in drop]
    return [[r[i] for i in keep] for r in rows]


# -- grid parsing ---------------------------------------------------------------------
def test_ranges_include_stop_and_round():
    g = Grid.parse(["channel.loss_db=10:30:5", "noise.rj_ui=0:0.03:0.01"])
    assert g.keys == ("channel.loss_db", "noise.rj_ui")
    assert len(g) == 5 * 4
    pts = list(g)
    assert [p["channel.loss_db"] for p in pts[::4]] == [10.0, 15.0, 20.0, 25.0, 30.0]
    assert [p["noise.rj_ui"] for p in pts[:4]] == [0.0, 0.01, 0.02, 0.03]  # last fastest


def test_values_lists_mixed_and_typed():
    g = parse_specs([("grid", "ffe.taps=24:8:-8,32")])
    assert [p["ffe.taps"] for p in g] == [24, 16, 8, 32]
    assert all(type(p["ffe.taps"]) is int for p in g)
    g = Grid.parse(["link.precoding=true,false", "link.pattern=prbs13,qprbs13"])
    assert list(g)[0] == {"link.precoding": True, "link.pattern": "prbs13"}
    g = Grid.parse(["tx.ffe=[0, 0.9, -0.1],[0.0, 0.8, -0.2]"])
    assert [p["tx.ffe"] for p in g] == [[0.0, 0.9, -0.1], [0.0, 0.8, -0.2]]
    g = Grid.parse(["channel.loss_db=20,2.5e1"])
    assert [p["channel.loss_db"] for p in g] == [20.0, 25.0]


def test_zip_is_one_axis_in_command_line_order():
    g = parse_specs([("zip", "ffe.taps=8,16,24"), ("grid", "channel.loss_db=20,30"),
                     ("zip", "ffe.pre=1,2,3")])
    assert len(g) == 6
    assert [ax.keys for ax in g.axes] == [("ffe.taps", "ffe.pre"), ("channel.loss_db",)]
    assert list(g)[:3] == [{"ffe.taps": 8, "ffe.pre": 1, "channel.loss_db": 20.0},
                           {"ffe.taps": 8, "ffe.pre": 1, "channel.loss_db": 30.0},
                           {"ffe.taps": 16, "ffe.pre": 2, "channel.loss_db": 20.0}]


BAD = [
    ("channel.loss=1,2", "unknown config key channel.loss"),
    ("chanel.loss_db=1,2", "unknown config section [chanel]"),
    ("loss_db=1,2", "expected section.key"),
    ("channel.loss_db", "expected section.key=VALUES"),
    ("channel.loss_db=", "no values"),
    ("channel.loss_db=10:90:10", "channel.loss_db = 70.0 is not allowed"),
    ("channel.loss_db=30:10:5", "empty range"),
    ("channel.loss_db=10:20:0", "STEP must not be 0"),
    ("channel.loss_db=10:20", "START:STOP:STEP"),
    ("channel.loss_db=10:x:1", "STOP 'x' is not a number"),
    ("channel.loss_db=0:60:0.0001", "at most 100,000"),
    ("ffe.taps=4:10:0.5", "ffe.taps = 4.5 is not allowed"),
    ("channel.loss_db=10,,20", "empty value"),
    ("channel.loss_db=20,20.0", "repeated"),
    ("channel.model=loss,cable", "channel.model = 'cable' is not allowed"),
    ("tx.ffe=[0, 0.9", "unbalanced"),
]


@pytest.mark.parametrize("spec, words", BAD)
def test_bad_grids_raise_one_line(spec, words):
    with pytest.raises(ConfigError) as err:
        Grid.parse([spec])
    assert words in str(err.value)
    assert "\n" not in str(err.value)


def test_grid_level_errors():
    with pytest.raises(ConfigError, match="swept twice"):
        Grid.parse(["ffe.taps=8,16", "ffe.taps=24"])
    with pytest.raises(ConfigError, match="same length: ffe.taps has 2, ffe.pre has 3"):
        Grid.parse(zips=["ffe.taps=8,16", "ffe.pre=1,2,3"])
    with pytest.raises(ConfigError, match="empty grid"):
        Grid.parse([])


@pytest.mark.parametrize("argv, words", [
    (["--grid", "channel.loss_db=10:90:10"], "channel.loss_db = 70.0 is not allowed"),
    (["--grid", "foo.bar=1"], "unknown config section [foo]"),
    (["--grid", "channel.loss_db=1:2:-1"], "empty range"),
    (["--zip", "ffe.taps=8,16", "--zip", "ffe.pre=1"], "same length"),
    ([], "empty grid"),
])
def test_cli_grid_errors_exit_2_with_one_line(argv, words, tmp_path, capsys):
    out = tmp_path / "r.csv"
    assert cli_main(["sweep", *argv, "--out", str(out)]) == 2
    err = capsys.readouterr().err
    assert err.startswith("serdes: error: ") and err.count("\n") == 1
    assert words in err
    assert not out.exists()


def test_cli_swept_missing_file_exits_2_before_any_point(tmp_path, capsys, monkeypatch):
    """A swept channel.file naming no file is refused with one line before any point
    runs (it was an error row among the others, found when the sweep ended); with a
    scheduler it is not checked here (the workers may see other files)."""
    from serdes.sweep.runner import SweepSummary

    real = tmp_path / "a.s4p"
    real.write_text("# Hz S RI R 50\n")
    monkeypatch.chdir(tmp_path)
    out = tmp_path / "r.csv"
    argv = ["sweep", "--set", "channel.model=touchstone", "--set", "channel.file=a.s4p",
            "--zip", "channel.file=a.s4p,sub/b.s4p", "--zip", "ffe.taps=8,12",
            "--workers", "0", "--out", str(out)]
    assert cli_main(argv) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "channel.file (swept) = 'sub/b.s4p': file not found" in err
    assert str(tmp_path) in err and not out.exists()
    called = []

    def fake_sweep(*args, **kwargs):
        called.append(kwargs["scheduler"])
        return SweepSummary(out=out, points=0, skipped=0, ran=0, errors=0, elapsed_s=0.0)

    monkeypatch.setattr("serdes.sweep.run_sweep", fake_sweep)
    assert cli_main(argv[:-4] + ["--scheduler", "tcp://127.0.0.1:9", "--out", str(out)]) == 0
    assert called == ["tcp://127.0.0.1:9"]


def test_cli_other_errors_exit_2(tmp_path, capsys):
    args = ["sweep", "--grid", "channel.loss_db=20"]
    assert cli_main([*args, "--out", str(tmp_path / "r.txt")]) == 2
    assert "must end in .csv or .parquet" in capsys.readouterr().err
    assert cli_main([*args, "--out", str(tmp_path / "no" / "r.csv")]) == 2
    assert "does not exist" in capsys.readouterr().err
    assert cli_main([*args, "--out", str(tmp_path / "r.csv"), "--workers", "-1"]) == 2
    assert "--workers -1" in capsys.readouterr().err
    (tmp_path / "x.csv").write_text("a,b\n1,2\n")
    assert cli_main([*args, "--out", str(tmp_path / "x.csv")]) == 2
    assert "not a serdes sweep result file" in capsys.readouterr().err


# -- identity and seeds ---------------------------------------------------------------
def test_point_seed_is_order_free_and_distinct():
    a = {"channel.loss_db": 20.0, "ffe.taps": 12}
    b = {"ffe.taps": 12, "channel.loss_db": 20.0}
    assert point_seed(1, a) == point_seed(1, b) and point_id(a) == point_id(b)
    assert point_seed(1, a) != point_seed(2, a)
    assert point_seed(1, a) != point_seed(1, {"channel.loss_db": 20.0, "ffe.taps": 13})
    assert 0 <= point_seed(1, a) < 2 ** 63
    # stable across versions: a result file's seeds must keep their meaning
    assert point_id(a) == point_id({"channel.loss_db": 20, "ffe.taps": 12})
    assert point_id(a) == "754a029617b01d5e"
    assert point_seed(1, a) == 8622698554560011790


def test_run_point_records_errors():
    base = small_config().to_dict()
    row = run_point(base, {"ffe.taps": 2}, sweep="s")  # ffe.pre = 4 >= ffe.taps
    assert row["status"] == "error"
    assert row["message"] == "ffe.pre = 4 must be below ffe.taps = 2"
    assert row["seed"] == point_seed(1, {"ffe.taps": 2})
    assert row["point"] == point_id({"ffe.taps": 2}) and row["sweep"] == "s"


# -- local execution ------------------------------------------------------------------
GRID = ["channel.loss_db=24:30:2", "ffe.taps=2,12"]


@pytest.fixture(scope="module")
def reference(tmp_path_factory):
    """The 8-point GRID run in this process (one worker)."""
    out = tmp_path_factory.mktemp("ref") / "ref.csv"
    s = run_sweep(small_config(), Grid.parse(GRID), out, workers=0, progress=False)
    return out, s


def test_sweep_rows(reference):
    out, s = reference
    assert (s.points, s.ran, s.skipped, s.errors) == (8, 8, 0, 4)
    rows = read_results(out)
    assert rows == s.rows
    assert [(r["channel.loss_db"], r["ffe.taps"]) for r in rows] == \
        [(x["channel.loss_db"], x["ffe.taps"]) for x in Grid.parse(GRID)]
    for r in rows:
        if r["ffe.taps"] == 2:
            assert r["status"] == "error" and "ffe.pre" in r["message"]
            assert r["ber"] is None
            continue
        assert r["status"] == "ok" and r["message"] is None
        assert r["symbols"] > 15000 and r["bits"] == 2 * r["symbols"]
        assert r["ber"] == r["bit_errors"] / r["bits"]
        assert r["ber_ci_lo"] <= r["ber"] <= r["ber_ci_hi"]
        assert r["seed"] == point_seed(1, {"channel.loss_db": r["channel.loss_db"],
                                           "ffe.taps": 12})
        assert 10 < r["snr_db"] < 40 and r["elapsed_s"] > 0
    bers = [r["ber"] for r in rows if r["status"] == "ok"]
    assert bers[-1] > bers[0]  # more loss, more errors
    with open(out) as f:
        header = f.readline().strip().split(",")
    assert header[:3] == ["channel.loss_db", "ffe.taps", "status"]
    assert header[-5:] == ["elapsed_s", "seed", "point", "sweep", "message"]


def test_a_point_is_the_same_in_any_grid_order_or_worker_count(reference, tmp_path):
    """Worker processes (one BLAS thread each): the same numbers to the last bit for one
    or two workers, and whatever the other points of the grid or their order; in this
    process (workers=0) the same counts."""
    one, two = tmp_path / "one.csv", tmp_path / "two.csv"
    s1 = run_sweep(small_config(), Grid.parse(GRID), one, workers=1, progress=False)
    grid = Grid.parse(["ffe.taps=12,2", "channel.loss_db=30,26,22"])  # swapped, others
    s2 = run_sweep(small_config(), grid, two, workers=2, progress=False)
    assert (s1.ran, s2.ran) == (8, 6)
    drop = ("elapsed_s", "sweep")  # the sweep id names the grid's keys and base config
    by_point = {r["point"]: {k: v for k, v in r.items() if k not in drop}
                for r in read_results(two)}
    ref = [{k: v for k, v in r.items() if k not in drop} for r in read_results(one)]
    common = [r for r in ref if r["point"] in by_point]
    assert len(common) == 4 and sum(r["status"] == "ok" for r in common) == 2
    for r in common:
        assert by_point[r["point"]] == r
    exact = ("status", "ber", "ber_ci_lo", "ber_ci_hi", "bit_errors", "symbol_errors",
             "symbols", "seed", "point", "message")
    for a, b in zip(read_results(reference[0]), read_results(one)):
        assert {k: a[k] for k in exact} == {k: b[k] for k in exact}
        if a["status"] == "ok":
            assert a["snr_db"] == pytest.approx(b["snr_db"], rel=1e-12)


def test_resume_skips_done_points_and_retry_errors(reference, tmp_path):
    ref_out, _ = reference
    out = tmp_path / "r.csv"
    grid = Grid.parse(GRID)
    # a file holding three of the points (as if interrupted), in another order
    with open(ref_out) as f:
        lines = f.readlines()
    out.write_text(lines[0] + lines[5] + lines[2] + lines[1])
    s = run_sweep(small_config(), grid, out, workers=0, progress=False)
    assert (s.skipped, s.ran, s.errors) == (3, 5, 4)
    assert csv_rows(out) == csv_rows(ref_out)
    # nothing left to do
    s = run_sweep(small_config(), grid, out, workers=0, progress=False)
    assert (s.skipped, s.ran) == (8, 0)
    # error rows again on request (same result: the config is still invalid)
    s = run_sweep(small_config(), grid, out, workers=0, progress=False, retry_errors=True)
    assert (s.skipped, s.ran, s.errors) == (4, 4, 4)
    assert csv_rows(out) == csv_rows(ref_out)


def test_torn_last_row_is_dropped(reference, tmp_path):
    ref_out, _ = reference
    out = tmp_path / "r.csv"
    text = ref_out.read_text()
    lines = text.splitlines(keepends=True)
    out.write_text("".join(lines[:4]) + lines[4][:37])  # a hard kill in mid-write
    assert len(read_results(out)) == 3
    s = run_sweep(small_config(), Grid.parse(GRID), out, workers=0, progress=False)
    assert (s.skipped, s.ran) == (3, 5)
    assert csv_rows(out) == csv_rows(ref_out)


def test_a_file_of_another_sweep_is_refused(reference, tmp_path):
    ref_out, _ = reference
    out = tmp_path / "r.csv"
    out.write_text(ref_out.read_text())
    with pytest.raises(SweepError, match="another sweep"):
        run_sweep(small_config("channel.model='loss'", "noise.rj_ui=0.02"),
                  Grid.parse(GRID), out, workers=0, progress=False)
    with pytest.raises(SweepError, match="another sweep"):
        run_sweep(small_config(), Grid.parse(GRID + ["dfe.taps=1"]), out, workers=0,
                  progress=False)
    # a larger grid of the same sweep is fine: only the new points run
    s = run_sweep(small_config(), Grid.parse(["channel.loss_db=24:30:2", "ffe.taps=2,12,16"]),
                  out, workers=0, progress=False)
    assert (s.skipped, s.ran) == (8, 4)


def test_a_second_sweep_on_the_same_file_is_refused(tmp_path):
    out = tmp_path / "r.csv"
    with ResultFile(out, ["ffe.taps"]):
        with pytest.raises(SweepError, match="being written by another sweep"):
            run_sweep(small_config(), Grid.parse(["ffe.taps=8"]), out, workers=0,
                      progress=False)


def test_in_memory_sweep_and_interrupt(monkeypatch):
    s = run_sweep(small_config(), Grid.parse(["ffe.taps=2,3"]), None, workers=0,
                  progress=False)
    assert s.out is None and [r["status"] for r in s.rows] == ["error", "error"]

    import serdes.sweep.local as runner  # the local executor calls run_point

    calls = []

    def fake(point, **kw):
        calls.append(point)
        if len(calls) == 2:
            raise KeyboardInterrupt
        return run_point(point=point, **kw)

    monkeypatch.setattr(runner, "run_point", fake)
    with pytest.raises(SweepInterrupted) as exc:
        run_sweep(small_config(), Grid.parse(["ffe.taps=2,3,4"]), None, workers=0,
                  progress=False)
    assert exc.value.summary.ran == 1 and exc.value.summary.interrupted


def test_parquet_results(reference, tmp_path):
    pytest.importorskip("pyarrow")
    _, ref = reference
    out = tmp_path / "r.parquet"
    s = run_sweep(small_config(), Grid.parse(GRID), out, workers=0, progress=False)
    drop = ("elapsed_s",)
    strip = lambda rows: [{k: v for k, v in r.items() if k not in drop} for r in rows]  # noqa
    assert strip(read_results(out)) == strip(ref.rows)
    assert strip(s.rows) == strip(ref.rows)
    s = run_sweep(small_config(), Grid.parse(GRID), out, workers=0, progress=False)
    assert (s.skipped, s.ran) == (8, 0)


def test_parquet_flushes_less_often_as_its_rewrites_grow(tmp_path, monkeypatch):
    """A Parquet file is rewritten whole: every 5 s at first, then no more often than ten
    times the last rewrite's time (with a 2 s rewrite: every 20 s), so a sweep of a
    million rows does not spend its time rewriting the file."""
    pytest.importorskip("pyarrow")
    import serdes.sweep.results as results

    clock = [0.0]
    monkeypatch.setattr(results.time, "monotonic", lambda: clock[0])
    real = results.ResultFile._write_parquet
    writes = []

    def slow(self, tmp):        # each rewrite takes 2 s of the fake clock
        writes.append(clock[0])
        real(self, tmp)
        clock[0] += 2.0

    monkeypatch.setattr(results.ResultFile, "_write_parquet", slow)
    rf = results.ResultFile(tmp_path / "r.parquet", ["ffe.taps"])
    rf.open()
    rf.start(["ffe.taps", "status", "point", "sweep"])   # creates the file: 0 -> 2 s
    for i in range(60):                                    # a row a second, 2 .. 61 s
        clock[0] = 2.0 + i
        rf.append({"ffe.taps": i, "status": "ok", "point": f"{i:x}", "sweep": "s"})
    rf.close()
    assert writes[:3] == [0.0, 22.0, 44.0]    # 20 s after each 2 s rewrite ended
    assert writes[-1] == 61.0 and len(writes) == 4          # and when it closes
    assert [r["ffe.taps"] for r in results.read_results(tmp_path / "r.parquet")] == list(
        range(60))


# -- the command ------------------------------------------------------------------------
def test_cli_json_and_summary(reference, tmp_path, capsys):
    ref_out, _ = reference
    out = tmp_path / "r.csv"
    argv = ["sweep", "--set", SMALL[0], *sum((["--set", o] for o in EARLIER_DEFAULT), []),
            *sum((["--grid", g] for g in GRID), []), "--out", str(out), "--workers", "0"]
    assert cli_main(argv + ["--json"]) == 0
    d = json.loads(capsys.readouterr().out)
    assert (d["points"], d["ran"], d["errors"]) == (8, 8, 4) and len(d["rows"]) == 8
    assert csv_rows(out) == csv_rows(ref_out)
    assert cli_main(argv) == 0
    line = capsys.readouterr().out
    assert line.startswith("sweep: 8 points (0 run now, 8 already in")


def _data_rows(path: Path) -> int:
    try:
        return max(0, path.read_text().count("\n") - 1)
    except FileNotFoundError:
        return 0


def test_killed_half_way_and_resumed_gives_the_same_file(tmp_path):
    """A real `serdes sweep` process stopped by SIGTERM (as a batch scheduler or Ctrl-C
    would), then the same command again: same file as one uninterrupted run."""
    grid = ["channel.loss_db=20:25:1", "ffe.taps=12,16"]  # 12 points
    opts = ["--set", "link.symbols=30000", "--set", "link.target_errors=0"]
    argv = ["sweep", *opts, *sum((["--grid", g] for g in grid), [])]
    full = tmp_path / "full.csv"
    assert cli_main(argv + ["--out", str(full), "--workers", "1", "--no-progress"]) == 0

    out = tmp_path / "cut.csv"
    proc = subprocess.Popen([sys.executable, "-m", "serdes.cli", *argv, "--out", str(out),
                             "--workers", "2"],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        deadline = time.monotonic() + 120
        while _data_rows(out) < 2 and proc.poll() is None and time.monotonic() < deadline:
            time.sleep(0.01)
        proc.send_signal(signal.SIGTERM)
        _, err = proc.communicate(timeout=60)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
    assert proc.returncode == 130, err
    assert "run the same command again to resume" in err
    done = len(read_results(out))
    assert 2 <= done < 12
    assert not list(tmp_path.glob(".*tmp*"))

    assert cli_main(argv + ["--out", str(out), "--workers", "1", "--no-progress"]) == 0
    assert csv_rows(out) == csv_rows(full)


# -- bits and pieces --------------------------------------------------------------------
def test_progress_bar_text():
    class Tty:
        def __init__(self):
            self.text = ""

        def isatty(self):
            return True

        def write(self, s):
            self.text += s

        def flush(self):
            pass

    t = Tty()
    p = Progress(10, done=4, errors=1, stream=t)
    assert p.enabled
    p.update("error")
    p.draw(force=True)
    assert "5/10 points" in t.text and "2 errors" in t.text and "ETA" in t.text
    p.close()
    quiet = Progress(10, stream=open(os.devnull, "w"))
    assert not quiet.enabled


def test_importing_serdes_and_sweep_is_light():
    code = ("import sys, serdes, serdes.sweep, serdes.commands.sweep, serdes.cli;"
            "serdes.cli.build_parser();"
            "bad = [m for m in ('matplotlib', 'dask', 'distributed', 'pyarrow') "
            "if m in sys.modules]; print(bad)")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         check=True).stdout
    assert out.strip() == "[]"


# -- serdes plot ------------------------------------------------------------------------
def synthetic_rows():
    rows = []
    for taps in (8, 16):
        for loss in (20.0, 25.0, 30.0):
            ber = 0.0 if loss == 20.0 else 10 ** (-(40 - loss) / 3 + (taps == 8))
            bits = 200_000
            rows.append({"channel.loss_db": loss, "ffe.taps": taps, "status": "ok",
                         "ber": ber, "ber_ci_lo": ber / 2, "ber_ci_hi": ber * 2 + 1.8e-5,
                         "stat_ber": ber * 0.8 + 1e-9, "snr_db": 40 - loss, "bits": bits})
    rows.append({"channel.loss_db": 35.0, "ffe.taps": 8, "status": "error", "ber": None})
    return rows


def test_plot_curves_draws_waterfalls():
    from matplotlib.figure import Figure

    from serdes.plot.sweep import KP4_BER, curves

    ax = Figure().subplots()
    curves(synthetic_rows(), x="channel.loss_db", y="ber", hue="ffe.taps", ax=ax)
    assert ax.get_yscale() == "log"
    assert any(list(line.get_ydata()) == [KP4_BER, KP4_BER] for line in ax.lines)
    labels = ax.get_legend_handles_labels()[1]
    assert "taps=8" in labels and "taps=16" in labels
    assert "no errors: 95% upper bound" in labels
    assert len(ax.containers) == 2  # one errorbar set per curve
    x, _ = ax.containers[0].lines[0].get_data()
    assert list(x) == [25.0, 30.0]  # the error row and the zero-BER point are not on it

    ax = Figure().subplots()
    curves(synthetic_rows(), x="channel.loss_db", y=["ber", "stat_ber"], hue="ffe.taps",
           ax=ax, threshold=None)
    assert "taps=8, stat_ber" in ax.get_legend_handles_labels()[1]
    ax = Figure().subplots()
    curves(synthetic_rows(), x="channel.loss_db", y="snr_db", where={"ffe.taps": 16}, ax=ax)
    assert ax.get_yscale() == "linear"
    assert list(ax.lines[0].get_ydata()) == [20.0, 15.0, 10.0]


def test_plot_x_axis_found_past_the_keys_zipped_with_the_hue():
    """A sweep of loss x (ffe.taps zipped with dfe.taps): with the hue ffe.taps, the
    x axis is the loss (dfe.taps moves with the hue); a key that varies apart from the
    hue still asks for --x, naming it."""
    from matplotlib.figure import Figure

    from serdes.errors import SerdesError
    from serdes.plot.sweep import curves

    rows = synthetic_rows()
    for r in rows:
        r["dfe.taps"] = {8: 1, 16: 3}[r["ffe.taps"]]
    ax = curves(rows, y="snr_db", hue="ffe.taps", ax=Figure().subplots())
    assert ax.get_xlabel() == "channel.loss_db"
    assert sorted(list(line.get_xdata()) for line in ax.lines) == [[20.0, 25.0, 30.0]] * 2
    ax = curves(rows, y="snr_db", hue="dfe.taps", ax=Figure().subplots())
    assert ax.get_xlabel() == "channel.loss_db"
    rows[0]["dfe.taps"] = 2      # no longer one value per hue value
    with pytest.raises(SerdesError, match=r"varying apart from the hue: channel.loss_db, "
                                          r"dfe.taps"):
        curves(rows, y="snr_db", hue="ffe.taps", ax=Figure().subplots())


@pytest.mark.parametrize("kwargs, words", [
    (dict(x="channel.loss_db"), "also vary in ffe.taps"),
    (dict(), "choose the x axis"),
    (dict(x="channel.loss"), "x channel.loss: no such column"),
    (dict(x="channel.loss_db", hue="ffe.taps", y="bler"), "y bler: no such column"),
    (dict(x="channel.loss_db", where={"ffe.taps": 4}), "no rows with status 'ok'"),
])
def test_plot_errors(kwargs, words):
    from matplotlib.figure import Figure

    from serdes.errors import SerdesError
    from serdes.plot.sweep import curves

    with pytest.raises(SerdesError, match=words.replace("(", r"\(")):
        curves(synthetic_rows(), ax=Figure().subplots(), **kwargs)


def test_a_plot_of_no_drawable_value_is_refused():
    """Rows whose y values are all missing or not finite (a CSV with ber 'nan' or text)
    drew an empty figure and said 'wrote'; one line says why instead. Rows whose BER is
    0 still plot, as the 95 % upper bounds of their intervals."""
    from matplotlib.figure import Figure

    from serdes.errors import SerdesError
    from serdes.plot.sweep import curves

    rows = [{"channel.loss_db": 20.0, "ber": float("nan")}, {"channel.loss_db": 30.0, "ber": "abc"}]
    with pytest.raises(SerdesError, match="no finite positive value of ber to plot in 2 rows"):
        curves(rows, x="channel.loss_db", ax=Figure().subplots())
    zero = [{"channel.loss_db": 20.0, "ber": 0.0, "ber_ci_lo": 0.0, "ber_ci_hi": 1e-5}]
    curves(zero, x="channel.loss_db", ax=Figure().subplots())


def test_cli_plot(reference, tmp_path, capsys):
    ref_out, _ = reference
    png = tmp_path / "ber.png"
    assert cli_main(["plot", str(ref_out), "--x", "channel.loss_db", "--y", "ber",
                     "--hue", "ffe.taps", "-o", str(png)]) == 0
    assert png.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    assert capsys.readouterr().out.strip() == f"wrote {png}"
    # the only swept key that varies among the ok rows is the default x
    assert cli_main(["plot", str(ref_out), "-o", str(tmp_path / "b.svg")]) == 0
    assert (tmp_path / "b.svg").read_text().lstrip().startswith("<?xml")
    capsys.readouterr()
    assert cli_main(["plot", str(ref_out), "--x", "ffe.tap"]) == 2
    err = capsys.readouterr().err
    assert err.startswith("serdes: error: x ffe.tap: no such column") and err.count("\n") == 1
    assert cli_main(["plot", str(tmp_path / "none.csv")]) == 2
    assert "no result file" in capsys.readouterr().err


# -- worker count -----------------------------------------------------------------------
def test_workers_are_capped_at_cores_and_memory(monkeypatch):
    import serdes.sweep.local as runner

    monkeypatch.setattr(runner, "default_workers", lambda: 2)
    monkeypatch.setattr(runner, "available_memory_bytes", lambda: 16 << 30)
    n, note = runner.cap_workers(64)
    assert n == 2 and "--workers 64: starting 2 worker processes (2 cores" in note
    assert runner.cap_workers(2) == (2, None) and runner.cap_workers(1) == (1, None)
    assert runner.cap_workers(None) == (2, None) and runner.cap_workers(0) == (0, None)
    # memory for one worker and a half: one process, whatever the cores
    monkeypatch.setattr(runner, "available_memory_bytes",
                        lambda: runner.WORKER_MEMORY_BYTES * 3 // 2)
    n, note = runner.cap_workers(64)
    assert n == 1 and "starting 1 worker process (" in note and "GB of memory" in note
    n, note = runner.cap_workers(None)
    assert n == 1 and note.startswith("one worker per core: starting 1 worker process")
    monkeypatch.setattr(runner, "available_memory_bytes", lambda: 0)
    assert runner.cap_workers(4)[0] == 1
    monkeypatch.setattr(runner, "available_memory_bytes", lambda: None)
    assert runner.cap_workers(64)[0] == 2


def test_available_memory_is_read():
    from serdes.sweep.local import available_memory_bytes

    mem = available_memory_bytes()
    assert mem is None or mem > 0


def test_cli_workers_64_starts_what_the_machine_has(tmp_path, monkeypatch, capsys):
    import serdes.sweep.runner as runner

    started = []
    real = runner._LocalExecutor

    def recording(workers):  # record the count, run the points here
        started.append(workers)
        return real(0)

    import serdes.sweep.local as local

    monkeypatch.setattr(local, "default_workers", lambda: 2)
    monkeypatch.setattr(runner, "_LocalExecutor", recording)
    argv = ["sweep", "--set", SMALL[0], "--grid", "ffe.taps=8,12,16",
            "--out", str(tmp_path / "r.csv"), "--workers", "64", "--no-progress"]
    assert cli_main(argv) == 0
    err = capsys.readouterr().err
    assert started and started[0] <= 2
    assert err.count("\n") == 1 and "--workers 64: starting" in err


def test_the_same_file_through_a_symlink_is_locked_too(tmp_path):
    real = tmp_path / "real.csv"
    link = tmp_path / "link.csv"
    link.symlink_to(real)
    with ResultFile(real, ["ffe.taps"]):
        with pytest.raises(SweepError, match="being written by another sweep"):
            run_sweep(small_config(), Grid.parse(["ffe.taps=8"]), link, workers=0,
                      progress=False)
    # through the link: rows land in the real file, which stays a file behind the link
    s = run_sweep(small_config(), Grid.parse(["ffe.taps=8,12"]), link, workers=0,
                  progress=False)
    assert s.ran == 2 and link.is_symlink() and len(read_results(real)) == 2
    s = run_sweep(small_config(), Grid.parse(["ffe.taps=8,12"]), real, workers=0,
                  progress=False)
    assert (s.skipped, s.ran) == (2, 0)


def test_a_sweep_where_every_point_failed_exits_1(tmp_path, capsys):
    out = tmp_path / "r.csv"
    # ffe.pre = 4 (the default) needs more than 2 or 3 taps: both points fail
    argv = ["sweep", "--set", SMALL[0], "--grid", "ffe.taps=2,3", "--out", str(out),
            "--workers", "0", "--no-progress"]
    assert cli_main(argv) == 1
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "no point of the sweep succeeded (2 with status error" in err
    assert cli_main(argv + ["--json"]) == 1  # resumed: still nothing succeeded
    assert json.loads(capsys.readouterr().out)["errors"] == 2
    # one good point is enough for exit code 0
    argv[4] = "ffe.taps=3,8"
    assert cli_main(argv[:5] + ["--out", str(tmp_path / "s.csv"), "--workers", "0"]) == 0


def test_a_grid_whose_rows_do_not_fit_is_refused_before_any_point(monkeypatch, tmp_path):
    """The rows of a sweep stay in this process (about 4.4-4.8 KB per point, measured): a
    grid that would need more than 80 % of the available memory is one clear line
    before any point runs (it grew until the machine ran out, a 1e6-point grid ~4.4 GB)."""
    import serdes.sweep.runner as runner

    ran = []
    monkeypatch.setattr(runner, "available_memory_bytes", lambda: 10 * runner.ROW_BYTES)
    monkeypatch.setattr("serdes.sweep.local.run_point", lambda **kw: ran.append(kw))
    grid = Grid.parse(["channel.loss_db=10:29:1"])                     # 20 points
    with pytest.raises(SweepError, match="a grid of 20 points keeps about"):
        runner.run_sweep(Config.default(), grid, tmp_path / "r.csv", workers=0)
    assert not ran and not (tmp_path / "r.csv").exists()
    monkeypatch.setattr(runner, "available_memory_bytes", lambda: 100 * runner.ROW_BYTES)
    runner.check_memory(20)                                          # 20 of 80 fits
