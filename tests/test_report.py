"""The run report: one pipeline run per report, statistical work only when asked."""

import pytest

from serdes.build import build
from serdes.config import Config
from serdes.report import run_report
from serdes.sweep.point import run_point

SMALL = ["link.symbols=40000", "channel.loss_db=20"]


@pytest.fixture
def counting(monkeypatch):
    """Counts pipeline runs and statistical engines made."""
    import serdes.engines.stat.engine as stat_engine
    import serdes.pipeline as pipeline

    calls = {"runs": 0, "engines": 0}
    run, init = pipeline.Pipeline.run, stat_engine.StatisticalEngine.__init__

    def counted_run(self, *a, **k):
        calls["runs"] += 1
        return run(self, *a, **k)

    def counted_init(self, *a, **k):
        calls["engines"] += 1
        init(self, *a, **k)

    monkeypatch.setattr(pipeline.Pipeline, "run", counted_run)
    monkeypatch.setattr(stat_engine.StatisticalEngine, "__init__", counted_init)
    return calls


def test_report_takes_the_counted_eye_from_the_same_run(counting):
    r = run_report(build(Config.default().with_overrides(SMALL)), stat=True).to_dict()
    assert counting["runs"] == 1          # no second simulation for the counted eye
    assert counting["engines"] >= 1
    assert r["eye"]["counted"]["eyes"] and r["eye"]["statistical"] and r["stat_ber"] > 0


def test_report_without_stat_does_no_statistical_work(counting):
    r = run_report(build(Config.default().with_overrides(SMALL)), stat=False).to_dict()
    assert counting == {"runs": 1, "engines": 0}
    assert "stat_ber" not in r and "statistical" not in r["eye"]
    assert r["eye"]["counted"]["eyes"]     # the counted eye is still there


@pytest.mark.parametrize("threads", [1, 2])
@pytest.mark.parametrize("stat, told", [
    ("ber", ["statistical BER", ""]), (True, ["statistical eye and BER", ""]), (False, [])])
def test_report_tells_when_its_statistical_sections_run(threads, stat, told):
    """``stage`` hears when the statistical sections begin after the count and when they
    end (a terminal's progress line shows their time: they took 3.5 minutes on a
    4-lane ADC with a supply tone after a count of 0.1 s, the bar standing still), in
    one process and in a split run (its forked statistical child)."""
    heard, when = [], []

    def stage(text):
        heard.append(text)

    def progress(simulated, total, *a):
        when.append((len(heard), simulated))

    r = run_report(build(Config.default().with_overrides(SMALL)), stat=stat,
                   threads=threads, stage=stage, progress=progress).to_dict()
    assert heard == told
    assert when and all(n == 0 for n, _ in when)     # the count drew before the stage
    assert ("stat_ber" in r) == bool(stat)


def test_sweep_point_without_stat_does_no_statistical_work(counting):
    base = Config.default().with_overrides(SMALL).to_dict()
    row = run_point(base, {"ffe.taps": 12}, stat=False)
    assert row["status"] == "ok" and counting["engines"] == 0 and "stat_ber" not in row
    row = run_point(base, {"ffe.taps": 12}, stat=True)
    assert row["status"] == "ok" and counting["engines"] >= 1 and row["stat_ber"] > 0


def test_sweep_does_not_import_the_cli():
    import subprocess
    import sys

    code = ("import sys, serdes.sweep, serdes.sweep.point, serdes.report; "
            "print(any(m.startswith('serdes.commands') or m == 'serdes.cli' "
            "for m in sys.modules))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         check=True)
    assert out.stdout.strip() == "False"


def test_report_of_an_interleaved_adc_takes_the_lanes_engine():
    """The report's statistical BER comes from the lanes' engine for an interleaved ADC
    (the BER averaged over its lanes' mismatch, not the single-lane engine's) and from
    the single-lane engine else: each equal to its engine's own BER on the run's taps."""
    from serdes.engines.run import design_equalizer
    from serdes.engines.stat import StatisticalEngine
    from serdes.metrics.eye import taps_of_result
    from serdes.tiadc.stat import InterleavedStatistics

    for extra, cls in ((["adc.lanes=4", "adc.gain_rms=0.05", "adc.skew_rms_s=1e-12"],
                        InterleavedStatistics), ([], StatisticalEngine)):
        system = build(Config.default().with_overrides(SMALL + extra))
        r = run_report(system, stat="ber")
        taps = taps_of_result(design_equalizer(system), r.counted)
        assert r.stat_ber == cls(system, taps).ber(0.0).ber
        if cls is InterleavedStatistics:
            assert r.stat_ber != StatisticalEngine(system, taps).ber(0.0).ber


def test_a_calibrated_interleaved_adc_fed_a_prbs_says_stat_is_for_random_data():
    """The statistical engine's calibration residual is the white-data closed form: a
    calibrated interleaved ADC fed a PRBS pattern says so beside stat (measured: PRBS31
    counts 2.7-4.6x above it); random data, an uncalibrated or a single converter don't."""
    from serdes.commands.run import format_summary
    from serdes.report import CALIBRATION_NOTE

    cal = ["adc.lanes=4", "adc.skew_rms_s=1e-12", "adc_cal.enabled=true",
           "link.symbols=20000"]
    for extra, noted in ((cal, True), (cal + ["link.pattern=random"], False),
                         (["adc.lanes=4", "adc.skew_rms_s=1e-12"], False), ([], False)):
        r = run_report(build(Config.default().with_overrides(SMALL + extra)),
                       stat="ber").to_dict()
        assert (r["stat"].get("calibration_note") == CALIBRATION_NOTE) is noted
        assert (CALIBRATION_NOTE in format_summary(r)) is noted
