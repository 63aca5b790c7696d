"""The time-interleaved ADC against closed forms: mismatch spurs, jitter-limited SNR,
ENOB, the LDO's supply transfer, and the per-lane kernels against slow references.

Two-channel spur formulas (gain mismatch dg: 20 log10(dg / 2); skew dt: 20 log10(2 pi
f_in dt / 2)) as in Kurosawa et al., "Explicit analysis of channel mismatch effects in
time-interleaved ADC systems", IEEE TCAS-I 48(3), 2001, and Vogel, "The impact of
combined channel mismatch effects in time-interleaved ADCs", IEEE TIM 54(1), 2005;
aperture-jitter SNR -20 log10(2 pi f_in sigma_j) (Kester, ADI MT-008); phase-modulation
sidebands J1(beta) / J0(beta) for a sinusoidal sampling jitter.
"""

import json
import subprocess
import sys

import numpy as np
import pytest
from scipy import integrate, special, stats

import naive
from serdes.kernels.adc_ti import lane_convert, lane_fir, lane_pulse_sum_rows
from serdes.tiadc.model import TiAdc
from serdes.tiadc.spectrum import sine_test
from serdes.tiadc.supply import Ldo, SupplyPath

FS = 53.125e9


def _bin_db(r, f_hz):
    """Measured level (dBc) of the spur nearest f_hz."""
    return min(r["spurs"], key=lambda s: abs(s["f_hz"] - f_hz))["dbc"]


def test_two_lane_gain_spur_is_20log_dg_over_2():
    dg = 0.02
    adc = TiAdc(bits=0, fullscale_v=0.5, lanes=2, gains=[1 + dg / 2, 1 - dg / 2])
    r = sine_test(adc, FS, 5e9)
    # noiseless and exact: y = g_l A sin, the image at fs/2 - f_in has amplitude dg/2 A
    assert _bin_db(r, FS / 2 - r["f_in_hz"]) == pytest.approx(20 * np.log10(dg / 2), abs=1e-6)
    assert r["sndr_db"] == pytest.approx(-20 * np.log10(dg / 2), abs=1e-6)


def test_two_lane_skew_spur_is_20log_2pi_fin_dt_over_2():
    dt = 1e-12
    adc = TiAdc(bits=0, fullscale_v=0.5, lanes=2, skews_s=[dt / 2, -dt / 2])
    r = sine_test(adc, FS, 20e9)
    x = 2 * np.pi * r["f_in_hz"] * dt / 2
    meas = _bin_db(r, FS / 2 - r["f_in_hz"])
    # exact: image/signal = tan(x); the textbook small-angle form differs by 20log(tan x / x)
    assert meas == pytest.approx(20 * np.log10(np.tan(x)), abs=1e-6)
    assert abs(meas - 20 * np.log10(x)) <= 20 * np.log10(np.tan(x) / x) + 1e-9


def test_offset_spurs_at_k_fs_over_n_follow_the_lane_dft():
    offs = np.array([1e-3, -2e-3, 0.5e-3, 0.5e-3])
    adc = TiAdc(bits=0, fullscale_v=0.5, lanes=4, offsets_v=offs)
    r = sine_test(adc, FS, 7e9, amplitude_dbfs=-1)
    amp = 0.25 * 10 ** (-1 / 20)
    o = np.fft.fft(offs)
    # power over the sine's A^2/2: a tone 2|O_1|/4 at fs/4 (3fs/4 folds onto it), and the
    # alternating sequence +-|O_2|/4 at fs/2, of power |O_2|^2/16
    for k, power in ((1, (2 * abs(o[1]) / 4) ** 2 / 2), (2, (abs(o[2]) / 4) ** 2)):
        expect = 10 * np.log10(power / (amp ** 2 / 2))
        assert _bin_db(r, k * FS / 4) == pytest.approx(expect, abs=1e-6)


