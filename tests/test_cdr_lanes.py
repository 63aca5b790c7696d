"""Clock recovery and TX jitter with a time-interleaved ADC (serdes/engines/cdr_lanes.py,
serdes/kernels/cdr_ti.py): lanes without mismatch are the single-converter CDR bit for
bit; the full combination is chunk-invariant and seeded; the lanes' samples at a fixed
phase against the per-lane pulse sums of serdes.tiadc.lanes; a known skew pattern moves
the recovered phase by the lanes' mean skew (plus the S-curve's curvature term); lock
from random phases with mismatch; the counted BER of 64 lanes with the CDR against the
statistical engine; the waveform engine's refusal."""

import dataclasses

import numpy as np
import pytest

from serdes.build import build
from serdes.config import Config
from serdes.engines import run as run_mod
from serdes.engines.cdr import TABLE_Q, CdrFrontEnd
from serdes.engines.cdr_lanes import TiCdrFrontEnd
from serdes.engines.cdr_stat import stat_link
from serdes.errors import ConfigError
from serdes.tiadc.lanes import LanePulses
from serdes.tiadc.stat import statistical_engine

from cdr_lanes_cases import TXJ, drive, noisy_system, skew_shift, skews


def _system(*over):
    return noisy_system("mm", *over)


@pytest.fixture(scope="module")
def single():
    return _system(*TXJ)


@pytest.fixture(scope="module")
def cal(single):
    return CdrFrontEnd(single.link, 1, single.cdr, single.tx_jitter).cal


def test_lanes_without_mismatch_are_the_single_converter_cdr(single, cal):
    """64 lanes with no mismatch through the lanes' front end: the same samples and
    sampling phases as the single-converter CDR, bit for bit, with TX RJ and SJ, at any
    chunk size."""
    lanes = _system(*TXJ, "adc.lanes=64")
    ref = drive(CdrFrontEnd(single.link, 1, single.cdr, single.tx_jitter, cal), 60000, 7001)
    for chunk in (7001, 4096, 60000):
        fe = TiCdrFrontEnd(lanes.link, 1, lanes.cdr, lanes.tx_jitter, cal)
        x, ph = drive(fe, 60000, chunk)
        assert np.array_equal(x, ref[0]) and np.array_equal(ph, ref[1]), chunk


def test_full_combination_is_chunk_invariant_and_seeded():
    """64 lanes with every mismatch, T/H bandwidth mismatch, aperture and supply jitter
    (ripple and broadband), TX RJ/SJ and RX RJ: the same samples and phases at any chunk
    size and for the same seed; another seed gives others."""
    over = [*TXJ, "noise.rj_ui=0.01", "adc.lanes=64", "adc.skew_rms_s=1e-12",
            "adc.offset_rms_v=2e-3", "adc.gain_rms=0.02", "adc.bw_hz=60e9",
            "adc.bw_rms_rel=0.05", "adc.aperture_jitter_s=50e-15", "supply.ripple_mv=[20]",
            "supply.ripple_hz=[3e7]", "supply.noise_uv_per_rthz=2", "supply.delay_ps_per_mv=0.05",
            "supply.gain_pct_per_mv=0.01"]
    system = _system(*over)
    adc = system.link.adc
    assert adc.bw_mismatch and adc.supply.jitter_active and adc.supply.gain_active

    def run(seed, chunk):
        fe = TiCdrFrontEnd(system.link, seed, system.cdr, system.tx_jitter)
        return drive(fe, 50000, chunk)

    ref = run(1, 50000)
    for chunk in (7001, 4096):
        x, ph = run(1, chunk)
        assert np.array_equal(x, ref[0]) and np.array_equal(ph, ref[1]), chunk
    assert not np.array_equal(run(2, 50000)[0], ref[0])


