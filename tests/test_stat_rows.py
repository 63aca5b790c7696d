"""The statistical engine's jitter-quadrature kernels (serdes/kernels/stat_rows.py)
against slow NumPy references (tests/naive.py) and the per-row path they replace: the
same numbers up to floating-point rounding."""

import numpy as np
import pytest

import naive
from serdes.build import build
from serdes.config import Config
from serdes.engines.stat import StatisticalEngine
from serdes.engines.stat import rj as rj_mod
from serdes.errors import ConfigError
from serdes.kernels.stat_rows import rj_classes, row_responses
from serdes.kernels.stat_tails import mixture_tails


@pytest.fixture(scope="module")
def sj_rj():
    return build(Config.default().with_overrides(
        ["noise.sj_ui=0.1", "noise.sj_hz=1e8", "noise.rj_ui=0.01"]))


@pytest.mark.parametrize("rj_ui", [0.0, 0.013])
def test_row_responses_equal_one_tap_at_a_time(rj_ui):
    rng = np.random.default_rng(5)
    m, n_ui, n = 8, 6, 3
    fine = rng.normal(size=m * n_ui)
    offs = rng.uniform(-0.4, 0.4, (2, n))
    w = np.array([0.2, 1.0, -0.3])
    x, gw = rj_mod.hermite_points(5)
    f, jv = row_responses(fine, 3, m, n_ui, offs, w, rj_ui, x, gw)
    rf, rjv = naive.row_responses(fine, 3, m, n_ui, offs, w, rj_ui, x, gw)
    np.testing.assert_allclose(f, rf, rtol=0, atol=1e-14 * np.abs(rf).max())
    np.testing.assert_allclose(jv, rjv, rtol=0, atol=1e-14 * max(np.abs(rjv).max(), 1e-300))
    assert (rj_ui > 0) == bool(np.any(jv > 0))


def test_rj_classes_equal_the_numpy_steps(sj_rj):
    """Group counts equal; sums of V, V^2 to 1e-12 relative; K3 sums (signed) to 1e-12 of
    the sum of |K3|-scale terms, at three offsets."""
    model = StatisticalEngine(sj_rj).rj
    fr = 1.0 - np.asarray(rj_mod._TAIL_EDGES[1:-1])
    nc = len(rj_mod._TAIL_EDGES) - 1
    w3 = model.w2 * np.sqrt(model.w2) * model.wsign
    for off in (0.0, 0.23, -0.4):
        _, dev, wq, jv = model.moments(off)
        lo, hi = model._support(jv)
        call = (model.a, model.idx, dev, lo, hi, wq, model.w2, w3, model.d, 4, fr, nc)
        got, ref = rj_classes(*call), naive.rj_classes(*call)
        np.testing.assert_array_equal(got[0], ref[0])
        np.testing.assert_array_equal(got[4], ref[4])
        for g, r in zip(got[1:3], ref[1:3]):
            np.testing.assert_allclose(g, r, rtol=1e-12)
        scale = np.sqrt(got[2] * got[0]) ** 1.5 + 1e-300        # ~ sum |K3| per group
        assert np.all(np.abs(got[3] - ref[3]) <= 1e-12 * scale + 1e-300)


@pytest.mark.parametrize("rj_ui, quantization, grid_step", [
    (0.0, "uniform", None), (0.01, "uniform", None), (0.0, "gaussian", None),
    (0.0, "uniform", 0.01)])
def test_batched_rows_equal_the_per_row_path(rj_ui, quantization, grid_step):
    """StatisticalEngine.row_distributions (every row's responses from one kernel call;
    without RJ the distributions too) against distribution() row by row, each tap's
    pulse re-sampled on its own; at the nominal phase and 0.3 UI off it (wider ISI)."""
    system = build(Config.default().with_overrides(
        ["noise.sj_ui=0.1", "noise.sj_hz=1e8", f"noise.rj_ui={rj_ui}"]))
    eng = StatisticalEngine(system, jitter_points=4, quantization=quantization)
    assert not eng.jitter.quasi_static
    eng._prefetch = lambda offsets: None          # the per-tap path of response()
    for phase in (0.0, 0.3):
        batch = eng.row_distributions(phase, grid_step=grid_step)
        for (wq, d), (w0, row) in zip(batch, eng.jitter.rows()):
            ref = eng.distribution(phase, row, grid_step=grid_step)
            assert d.approximate == ref.approximate
            assert d.isi_var == pytest.approx(ref.isi_var, rel=1e-12)
            np.testing.assert_allclose(d.noise_var, ref.noise_var, rtol=1e-12)
            assert wq == w0
            assert d.delta == pytest.approx(ref.delta, rel=1e-14)
            # with RJ: the parts of the ISI bins (serdes.engines.stat.rj_joint)
            dp, rp = getattr(d, "parts", [d]), getattr(ref, "parts", [ref])
            assert len(dp) == len(rp)
            for dq, rq in zip(dp, rp):
                assert dq.k0 == rq.k0
                # (rounding in the cursors moves entries 1e-150 below the peak by ~1e-12)
                np.testing.assert_allclose(dq.pmf, rq.pmf, rtol=1e-12,
                                           atol=1e-14 * rq.pmf.max())
                np.testing.assert_allclose(dq.sigmas, rq.sigmas, rtol=1e-12)
            assert d.ber() == pytest.approx(ref.ber(), rel=1e-11)
            np.testing.assert_allclose(d.ber_per_eye(), ref.ber_per_eye(), rtol=1e-11)


