"""The interleaved ADC's background calibration inside the clock-recovery loop
(serdes/engines/cdr_lanes.py with serdes/dsp/ti_cal.py): the front end samples through
the lanes' live delay trims and its detector sees the calibration's corrected lanes
(exact corrections give the mismatch-free lanes bit for bit); the trims stay zero-mean,
so the loop keeps its lock point; with calibration and the MM loop a mismatched 16-lane
link counts the BER of the mismatch-free link with the loop (intervals overlap, the
uncalibrated one clearly above) and the residual mismatch is within the calibration's
closed forms; the loop locks from random initial phases with the calibration starting
from zero; runs are reproducible for a seed and chunk size."""

import dataclasses

import numpy as np
import pytest
from scipy import stats

from serdes.build import build
from serdes.config import Config
from serdes.dsp.ti_cal import TiCalibration, residuals
from serdes.engines import run as run_mod
from serdes.engines.cdr import CdrFrontEnd
from serdes.engines.cdr_lanes import TiCdrFrontEnd, loop_skews_ui
from serdes.tiadc.cal_residual import skew_covariance

from cdr_lanes_cases import UI, drive, noisy_system


MISMATCH = ["adc.offset_rms_v=3e-3", "adc.gain_rms=0.03", "adc.skew_rms_s=1e-12"]


def _system(*over):
    return noisy_system("mm", *over)


def _lanes(values):
    return "[" + ",".join(f"{v:.12e}" for v in values) + "]"


def test_exact_corrections_give_the_mismatch_free_lanes_bit_for_bit():
    """Four lanes with skew, offset and gain mismatch (gains powers of two, so the
    corrected gain c_l g_l is exactly 1): with the trims equal to the skews and the
    calibration's estimates equal to the true offsets and inverse gains, the front end's
    samples and sampling phases are those of mismatch-free lanes, bit for bit; with the
    estimates at their start values they are not."""
    skew = np.array([0.06, -0.04, 0.03, -0.05]) * UI
    gains, offs = np.array([0.5, 2.0, 1.0, 0.25]), np.array([3e-3, -2e-3, 1e-3, -2e-3])
    mis = _system("adc.lanes=4", "adc_cal.enabled=true", f"adc.skews_s={_lanes(skew)}",
                  f"adc.gains={_lanes(gains)}", f"adc.offsets_v={_lanes(offs)}")
    free = _system("adc.lanes=4", "adc_cal.enabled=true")
    assert not free.link.adc.digital_mismatch and not np.any(free.link.adc.skews_s)
    cal = CdrFrontEnd(free.link, 1, free.cdr).cal
    ref = drive(TiCdrFrontEnd(free.link, 1, free.cdr, calibration=cal), 40000, 8192)
    adc = mis.link.adc
    raw = drive(TiCdrFrontEnd(mis.link, 1, mis.cdr, calibration=cal), 40000, 8192)
    assert not np.array_equal(raw[1], ref[1])
    adc.skew_trim_s[:] = adc.skews_s
    adc.cal_offsets_v[:] = adc.offsets_v
    adc.cal_gains[:] = 1.0 / adc.gains
    got = drive(TiCdrFrontEnd(mis.link, 1, mis.cdr, calibration=cal), 40000, 8192)
    assert np.array_equal(got[0], ref[0]) and np.array_equal(got[1], ref[1])


def test_the_loop_sees_the_lanes_mean_instant_alone_when_calibrated():
    """The statistical engine's loop: with the skew calibration the lanes' instants are
    their common mean (the trims are zero-mean), without it their skews."""
    skew = np.array([0.10, 0.02, 0.06, 0.14])
    on = _system("adc.lanes=4", "adc_cal.enabled=true", f"adc.skews_s={_lanes(skew * UI)}")
    off = _system("adc.lanes=4", f"adc.skews_s={_lanes(skew * UI)}")
    assert np.allclose(loop_skews_ui(on.link.adc, UI), 0.08, rtol=0, atol=1e-12)
    assert np.allclose(loop_skews_ui(off.link.adc, UI), skew, rtol=0, atol=1e-12)


def _count(system, symbols, chunk=None):
    taps = run_mod.design_equalizer(system)
    pipe = run_mod.pipeline(system, taps, seed=system.run.seed)
    pipe.front.trace = []
    counter = run_mod.ErrorCounter(system.link.modulation_order, skip=0)
    # the default skip leaves out the calibration's settling and the loop's warm-up
    pipe.run(symbols, chunk=chunk or system.run.chunk_symbols, observers=[counter])
    return pipe, counter


@pytest.fixture(scope="module")
def calibrated():
    """16 lanes, mismatch, calibration and the MM loop: settled over the calibration's
    automatic settling (75,000 symbols per lane), then 800,000 counted."""
    system = _system("adc.lanes=16", "adc_cal.enabled=true", *MISMATCH)
    settle = system.link.adc.calibration.settle_symbols
    pipe, counter = _count(system, settle + 800_000)
    return system, pipe, counter


