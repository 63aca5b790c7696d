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
# (with dual-Dirac 0.03 UI 1.8e-3; with the BB loop and it 4.4e-4)
MM_LINK = ["cdr.mode=mm", "channel.loss_db=39.78", "ffe.taps=32", "adc.bits=8",
           "adc.enob=7.2", "noise.rj_ui=0.02", "link.seed=12015", "dfe.taps=0",
           "link.symbols=1000000", "link.target_errors=0"]


@pytest.mark.parametrize("extra, gaussian_low", [
    ([], True),
    # with RX dual-Dirac jitter the loop partly follows its holds: the histogram takes
    # the holds with the phase (taken apart, as independent, it read 1.4x and 2.4x
    # above these counts)
    (["noise.dd_ui=0.03"], True),
    (["cdr.mode=bb", "noise.dd_ui=0.03"], False),
])
def test_the_engine_over_the_loops_recorded_phases_gives_the_count(extra, gaussian_low):
    r = run_report(build(Config.default().with_overrides(MM_LINK + extra)), stat="ber")
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
    if gaussian_low:            # the Gaussian wander misses the MM loop's tail here
        assert r.stat_ber < lo


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


def test_the_phase_histogram_counts_the_symbols_after_the_warm_up_slips_taken_out():
    """PhaseStats.add_histogram over chunks against a direct count: bins of 1/128 UI
    about the lock point, whole-UI slips only relabel the symbols, the UIs before
    ``first`` (the warm-up) left out, chunk boundaries anywhere."""
    import numpy as np

    from serdes.engines.cdr_summary import HIST_STEP_UI, PhaseStats

    rng = np.random.default_rng(3)
    err = rng.normal(0.0, 0.05, 10_000) + rng.integers(-2, 3, 10_000)  # with slips
    stats, k0 = PhaseStats(), -7
    for n in (5, 1000, 3333, 62, 5607):   # k0 - 7 .. 9993 in uneven chunks
        stats.add_histogram(k0, err[k0 + 7:k0 + 7 + n], first=2500)
        k0 += n
    kept = err[2500 + 7:]
    frac = kept - np.round(kept)
    want = {}
    for b in np.rint(frac / HIST_STEP_UI).astype(int):
        want[int(b)] = want.get(int(b), 0) + 1
    assert stats.hist == want and sum(want.values()) == kept.shape[0]
