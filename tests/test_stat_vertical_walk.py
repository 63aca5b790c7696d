"""The eye heights' vertical bathtub points from few evaluations
(serdes.engines.stat.vertical_walk): on a calibrated 8-lane ADC with a supply tone and
RJ (48 of its jitter rows: those that carry its error rate mixtures over the RJ
classes' ISI bins, the rest with the level-only classes, serdes.tiadc.rows), the packed
rows' kernel gives the per-row eye map bit for bit, its two parts are monotone as the
bound needs, and the bisected points give the same heights, bit for bit, as the full
801-point bathtub, reading far fewer points; the horizontal walk's phases take the
rows' per-eye rates from the same packed kernel: the same widths, bit for bit, as the
full horizontal bathtub. One converter with RJ (binned mixtures) and with RJ and TX
DCD (parity mixtures of binned mixtures): the same heights. Every case asserts that
the packed path is the one taken (the point-by-point walk and the mixtures' own
per-eye rates are made to fail)."""

import functools

import numpy as np
import pytest

from serdes.build import build
from serdes.config import Config
from serdes.engines.stat import views
from serdes.engines.stat.distribution import SlicerDistribution
from serdes.engines.stat.rj_joint import BinnedMixture
from serdes.engines.stat.txjitter import ParityMixture
from serdes.engines.stat.vertical_walk import flat_rows, rows_evaluator, vertical_values
from serdes.kernels.stat_tails import RowsWrongSide
from serdes.metrics.opening import opening_from_bathtub
from serdes.tiadc.stat import statistical_engine
from jitter_rows import keep_rows

CAL = ["adc.lanes=8", "adc.skew_rms_s=0.3e-12", "supply.ripple_mv=[20]",
       "supply.ripple_hz=[1e7]", "supply.delay_ps_per_mv=0.5", "adc_cal.enabled=true",
       "noise.rj_ui=0.01"]
# 0.3: wider than the bathtub (to its ends, across the levels' means); 1e-30: shut
TARGETS = (1e-6, 1e-12, 1e-15, 1e-3, 0.3, 1e-30)


@functools.lru_cache(maxsize=None)
def _engine(overrides=tuple(CAL)):
    eng = statistical_engine(build(Config.default().with_overrides(list(overrides))),
                             jitter_points=4)
    return keep_rows(eng, 48)


def _fail(*a, **k):
    raise AssertionError("the rows were not packed")


def _no_fallback(monkeypatch):
    """The point-by-point walks fail: the packed path must be the one taken."""
    monkeypatch.setattr(views, "_walk", _fail)
    monkeypatch.setattr(ParityMixture, "ber_per_eye", _fail)
    monkeypatch.setattr(BinnedMixture, "ber_per_eye", _fail)


@functools.lru_cache(maxsize=None)
def _full():
    eng = _engine()
    return views.bathtub_vertical(eng, 0.0, n_points=801)


def test_packed_rows_give_the_per_row_eye_map_bit_for_bit():
    eng = _engine()
    rows = eng.row_distributions(0.0)
    kinds = [type(d) for _, d in rows]
    assert BinnedMixture in kinds and SlicerDistribution in kinds   # both kinds packed
    assert all(len(d.parts) > 1 for _, d in rows if type(d) is BinnedMixture)
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


def test_mutated_packing_differs():
    """What the bit-for-bit comparison catches: a part's weight dropped, or a mixture's
    own weight taken as 1, moves the eye map far beyond rounding."""
    eng = _engine()
    rows = eng.row_distributions(0.0)
    leaves, opens, closes, gw = flat_rows(rows)
    y = np.linspace(-0.6, 0.6, 25)
    good = rows_evaluator(rows)(y)[0]
    dists = [d for _, d in leaves]
    mb = dists[0].m * dists[0].bits_per_symbol

    def packed(w, g):
        return RowsWrongSide(w, [d.checked_tails() for d in dists], [d.means for d in dists],
                             mb, opens, closes, g)(y)[0]

    w = [x for x, _ in leaves]
    # the ISI bin holding the most probability of the heaviest row dropped
    r = int(np.argmax([wq if type(d) is BinnedMixture else -1.0 for wq, d in rows]))
    start = sum(len(getattr(d, "parts", [d])) for _, d in rows[:r])
    k = start + int(np.argmax([p.pmf.sum() for p in rows[r][1].parts]))
    assert np.max(np.abs(packed(w[:k] + [0.0] + w[k + 1:], gw) / good - 1)) > 1e-3
    assert np.min(np.abs(packed(w, np.ones(len(gw))) / good - 1)) > 1e-3


def test_bisected_heights_equal_the_full_bathtubs(monkeypatch):
    eng = _engine()
    full = _full()
    _no_fallback(monkeypatch)
    dy, vals = views.vertical_walk(eng, 0.0, 801, TARGETS)
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


@pytest.mark.parametrize("overrides, kind", [
    (("noise.sj_ui=0.1", "noise.sj_hz=1e8", "noise.rj_ui=0"), None),  # eyes shut at 1e-12
    (("noise.rj_ui=0.01", "tx.snr_db=22"), BinnedMixture),               # a noisy one
    ((), BinnedMixture),                                                 # the default link
    (("tx_jitter.dcd_ui=0.02",), ParityMixture),     # parity mixture of binned mixtures
])
def test_bisected_heights_single_converter(monkeypatch, overrides, kind):
    from serdes.engines.stat import StatisticalEngine

    eng = StatisticalEngine(build(Config.default().with_overrides(list(overrides))),
                            jitter_points=4)
    rows = eng.row_distributions(0.0)
    if kind is not None:
        assert all(type(d) is kind for _, d in rows)
    if kind is ParityMixture:
        assert all(type(p) is BinnedMixture for _, d in rows for p in d.parts)
    full = views.bathtub_vertical(eng, 0.0, n_points=801)
    with monkeypatch.context() as mp:
        _no_fallback(mp)
        dy, vals = views.vertical_walk(eng, 0.0, 801, TARGETS)
    for e in range(eng.m_levels - 1):
        for t in TARGETS:
            assert (opening_from_bathtub(dy, vals[e], t)
                    == opening_from_bathtub(full.x, full.ber_per_eye[e], t))
    fin = np.isfinite(vals)
    assert np.all(vals[fin] >= full.ber_per_eye[fin])
    assert np.any(vals[fin] == full.ber_per_eye[fin])


def test_walked_openings_equal_the_full_bathtubs_interleaved(monkeypatch):
    eng = _engine()
    targets = TARGETS[:-1]
    full = views.eye_opening(eng, targets, vertical=_full(),
                             horizontal=views.bathtub_horizontal(eng, 12))
    with monkeypatch.context() as mp:   # the horizontal walk's _walk is the packed one's
        mp.setattr(ParityMixture, "ber_per_eye", _fail)
        mp.setattr(BinnedMixture, "ber_per_eye", _fail)
        walked = eng.eye_opening(targets=targets, n_phases=12)
    np.testing.assert_array_equal(walked.height, full.height)
    np.testing.assert_array_equal(walked.width_ui, full.width_ui)
    assert np.all(walked.width_ui[0] > 0.1)   # open at 1e-6: the walk had phases to read