def test_calibration_in_the_loop_restores_the_mismatch_free_ber(calibrated):
    """Counted BER with calibration and the loop against the mismatch-free link with the
    loop (800,000 symbols each, same seed): the 95 % intervals overlap, and the
    uncalibrated mismatched link's interval lies above the calibrated one."""
    system, _, cal = calibrated
    _, free = _count(_system("adc.lanes=16", *[m.split("=")[0] + "=0" for m in MISMATCH]),
                     800_000)
    _, raw = _count(_system("adc.lanes=16", *MISMATCH), 800_000)
    lo, hi = cal.ber_ci()
    flo, fhi = free.ber_ci()
    assert cal.bit_errors >= 10 and free.bit_errors >= 10
    assert lo <= fhi and flo <= hi, (cal.ber, free.ber)
    assert raw.ber_ci()[0] > hi, (raw.ber, cal.ber)


def test_residual_mismatch_in_the_loop_is_the_calibrations(calibrated):
    """After settling with the loop running, the residual offset, gain and skew are
    within the calibration's closed forms (the bounds of tests/test_ti_cal.py: LMS
    misadjustment, the delay trims' noise; chi-square 99.9 % over the lanes), the trims
    are zero-mean (the loop's common phase is left alone) and the loop stayed locked."""
    system, pipe, _ = calibrated
    adc, link = system.link.adc, system.link
    cal = pipe.rx.find(TiCalibration)
    r = residuals(adc, cal.history)
    s = cal.settings
    n = adc.lanes
    mu_o, mu_g = s.mu_offset * s.fine_ratio, s.mu_gain * s.fine_ratio
    hh = float(link.pulse.taps @ link.pulse.taps)
    sigma_x = np.sqrt(link.noise.variance + (link.level_power + link.tx_noise_sigma ** 2) * hh)
    q = np.sqrt(stats.chi2.ppf(0.999, n) / n)
    assert r["offset_rms_v"][-1] < q * np.sqrt(mu_o / (2 - mu_o)) * sigma_x
    assert r["gain_rms"][-1] < q * np.sqrt(mu_g * 2 / 4)
    c = skew_covariance(link, s, system.run.chunk_symbols) * link.ui_s ** 2
    top = np.linalg.eigvalsh(c[np.subtract.outer(np.arange(n), np.arange(n)) % n]).max()
    assert r["skew_rms_s"][-1] ** 2 < top * stats.chi2.ppf(0.999, n) / n
    assert r["skew_rms_s"][-1] < 0.25 * np.sqrt(np.mean(adc.skews_s ** 2))
    assert abs(np.mean(adc.skew_trim_s)) < 1e-9 * np.max(np.abs(adc.skew_trim_s))
    assert pipe.front.outside == 0


def test_lock_from_random_phases_with_the_calibration_starting():
    """16 lanes with mismatch on the default link (CTLE fixed as tests/test_cdr_lanes.py),
    calibration and loop both starting at the run's start, from 12 random initial phases
    (tracking loop, no acquisition gear; chunks of 8192, so the trims move every 8192
    UI): from 32768 UI on, the phase stays within 0.1 UI of the run started at zero
    (same seed; or one UI away: a slip only relabels symbols)."""
    fixed = ["ctle.auto=false", "ctle.g_dc_db=-18", "ctle.g_dc2_db=-1"]
    system = build(Config.default().with_overrides(
        ["cdr.mode=mm", *fixed, "adc.lanes=16", "adc_cal.enabled=true", *MISMATCH]))
    n, lock, chunk = 49152, 32768, 8192

    def phases(phase):
        s = dataclasses.replace(system, cdr=dataclasses.replace(
            system.cdr, initial_phase_ui=float(phase), acquire_gear=1.0))
        pipe, _ = _count(s, n, chunk)
        return np.concatenate(pipe.front.trace)[lock:n]

    ref = float(np.mean(phases(0.0)))
    for phase in np.random.default_rng(2026).uniform(-0.5, 0.5, 12):
        ph = phases(phase)
        dist = ph - np.round(ph - ref)
        assert np.all(np.abs(dist - ref) < 0.1), (phase, np.abs(dist - ref).max())


def test_calibrated_loop_is_seeded():
    """Same seed and chunk size: the same samples and phases; another seed: others."""
    system = _system("adc.lanes=8", "adc_cal.enabled=true", *MISMATCH)

    def run(seed):
        s = dataclasses.replace(system, run=dataclasses.replace(system.run, seed=seed))
        pipe, counter = _count(s, 3 * 16384, 16384)
        return np.concatenate(pipe.front.trace), system.link.adc.skew_trim_s.copy()

    a, b, c = run(1), run(1), run(2)
    assert np.array_equal(a[0], b[0]) and np.array_equal(a[1], b[1])
    assert not np.array_equal(a[0], c[0])