def test_lanes_without_mismatch_count_the_same_errors(monkeypatch):
    """The counted run through the lanes' front end (forced: without mismatch the engine
    takes the single converter's) counts the same errors as the single-converter CDR
    for the same seed."""
    single, lanes = _system("tx.snr_db=19"), _system("tx.snr_db=19", "adc.lanes=64")
    ref = run_mod.simulate(single, symbols=250_000, target_errors=10 ** 9)
    monkeypatch.setattr(run_mod, "front_end", lambda system, engine, seed: TiCdrFrontEnd(
        system.link, seed, system.cdr, system.tx_jitter))
    got = run_mod.simulate(lanes, symbols=250_000, target_errors=10 ** 9)
    assert ref.bit_errors >= 20
    assert (got.bit_errors, got.symbol_errors, got.bits) == \
        (ref.bit_errors, ref.symbol_errors, ref.bits)


def test_open_loop_lane_samples_are_the_lane_pulse_sums():
    """Loop open at the peak (cdr.mode = off), no jitter or noise: each output is lane
    (j mod N)'s pulse (its own T/H) at its skew, summed over the symbols, as
    serdes.tiadc.lanes forms it (cubic interpolation of the fine pulse), within the bound
    of the sampler's linear interpolation between table rows 1/Q UI apart:
    (1 / (8 Q^2)) sum_j |a| max |p''| per tap."""
    over = ["adc.lanes=8", "adc.bw_hz=60e9", "adc.bw_rms_rel=0.1", "cdr.mode=off"]
    skew = np.array([0.1, -0.05, 0.02, -0.12, 0.07, 0.0, -0.03, 0.01])
    system = _system(*over, skews(skew, 1 / 53.125e9))
    link = system.link
    assert link.adc.bw_mismatch and link.adc.analog
    fe = TiCdrFrontEnd(link, 1, dataclasses.replace(system.cdr, mode="off"),
                       dataclasses.replace(system.tx_jitter, rj_ui=0.0, sj_ui=0.0),
                       calibration=None)
    fe.noise_fir = np.zeros(1)
    n = 4000
    g = np.random.default_rng(5)
    a = fe.levels[g.integers(0, 4, n)]
    x = fe(a, 0)
    from serdes.engines.cdr import LOOKAHEAD
    from serdes.engines.pulse import Jitter

    jit = Jitter(link, 1)
    jit.rj_ui = jit.sj_ui = jit.dd_ui = 0.0
    lp = LanePulses(link, jit, 1)
    a_ext = np.concatenate([np.zeros(link.pulse.n_ui - 1), a])
    ref = lp(a_ext, 0, n)
    # output j is nominal symbol j - P with lane j mod 8: P = 8, so the same lane
    got = x[LOOKAHEAD:]
    want = ref[:n - LOOKAHEAD]
    p2_max = np.max(np.abs(_d2(fe)), axis=(0, 1))  # max |p''| per tap over lanes and rows
    bound = float(np.max(np.abs(fe.levels))) * float(np.sum(p2_max)) / (8 * TABLE_Q ** 2)
    err = np.max(np.abs(got - want))
    assert err <= bound, (err, bound)
    assert bound < 1e-3 * np.max(np.abs(want))


def _d2(fe):
    """p'' (per UI^2) tables of the lanes' pulses (fe keeps none without TX jitter)."""
    from types import SimpleNamespace

    from serdes.engines.cdr import pulse_tables
    from serdes.tiadc.lanes import lane_fine_pulses

    p = fe.pulse
    fines = lane_fine_pulses(fe.adc, p.fine, p.m, fe.ui_s / p.m)
    return np.stack([pulse_tables(SimpleNamespace(fine=f, phase=p.phase, m=p.m, n_ui=p.n_ui),
                                  TABLE_Q)[2] for f in fines])


def test_skew_pattern_shifts_the_recovered_phase_by_the_mean_skew():
    """Eight lanes skewed by 0.08 UI on average (spread 0.035 UI rms): the loop holds the
    lanes' mean detector output at zero, mean_l S(phi + tau_l) = 0, so the recovered
    phase moves by -mean(tau) - (S'' / 2 S') var(tau) (second order; S', S'' from the
    measured S-curve at +-0.05 UI). Same seed with and without the skews (common random
    numbers); the tolerance is 4 standard errors of the mean phase difference from
    batch means (batches of 16384 UI, ~8 loop correlation times)."""
    tau = np.array([0.10, 0.06, 0.02, 0.10, 0.14, 0.06, 0.10, 0.06])
    mean, se, curv = skew_shift("mm", tau)
    expected = -tau.mean() + curv
    assert abs(mean - expected) < 4 * se, (mean, expected, se)
    # the first-order shift alone is off by the curvature term, many standard errors
    assert abs(expected + tau.mean()) > 4 * se


