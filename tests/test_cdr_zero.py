"""The MM detector's zero (the calibration's ``mm_zero_ui``: where ``cdr.lock = 'mm'``
locks, and what `serdes run` reports). The secant from the pulse peak stops after 4
steps; on the IEEE KR thrus it ended far from the zero (DPO_4in: -0.318 UI against the
S-curve's -0.137, so `cdr.lock = 'mm'` was refused for a negative detector gain) or at
the span's end (DPO_12in: "+0.450 UI"). Where the secant fails the span is scanned and
the bracketing step bisected; a span with no falling zero says so."""

from __future__ import annotations

import math

import numpy as np
import pytest

from serdes.build import build
from serdes.commands.run import _cdr_line
from serdes.config import Config
from serdes.engines.cdr import ZERO_SPAN_UI, CdrFrontEnd, _falling_zero
from serdes.engines.cdr_stat import response_for
from serdes.errors import ConfigError

KR = "ieee8023ck_KR_ortho_tracy_3ck_02_0119"


def test_falling_zero_of_known_curves():
    """The falling zero nearest the peak, to 1e-5 UI; a rising zero is not one; none
    within the span is NaN."""
    assert _falling_zero(lambda x: -(x + 0.2)) == pytest.approx(-0.2, abs=1e-5)
    # falling zeros at -0.4 and +0.1 (rising at -0.15 and 0.35): the one nearer the peak
    assert _falling_zero(lambda x: -math.sin(4 * math.pi * (x - 0.1))) == pytest.approx(
        0.1, abs=1e-5)
    assert math.isnan(_falling_zero(lambda x: x - 0.1))          # rising only
    assert math.isnan(_falling_zero(lambda x: 0.05 + x * x))     # no zero


def _zero_of_the_s_curve(system, front) -> float:
    """The falling zero of the raw detector mean from the loop model's S-curve (its own
    measurement on its own grid), interpolated: the reference."""
    r = response_for(system, front)
    raw = r.s + front.cal.bias
    sel = np.abs(r.grid) <= ZERO_SPAN_UI
    g, x = r.grid[sel], raw[sel]
    i = np.nonzero((x[:-1] > 0) & (x[1:] <= 0))[0]
    k = i[np.argmin(np.abs(g[i]))]
    return float(g[k] - x[k] * (g[k + 1] - g[k]) / (x[k + 1] - x[k]))


@pytest.mark.parametrize("thru", ["DPO_4in_Meg7_THRU.s4p", "DPO_12in_Meg7_THRU.s4p"])
def test_mm_zero_of_the_ieee_kr_thrus(channels_dir, thru):
    system = build(Config.default().with_overrides(
        ["cdr.mode=mm", "channel.model=touchstone", f"channel.file={channels_dir / KR / thru}"]))
    front = CdrFrontEnd(system.link, 1, system.cdr, system.tx_jitter)
    want = _zero_of_the_s_curve(system, front)
    assert -0.2 < want < -0.1
    assert front.cal.mm_zero_ui == pytest.approx(want, abs=0.01)


def test_mm_lock_runs_on_the_kr_thru_at_its_zero(channels_dir):
    """cdr.lock = 'mm' on DPO_4in locks at the detector's zero (it was refused)."""
    from serdes.engines.run import simulate

    system = build(Config.default().with_overrides(
        ["cdr.mode=mm", "cdr.lock=mm", "channel.model=touchstone",
         f"channel.file={channels_dir / KR / 'DPO_4in_Meg7_THRU.s4p'}"]))
    front = CdrFrontEnd(system.link, 1, system.cdr, system.tx_jitter)
    assert front.cal.kpd > 0 and front.cal.lock_ui == front.cal.mm_zero_ui
    res = simulate(system, symbols=200_000, target_errors=0)
    assert res.cdr["lock_symbols"] is not None
    assert res.cdr["phase_mean_ui"] == pytest.approx(front.cal.mm_zero_ui, abs=0.02)


def test_no_zero_is_said_and_refused_for_the_mm_lock(monkeypatch):
    """A detector whose mean never falls through zero in the span: the summary says so
    (it printed the span's end as the zero), and cdr.lock = 'mm' is one ConfigError."""
    import serdes.engines.cdr as ec

    system = build(Config.default().with_overrides(["cdr.mode=mm", "cdr.lock=mm"]))
    monkeypatch.setattr(ec.CdrFrontEnd, "_open_loop",
                        lambda self, a, tau, w, phase: np.full(1000, 0.3 + phase))
    with pytest.raises(ConfigError, match="^cdr.lock = 'mm': the MM detector's S-curve "
                                          "has no falling zero"):
        CdrFrontEnd(system.link, 1, system.cdr, system.tx_jitter)
    line = _cdr_line({"mode": "mm", "model": {"bandwidth_hz": 4e6, "peaking_db": 2.0},
                      "pd_zero_ui": None, "mm_lock_ui": None, "lock_symbols": None})
    assert "no MM zero within +-0.45 UI of the peak" in line
