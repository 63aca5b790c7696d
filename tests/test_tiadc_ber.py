"""The interleaved ADC in the pulse engine and the statistical engine: BER against skew
and against supply ripple, counted vs statistical (within 1.5x, the counted 95 %
interval), and the per-lane front end against the engine's own paths."""

import numpy as np
import pytest

from serdes.build import build
from serdes.config import Config
from serdes.engines.pulse import PulseFrontEnd
from serdes.engines.run import simulate
from serdes.kernels.jitter import pulse_rows, pulse_sum_rows
from serdes.tiadc.lanes import LanePulses
from serdes.tiadc.model import TiAdc
from serdes.tiadc.stat import InterleavedStatistics, statistical_engine

# a noisy link (BER ~1e-4..1e-3, so 400 k symbols count enough errors), no link RJ, fixed
# CTLE (no search)
BASE = ["noise.rj_ui=0", "channel.loss_db=30", "tx.snr_db=21", "ctle.auto=false",
        "ctle.g_dc_db=-19", "ctle.g_dc2_db=-2"]
SYMBOLS = 400_000


def _compare(over):
    system = build(Config.default().with_overrides(BASE + over))
    eng = statistical_engine(system)
    assert isinstance(eng, InterleavedStatistics)
    stat = eng.ber().ber
    res = simulate(system, symbols=SYMBOLS, target_errors=10 ** 9, taps=eng.taps)
    lo, hi = res.ber_ci
    assert res.bit_errors >= 30, "too few errors to compare"
    assert lo <= 1.5 * stat and hi >= stat / 1.5, (res.ber, (lo, hi), stat)
    return stat, res.ber


def test_ber_vs_skew_stat_agrees_with_counted():
    bers = [_compare(["adc.lanes=8", f"adc.skew_rms_s={s}"])[1] for s in (2.5e-12, 3.5e-12)]
    assert bers[1] > bers[0]


def test_ber_with_offset_and_gain_mismatch_stat_agrees_with_counted():
    _compare(["adc.lanes=8", "adc.skew_rms_s=2e-12", "adc.offset_rms_v=3e-3",
              "adc.gain_rms=0.03"])


def test_ber_vs_supply_ripple_stat_agrees_with_counted():
    sup = ["supply.ripple_hz=[1e8]", "supply.delay_ps_per_mv=1", "supply.psrr_db=40",
           "supply.psrr_pole_hz=1e7"]
    bers = [_compare(sup + [f"supply.ripple_mv=[{a}]"])[1] for a in (15, 22)]
    assert bers[1] > bers[0]


def _link(over):
    return build(Config.default().with_overrides(BASE + over)).link


def test_equal_lanes_reduce_to_the_engines_exact_path():
    """Lanes that sample alike (no skew) with RJ on: the per-lane rows give the engine's
    exact jittered sum."""
    link = _link(["noise.rj_ui=0.03"])
    front = PulseFrontEnd(link, seed=3)
    assert front.path == "exact"
    a = np.random.default_rng(1).choice(link.levels, 3000)
    adc = link.adc
    link.adc = TiAdc(bits=adc.bits, fullscale_v=adc.fullscale_v, enob=adc.enob, lanes=4)
    lanes = LanePulses(link, front.jitter, seed=3)
    a_ext = np.concatenate([np.zeros(link.pulse.n_ui - 1), a])
    got = lanes(a_ext, 0, a.shape[0])
    link.adc = adc
    noise_free = PulseFrontEnd(link, seed=3)
    noise_free.noise_fir = np.zeros(1)     # the RX noise is added after the pulse sum
    ref = noise_free(a, 0)
    np.testing.assert_allclose(got, ref, rtol=0, atol=1e-12)


