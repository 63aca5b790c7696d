"""The statistical engine with SJ that each FFE tap sees at its own phase: the pulses of
a quadrature row (and of their RJ Gauss-Hermite nodes) re-sampled in one kernel call
give the same numbers as re-sampling them one at a time (the earlier path)."""

import numpy as np
import pytest

from serdes.build import build
from serdes.config import Config
from serdes.engines.stat import StatisticalEngine
from serdes.engines.stat import rj as rj_mod


def _one_at_a_time(system):
    eng = StatisticalEngine(system, jitter_points=4)
    eng._prefetch = lambda offsets: None          # every pulse through _pulse_at
    return eng


@pytest.mark.parametrize("rj_ui", [0.0, 0.01])
def test_batched_resampling_equals_one_at_a_time(rj_ui):
    system = build(Config.default().with_overrides(
        ["noise.sj_ui=0.1", "noise.sj_hz=1e8", f"noise.rj_ui={rj_ui}"]))
    new = StatisticalEngine(system, jitter_points=4)
    assert not new.jitter.quasi_static
    old = _one_at_a_time(system)
    a, b = new.ber(0.0), old.ber(0.0)
    assert a.ber == pytest.approx(b.ber, rel=1e-12)
    np.testing.assert_allclose(a.ber_per_eye, b.ber_per_eye, rtol=1e-12)
    ha, hb = new.bathtub_horizontal(n_phases=2), old.bathtub_horizontal(n_phases=2)
    np.testing.assert_allclose(ha.ber, hb.ber, rtol=1e-12)


def test_moments_many_equals_moments():
    system = build(Config.default())
    eng = StatisticalEngine(system)
    offs = [-0.3, 0.0, 0.125, 0.125 + 1e-14, 0.41]
    got = eng.rj.moments_many(offs)
    fresh = rj_mod.RandomJitterModel(eng.pulse, eng.w, eng.d, eng.levels, eng.rj_ui)
    for o, g in zip(offs, got):
        ref = fresh.moments(o)
        for x, y in zip(g, ref):
            np.testing.assert_array_equal(x, y)
