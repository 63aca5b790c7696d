"""Several sinusoidal jitter tones in the statistical engine (the supply's ripple tones
through the ADC clock): the quadrature's moments against the closed forms of a sum of
independent sines, one tone as the engine's own quadrature, and the BER with two
supply tones against the counted BER (within 1.5x of the counted 95 % interval)."""

import numpy as np
import pytest

from serdes.build import build
from serdes.config import Config
from serdes.engines.run import simulate
from serdes.engines.stat.jitter import jitter_quadrature
from serdes.tiadc.multitone import multitone_quadrature
from serdes.tiadc.stat import statistical_engine

BASE = ["noise.rj_ui=0", "channel.loss_db=30", "tx.snr_db=21", "ctle.auto=false",
        "ctle.g_dc_db=-19", "ctle.g_dc2_db=-2"]


def _sine_sum_moments(a):
    """E[x^2], E[x^4] of x = sum_t a_t sin(theta_t), theta_t independent uniform:
    E[sin^2] = 1/2, E[sin^4] = 3/8."""
    m2 = a ** 2 / 2
    m4 = float(np.sum(3 * a ** 4 / 8)) + 6 * sum(m2[s] * m2[t] for s in range(a.shape[0])
                                               for t in range(s + 1, a.shape[0]))
    return float(np.sum(m2)), m4


@pytest.mark.parametrize("rad", [1e-5, 0.05])   # quasi-static / moving over the FFE
def test_quadrature_moments_of_a_sum_of_sines(rad):
    a = np.array([0.03, 0.02, 0.01])
    j = multitone_quadrature(24, 64, amps_ui=a, rad_per_ui=rad * np.array([1, 1.37, 2.9]),
                             dd_ui=0.0, points=32)
    assert j.quasi_static == (rad < 1e-3)
    assert j.weights.sum() == pytest.approx(1.0, abs=1e-12)
    m2, m4 = _sine_sum_moments(a)
    for tap in (0, 11, 23):
        x = j.offsets[:, tap]
        assert float(j.weights @ x) == pytest.approx(0.0, abs=1e-4 * np.sqrt(m2))
        # the binned common offsets lose at most the bins' width^2 / 12 of variance
        assert float(j.weights @ x ** 2) == pytest.approx(m2, rel=2e-3)
        assert float(j.weights @ x ** 4) == pytest.approx(m4, rel=5e-3)
    if rad > 1e-3:   # taps see the tones' phases i omega apart: E[x_0 x_i] = sum m2 cos
        i = 7
        want = float(np.sum(a ** 2 / 2 * np.cos(rad * np.array([1, 1.37, 2.9]) * i)))
        got = float(j.weights @ (j.offsets[:, 0] * j.offsets[:, i]))
        assert got == pytest.approx(want, rel=1e-3)


def test_one_tone_is_the_engines_quadrature():
    j = multitone_quadrature(24, 64, amps_ui=[0.0, 0.04], rad_per_ui=[0.0, 0.02],
                             dd_ui=0.01, points=32)
    ref = jitter_quadrature(24, 64, sj_ui=0.04, sj_rad_per_ui=0.02, dd_ui=0.01, points=32)
    np.testing.assert_array_equal(j.offsets, ref.offsets)
    np.testing.assert_array_equal(j.weights, ref.weights)


def test_two_supply_tones_stat_agrees_with_counted():
    over = ["adc.lanes=8", "adc.skew_rms_s=1e-12", "supply.delay_ps_per_mv=1",
            "supply.psrr_db=40", "supply.psrr_pole_hz=1e7", "supply.ripple_hz=[1e8, 2.7e8]",
            "supply.ripple_mv=[10, 6]"]
    system = build(Config.default().with_overrides(BASE + over))
    eng = statistical_engine(system)
    stat = eng.ber().ber
    res = simulate(system, symbols=200_000, target_errors=10 ** 9, taps=eng.taps)
    lo, hi = res.ber_ci
    assert res.bit_errors >= 30
    assert lo <= 1.5 * stat and hi >= stat / 1.5, (res.ber, (lo, hi), stat)