def test_random_mismatch_total_spur_power_matches_parseval():
    """64 lanes drawn: the image spurs add up to mean |c_l - c|^2 / |c|^2 (c_l the lane's
    complex gain g_l e^{j 2 pi f tau_l}), and the drawn spread is a sample of the rms
    asked for (chi-square interval, 63 degrees of freedom after centring)."""
    adc = TiAdc.draw(bits=0, fullscale_v=0.5, lanes=64, gain_rms=0.01, skew_rms_s=0.3e-12,
                     seed=5)
    r = sine_test(adc, FS, 11e9)
    c = adc.gains * np.exp(2j * np.pi * r["f_in_hz"] * adc.skews_s)
    nsr = np.mean(np.abs(c - c.mean()) ** 2) / abs(c.mean()) ** 2
    assert r["sndr_db"] == pytest.approx(-10 * np.log10(nsr), abs=1e-6)
    for values, sigma in ((adc.gains - 1, 0.01), (adc.skews_s, 0.3e-12)):
        assert abs(values.mean()) < 1e-12 * max(sigma, 1)
        q = np.sum(values ** 2) / sigma ** 2
        assert stats.chi2.ppf(5e-4, 63) < q < stats.chi2.ppf(1 - 5e-4, 63)


def test_closed_form_column_matches_measured_spurs():
    adc = TiAdc.draw(bits=0, fullscale_v=0.5, lanes=8, offset_rms_v=1e-3, gain_rms=0.01,
                     skew_rms_s=0.5e-12, bw_hz=40e9, bw_rms_rel=0.05, seed=2)
    r = sine_test(adc, FS, 19e9)
    for s in r["spurs"]:
        # the only departure from the closed form is the tones' overlap at exact bins
        if s["predicted_dbc"] > -80:
            assert s["dbc"] == pytest.approx(s["predicted_dbc"], abs=1e-6)


def test_aperture_jitter_snr_is_minus_20log_2pi_fin_sigma():
    sigma, n = 100e-15, 1 << 16
    adc = TiAdc(bits=0, fullscale_v=0.5, aperture_jitter_s=sigma)
    r = sine_test(adc, FS, 20e9, n=n)
    # noise power estimate: mean of (A w sigma z cos)^2, relative std sqrt(3.5 / n); 4 sigma
    tol = 10 * np.log10(1 + 4 * np.sqrt(3.5 / n))
    assert r["sndr_db"] == pytest.approx(-20 * np.log10(2 * np.pi * r["f_in_hz"] * sigma),
                                         abs=tol)


def test_enob_noise_gives_its_enob():
    """ENOB noise alone (no quantizer): white Gaussian of (FS / 2^ENOB)^2 / 12, so the
    sine test reads ENOB back (SNDR 6.02 ENOB + 1.76 dB for a full-scale sine, here -1
    dBFS referred to full scale)."""
    n = 1 << 15
    r = sine_test(TiAdc(bits=0, fullscale_v=0.5, enob=6.0), FS, 9e9, n=n)
    # noise power estimated from n samples of a Gaussian: relative std sqrt(2 / n), 4 sigma
    tol_db = 10 * np.log10(1 + 4 * np.sqrt(2 / n))
    assert r["enob"] == pytest.approx(6.0, abs=tol_db / 6.02)


def test_quantizer_sndr_is_the_time_domain_error_power():
    """7-bit quantizer, no mismatch: the FFT's SNDR equals the IEEE 1241 three-parameter
    sine fit's (least squares in the time domain), and the residual is near the
    uniform-error value q^2/12."""
    n = 1 << 13
    adc = TiAdc(bits=7, fullscale_v=0.5)
    r = sine_test(adc, FS, 9e9, n=n)
    amp = 0.25 * 10 ** (-1 / 20)
    x = adc.sample_sine(amp, r["f_in_hz"], FS, n, phase_rad=0.3)
    y = naive.quantize(x, adc.lsb_v, 7)
    w = 2 * np.pi * r["f_in_hz"] / FS * np.arange(n)
    basis = np.stack([np.sin(w), np.cos(w), np.ones(n)], axis=1)
    coef, *_ = np.linalg.lstsq(basis, y, rcond=None)
    e = y - basis @ coef
    sig = (coef[0] ** 2 + coef[1] ** 2) / 2
    assert r["sndr_db"] == pytest.approx(10 * np.log10(sig / np.mean(e ** 2)), abs=1e-9)
    assert np.mean(e ** 2) == pytest.approx(adc.lsb_v ** 2 / 12, rel=0.1)


