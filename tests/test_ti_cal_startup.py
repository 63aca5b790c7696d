"""The background calibration's start-up: the gain LMS waits for its power average, and
the skew trims stay within the lanes' delay-line range, which the front end's pulse rows
cover (no sampling instant is extrapolated from the rows)."""

import numpy as np
import pytest

from serdes.build import build
from serdes.config import Config
from serdes.dsp import ti_cal
from serdes.dsp.ti_cal import CalSettings, TiCalibration
from serdes.engines.run import simulate
from serdes.tiadc import lanes as lanes_mod
from serdes.tiadc.model import TiAdc

UI = 1 / 53.125e9
# the README's calibrated 64-lane example (skew 0.3 ps rms, a 20 mV ripple tone)
EXAMPLE = ["adc.lanes=64", "adc.skew_rms_s=0.3e-12", "supply.ripple_mv=[20]",
           "supply.ripple_hz=[1e7]", "supply.delay_ps_per_mv=0.5", "adc_cal.enabled=true",
           "link.target_errors=0"]


def test_gain_lms_does_not_collapse_while_the_power_average_warms_up():
    """64 equal lanes, white PAM4 at 0.1 V: after one chunk the gains hold their LMS
    misadjustment, sqrt(mu_g var(x^2) / (2 P^2)) = 0.0126 per lane (var(x^2) / P^2 = 0.64
    for PAM4); a power average started from zero used to halve every gain in the first
    samples (mean 0.97, rms 0.07 after the chunk)."""
    adc = TiAdc(bits=0, fullscale_v=0.5, lanes=64)
    cal = TiCalibration(adc, CalSettings(settle_symbols=4_800_000), UI)
    g = np.random.default_rng(8)
    x = 0.1 * np.array([-1.0, -1 / 3, 1 / 3, 1.0])[g.integers(0, 4, 1 << 16)]
    cal(x, 0)
    c = cal.gains
    misadjust = np.sqrt(5e-4 * 0.64 / 2)
    assert abs(np.mean(c) - 1) < 3 * misadjust / np.sqrt(64)
    # the rms over 64 lanes has a relative spread of ~1 / sqrt(128): 1.6x is > 6 sigma
    assert np.sqrt(np.mean((c - 1) ** 2)) < 1.6 * misadjust


def test_trims_are_held_within_the_delay_line_range():
    adc = TiAdc(bits=0, fullscale_v=0.5, lanes=16, skews_s=np.linspace(-1e-12, 1e-12, 16))
    cal = TiCalibration(adc, CalSettings(), UI)
    span = adc.trim_range_s(UI)
    assert span == pytest.approx(2e-12 + 0.25 * UI)
    cal._esum[:] = 50.0 * np.cos(2 * np.pi * np.arange(16) / 16)  # a large low-mode error
    cal._ecount[:] = 1.0
    cal._scal[:] = [1.0, 0.01]
    cal._trim(1.0)
    t = adc.skew_trim_s
    assert np.max(np.abs(t)) == pytest.approx(span, rel=1e-12)
    assert np.all(np.abs(t) <= span)
    # no common sampling-phase shift (the loop leaves the common mode alone), and the
    # nearest such point: lanes inside the range moved by one common amount
    assert abs(np.mean(t)) < 1e-9 * span
    g = 50.0 * np.cos(2 * np.pi * np.arange(16) / 16)
    inner = np.abs(t) < span
    want = np.fft.ifft(np.r_[0, np.fft.fft(g)[1:] / (0.01 * cal._lap[1:])]).real * UI
    shift = want[inner] - t[inner]
    assert np.ptp(shift) < 1e-9 * span


def test_no_sampling_instant_leaves_the_rows_during_acquisition(monkeypatch):
    """The example's first 600 k symbols (the trims' acquisition at gain 1, where they
    had reached 11 ps against a 6.1 ps range): every trim within the range and every
    sampling instant inside the lanes' pulse rows."""
    seen = {"below": np.inf, "above": np.inf, "n": 0}
    offsets = lanes_mod.LanePulses.offsets

    def checked(self, k0, n):
        off = offsets(self, k0, n)
        pos = self.phase + off
        seen["below"] = min(seen["below"], float(np.min(pos)) - (self._first + 1))
        seen["above"] = min(seen["above"],
                            self._first + self._rows.shape[1] - 2 - float(np.max(pos)))
        seen["n"] += n
        return off

    monkeypatch.setattr(lanes_mod.LanePulses, "offsets", checked)
    made = []
    init = ti_cal.TiCalibration.__init__

    def keep(self, *a, **k):
        init(self, *a, **k)
        made.append(self)

    monkeypatch.setattr(ti_cal.TiCalibration, "__init__", keep)
    system = build(Config.default().with_overrides(EXAMPLE))
    simulate(system, symbols=600_000)
    assert seen["n"] >= 600_000
    assert seen["below"] >= 0 and seen["above"] >= 0, seen
    cal = made[-1]
    span = cal.adc.trim_range_s(system.link.ui_s)
    trims = np.array(cal.history["skews_s"])
    assert trims.shape[0] >= 9
    assert np.max(np.abs(trims)) <= span * (1 + 1e-12)
    assert np.max(np.abs(np.mean(trims, axis=1))) < 1e-9 * span
