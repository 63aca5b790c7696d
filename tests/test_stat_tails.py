"""The vectorizable Gaussian tail of serdes/kernels/stat_tails.py: Q against mpmath (an
independent arbitrary-precision erfc) and against 0.5 erfc(z / sqrt 2) (the earlier
kernels' Q), and the mixture tail sums against the erfc path they replace (the sum of
kernels.stat.tail_points over the components: the same windows and terms) and the
slow no-cut-off reference: equal up to floating-point rounding."""

import math

import numpy as np
import pytest

import naive
from serdes.build import build
from serdes.config import Config
from serdes.engines.stat import StatisticalEngine
from serdes.errors import ConfigError
from serdes.kernels.stat import tail_points
from serdes.kernels.stat_tails import MixtureTails, gaussian_tail, mixture_tails

# the relative rounding of 0.5 erfc(z / sqrt 2): z / sqrt 2 rounded (up to 1 ulp of an
# argument up to 14) moves Q by z^2 ulp ~ 2e-14 at z = 11.5, plus the libm's own ulp
ERFC_ROUNDING = 3e-14


def test_q_equals_mpmath_to_a_few_ulp():
    mp = pytest.importorskip("mpmath", reason="mpmath (arbitrary precision) not installed")
    mp.mp.dps = 40
    z = np.concatenate([np.linspace(-20.0, 20.0, 1601), [0.0, 1e-9, -1e-9, 8.3, 11.5]])
    got = gaussian_tail(z)
    ref = np.array([float(mp.erfc(mp.mpf(float(x)) / mp.sqrt(2)) / 2) for x in z])
    np.testing.assert_allclose(got, ref, rtol=2e-15, atol=0)


def test_q_equals_erfc_within_its_rounding():
    z = np.random.default_rng(4).uniform(-9.0, 12.0, 20000)
    ref = np.array([0.5 * math.erfc(x * 0.7071067811865476) for x in z])
    np.testing.assert_allclose(gaussian_tail(z), ref, rtol=ERFC_ROUNDING, atol=0)
    # far beyond the cut-offs: tiny, positive, monotone
    far = gaussian_tail(np.array([30.0, 36.9, 40.0, 1e6, -1e6]))
    assert 0.0 < far[2] <= far[1] < far[0] < 1e-190 and far[3] == far[2]
    assert far[4] == 1.0


def _component_sum(pmf, k0, delta, y, lv, up, sig, beta, wts, fn):
    ref = np.zeros(y.size)
    for s, b, w in zip(sig[lv], beta[lv], wts[lv]):
        if w > 0:
            ref += w * fn(pmf, k0, delta, y, s, up, b)
    return ref


@pytest.mark.parametrize("lv", [0, 1])
@pytest.mark.parametrize("up", [True, False])
def test_mixture_tails_equal_the_erfc_path(lv, up):
    """Per point, the weighted sum of tail_points (erfc) over the components: equal to
    the erfc rounding; and the slow reference without cut-offs where the cut-offs (terms
    below 1e-30 of their weight) cannot matter. Skewed and Gaussian components."""
    rng = np.random.default_rng(2)
    pmf = rng.random(60) ** 4
    pmf /= pmf.sum()
    k0, delta = -30, 0.01
    sig = np.array([[0.05, 0.08, 0.03], [0.04, 1.0, 1.0]])
    beta = np.array([[0.0, 0.03, -0.02], [0.01, 0.0, 0.0]])
    wts = np.array([[0.5, 0.3, 0.2], [1.0, 0.0, 0.0]])       # level 1: one component
    y = np.linspace(-0.8, 0.8, 161)
    got = mixture_tails(pmf, k0, delta, y, np.full(y.size, up, np.uint8),
                        np.full(y.size, lv, np.int64), sig, beta, wts)
    ref = _component_sum(pmf, k0, delta, y, lv, up, sig, beta, wts, tail_points)
    np.testing.assert_allclose(got, ref, rtol=ERFC_ROUNDING, atol=0)
    slow = _component_sum(pmf, k0, delta, y, lv, up, sig, beta, wts, naive.tail)
    big = slow > 1e-20
    np.testing.assert_allclose(got[big], slow[big], rtol=1e-9)


def test_a_checked_mixture_gives_the_one_call_values():
    """MixtureTails (the distribution and mixture checked once, then points only, as the
    eye map calls it) returns exactly what one mixture_tails call per point set does,
    call after call, and still refuses points of a level it does not have."""
    rng = np.random.default_rng(5)
    pmf = rng.random(40) ** 3
    pmf /= pmf.sum()
    sig = np.array([[0.05, 0.08], [0.04, 0.06]])
    beta = np.array([[0.0, 0.02], [-0.01, 0.0]])
    wts = np.array([[0.6, 0.4], [0.5, 0.5]])
    tails = MixtureTails(pmf, -20, 0.01, sig, beta, wts)
    for _ in range(3):
        y = rng.uniform(-0.5, 0.5, 7)
        up = rng.integers(0, 2, 7).astype(np.uint8)
        lv = rng.integers(0, 2, 7)
        np.testing.assert_array_equal(tails(y, up, lv),
                                      mixture_tails(pmf, -20, 0.01, y, up, lv, sig, beta, wts))
    with pytest.raises(ConfigError, match="level: must be in 0..1"):
        tails([0.0], [1], [2])


def test_engine_bathtub_with_rj_equals_the_erfc_path(monkeypatch):
    """A vertical bathtub and the BER with random jitter (20 skewed noise components per
    level) through the new tails against the same distributions' tails by tail_points:
    to the erfc rounding, down to 1e-15 and below."""
    system = build(Config.default())            # 0.01 UI RJ
    eng = StatisticalEngine(system)
    dist = eng.distribution(0.0)
    parts = getattr(dist, "parts", [dist])   # the ISI bins (serdes.engines.stat.rj_joint)
    y = np.linspace(-0.2, 0.2, 41)
    got = dist.wrong_side(y)
    ref = np.zeros(y.size)
    for d in parts:
        assert d.mix_sigmas is not None and d.mix_sigmas.shape[1] > 4
        sig, beta, w = d._mixture()
        for i in range(d.m):
            yr = y - d.means[i]
            for s, b, wk in zip(sig[i], beta[i], w[i]):
                if wk > 0:
                    ref += wk * np.where(
                        yr > 0, tail_points(d.pmf, d.k0, d.delta, yr, s, True, b),
                        tail_points(d.pmf, d.k0, d.delta, yr, s, False, b)) / len(parts)
    ref /= dist.m * dist.bits_per_symbol
    assert ref.min() < 1e-15
    np.testing.assert_allclose(got, ref, rtol=ERFC_ROUNDING, atol=0)