def test_ldo_transfer_and_broadband_rms():
    ldo = Ldo(psrr_db=40.0, pole_hz=1e6)
    assert ldo.psrr(0.0) == pytest.approx(40.0)
    assert ldo.psrr(10e6) == pytest.approx(40 - 10 * np.log10(101))
    assert ldo.psrr(1e12) == 0.0
    # closed form of the integral against quadrature of psd^2 |T|^2
    psd, bw = 1e-6, 1e9
    num, _ = integrate.quad(lambda f: psd ** 2 * ldo.transfer(f) ** 2, 0, bw,
                            points=[1e8], limit=200)
    assert ldo.noise_rms(psd, bw) == pytest.approx(np.sqrt(num), rel=1e-6)


def test_ldo_ripple_gives_the_expected_clock_jitter_tone():
    """A 10 mV tone through PSRR(f) and 0.5 ps/mV: amplitude 0.5 ps x 10 mV x |T(f)|, and
    the sine test shows its phase-modulation sidebands at J1(beta)/J0(beta),
    beta = 2 pi f_in a."""
    n = 1 << 14
    f_r = 12 * FS / n                     # a coherent ripple frequency (~39 MHz)
    sup = SupplyPath(fs_hz=FS, ldo=Ldo(40.0, 1e6), ripple_mv=[10.0], ripple_hz=[f_r],
                     delay_ps_per_mv=0.5)
    t = 10 ** (-40 / 20) * np.sqrt(1 + (f_r / 1e6) ** 2)
    a = 0.5e-12 * 10.0 * t
    assert sup.sj_s[0] == pytest.approx(a, rel=1e-12)
    adc = TiAdc(bits=0, fullscale_v=0.5, supply=sup)
    r = sine_test(adc, FS, 20e9, n=n)
    beta = 2 * np.pi * r["f_in_hz"] * a
    p = r["power"]
    m = int(round(r["f_in_hz"] / FS * n))
    side = 10 * np.log10(p[m + 12] / p[m])
    assert side == pytest.approx(20 * np.log10(special.j1(beta) / special.j0(beta)), abs=1e-6)
    # the delay seen at the samples is the tone itself
    d = sup.delay_s(0, n)
    assert np.max(np.abs(d)) == pytest.approx(a, rel=1e-3)


def test_lane_kernels_match_slow_references():
    g = np.random.default_rng(3)
    x = g.standard_normal(203) * 0.1
    noise = g.standard_normal(203) * 0.01
    gains, offs = 1 + 0.05 * g.standard_normal(5), 0.01 * g.standard_normal(5)
    for bits in (0, 6):
        got = lane_convert(x, noise, gains, offs, 3, 0.5 / 64, bits)
        ref = naive.lane_convert(x, noise, gains, offs, 3, 0.5 / 64, bits)
        np.testing.assert_allclose(got, ref, rtol=0, atol=1e-15)
    m, n_ui, lanes = 8, 6, 3
    p_fines = [np.concatenate([np.zeros(16), g.standard_normal(n_ui * m), np.zeros(16)])
               for _ in range(lanes)]
    a = g.choice([-3.0, -1, 1, 3], 60)
    offsets = g.uniform(-6, 6, 60 - n_ui + 1)
    phase, first = 20.0, 10
    count = 20
    from serdes.kernels.jitter import pulse_rows
    rows = np.stack([pulse_rows(p, m, n_ui, first, count) for p in p_fines])
    got = lane_pulse_sum_rows(a, rows, first, phase, offsets, 2)
    ref = naive.lane_pulse_sum(a, p_fines, m, phase, offsets, n_ui, 2)
    np.testing.assert_allclose(got, ref, rtol=0, atol=1e-12)
    taps = g.standard_normal((lanes, n_ui))
    got = lane_fir(a, taps, 1)
    ref = [a[k:k + n_ui] @ taps[(1 + k) % lanes] for k in range(60 - n_ui + 1)]
    np.testing.assert_allclose(got, ref, rtol=0, atol=1e-12)


