"""The bang-bang detector (cdr.mode = "bb", 2x sampling) with an interleaved ADC
(serdes/kernels/cdr_ti.py mode 3): each lane's edge sampler shares the lane's clock, T/H,
gain and offset. Lanes without mismatch are the single-converter bang-bang loop bit for
bit; a known skew pattern moves the recovered phase by the lanes' mean skew plus the
S-curve's curvature term; the loop locks from random phases with lane mismatch; a run
with every mismatch is chunk-invariant."""

import dataclasses

import numpy as np
import pytest

from serdes.build import build
from serdes.config import Config
from serdes.engines import run as run_mod
from serdes.engines.cdr import CdrFrontEnd
from serdes.engines.cdr_lanes import TiCdrFrontEnd

from cdr_lanes_cases import TXJ, drive, noisy_system, skew_shift


def _system(*over):
    return noisy_system("bb", *over)


def test_bb_lanes_without_mismatch_are_the_single_converter_bb_loop():
    """64 lanes without mismatch, TX RJ and SJ: the same samples and phases as the
    single converter's bang-bang loop, bit for bit, at any chunk size."""
    single, lanes = _system(*TXJ), _system(*TXJ, "adc.lanes=64")
    cal = CdrFrontEnd(single.link, 1, single.cdr, single.tx_jitter).cal
    ref = drive(CdrFrontEnd(single.link, 1, single.cdr, single.tx_jitter, cal), 40000, 7001)
    for chunk in (7001, 40000):
        fe = TiCdrFrontEnd(lanes.link, 1, lanes.cdr, lanes.tx_jitter, cal)
        x, ph = drive(fe, 40000, chunk)
        assert np.array_equal(x, ref[0]) and np.array_equal(ph, ref[1]), chunk


def test_bb_with_every_mismatch_is_chunk_invariant():
    over = [*TXJ, "adc.lanes=16", "adc.skew_rms_s=1e-12", "adc.offset_rms_v=3e-3",
            "adc.gain_rms=0.03", "adc.bw_hz=60e9", "adc.bw_rms_rel=0.05",
            "adc.aperture_jitter_s=50e-15"]
    system = _system(*over)
    cal = CdrFrontEnd(system.link, 1, system.cdr, system.tx_jitter).cal
    ref = drive(TiCdrFrontEnd(system.link, 1, system.cdr, system.tx_jitter, cal), 30000, 30000)
    x, ph = drive(TiCdrFrontEnd(system.link, 1, system.cdr, system.tx_jitter, cal), 30000, 4096)
    assert np.array_equal(x, ref[0]) and np.array_equal(ph, ref[1])


def test_bb_skew_pattern_shifts_the_recovered_phase_by_the_mean_skew():
    """Eight lanes skewed by 0.08 UI on average: the loop holds mean_l S(phi + tau_l) = 0,
    so the recovered phase moves by -mean(tau) - (S'' / 2 S') var(tau) (S', S'' of the
    measured bang-bang S-curve at +-0.05 UI). Same seed with and without the skews
    (common random numbers); tolerance 4 standard errors of the mean phase difference
    from batch means (batches of 16384 UI)."""
    tau = np.array([0.10, 0.06, 0.02, 0.10, 0.14, 0.06, 0.10, 0.06])
    mean, se, curv = skew_shift("bb", tau)
    expected = -tau.mean() + curv
    assert abs(mean - expected) < 4 * se, (mean, expected, se)
    # the first-order shift alone is off by the curvature term, many standard errors
    assert abs(curv) > 4 * se


def test_bb_lock_from_random_phases_with_lane_mismatch():
    """16 lanes with skew (1 ps rms), offset (3 mV) and gain (3 %) mismatch on the default
    link (CTLE fixed as tests/test_cdr_lanes.py), from 12 random starting phases
    (tracking loop, no acquisition gear): from 49152 UI on the phase stays within 0.1 UI
    of a run started at zero (or one UI away: a slip only relabels symbols). The bound:
    started within 0.01 UI of the unstable point +-0.5 UI, the single converter's
    bang-bang loop on this link needs up to 30,000 UI to come within 0.1 UI (measured
    on 15 phases; 16 mismatched lanes up to 33,000)."""
    fixed = ["ctle.auto=false", "ctle.g_dc_db=-18", "ctle.g_dc2_db=-1"]
    system = build(Config.default().with_overrides(
        ["cdr.mode=bb", *fixed, "adc.lanes=16", "adc.skew_rms_s=1e-12",
         "adc.offset_rms_v=3e-3", "adc.gain_rms=0.03"]))
    fe0 = TiCdrFrontEnd(system.link, 1, system.cdr)
    _, ph = drive(fe0, 1 << 18, 1 << 16)
    ref = float(np.mean(ph[1 << 16:]))
    lock = 49152
    for phase in np.random.default_rng(2027).uniform(-0.5, 0.5, 12):
        s = dataclasses.replace(system.cdr, initial_phase_ui=float(phase), acquire_gear=1.0)
        fe = TiCdrFrontEnd(system.link, 1, s, calibration=fe0.cal)
        _, ph = drive(fe, lock + 8192, 8192, seed=int(abs(phase) * 1e6) % 1000)
        dist = ph[lock:] - np.round(ph[lock:] - ref)
        assert np.all(np.abs(dist - ref) < 0.1), (phase, np.abs(dist - ref).max())


@pytest.mark.parametrize("cal", [False, True])
def test_bb_with_lanes_runs_through_the_cli_path(cal):
    """The counted run takes the lanes' front end with the bang-bang detector (and the
    calibration), without refusal."""
    over = ["adc.lanes=8", "adc.skew_rms_s=1e-12"] + (["adc_cal.enabled=true"] if cal else [])
    system = _system(*over)
    res = run_mod.simulate(system, symbols=20_000)
    assert res.cdr is not None and res.cdr["outside_window_symbols"] == 0
