"""A run shorter than its warm-up (LMS training, adaptive RC search, CDR lock, ADC
calibration settling) counts its last decisions, made before the warm-up ended: the
result says how many (``warmup_counted``) and the CLI warns. Before, only the CDR's case
was warned of: an LMS run of 20,000 symbols counted 4,175 decisions of its training
(known data fed back) without a word."""

from __future__ import annotations

import pytest

from serdes.build import build
from serdes.config import Config
from serdes.engines.run import simulate
from serdes.pipeline import ALIGN_WINDOW

WARMUPS = [
    (["eq.mode=lms", "eq.train_symbols=30000"], 30000),
    (["rc.taps=2", "rc.mode=adaptive", "rc.search_symbols=30000",
      "reflections.echo_delay_ui=30"], 30000),
    (["cdr.mode=bb", "cdr.warmup_symbols=30000", "cdr.acquire_symbols=10000"], 30000),
    (["adc.lanes=2", "adc.offset_rms_v=0.005", "adc_cal.enabled=true",
      "adc_cal.settle_symbols=30000"], 30000),
]


@pytest.mark.parametrize("over,warm", WARMUPS, ids=[w[0][0] for w in WARMUPS])
def test_decisions_counted_before_the_warm_up_ended(over, warm):
    system = build(Config.default().with_overrides(
        ["ctle.auto=false", "link.target_errors=0"] + over))
    short = simulate(system, symbols=12_000)           # every counted decision is early
    assert short.symbols > 0 and short.warmup_counted == short.symbols
    edge = simulate(system, symbols=warm + ALIGN_WINDOW // 2)   # the window straddles it
    assert 0 < edge.warmup_counted < edge.symbols
    # the decisions counted end at the run's end: those before the warm-up's end
    assert abs(edge.warmup_counted - (warm - (warm + ALIGN_WINDOW // 2 - edge.symbols))) \
        <= 300   # latencies, a few dozen UI; the RC search starts 256 decisions in
    long = simulate(system, symbols=warm + 3 * ALIGN_WINDOW + 2000)
    assert long.warmup_counted == 0


# (settings, a run too short, a run long enough, what the warning names)
SHORT_CLI = [
    (["eq.mode=lms", "eq.train_symbols=30000", "ctle.auto=false"], 20_000, 50_000,
     ["shorter than eq.train_symbols = 30,000", "before the warm-up"]),
    # the CDR's: only its last ALIGN_WINDOW + max delay decisions (4183 on the default
    # link) are counted, some while the loop locks
    (["cdr.mode=mm", "cdr.warmup_symbols=20000", "cdr.acquire_symbols=10000"], 12_000,
     40_000, ["shorter than cdr.warmup_symbols", "decisions were counted"]),
]


@pytest.mark.parametrize("over,short,enough,said", SHORT_CLI, ids=["lms", "cdr"])
def test_the_cli_warns_of_a_short_run(capsys, over, short, enough, said):
    from serdes.cli import main as cli_main

    base = ["run", "--json", "--no-stat"] + [a for o in over for a in ("--set", o)]
    assert cli_main(base + ["--set", f"link.symbols={short}"]) == 0
    err = capsys.readouterr().err
    assert all(phrase in err for phrase in said), err
    assert cli_main(base + ["--set", f"link.symbols={enough}"]) == 0
    assert "shorter than" not in capsys.readouterr().err


def test_a_sweep_keeps_the_warning_with_the_point(tmp_path, capsys):
    """A sweep point shorter than its warm-up (a grid over cdr.mode at 12,000 symbols
    with a 20,000-symbol lock) keeps `serdes run`'s warning in its message column
    (status ok), and the summary line counts such points; it was a BER of 0 over 4,183
    symbols with nothing said."""
    from serdes.cli import main as cli_main
    from serdes.sweep.results import read_results

    out = tmp_path / "s.csv"
    argv = ["sweep", "--grid", "cdr.mode=off,mm", "--set", "link.symbols=12000",
            "--set", "cdr.warmup_symbols=20000", "--set", "cdr.acquire_symbols=10000",
            "--set", "ctle.auto=false", "--workers", "0", "--no-progress", "-o", str(out)]
    assert cli_main(argv) == 0
    line = capsys.readouterr().out
    rows = {r["cdr.mode"]: r for r in read_results(out)}
    assert rows["off"]["status"] == "ok" and rows["off"]["message"] is None
    mm = rows["mm"]
    assert mm["status"] == "ok" and "shorter than cdr.warmup_symbols = 20,000" in mm["message"]
    assert "1 shorter than their warm-up" in line and "0 with status error" in line
