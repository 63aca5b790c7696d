"""The interleaved engine's jitter rows re-sampled in blocks and kept for the phase
(serdes.tiadc.stat.InterleavedStatistics.row_distributions): the same distributions
(to rounding) as the row-by-row path of StatisticalEngine
(each row's lane pulses and skew-residual variance computed when its response is
formed), with and without random jitter; and the eye
openings of a calibrated ADC with a supply tone (rows = tone points x the skew
residual's Gauss-Hermite states) equal those read from the full bathtubs."""

import functools

import numpy as np
import pytest

from serdes.build import build
from serdes.config import Config
from serdes.engines.stat import StatisticalEngine
from serdes.tiadc.stat import InterleavedStatistics, statistical_engine
from jitter_rows import keep_rows

CAL = ["adc.lanes=8", "adc.skew_rms_s=0.3e-12", "supply.ripple_mv=[20]",
       "supply.ripple_hz=[1e7]", "supply.delay_ps_per_mv=0.5", "adc_cal.enabled=true"]
RAW = ["adc.lanes=8", "adc.skew_rms_s=2e-12", "adc.offset_rms_v=2e-3",
       "supply.ripple_mv=[20]", "supply.ripple_hz=[1e7]", "supply.delay_ps_per_mv=0.5"]
TARGETS = (1e-6, 1e-12, 1e-15, 1e-3)


def _one_by_one(eng, offset_ui):
    """The row-by-row path (what row_distributions did before the blocks)."""
    return [(wq, eng.distribution(offset_ui, row)) for wq, row in eng.jitter.rows()]


def _same(rows, ref):
    """Equal to rounding: the blocked rows' responses come from one kernel
    (stat_rows.lane_row_responses, its sums in another order than NumPy's dot), and the
    ISI pmf's far tails (1e-130, products of many cursors) carry that rounding up to
    ~1e-11 relative."""
    assert len(rows) == len(ref)
    for (wa, a), (wb, b) in zip(rows, ref):
        assert wa == wb
        # with RJ: one part per ISI bin (serdes.engines.stat.rj_joint.BinnedMixture)
        pa, pb = getattr(a, "parts", [a]), getattr(b, "parts", [b])
        assert len(pa) == len(pb)
        for x, y in zip(pa, pb):
            assert x.k0 == y.k0 and x.pmf.shape == y.pmf.shape
            np.testing.assert_allclose(x.delta, y.delta, rtol=1e-12, atol=0)
            np.testing.assert_allclose(x.pmf, y.pmf, rtol=1e-9, atol=1e-300)
            np.testing.assert_allclose(x.sigmas, y.sigmas, rtol=1e-12, atol=0)
        np.testing.assert_allclose(a.ber_per_eye(), b.ber_per_eye(), rtol=1e-12, atol=0)


@functools.lru_cache(maxsize=None)
def _system(overrides):
    return build(Config.default().with_overrides(list(overrides)))


def _engine(overrides, rows=None):
    eng = statistical_engine(_system(tuple(overrides)), jitter_points=4)
    assert isinstance(eng, InterleavedStatistics) and not eng.jitter.quasi_static
    return eng if rows is None else keep_rows(eng, rows)


def test_blocked_rows_equal_row_by_row():
    bw = ["adc.bw_hz=60e9", "adc.bw_rms_rel=0.05", "adc.gain_rms=0.02"]   # lane pulses differ
    for overrides, phase in ((CAL + ["noise.rj_ui=0.01"], 0), (RAW + ["noise.rj_ui=0.01"], 3),
                             (CAL + ["noise.rj_ui=0"], 0),
                             (RAW + bw + ["noise.rj_ui=0.01"], 5)):
        new = _engine(overrides, rows=12)
        new.rj_screen = 0.0   # every row the joint RJ classes (tests/test_tiadc_rj_screen.py)
        old = _engine(overrides, rows=12)
        new._set_phase(phase)
        old._set_phase(phase)
        for off in (0.0, 3 / 16):
            _same(new.row_distributions(off), _one_by_one(old, off))
        assert new.row_distributions(3 / 16) is new.row_distributions(3 / 16)   # kept
        new._set_phase(phase + 1)
        old._set_phase(phase + 1)
        _same(new.row_distributions(3 / 16), _one_by_one(old, 3 / 16))   # not the kept


