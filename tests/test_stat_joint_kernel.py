"""The kernel of the RJ classes joint with the ISI (serdes.kernels.stat_joint) against
its slow NumPy form (tests/naive.py: a stable sort of every sample, NumPy's quantiles,
means and standard deviations): the same samples in every class, so the same numbers to
rounding (the sums' order differs: 1e-12 relative to the largest value)."""

import numpy as np
import pytest

import naive
from serdes.build import build
from serdes.config import Config
from serdes.engines.stat import StatisticalEngine
from serdes.engines.stat import rj as rjm
from serdes.errors import ConfigError
from serdes.kernels import stat_joint as sj
from serdes.kernels.stat_rows import _rj_samples


@pytest.fixture(scope="module")
def eng():
    return StatisticalEngine(build(Config.default()))


def _inputs(eng, off):
    r = eng.rj
    _, dev, wq, jv = r.moments(off)
    lo, hi = r._support(jv)
    w3 = r.w2 * np.sqrt(r.w2) * r.wsign
    return r, dev, wq, lo, hi, w3


@pytest.mark.parametrize("off,other", [(0.0, 0.0), (0.125, 1e-6), (-0.2, 4e-6)])
def test_joint_classes_equal_the_numpy_form(eng, off, other):
    r, dev, wq, lo, hi, w3 = _inputs(eng, off)
    resid = eng._residual(eng.response(off)[0])
    v, k3, lev = r.samples(off)
    # the kernel's own samples: the NumPy convolutions' numbers
    kv, kk3, klev = _rj_samples(r.a, r.idx, dev, lo, hi, wq, r.w2, w3, r.d)
    np.testing.assert_array_equal(klev, lev)
    np.testing.assert_allclose(kv, v, rtol=1e-12)
    np.testing.assert_allclose(kk3, k3, rtol=0, atol=1e-12 * np.abs(k3).max())
    extra = np.sqrt(other) * np.random.default_rng(7).standard_normal(v.shape[0])
    k = np.arange(r.a.shape[0] - v.shape[0], r.a.shape[0])
    x = np.convolve(r.a, resid)[k] + extra
    m = eng.m_levels
    e0, v0, w0, c0 = naive.rj_joint_classes(v, k3, lev, x, m, rjm._TAIL_EDGES)
    e1, v1, w1, c1, mv = sj.rj_joint_classes(
        r.a, r.idx, dev, lo, hi, wq, r.w2, w3, r.d, m, resid, extra, rjm.ISI_QUANTILES,
        rjm._TAIL_EDGES[1:-1], rjm.MIN_CLASS, rjm.MIN_BIN)
    np.testing.assert_allclose(e1, e0, rtol=1e-12, atol=1e-15 * np.abs(x).max())
    np.testing.assert_array_equal(w1, w0)          # the same samples in every class
    np.testing.assert_allclose(v1, v0, rtol=0, atol=1e-12 * v0.max())
    np.testing.assert_allclose(c1, c0, rtol=0, atol=1e-12 * np.abs(c0).max())
    mv0 = np.bincount(lev, weights=v, minlength=m) / np.bincount(lev, minlength=m)
    np.testing.assert_allclose(mv, mv0, rtol=1e-12)


