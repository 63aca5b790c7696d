"""The interleaved ADC's statistical BER at a held lane state with random jitter, against
the count, and the interleaved engine's RJ classes against the one-converter engine's.

With random jitter the slicer's jitter variance V and the residual ISI come from the
same symbols; the one-converter engine takes V's classes per ISI bin
(serdes.engines.stat.rj_joint). The interleaved engine took V's classes per level only
(its own discrete part, the lanes' offsets as a point mass, kept it off the joint path),
which reads the tail low wherever the sampling is off the pulse peak (lane skews, a
supply tone's clock jitter): on the calibrated 64-lane example with the trims held at
the true skews less 1.5x the closed-form residual it gave 6.7e-8 / 4.5e-9 (seeds 1 / 2)
against counts of 2.0e-7 / 3.5e-8 (benchmarks/tiadc_held_state.py,
benchmarks/tiadc_cal_tails.py frozen); the joint classes give 1.75e-7 / 1.48e-8."""

import functools

import numpy as np
from scipy import stats

from serdes.build import build
from serdes.config import Config
from serdes.dsp.blocks import GenieDfe
from serdes.dsp.receiver import build_chain
from serdes.engines.run import simulate
from serdes.engines.stat import StatisticalEngine
from serdes.tiadc.stat import InterleavedStatistics, statistical_engine

# 8 lanes, 0.5 ps rms skew held as drawn (calibration on with the trim gain 0: the
# trims stay at zero, the offset and gain LMS run), a 40 mV supply tone at 10 MHz into
# the clock (0.5 ps/mV: 2 ps, 0.11 UI at the lanes), 0.02 UI RJ, random data: BER 5.2e-5,
# where the level-only classes read 3.3x below the joint ones (1.6e-5); counted 5.63e-5
# [4.97e-5, 6.34e-5] (270 errors). With 3 ps rms skew the model reads 1.22x [1.09, 1.36]
# below the count: the classes' shape comes from the common pulse at the row's offset,
# not each lane's (their mean is each lane's)
HELD = ["adc.lanes=8", "adc.skew_rms_s=0.5e-12", "adc_cal.enabled=true", "adc_cal.skew_gain=0",
        "supply.ripple_mv=[40]", "supply.ripple_hz=[1e7]", "supply.delay_ps_per_mv=0.5",
        "noise.rj_ui=0.02", "link.pattern=random"]
COUNT = 2_400_000
# the joint classes' own error against a Monte Carlo of the jittered link is 5-8 %
# (serdes.engines.stat.rj_joint): the count's interval is widened by 1.1x for it
MODEL_TOL = 1.1


def _poisson_interval(k: int, confidence: float = 0.95):
    lo = stats.chi2.ppf((1 - confidence) / 2, 2 * k) / 2 if k > 0 else 0.0
    return lo, stats.chi2.ppf((1 + confidence) / 2, 2 * k + 2) / 2


def test_held_lane_state_with_rj_stat_agrees_with_counted():
    """Counted with the DFE fed the symbols sent (the statistical BER is the DFE's with
    correct decisions; the error propagation is reported apart): the model inside the
    count's 95 % Poisson interval (widened by MODEL_TOL). The level-only classes (the
    old model, 3.3x low) fall far outside it."""
    system = build(Config.default().with_overrides(HELD))
    eng = statistical_engine(system)
    assert isinstance(eng, InterleavedStatistics) and eng.rj is not None
    assert len(eng.phases) == 8 and np.all(eng.skew_ui != 0)   # the skews are held
    stat = eng.ber().ber
    chain = build_chain(system.link, eng.taps, system.receiver, seed=system.run.seed)
    chain.blocks[-1] = GenieDfe(eng.taps.dfe, system.link.levels)
    settle = system.link.adc.calibration.settle_symbols
    res = simulate(system, symbols=settle + COUNT, target_errors=10 ** 9, receiver=chain,
                   taps=eng.taps)
    assert res.symbols >= COUNT - 4096 and res.bit_errors >= 100, res.bit_errors
    lo, hi = (x / res.bits for x in _poisson_interval(res.bit_errors))
    assert lo / MODEL_TOL <= stat <= hi * MODEL_TOL, (res.ber, (lo, hi), stat)


@functools.lru_cache(maxsize=None)
def _alike(extra=()):
    """An 8-lane converter whose lanes are alike (calibrated, the skew loop's residual
    off), on the default link with its 0.01 UI RJ."""
    return build(Config.default().with_overrides(
        ["adc.lanes=8", "adc_cal.enabled=true", "adc_cal.skew_gain=0",
         "adc_cal.mu_offset=0", "adc_cal.mu_gain=0", *extra]))


def test_alike_lanes_give_the_one_converter_engines_rates_off_the_peak():
    """Lanes alike, no calibration noise: the interleaved engine is the one-converter
    engine, joint RJ classes included, on and off the pulse peak (at 0.1 UI off it the
    level-only classes read the BER 2-3x low)."""
    system = _alike()
    ti = InterleavedStatistics(system)
    one = StatisticalEngine(system, ti.taps)
    assert ti._lanes_alike() and ti.rj is not None
    ti.rj.joint_grid_ui = 0.0   # the exact samples (the grid's error: test_tiadc_rj_screen)
    for off in (0.0, 0.1, -0.08):
        a, b = ti.ber(off), one.ber(off)
        assert b.ber > 1e-30
        np.testing.assert_allclose(a.ber, b.ber, rtol=1e-9)
        np.testing.assert_allclose(a.ber_per_eye, b.ber_per_eye, rtol=1e-9)


def test_a_common_lane_offset_moves_the_threshold_as_the_vertical_bathtub():
    """Every lane offset by the same o: the slicer input moves by d = o sum(w), so each
    eye's error rate is the one-converter engine's with its threshold moved by -d (a
    point of its vertical bathtub); the joint RJ classes' ISI bins move with the point
    mass (without that the pmf's points fall into other bins' classes: 2.9 % off here).
    Tolerance: the grid's split of the point mass between two grid points (a third-order
    error; measured at most 1.2e-3 for d = 0.01-0.06)."""
    system = _alike()
    ti = InterleavedStatistics(system)
    one = StatisticalEngine(system, ti.taps)
    d = 0.06                                      # slicer units
    ti.offsets_v = np.full(ti.lanes, d / float(np.sum(ti.w)))
    ti._set_phase(0)
    assert ti._lanes_alike() and abs(ti._offset - d) < 1e-12
    got = ti.ber(0.1).ber_per_eye
    # point 50 of 201 on [-2 d, 2 d] is -d
    vert = StatisticalEngine.bathtub_vertical(one, 0.1, n_points=201, span=4 * d)
    np.testing.assert_allclose(vert.x[50], -d, rtol=1e-12)
    assert np.all(got > 1e-20)
    np.testing.assert_allclose(got, vert.ber_per_eye[:, 50], rtol=5e-3)