def test_calibrated_openings_equal_the_full_bathtubs():
    eng = _engine(CAL + ["noise.rj_ui=0"])
    assert eng.cal_skew is not None and eng.jitter.weights.shape[0] >= 81
    eng = _engine(CAL + ["noise.rj_ui=0"], rows=60)
    b = eng.ber()
    # the vertical walk and the horizontal walk's centre take the BER's rows (kept)
    assert eng._rows_kept[0][:2] == (0, 0.0)
    walked = eng.eye_opening(targets=TARGETS, n_phases=12)
    ref = _engine(CAL + ["noise.rj_ui=0"], rows=60)
    v = StatisticalEngine.bathtub_vertical(ref, 0.0, n_points=801)
    h = StatisticalEngine.bathtub_horizontal(ref, 12)
    full = ref.eye_opening(targets=TARGETS, vertical=v, horizontal=h)
    np.testing.assert_array_equal(walked.height, full.height)
    np.testing.assert_array_equal(walked.width_ui, full.width_ui)
    assert np.all(walked.width_ui[0] > 0.1) and b.ber > 0


def test_skew_variance_of_many_rows_equals_row_by_row():
    eng = _engine(CAL + ["noise.rj_ui=0"])
    term = eng.cal_skew
    rows = eng.jitter.offsets[::37]
    for off in (0.0, -5 / 16):
        many = term.variance_many(off, rows)
        one = np.array([term.variance(off, r) for r in rows])
        assert np.all(one > 0)
        np.testing.assert_allclose(many, one, rtol=1e-12, atol=0)


def test_kept_rows_follow_the_lanes():
    """Rows are kept only while the lanes' values and models are the same: new skews at
    the same phase and offset give new rows (as the row-by-row path)."""
    eng = _engine(RAW + ["noise.rj_ui=0"], rows=6)
    first = eng.row_distributions(0.0)
    eng.skew_ui = eng.skew_ui * 1.5
    eng._set_phase(0)
    again = eng.row_distributions(0.0)
    assert again is not first
    _same(again, _one_by_one(eng, 0.0))


def test_mismatched_lanes_openings_come_from_every_lane():
    """Mismatched lanes: the openings are those of the bathtubs averaged over the output
    phases (the overlaid eye of all lanes, as the bathtubs and the eye map are), built
    here phase by phase with the one-converter engine's bathtubs; output phase 0's own
    openings differ. The widths equal them bit for bit (each walked phase averages the
    output phases as the whole bathtub does); the heights to rounding (the vertical walk
    sums every output phase's rows, weighted 1 / phases, in one pass instead of
    averaging the phases' sums)."""
    from serdes.metrics.opening import opening_from_bathtub

    targets = (1e-6, 1e-3)
    eng = _engine(RAW + ["noise.rj_ui=0"], rows=8)
    assert not eng._lanes_alike() and len(eng.phases) == 8
    got = eng.eye_opening(targets=targets, n_phases=16)
    vb, hb, own = [], [], []
    for lane in eng.phases:
        eng._set_phase(lane)
        v = StatisticalEngine.bathtub_vertical(eng, 0.0, n_points=801)
        h = StatisticalEngine.bathtub_horizontal(eng, 16)
        vb.append(v.ber_per_eye)
        hb.append(h.ber_per_eye)
        if lane == 0:
            own = StatisticalEngine.eye_opening(eng, targets=targets, n_phases=16)
    eng._set_phase(0)
    vb, hb = np.mean(vb, axis=0), np.mean(hb, axis=0)
    for k, t in enumerate(targets):
        for e in range(eng.m_levels - 1):
            assert got.height[k, e] == pytest.approx(
                opening_from_bathtub(v.x, vb[e], t, centre=0.0), rel=1e-12, abs=0)
            assert got.width_ui[k, e] == opening_from_bathtub(h.x, hb[e], t, centre=0.0)
    assert not (np.array_equal(got.height, own.height)
                and np.array_equal(got.width_ui, own.width_ui))