def test_adc_command_json_and_errors():
    def cli(*args):
        return subprocess.run([sys.executable, "-m", "serdes.cli", "adc", *args],
                              capture_output=True, text=True)

    r = cli("--fin", "20e9", "--json", "--set", "adc.lanes=4", "--set", "adc.gain_rms=0.01")
    assert r.returncode == 0, r.stderr
    out = json.loads(r.stdout)
    assert {"sndr_db", "enob", "spurs"} <= set(out)
    assert out["spurs"] and {"f_hz", "dbc"} <= set(out["spurs"][0])
    bad = cli("--fin", "40e9")
    assert bad.returncode == 2 and "--fin" in bad.stderr and len(bad.stderr.splitlines()) == 1
    bad = cli("--fin", "1e9", "--set", "adc.lanes=4", "--set", "adc.gains=[1.0, 1.0]")
    assert bad.returncode == 2 and "adc.gains" in bad.stderr
    bad = cli("--fin", "1e9", "--set", "supply.ripple_mv=[1.0]")
    assert bad.returncode == 2 and "supply.ripple_hz" in bad.stderr


def test_supply_gain_modulation_gives_am_sidebands():
    """A regulated ripple of amplitude a (mV) and a gain sensitivity k (%/mV) multiply the
    input by 1 + m sin, m = k a / 100: sidebands at f_in +- f_r of 20 log10(m / 2)."""
    n = 1 << 14
    f_r = 40 * FS / n
    sup = SupplyPath(fs_hz=FS, ldo=Ldo(20.0, 1e8), ripple_mv=[5.0], ripple_hz=[f_r],
                     gain_pct_per_mv=0.2)
    m = 0.2 / 100 * sup.tones_mv[0]
    assert sup.tones_mv[0] == pytest.approx(5.0 * 0.1 * np.sqrt(1 + (f_r / 1e8) ** 2))
    r = sine_test(TiAdc(bits=0, fullscale_v=0.5, supply=sup), FS, 10e9, n=n)
    p = r["power"]
    k = int(round(r["f_in_hz"] / FS * n))
    for b in (k - 40, k + 40):
        assert 10 * np.log10(p[b] / p[k]) == pytest.approx(20 * np.log10(m / 2), abs=1e-6)


def test_a_supply_jitter_past_any_pulse_is_refused_in_one_line(capsys):
    """supply.noise_uv_per_rthz = 1e6 (allowed) with a 0.1 ps/mV delay moves the sampling
    instants by about 1e6 UI: the exact path's pulse rows for that reach were 40 GiB
    (a MemoryError traceback). The error names the supply keys and the size."""
    from serdes.cli import main

    code = main(["run", "--threads", "1", "--set", "link.symbols=20000",
                 "--set", "supply.ripple_mv=[5]", "--set", "supply.ripple_hz=[1e6]",
                 "--set", "supply.delay_ps_per_mv=0.1", "--set", "supply.noise_uv_per_rthz=1e6"])
    err = capsys.readouterr().err.strip()
    assert code == 2 and len(err.splitlines()) == 1
    assert "supply" in err and "GiB" in err
    # a realistic supply noise takes the same path and runs
    assert main(["run", "--threads", "1", "--json", "--set", "link.symbols=20000",
                 "--set", "supply.ripple_mv=[5]", "--set", "supply.ripple_hz=[1e6]",
                 "--set", "supply.delay_ps_per_mv=0.1", "--set", "supply.noise_uv_per_rthz=10"]) == 0


@pytest.mark.parametrize("sets, key", [
    (["adc.gain_rms=0.5"], "adc.gain_rms = 0.5 drew lane"),
    (["adc.bw_hz=40e9", "adc.bw_rms_rel=0.5"], "adc.bw_rms_rel = 0.5 drew lane"),
])
def test_a_drawn_lane_factor_below_zero_names_the_keys_that_drew_it(sets, key, capsys):
    """An rms at the top of its allowed range draws some lane's factor 1 + rms z <= 0
    (2.3 % of the lanes at 0.5; 1024 lanes here): the error named adc.gains or
    adc.bws_hz, keys the user had not set. It now names the rms key and the seed."""
    from serdes.cli import main

    args = ["adc", "--fin", "1e9", "--json", "--set", "adc.lanes=1024"]
    for x in sets:
        args += ["--set", x]
    assert main(args) == 2
    err = capsys.readouterr().err.strip()
    assert len(err.splitlines()) == 1 and key in err and "adc.mismatch_seed" in err
