"""Background calibration of the interleaved ADC: the residual mismatch it converges to
(offset and gain against the LMS misadjustment in closed form, skew against the delay
trims' noise in closed form), and the BER after calibration against the mismatch-free
BER."""

import numpy as np
import pytest
from scipy import stats

from serdes.build import build
from serdes.config import Config
from serdes.dsp.receiver import build_chain
from serdes.dsp.ti_cal import SETTLE_PER_LANE, TiCalibration, differentiator, residuals
from serdes.engines.run import design_equalizer, simulate
from serdes.tiadc.cal_residual import skew_covariance
from serdes.tiadc.stat import statistical_engine

BASE = ["noise.rj_ui=0", "channel.loss_db=30", "tx.snr_db=21", "ctle.auto=false",
        "ctle.g_dc_db=-19", "ctle.g_dc2_db=-2", "adc.lanes=8"]
MISMATCH = ["adc.offset_rms_v=3e-3", "adc.gain_rms=0.03", "adc.skew_rms_s=2e-12"]
COUNT = 800_000


def _run(over, symbols):
    system = build(Config.default().with_overrides(BASE + over))
    taps = design_equalizer(system)
    chain = build_chain(system.link, taps, system.receiver, seed=system.run.seed)
    res = simulate(system, symbols=symbols, target_errors=10 ** 9, receiver=chain, taps=taps)
    return system, chain, res


def test_differentiator_is_the_derivative_of_a_slow_sine():
    h = differentiator(8)
    w = 2 * np.pi * 0.05                       # 0.05 cycles per sample
    k = np.arange(-8, 9)
    x = np.sin(w * k)
    d = float(np.sum(h * (x[9:] - x[:8][::-1])))
    # windowed ideal differentiator: response within 1 % of w at a tenth of Nyquist
    assert d == pytest.approx(w, rel=0.01)


def test_calibration_converges_and_restores_the_mismatch_free_ber(tmp_path):
    settle = SETTLE_PER_LANE * 8   # the automatic settling of 8 lanes
    system, chain, cal_res = _run(MISMATCH + ["adc_cal.enabled=true"], settle + COUNT)
    cal = chain.find(TiCalibration)
    adc, link = system.link.adc, system.link
    r = residuals(adc, cal.history)
    s = cal.settings
    mu_o, mu_g = s.mu_offset * s.fine_ratio, s.mu_gain * s.fine_ratio
    hh = float(link.pulse.taps @ link.pulse.taps)
    sigma_x = np.sqrt(link.noise.variance + (link.level_power + link.tx_noise_sigma ** 2) * hh)
    # LMS misadjustment of a one-tap mean estimator: var = mu sigma^2 / (2 - mu); of the
    # power-normalising gain: (delta c / c)^2 = mu var(u^2) / (4 P^2), var(u^2) <= 2 P^2
    # for this near-Gaussian input (PAM4 through the channel plus noise); the rms over 8
    # lanes within the chi-square 99.9 % quantile
    q = np.sqrt(stats.chi2.ppf(0.999, adc.lanes) / adc.lanes)
    assert r["offset_rms_v"][-1] < q * np.sqrt(mu_o / (2 - mu_o)) * sigma_x
    assert r["gain_rms"][-1] < q * np.sqrt(mu_g * 2 / 4)
    # skew: the delay trims' noise (closed form in serdes.tiadc.cal_residual, circulant
    # over the lanes; bound by the largest eigenvalue's share, chi-square 99.9 %)
    c = skew_covariance(link, s, system.run.chunk_symbols) * link.ui_s ** 2
    top = np.linalg.eigvalsh(c[np.subtract.outer(np.arange(8), np.arange(8)) % 8]).max()
    assert r["skew_rms_s"][-1] ** 2 < top * stats.chi2.ppf(0.999, adc.lanes) / adc.lanes
    assert r["skew_rms_s"][-1] < 0.25 * np.sqrt(np.mean(adc.skews_s ** 2))
    _, _, raw = _run(MISMATCH, COUNT)
    _, _, free = _run([], COUNT)
    lo, hi = cal_res.ber_ci
    # the statistical engine with the calibration's residual (serdes.tiadc.cal_residual)
    stat = statistical_engine(system).ber().ber
    assert cal_res.bit_errors >= 10
    assert lo <= 1.5 * stat and hi >= stat / 1.5, (cal_res.ber, (lo, hi), stat)
    flo, fhi = free.ber_ci
    assert lo <= fhi and flo <= hi, (cal_res.ber, free.ber)     # intervals overlap
    assert raw.ber_ci[0] > hi                                   # and it did something
    from serdes.plot.adc import calibration

    ax = calibration(r)
    ax.figure.savefig(tmp_path / "cal.png")
    assert (tmp_path / "cal.png").stat().st_size > 0