def test_mismatched_lanes_widths_read_only_the_phases_they_need(monkeypatch):
    """The widths read the averaged horizontal bathtub only where the walk goes: every
    output phase at each phase from the centre outwards to the first one above the
    largest target (the openings equal the whole bathtub's: the test above); an eye
    closed at the centre reads the centre alone. The whole bathtub evaluates all 16
    phases of all 8 output phases."""
    from serdes.engines.stat import views
    from serdes.forked import helpers

    eng = _engine(RAW + ["noise.rj_ui=0"], rows=8)
    seen = []
    real = views.horizontal_per_eye

    def spy(engine, ph):
        seen.extend((engine._phase, float(p)) for p in ph)
        return real(engine, ph)

    monkeypatch.setattr(views, "horizontal_per_eye", spy)
    with helpers(0):   # the walk's other side in this process, seen by the spy
        got = eng.eye_opening(targets=(1e-6, 1e-3), n_phases=16)
        read = {p for _, p in seen}
        assert 2 < len(read) < 16 and np.all(got.width_ui[0] > 0)
        assert sorted(seen) == sorted((int(l), p) for l in eng.phases for p in read)
        assert len(seen) == 8 * len(read)
        seen.clear()
        shut = eng.eye_opening(targets=(1e-200,), n_phases=16)
    assert seen == [(int(l), 0.0) for l in eng.phases]
    assert np.all(shut.width_ui == 0) and np.all(shut.height == 0)
    full = eng.eye_opening(targets=(1e-200,), vertical=eng.bathtub_vertical(0.0, 801),
                           horizontal=eng.bathtub_horizontal(16))
    np.testing.assert_array_equal(shut.width_ui, full.width_ui)


def test_mismatched_lanes_heights_walk_all_phases_rows_at_once(monkeypatch):
    """The eye heights of mismatched lanes bisect the rows of every output phase at once
    (each weighted 1 / phases: their sum is the phases' average); past
    ``WALK_ROWS_BYTES`` each phase's whole bathtub instead (one phase's rows alive at a
    time), which gives the heights of the averaged bathtubs bit for bit; the walk the
    same to rounding."""
    from serdes.engines.stat import views
    from serdes.metrics.opening import opening_from_bathtub
    from serdes.tiadc import stat as ti_stat

    eng = _engine(RAW + ["noise.rj_ui=0"], rows=8)
    rows = 0
    for lane in eng.phases:
        eng._set_phase(lane)
        rows += len(eng.row_distributions(0.0))
    eng._set_phase(0)
    seen = []
    real = views.vertical_walk

    def spy(engine, offset_ui, n_points, targets, rows=None):
        seen.append(None if rows is None else len(rows))
        return real(engine, offset_ui, n_points, targets, rows)

    monkeypatch.setattr(views, "vertical_walk", spy)
    walked = eng.eye_opening(targets=TARGETS, n_phases=16)
    assert seen == [rows] and rows == 8 * len(eng.phases)
    seen.clear()
    monkeypatch.setattr(ti_stat, "WALK_ROWS_BYTES", 0)
    whole = eng.eye_opening(targets=TARGETS, n_phases=16)
    assert seen == []
    v = eng.bathtub_vertical(0.0, 801)
    for k, t in enumerate(TARGETS):
        for e in range(eng.m_levels - 1):
            assert whole.height[k, e] == opening_from_bathtub(v.x, v.ber_per_eye[e], t,
                                                              centre=0.0)
    np.testing.assert_allclose(walked.height, whole.height, rtol=1e-12, atol=0)
    np.testing.assert_array_equal(walked.width_ui, whole.width_ui)
    assert np.all(walked.height[0] > 0)
