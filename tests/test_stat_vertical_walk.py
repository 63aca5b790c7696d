"""The eye heights' vertical bathtub points from few evaluations
(serdes.engines.stat.vertical_walk): on a calibrated 8-lane ADC with a supply tone and
RJ (48 of its jitter rows), the packed rows' kernel gives the per-row eye map bit for
bit, its two parts are monotone as the bound needs, and the bisected points give the
same heights, bit for bit, as the full 801-point bathtub, reading far fewer points; the
horizontal walk's phases take the rows' per-eye rates from the same packed kernel: the
same widths, bit for bit, as the full horizontal bathtub."""

import functools

import numpy as np
import pytest

from serdes.build import build
from serdes.config import Config
from serdes.engines.stat import views
from serdes.engines.stat.jitter import Jitter
from serdes.engines.stat.vertical_walk import rows_evaluator, vertical_values
from serdes.metrics.eye import opening_from_bathtub
from serdes.tiadc.stat import statistical_engine

CAL = ["adc.lanes=8", "adc.skew_rms_s=0.3e-12", "supply.ripple_mv=[20]",
       "supply.ripple_hz=[1e7]", "supply.delay_ps_per_mv=0.5", "adc_cal.enabled=true",
       "noise.rj_ui=0.01"]
# 0.3: wider than the bathtub (to its ends, across the levels' means); 1e-30: shut
TARGETS = (1e-6, 1e-12, 1e-15, 1e-3, 0.3, 1e-30)


@functools.lru_cache(maxsize=None)
def _engine(overrides=tuple(CAL)):
    eng = statistical_engine(build(Config.default().with_overrides(list(overrides))),
                             jitter_points=4)
    J = eng.jitter   # a systematic subset of the quadrature's rows
    k = np.linspace(0, J.weights.shape[0] - 1, 48).astype(int)
    eng.jitter = Jitter(offsets=J.offsets[k], weights=J.weights[k], quasi_static=False)
    return eng


@functools.lru_cache(maxsize=None)
def _full():
    eng = _engine()
    return views.bathtub_vertical(eng, 0.0, n_points=801)


def test_packed_rows_give_the_per_row_eye_map_bit_for_bit():
    eng = _engine()
    rows = eng.row_distributions(0.0)
    ev = rows_evaluator(rows)
    y = np.linspace(-1.2, 1.2, 97)
    ref = np.zeros(y.shape[0])
    for wq, dist in rows:   # bathtub_vertical's sum
        ref += wq * dist.wrong_side(y)
    out = ev(y)
    np.testing.assert_array_equal(out[0], ref)
    np.testing.assert_allclose(out[1] + out[2], out[0], rtol=1e-13, atol=0)
    # between two neighbouring level means: the lower levels' part falls, the rest rises
    means = np.unique(np.concatenate([d.means for _, d in rows]))
    for lo, hi in zip(means[:-1], means[1:]):
        inside = (y > lo) & (y < hi)
        if inside.sum() > 2:
            assert np.all(np.diff(out[1][inside]) <= 0)
            assert np.all(np.diff(out[2][inside]) >= 0)


def test_bisected_heights_equal_the_full_bathtubs():
    eng = _engine()
    full = _full()
    dy, vals = views._vertical_walk(eng, 0.0, 801, TARGETS)
    np.testing.assert_array_equal(dy, full.x)
    for e in range(eng.m_levels - 1):
        for t in TARGETS:
            assert (opening_from_bathtub(dy, vals[e], t)
                    == opening_from_bathtub(full.x, full.ber_per_eye[e], t))
    exact = np.zeros(vals.shape, dtype=bool)
    rows = eng.row_distributions(0.0)
    vv = vertical_values(eng, rows, dy, TARGETS)
    np.testing.assert_array_equal(vv, vals)
    # every finite value is the full bathtub's, or (a gap's bound) above it
    fin = np.isfinite(vals)
    assert np.all(vals[fin] >= full.ber_per_eye[fin])
    exact = fin & (vals == full.ber_per_eye)
    # the heights at 0.3 reach the ends; all but a few dozen points per eye not evaluated
    assert np.all(exact.sum(axis=1) < 120)
    assert np.all(exact[:, [0, -1]])


@pytest.mark.parametrize("overrides", [
    ("noise.sj_ui=0.1", "noise.sj_hz=1e8", "noise.rj_ui=0"),      # eyes shut at 1e-12
    ("noise.rj_ui=0.01", "tx.snr_db=22"),                          # a noisy one
])
def test_bisected_heights_single_converter(overrides):
    from serdes.engines.stat import StatisticalEngine

    eng = StatisticalEngine(build(Config.default().with_overrides(list(overrides))),
                            jitter_points=4)
    dy, vals = views._vertical_walk(eng, 0.0, 801, TARGETS)
    full = views.bathtub_vertical(eng, 0.0, n_points=801)
    for e in range(eng.m_levels - 1):
        for t in TARGETS:
            assert (opening_from_bathtub(dy, vals[e], t)
                    == opening_from_bathtub(full.x, full.ber_per_eye[e], t))


def test_walked_openings_equal_the_full_bathtubs_interleaved():
    eng = _engine()
    targets = TARGETS[:-1]
    walked = eng.eye_opening(targets=targets, n_phases=12)
    full = views.eye_opening(eng, targets, vertical=_full(),
                             horizontal=views.bathtub_horizontal(eng, 12))
    np.testing.assert_array_equal(walked.height, full.height)
    np.testing.assert_array_equal(walked.width_ui, full.width_ui)
    assert np.all(walked.width_ui[0] > 0.1)   # open at 1e-6: the walk had phases to read