def test_lock_from_20_random_phases_with_lane_mismatch():
    """64 lanes with skew (1 ps rms), offset (3 mV) and gain (3 %) mismatch on the default
    link (the CTLE the search picks without lanes, as tests/test_cdr.py), from 20 random
    starting phases (tracking loop, no acquisition gear): within 32768 UI the phase stays
    within 0.1 UI of the lock point (or one UI away: a slip only relabels symbols), and
    its mean over the next 8192 UI is that of a long run started at zero, within 5 x the
    model dither's standard error (correlation time 1 / (2 pi B T) UI, as
    tests/test_cdr.py) plus the reference's own."""
    mm = ["adc.lanes=64", "adc.skew_rms_s=1e-12", "adc.offset_rms_v=3e-3", "adc.gain_rms=0.03"]
    fixed_ctle = ["ctle.auto=false", "ctle.g_dc_db=-18", "ctle.g_dc2_db=-1"]
    system = build(Config.default().with_overrides(["cdr.mode=mm", *fixed_ctle, *mm]))
    assert system.link.adc.interleaved
    fe0 = TiCdrFrontEnd(system.link, 1, system.cdr)
    _, ph = drive(fe0, 1 << 20, 1 << 16)
    ref = float(np.mean(ph[1 << 16:]))
    corr = 1 / (2 * np.pi * system.cdr.bandwidth_hz * system.link.ui_s)
    dither = fe0.model()["dither_rms_ui"]
    tol = 5 * dither / np.sqrt(8192 / corr) + 5 * dither / np.sqrt(((1 << 20) - (1 << 16)) / corr)
    lock = 32768
    for phase in np.random.default_rng(2025).uniform(-0.5, 0.5, 20):
        s = dataclasses.replace(system.cdr, initial_phase_ui=float(phase), acquire_gear=1.0)
        fe = TiCdrFrontEnd(system.link, 1, s, calibration=fe0.cal)
        _, ph = drive(fe, lock + 8192, 8192, seed=int(abs(phase) * 1e6) % 1000)
        dist = ph[lock:] - np.round(ph[lock:] - ref)
        assert np.all(np.abs(dist - ref) < 0.1), (phase, np.abs(dist - ref).max())
        assert abs(np.mean(dist) - ref) < tol, (phase, np.mean(dist), ref, tol)


def test_counted_ber_64_lanes_with_cdr_agrees_with_statistical():
    """64 lanes, skews 0.08 UI on average with 0.05 UI rms spread, offset and gain
    mismatch, MM loop: the statistical engine (the loop's S-curve and noise averaged over
    the lanes' instants, serdes.engines.cdr_lanes.lanes_response) within 1.5x of the
    counted 95 % interval, the criterion of tests/test_tiadc_ber.py; its lock point moves
    by about the mean skew."""
    ui = 1 / 53.125e9
    z = np.random.default_rng(7).standard_normal(64)
    z -= z.mean()
    tau = 0.08 + 0.05 * z
    system = _system("adc.lanes=64", "adc.offset_rms_v=3e-3", "adc.gain_rms=0.03",
                     skews(tau, ui))
    sl = stat_link(system)
    shift = sl.impairments.offset_ui - CdrFrontEnd(system.link, system.run.seed,
                                                   system.cdr).cal.lock_ui
    assert abs(shift + 0.08) < 0.02, shift
    eng = statistical_engine(dataclasses.replace(system, link=sl))
    stat = eng.ber().ber
    res = run_mod.simulate(system, symbols=400_000, target_errors=10 ** 9, taps=eng.taps)
    lo, hi = res.ber_ci
    assert res.bit_errors >= 30
    assert lo <= 1.5 * stat and hi >= stat / 1.5, (res.ber, (lo, hi), stat)


def test_waveform_engine_still_refuses_the_cdr():
    system = _system("adc.lanes=8", "adc.skew_rms_s=1e-12")
    with pytest.raises(ConfigError, match="only the pulse engine"):
        run_mod.simulate(system, engine="waveform", symbols=1000)