def test_selection_places_every_wanted_rank():
    rng = np.random.default_rng(3)
    for n in (5, 40, 300, 5000):
        val = rng.integers(0, max(2, n // 7), n).astype(np.float64)   # many ties
        ids = rng.permutation(n).astype(np.int64)
        ranks = np.unique(rng.integers(0, n, 6)).astype(np.int64)
        ref = sorted(zip(val.tolist(), ids.tolist()))
        for fn in (sj._select, sj._partition):
            v2, i2 = val.copy(), ids.copy()
            fn(v2, i2, 0, n, ranks)
            for r in ranks:
                assert (v2[r], i2[r]) == ref[r]
                assert sorted(zip(v2[:r].tolist(), i2[:r].tolist())) == ref[:r]
        np.testing.assert_array_equal(sj._order_stats(val, ranks), np.sort(val)[ranks])


def test_merge_close_rows_equal_merge_close():
    rng = np.random.default_rng(5)
    s = 1.0 + 1e-3 * rng.integers(0, 3, (6, 4, 10)) + 1e-5 * rng.random((6, 4, 10))
    b = np.round(rng.uniform(-0.04, 0.04, s.shape), 3)
    w = rng.random(s.shape) * (rng.random(s.shape) > 0.2)
    got = sj.merge_close_rows(s, b, w, rjm.MERGE_REL)
    for i in range(s.shape[0]):
        ref = naive.merge_close(s[i], b[i], w[i], rjm.MERGE_REL)
        for g, r in zip(got, ref):
            np.testing.assert_array_equal(g[i], r)


def test_merged_betas_stay_within_the_merged_ones():
    """Components clipped at beta = 0.04 (BETA_MAX) merge to 0.04, not one ulp above:
    (0.4046 x 0.04 + 0.1985 x 0.04) / 0.6031 rounds to 0.04000000000000001, which the
    tail kernel's argument check refused ('betas: must be in [-0.04, 0.04]', ending a
    run with noise.rj_ui = 0.2 and SJ)."""
    w0, w1 = 0.4045518398215282, 0.19851304450925533
    assert (w0 * 0.04 + w1 * 0.04) / (w0 + w1) > 0.04   # the rounding this guards against
    s = np.array([[1.0, 1.0 + 1e-6, 2.0]])
    b = np.array([[0.04, 0.04, -0.04]])
    w = np.array([[w0, w1, 0.3]])
    got_s, got_b, got_w = sj.merge_close_rows(s, b, w, rjm.MERGE_REL)
    assert got_w[0, 0] == w0 + w1 and got_b[0, 0] == 0.04 and got_b[0, 1] == -0.04
    for g, r in zip((got_s, got_b, got_w), naive.merge_close(s, b, w, rjm.MERGE_REL)):
        np.testing.assert_array_equal(g, r)


def test_merge_close_rows_equal_merge_close_on_a_level_mixture(eng):
    """The level-only classes' mixture as the engines with their own ISI components
    merge it (StatisticalEngine._distribution_of): bit for bit the NumPy form."""
    for off in (0.0, 0.1):
        mean = eng.rj.mean_var(np.broadcast_to(eng.rj.moments(off)[3],
                                               (eng.w.shape[0], eng.pulse.n_ui)))
        mix = eng.rj.mixture(off, mean)
        s, b = rjm.skewed_components(1e-4 + mix.var, mix.k3)
        got = sj.merge_close_rows(s, b, mix.weights, rjm.MERGE_REL)
        ref = naive.merge_close(s, b, mix.weights, rjm.MERGE_REL)
        for g, r in zip(got, ref):
            np.testing.assert_array_equal(g, r)


def test_wrapper_names_the_wrong_argument(eng):
    r, dev, wq, lo, hi, w3 = _inputs(eng, 0.0)
    with pytest.raises(ConfigError, match="extra: needs one value per sample"):
        sj.rj_joint_classes(r.a, r.idx, dev, lo, hi, wq, r.w2, w3, r.d, eng.m_levels,
                            np.ones(3), np.zeros(10), rjm.ISI_QUANTILES,
                            rjm._TAIL_EDGES[1:-1], 8, 16)


def test_joint_grid_samples_are_the_nodes_linear_mix(eng):
    """RandomJitterModel.joint_grid_ui: at a node the classes are the exact ones bit for
    bit; between nodes the kernel's classes are the NumPy form's on each sample's V and
    K3 taken linearly between the nodes' (RandomJitterModel.samples, NumPy
    convolutions); a wrong weight, node or level would fail it."""
    m = eng.m_levels
    r = rjm.RandomJitterModel(eng.pulse, eng.w, eng.d, eng.levels, eng.rj_ui)
    g = rjm.RandomJitterModel(eng.pulse, eng.w, eng.d, eng.levels, eng.rj_ui)
    g.joint_grid_ui = h = rjm.CLASS_GRID_UI
    mean = np.ones(m)
    node = 13 * h
    resid = eng._residual(eng.response(node)[0])
    for a, b in zip(g.joint(node, mean, resid, 1e-6), r.joint(node, mean, resid, 1e-6)):
        np.testing.assert_array_equal(a, b)
    off = 13.3 * h
    resid = eng._residual(eng.response(off)[0])
    va, ka, lev = r.samples(13 * h)
    vb, kb, _ = r.samples(14 * h)
    t = off / h - 13
    v, k3 = (1 - t) * va + t * vb, (1 - t) * ka + t * kb
    gv, gk, glev = g._joint_samples(off)
    np.testing.assert_array_equal(glev, lev)
    np.testing.assert_allclose(gv, v, rtol=1e-12)
    np.testing.assert_allclose(gk, k3, rtol=0, atol=1e-12 * np.abs(k3).max())
    k = np.arange(r.a.shape[0] - v.shape[0], r.a.shape[0])
    x = np.convolve(r.a, resid)[k]
    e0, v0, w0, c0 = naive.rj_joint_classes(v, k3, lev, x, m, rjm._TAIL_EDGES)
    mv = np.bincount(lev, weights=v, minlength=m) / np.bincount(lev, minlength=m)
    edges, var, wts, kk = g.joint(off, mv, resid)   # scaled to their own mean: as sampled
    np.testing.assert_array_equal(wts, w0)
    np.testing.assert_allclose(edges, e0, rtol=1e-12, atol=1e-15 * np.abs(x).max())
    np.testing.assert_allclose(var, v0, rtol=0, atol=1e-12 * v0.max())
    np.testing.assert_allclose(kk, c0, rtol=0, atol=1e-12 * np.abs(c0).max())


def test_given_samples_are_checked(eng):
    r, dev, wq, lo, hi, w3 = _inputs(eng, 0.0)
    v, k3, lev = _rj_samples(r.a, r.idx, dev, lo, hi, wq, r.w2, w3, r.d)
    with pytest.raises(ConfigError, match="samples: need V, K3 and a level"):
        sj.rj_joint_classes(r.a, r.idx, dev, lo, hi, wq, r.w2, w3, r.d, eng.m_levels,
                            np.ones(3), np.zeros(v.shape[0]), rjm.ISI_QUANTILES,
                            rjm._TAIL_EDGES[1:-1], 8, 16, (v[1:], k3[1:], lev[1:]))


@pytest.mark.parametrize("cursors", [1, 3, 4, 7, 87])
def test_isi_sums_each_sample_in_cursor_order(cursors):
    # x[k] = ((resid[0] a[f + k] + resid[1] a[f + k - 1]) + ...) + extra[k], the order of
    # one cursor at a time over the whole sample (NumPy's element-wise steps): the kernel
    # that keeps four cursors' partial sums in a register gives the same numbers, to the bit
    rng = np.random.default_rng(cursors)
    n, first = 1300, cursors + 5        # tiles of 512: two whole, one partial
    a = rng.choice([-3.0, -1.0, 1.0, 3.0], first + n)
    resid = rng.standard_normal(cursors) * np.logspace(0, -3, cursors)
    extra = 1e-3 * rng.standard_normal(n)
    want = np.zeros(n)
    for j in range(cursors):
        want += resid[j] * a[first - j:first - j + n]
    want += extra
    np.testing.assert_array_equal(sj._isi(a, resid, extra, first), want)


@pytest.mark.parametrize("off", [0.0, 0.13])
def test_rj_samples_sum_in_tap_order(eng, off):
    # the samples' V and K3 with every sum in tap order, one tap at a time over the whole
    # sample (NumPy's element-wise steps): the kernel's four taps per pass, to the bit
    r, dev, wq, lo, hi, w3 = _inputs(eng, off)
    a, w2 = r.a, r.w2
    Q, L = dev.shape
    N = a.shape[0] - L + 1
    var, m3 = np.zeros(N), np.zeros(N)
    for q in range(Q):
        y = np.zeros(N)
        for l in range(lo, hi):
            y += a[L - 1 - l:L - 1 - l + N] * dev[q, l]
        y2 = y * y
        var += wq[q] * y2
        m3 += wq[q] * y2 * y
    n = w2.shape[0]
    nv = N - n + 1
    v, k3 = np.zeros(nv), np.zeros(nv)
    for i in range(n):
        v += w2[i] * var[n - 1 - i:n - 1 - i + nv]
    for i in range(n):
        k3 += w3[i] * m3[n - 1 - i:n - 1 - i + nv]
    kv, kk3, _ = _rj_samples(a, r.idx, dev, lo, hi, wq, w2, w3, r.d)
    assert hi - lo >= 5 and n >= 5      # the four-tap passes and the ones left over run
    np.testing.assert_array_equal(kv, v)
    np.testing.assert_array_equal(kk3, k3)
