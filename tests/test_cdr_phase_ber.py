"""The statistical BER over the clock-recovery loop's own recorded phases
(serdes.engines.cdr_phase_ber, the report's ``stat.ber_recovered_phase``).

With the MM loop and little RX RJ the report's statistical BER (the loop's wander taken
as Gaussian) reads 2-8x below the count: the loop's early tail is far heavier than a
Gaussian's (docs/cdr.md, benchmarks/cdr_phase_histogram.py). The engine at each
tracking error the run's loop took, averaged over the run's histogram of them, must
give the count: its interval is the count's own 99 % Clopper-Pearson one, since given
the phases the loop took the symbols' errors are nearly independent (the loop's
excursions, which make counts of different runs scatter more than that, are the
histogram's, shared by both numbers).
"""

import pytest

from serdes.build import build
from serdes.config import Config
from serdes.metrics.ber import clopper_pearson
from serdes.report import run_report

# the fuzz's second MM-loop link (docs/cdr.md): BER about 1e-3, 1733 bit errors in 1e6
MM_LINK = ["cdr.mode=mm", "channel.loss_db=39.78", "ffe.taps=32", "adc.bits=8",
           "adc.enob=7.2", "noise.rj_ui=0.02", "link.seed=12015", "dfe.taps=0",
           "link.symbols=1000000", "link.target_errors=0"]


def test_the_engine_over_the_loops_recorded_phases_gives_the_count():
    r = run_report(build(Config.default().with_overrides(MM_LINK)), stat="ber")
    res = r.counted
    lo, hi = clopper_pearson(res.bit_errors, res.bits, 0.99)
    hist = res.cdr["phase_histogram"]
    over = r.stat["ber_recovered_phase"]
    print(f"\ncounted {res.ber:.3e} [{lo:.3e}, {hi:.3e}] ({res.bit_errors} errors), over the "
          f"recorded phases {over:.3e}, Gaussian wander {r.stat_ber:.3e}; "
          f"{len(hist['counts'])} phase steps")
    assert r.stat["recovered_phase_symbols"] > 0.8 * res.symbols
    assert sum(hist["counts"].values()) == r.stat["recovered_phase_symbols"]
    assert lo <= over <= hi
    assert r.stat_ber < lo      # the Gaussian wander misses the loop's tail here


def test_no_loop_no_recorded_phases():
    r = run_report(build(Config.default().with_overrides(["link.symbols=20000"])),
                   stat="ber")
    assert r.counted.cdr is None and "ber_recovered_phase" not in r.stat


@pytest.mark.parametrize("extra", [["adc.lanes=4", "adc.gain_rms=0.01"]])
def test_an_interleaved_adc_keeps_its_histogram_without_the_average(extra):
    """The lanes' engine costs seconds per phase: the report leaves the average out
    (the histogram is still in ``cdr``)."""
    r = run_report(build(Config.default().with_overrides(
        ["cdr.mode=mm", "link.symbols=300000", *extra])), stat="ber")
    assert r.counted.cdr.get("phase_histogram") and "ber_recovered_phase" not in r.stat
