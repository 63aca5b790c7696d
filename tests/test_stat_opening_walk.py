"""Eye openings without given bathtubs compute only the bathtub points the openings read
(serdes.engines.stat.views._walk): the same heights and widths, bit for bit, as from
the full 801-point vertical and n-phase horizontal bathtubs, for open, partly closed and
fully open (a target the walk never reaches) eyes, per-tap SJ rows, quasi-static SJ and
no jitter."""

import numpy as np
import pytest

from serdes.build import build
from serdes.config import Config
from serdes.engines.stat import StatisticalEngine
from serdes.engines.stat import views

TARGETS = (1e-6, 1e-12, 1e-15, 1e-3, 0.3)   # 0.3: wider than the bathtubs (to the ends)


@pytest.mark.parametrize("overrides", [
    ["noise.sj_ui=0.1", "noise.sj_hz=1e8", "noise.rj_ui=0"],      # per-tap rows; eyes shut at 1e-12
    ["noise.sj_ui=0.05", "noise.sj_hz=1e3", "noise.rj_ui=0"],     # quasi-static SJ
    ["noise.rj_ui=0.01"],                                         # no SJ, RJ mixture
])
def test_walked_openings_equal_the_full_bathtubs(overrides):
    eng = StatisticalEngine(build(Config.default().with_overrides(overrides)), jitter_points=4)
    walked = eng.eye_opening(targets=TARGETS, n_phases=12)
    v = eng.bathtub_vertical(0.0, n_points=801)
    h = eng.bathtub_horizontal(12)
    full = eng.eye_opening(targets=TARGETS, vertical=v, horizontal=h)
    np.testing.assert_array_equal(walked.height, full.height)
    np.testing.assert_array_equal(walked.width_ui, full.width_ui)
    assert np.all(walked.height[-1] > 0.6)           # the 0.3 target: to the bathtub's ends


def test_the_walk_reads_no_more_than_it_needs():
    """A bathtub below the limit on [3, 12]: evaluated up to the first point above it on
    each side (plus the rest of that chunk), the others left at +inf; a closed centre
    reads the centre alone."""
    x = np.arange(16, dtype=float)
    ber = np.where((x >= 3) & (x <= 12), 1e-9, 1e-2)[None, :]
    seen = []

    def evaluate(idx):
        seen.extend(idx.tolist())
        return ber[:, idx]

    vals = views._walk(x, 7.0, 1, 1e-3, evaluate, 2)
    assert sorted(seen) == list(range(1, 14))
    assert np.all(np.isinf(vals[0, [0, 14, 15]]))
    seen.clear()
    vals = views._walk(x, 0.0, 1, 1e-3, evaluate, 2)
    assert seen == [0] and np.isinf(vals[0, 1:]).all()
