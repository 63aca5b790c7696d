"""The interleaved ADC's per-lane Taylor-2 pulse sum (path "lanes-taylor"): lanes with
static skews whose only random offsets are fast (aperture jitter, link RJ) expand each
sample around its lane's instant, under the pulse engine's error rule. Checked against
the plain formula, against the slow per-tap Lagrange reference within the analytic
bound, and against the exact per-lane rows on a counted run."""

import numpy as np
import pytest

import naive
from serdes.build import build
from serdes.config import Config
from serdes.engines.pulse import TAYLOR_TOL, PulseFrontEnd, taylor_scales
from serdes.engines.run import simulate
from serdes.errors import ConfigError
from serdes.kernels.adc_ti import lane_pulse_sum_taylor
from serdes.tiadc import lanes as lanes_mod
from serdes.tiadc.lanes import lane_fine_pulses

TI64 = ["adc.lanes=64", "adc.offset_rms_v=2e-3", "adc.gain_rms=0.01",
        "adc.skew_rms_s=0.3e-12", "adc.bw_hz=60e9", "adc.bw_rms_rel=0.05",
        "adc.aperture_jitter_s=50e-15", "noise.rj_ui=0", "ctle.auto=false"]
NOISY = ["channel.loss_db=30", "tx.snr_db=21", "ctle.auto=false", "ctle.g_dc_db=-19",
         "ctle.g_dc2_db=-2"]


def _system(*over):
    return build(Config.default().with_overrides(list(over)))


def test_kernel_is_the_plain_formula():
    g = np.random.default_rng(4)
    lanes, n_ui = 5, 7
    taps = g.standard_normal((lanes, 3, n_ui))
    a = g.choice([-3.0, -1, 1, 3], 80)
    d = g.uniform(-0.7, 0.7, 80 - n_ui + 1)
    got = lane_pulse_sum_taylor(a, taps, d, 3)
    ref = []
    for k in range(d.shape[0]):
        t = taps[(3 + k) % lanes]
        w = a[k:k + n_ui]
        ref.append(w @ t[0] + d[k] * (w @ t[1] + 0.5 * d[k] * (w @ t[2])))
    np.testing.assert_allclose(got, ref, rtol=0, atol=1e-12)
    with pytest.raises(ConfigError, match="delta"):
        lane_pulse_sum_taylor(a, taps, d[:-1], 0)
    with pytest.raises(ConfigError, match="taps"):
        lane_pulse_sum_taylor(a, taps[:, :2], d, 0)


def test_aperture_jitter_lanes_stay_within_the_taylor_bound_of_the_slow_reference():
    """64 lanes with bandwidth mismatch, skew and 50 fs aperture jitter: every sample
    within the analytic bound of the slow per-tap Lagrange sum with the lane's own pulse
    at its jittered instant, and the bound within the engine's tolerance."""
    link = _system(*TI64).link
    fe = PulseFrontEnd(link, seed=2)
    assert fe.path == "lanes-taylor"
    lp = fe.lanes
    a_max, sigma = taylor_scales(link)
    assert lp.taylor_bound <= TAYLOR_TOL * sigma
    p, m, n_ui = link.pulse, link.pulse.m, link.pulse.n_ui
    n = 300
    a = np.random.default_rng(6).choice(link.levels, n)
    a_ext = np.concatenate([np.zeros(n_ui - 1), a])
    k0 = 64 * 5 + 3                  # a lane other than 0 first, past the first symbol
    got = lp(a_ext, k0, n)
    pad = int(round(lp.phase - p.phase))
    fine = np.concatenate([np.zeros(pad), p.fine, np.zeros(pad)])
    pulses = lane_fine_pulses(link.adc, fine, m, link.ui_s / m)
    lane = (k0 + np.arange(n)) % 64
    offsets = lp.skew_fine[lane] + lp.deltas(k0, n)
    ref = naive.lane_pulse_sum(a_ext, pulses, m, lp.phase, offsets, n_ui, k0 % 64)
    err = np.abs(got - ref)
    assert np.max(err) <= lp.taylor_bound, (np.max(err), lp.taylor_bound)
    # and the aperture jitter is there: the samples move against the static lanes
    static = lane_pulse_sum_taylor(a_ext, lp._taps, np.zeros(n), k0 % 64)
    assert np.max(np.abs(got - static)) > 20 * np.max(err)


def test_chunks_give_the_same_samples():
    link = _system(*TI64).link
    lp = PulseFrontEnd(link, seed=1).lanes
    n_ui, n = link.pulse.n_ui, 5000
    a_ext = np.concatenate([np.zeros(n_ui - 1),
                            np.random.default_rng(2).choice(link.levels, n)])
    whole = lp(a_ext, 0, n)
    cut = 1234
    parts = np.concatenate([lp(a_ext[:cut + n_ui - 1], 0, cut),
                            lp(a_ext[cut:], cut, n - cut)])
    np.testing.assert_array_equal(whole, parts)


@pytest.mark.parametrize("over", [["noise.rj_ui=0.01"], ["adc_cal.enabled=true"],
                                  ["adc.aperture_jitter_s=1e-12"]])
def test_what_the_expansion_does_not_cover_takes_the_exact_rows(over):
    """Link RJ on top of the aperture jitter (64 mismatched lanes: bound above the
    tolerance), moving trims, a large aperture jitter."""
    fe = PulseFrontEnd(_system(*TI64, *over).link, seed=1)
    assert fe.path == "lanes-exact"


def test_counted_errors_are_those_of_the_exact_rows(monkeypatch):
    """A noisy link (BER ~7e-5): the expansion's deviation (below 1e-7 V here, noise
    2.8 mV rms) is expected to move ~1e-4 decisions in 300 k symbols, so the counts
    agree exactly."""
    system = _system(*TI64, *NOISY, "link.target_errors=0")
    taylor = simulate(system, symbols=300_000)
    assert PulseFrontEnd(system.link, 0).path == "lanes-taylor"
    monkeypatch.setattr(lanes_mod.LanePulses, "_plan_taylor", lambda self, link, lp: False)
    assert PulseFrontEnd(system.link, 0).path == "lanes-exact"
    exact = simulate(system, symbols=300_000)
    assert exact.bit_errors >= 10
    assert (taylor.bit_errors, taylor.symbol_errors) == (exact.bit_errors, exact.symbol_errors)
    assert taylor.snr_db == pytest.approx(exact.snr_db, abs=1e-3)
