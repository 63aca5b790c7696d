"""Statistical engine speed: a full statistical eye (64 phases x 256 voltage bins, down
to 1e-15 and below) on the default link (64-UI pulse, 24-tap FFE, 1-tap DFE), against a
plain NumPy/SciPy implementation of the same computation in the same run. The NumPy
version implements the RJ classes independent of the ISI (one mixture per level convolved
with the whole ISI pmf), so it is timed against our eye with that model (an engine whose
``_components`` is overridden keeps it); ``test_statistical_eye_numba`` times the default,
the classes joint with the ISI (serdes.engines.stat.rj_joint).

    /tmp/venv/bin/pytest benchmarks/bench_statistical.py --benchmark-only
"""

import numpy as np
import pytest
from scipy import stats

from serdes.engines.stat import StatisticalEngine
from serdes.engines.stat.views import _eye_columns
from serdes.build import build


@pytest.fixture(scope="module")
def engine():
    system = build()
    link = system.link
    assert link.pulse.n_ui == 64
    eng = StatisticalEngine(system)
    eng.eye(n_phases=4, n_bins=32)          # compile the kernels outside the timing
    return eng


class IndependentRj(StatisticalEngine):
    """The engine with the RJ classes independent of the ISI (the joint path runs only
    for the base class's own ``_components``)."""

    def _components(self, *a, **k):
        return super()._components(*a, **k)


@pytest.fixture(scope="module")
def independent():
    eng = IndependentRj(build())
    eng.eye(n_phases=4, n_bins=32)
    return eng


def numpy_eye(eng, n_phases=64, n_bins=256):
    """The same eye map with np.convolve for the ISI and scipy.stats for the tails."""
    lv = eng.levels
    ymax = 1.3 * np.max(np.abs(lv))
    y = np.linspace(-ymax, ymax, n_bins)
    out = np.zeros((n_phases, n_bins))
    for k, ph in enumerate(-0.5 + np.arange(n_phases) / n_phases):
        d = eng.distribution(ph, grid_step=float(y[1] - y[0]))  # grid and sigmas
        f, _ = eng.response(ph)
        values, probs, *_ = eng._components(f, float(d.sigmas.min()), d.delta)
        pmf = np.array([1.0])
        k0 = 0
        for vr, pr in zip(values, probs):     # ISI cursors and ADC quantization
            vr, pr = vr[pr > 0], pr[pr > 0]
            u = vr / d.delta
            fl = np.floor(u).astype(int)
            lo = fl.min()
            comp = np.zeros(fl.max() - lo + 2)
            np.add.at(comp, fl - lo, pr * (1 - (u - fl)))
            np.add.at(comp, fl - lo + 1, pr * (u - fl))
            pmf = np.convolve(pmf, comp)
            k0 += lo
        x = (k0 + np.arange(pmf.size)) * d.delta
        for i, mu in enumerate(d.means):
            above = y > mu
            for w, sig, beta in d.gaussians(i):   # RJ: a mixture of skewed components
                t = (y[:, None] - mu - x[None, :]) / sig
                if beta != 0.0:    # sig (U + beta (U^2 - 1)) > sig t  <=>  U > z
                    disc = np.maximum(1 + 4 * beta * (t + beta), 0.0)
                    z = np.where(disc > 0, 2 * (t + beta) / (1 + np.sqrt(disc)), -0.5 / beta)
                else:
                    z = t
                out[k] += w * np.where(above, stats.norm.sf(z) @ pmf, stats.norm.cdf(z) @ pmf)
    return out / (lv.size * 2)


def test_statistical_eye_numba(benchmark, engine):
    eye = benchmark(engine.eye, 64, 256)
    assert eye.ber.shape == (64, 256) and eye.ber.min() < 1e-5


def test_statistical_eye_numba_independent(benchmark, independent):
    eye = benchmark(independent.eye, 64, 256)
    assert eye.ber.shape == (64, 256) and eye.ber.min() < 1e-5


def test_statistical_eye_numpy_baseline(benchmark, independent):
    engine = independent
    out = benchmark.pedantic(numpy_eye, args=(engine,), rounds=2, iterations=1)
    # the map's own-symbol columns: engine.eye() then takes the minimum with the
    # neighbouring symbols' faded eyes near +-T/2 (as a scope shows them), which the
    # NumPy version does not reproduce
    ymax = 1.3 * float(np.max(np.abs(engine.levels)))
    phases = -0.5 + np.arange(64) / 64
    ref = _eye_columns(engine, phases, np.linspace(-ymax, ymax, 256), 1.0 / 64)[:64]
    ok = ref > 1e-25
    np.testing.assert_allclose(out[ok], ref[ok], rtol=1e-6)


def test_statistical_ber_one_phase(benchmark, engine):
    r = benchmark(engine.ber, 0.0)
    assert 0 < r.ber < 1e-12   # the default link: about 4e-18