def test_skewed_lanes_without_jitter_are_the_pulse_sampled_at_the_skew():
    """Two lanes skewed +-0.1 UI, no jitter: the lane FIRs equal the exact kernel of
    serdes.kernels.jitter with the constant offsets +-0.1 UI."""
    link = _link(["adc.lanes=2", "adc.skews_s=[1.5e-12, -1.5e-12]"])
    front = PulseFrontEnd(link, seed=1)
    assert front.path == "lanes-fir"
    p, m, n_ui = link.pulse, link.pulse.m, link.pulse.n_ui
    a = np.random.default_rng(2).choice(link.levels, 2001)
    a_ext = np.concatenate([np.zeros(n_ui - 1), a])
    got = front.lanes(a_ext, 0, a.shape[0])
    pad = 4 * m
    fine = np.concatenate([np.zeros(pad), p.fine, np.zeros(pad)])
    first = p.phase + pad - 2 * m
    rows = pulse_rows(fine, m, n_ui, first, 4 * m)
    off = np.where(np.arange(a.shape[0]) % 2 == 0, 1.5e-12, -1.5e-12) / link.ui_s * m
    ref = pulse_sum_rows(a_ext, rows, first, float(p.phase + pad), off)
    np.testing.assert_allclose(got, ref, rtol=0, atol=1e-12 * np.abs(ref).max())


def test_defaults_build_the_single_converter():
    from serdes.adc import Adc

    link = _link([])
    assert type(link.adc) is Adc
    assert type(statistical_engine(build(Config.default()))).__name__ == "StatisticalEngine"


def test_lane_track_and_hold_delays_the_pulse_by_its_time_constant():
    """A first-order T/H of bandwidth f delays a pulse's centroid by 1 / (2 pi f) and keeps
    its area: a lane at f_l against the nominal f_0 moves it by 1/(2 pi f_l) - 1/(2 pi f_0)."""
    from serdes.tiadc.lanes import lane_fine_pulses

    link = _link(["adc.bw_hz=50e9"])
    adc = TiAdc(bits=7, fullscale_v=0.5, lanes=2, bw_hz=50e9, bws_hz=[40e9, 60e9])
    p, m = link.pulse, link.pulse.m
    fine = np.concatenate([p.fine, np.zeros(64 * m)])
    dt = link.ui_s / m
    t = np.arange(fine.shape[0]) * dt
    for f_l, pl in zip(adc.bws_hz, lane_fine_pulses(adc, fine, m, dt)):
        assert pl.sum() == pytest.approx(fine.sum(), rel=1e-9)
        shift = (t @ pl) / pl.sum() - (t @ fine) / fine.sum()
        assert shift == pytest.approx(1 / (2 * np.pi * f_l) - 1 / (2 * np.pi * 50e9), rel=1e-6)


@pytest.mark.parametrize("label, sets, key", [
    ("4 lanes, precoded", ["link.precoding=true", "adc.enob=5.68", "link.seed=383453"],
     "ber_precoded"),
    # the chain with the next symbols (each phase's rows without their pre-cursors):
    # counted / model 1.15 on 4006 errors (2.6e8 bits), 1.29 with the errors alone
    ("4 lanes, SJ 0.05 UI, unprecoded", ["link.precoding=false", "adc.enob=5.85",
                                         "link.seed=861169", "noise.sj_ui=0.05"],
     "ber_with_propagation")])
def test_dfe_error_propagation_averages_the_output_phases(label, sets, key):
    """Mismatched lanes: the propagation model takes every output phase's rows (each
    weighted 1 / phases, as the BER), not output phase 0's alone, which read half this
    precoded link's count (4.3e-6 against 8.6e-6). The count's interval is that of its
    error bursts scaled by its bit errors per burst, widened by the model's own error
    (conftest.PROPAGATION_MODEL_ERROR)."""
    from conftest import assert_propagation_model_holds
    from serdes.engines.stat import dfe_error_propagation

    system = build(Config.default().with_overrides([
        "channel.loss_db=39.48", "ffe.taps=24", "dfe.taps=1", "adc.bits=7",
        "noise.rj_ui=0.0", "adc.lanes=4", "adc.offset_rms_v=0.002", "adc.gain_rms=0.01",
        *sets]))
    eng = statistical_engine(system)
    assert len(eng.phases) == 4
    prop = dfe_error_propagation(eng)
    assert prop["ber_correct_feedback"] == pytest.approx(eng.ber().ber, rel=1e-9)
    res = simulate(system, symbols=40_000_000, target_errors=600, taps=eng.taps)
    assert_propagation_model_holds(label, res, prop, key)