def test_decision_matrix_and_eye_rates_share_the_threshold_tails():
    """decision_matrix and ber_per_eye from the one cached set of threshold tails equal
    the point-by-point upper/lower and wrong_side they replace."""
    system = build(Config.default())
    d = StatisticalEngine(system).distribution(0.0)
    t = d.thresholds
    P = d.decision_matrix()
    for i in range(d.m):
        if i < d.m - 1:
            up = np.append(d.upper(i, t[i:]), 0.0)
            np.testing.assert_array_equal(P[i, i + 1:], np.maximum(up[:-1] - up[1:], 0.0))
        if i > 0:
            lo = np.concatenate([[0.0], d.lower(i, t[:i])])
            np.testing.assert_array_equal(P[i, :i], np.maximum(lo[1:] - lo[:-1], 0.0))
    np.testing.assert_array_equal(d.ber_per_eye(), d.wrong_side(t))


@pytest.mark.parametrize("call, message", [
    (lambda: row_responses([1.0] * 16, 0, 4, 4, np.zeros((1, 2)), [1.0]),
     "offsets_ui: 2 columns for 1 FFE taps"),
    (lambda: row_responses([1.0] * 16, 0, 4, 4, np.zeros((1, 1)), [1.0], -0.1),
     "rj_ui: must be >= 0"),
    (lambda: mixture_tails([1.0], 0, 0.1, [0.0], [1], [2], [[0.1]], [[0.0]], [[1.0]]),
     "level: must be in 0..0"),
    (lambda: mixture_tails([1.0], 0, 0.1, [0.0], [1], [0], [[0.1]], [[0.5]], [[1.0]]),
     "betas: must be in [-0.04, 0.04]"),
    (lambda: mixture_tails([1.0], 0, 0.1, [0.0], [1], [0], [[-0.1]], [[0.0]], [[1.0]]),
     "sigmas: every component with a weight needs a finite sigma > 0"),
    (lambda: rj_classes(np.ones(20), np.zeros(20, np.int64), np.ones((1, 4)), 0, 4, [1.0],
                        [1.0], [1.0], 0, 4, [1.5], 2), "fracs: quantile fractions"),
])
def test_wrappers_refuse_bad_arguments_in_one_line(call, message):
    with pytest.raises(ConfigError, match=message.replace("[", r"\[").replace("]", r"\]")):
        call()


def test_an_engine_with_its_own_response_takes_the_rows_one_by_one():
    """An engine class that overrides the response (an interleaved ADC's lanes) is not
    batched: every row goes through its own response()."""
    system = build(Config.default().with_overrides(
        ["noise.sj_ui=0.1", "noise.sj_hz=1e8", "noise.rj_ui=0"]))
    calls = []

    class Own(StatisticalEngine):
        def response(self, offset_ui=0.0, tap_offsets_ui=None):
            calls.append(offset_ui)
            return super().response(offset_ui, tap_offsets_ui)

    eng = Own(system, jitter_points=4)
    rows = eng.row_distributions(0.0)
    assert len(calls) == len(rows) == eng.jitter.weights.shape[0]


@pytest.mark.parametrize("txj", [["tx_jitter.rj_ui=0.03"], ["tx_jitter.dcd_ui=0.08"]])
def test_tx_jitter_rows_are_taken_one_by_one(txj):
    """Per-symbol TX jitter shifts the mean response and convolves its main cursors
    exactly (and DCD mixes two parities) inside distribution(): the batched rows must
    not bypass it, so with TX jitter every row equals distribution() of that row."""
    system = build(Config.default().with_overrides(
        ["noise.sj_ui=0.1", "noise.sj_hz=1e8", "noise.rj_ui=0"] + txj))
    eng = StatisticalEngine(system, jitter_points=4)
    rows = eng.row_distributions(0.0)
    ref = StatisticalEngine(system, jitter_points=4)
    for (w, d), (wr, row) in zip(rows, ref.jitter.rows()):
        dr = ref.distribution(0.0, row)
        assert w == wr
        assert d.ser() == pytest.approx(dr.ser(), rel=1e-12)
