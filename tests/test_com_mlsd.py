"""COM with the MLSD reference receiver (serdes/com/mlsd.py, 802.3dj 178A.1.10): closed
forms with Gaussian noise (the 1 + D channel among them), a slow direct evaluation of
eq. 178A-50, PyChOpMarg's own functions on the same inputs, and a whole COM run on an
ideal 1 + D thru against the closed form."""

from __future__ import annotations

import dataclasses
import math

import numpy as np
import pytest
from scipy import integrate, stats

from serdes.com import mlsd
from serdes.com.core import compute_com
from serdes.com.params import apply_overrides, preset
from serdes.com.pulse import h_r
from serdes.errors import ConfigError
from tests import naive
from tests.test_com import SYNTHETIC_GAIN, _ideal, _write_s2p


pytestmark = SYNTHETIC_GAIN   # channels with gain by construction (tests/test_com.py)


def _gauss_pmf(n, ystep, sigma):
    y = (np.arange(n) - n // 2) * ystep
    p = np.exp(-y ** 2 / (2 * sigma ** 2))
    return p / p.sum()


def _closed_der(a_s, sigma, b, rho, levels=4, rel=mlsd.TERM_REL):
    """178A-50 with Gaussian n_i: sum u_i n_i ~ N(0, sigma^2 |u|^2), so each term is
    ((L-1)/L)^(j-1) Phi(-A_s |u|^3 / sqrt(u^T V u) / (sigma |u|)); same truncation."""
    der = 0.0
    for j in range(1, len(rho)):
        u = np.convolve((-1.0) ** np.arange(j), [1.0, b])
        k = np.arange(len(u))
        v = u @ (np.asarray(rho)[np.abs(k[:, None] - k[None, :])] @ u)
        term = ((levels - 1) / levels) ** (j - 1) * stats.norm.cdf(
            -a_s * (u @ u) ** 1.5 / math.sqrt(v) / (sigma * math.sqrt(u @ u)))
        der += term
        if term <= rel * der:
            return der, j
    return der, len(rho) - 1


@pytest.mark.parametrize("b", [1.0, 0.5, 0.0])
def test_gaussian_white_noise_closed_form(b):
    """Gaussian noise only, white: g_an = 10^(dCOM_an/10) - 1 (the DER_0 quantile scales
    with sigma), DER_MLSD the sum of Gaussian tails, and the gain 20 log10(sigma_an
    Q^-1(DER_MLSD) / A_s). For 1 + D (b = 1) every event has |u|^2 = 2, so DER_MLSD = 4 (1
    - 0.75^J) Q(sqrt(2) A_s / sigma_an): the MLSD's 3 dB of distance less its multiplicity.
    Tolerances: the grid step (sigma/400) moves a quantile by at most one step, i.e. a
    relative 1/400 of sigma at 4-5 sigma (0.01 dB, 3 % on a tail probability at 5 sigma)."""
    sigma, der0, dcom = 1.0, 1e-4, 3.0
    ystep = sigma / 400
    n = 2 * int(12 * sigma * 10 ** (dcom / 20) / ystep) + 1
    rest = np.zeros(n)
    rest[n // 2] = 1.0
    g_an, p_an = mlsd.added_noise(rest, ystep, sigma ** 2, sigma ** 2, der0, dcom)
    assert 1 + g_an == pytest.approx(10 ** (dcom / 10), rel=2 * 2 / 400)
    sigma_an = sigma * math.sqrt(1 + g_an)
    a_s = 4.5 * sigma_an
    rho = np.r_[1.0, np.zeros(60)]
    der, terms = mlsd.der_mlsd(p_an, ystep, a_s, b, rho, 4)
    der_cf, terms_cf = _closed_der(a_s, sigma_an, b, rho)
    assert der == pytest.approx(der_cf, rel=0.05)
    assert abs(terms - terms_cf) <= 1
    if b == 1.0:
        q = stats.norm.sf(math.sqrt(2) * a_s / sigma_an)
        assert der_cf == pytest.approx(4 * (1 - 0.75 ** terms_cf) * q, rel=1e-9)
    gain = 20 * math.log10(-mlsd.quantile(p_an, ystep, der) / a_s)
    gain_cf = 20 * math.log10(sigma_an * stats.norm.isf(der_cf) / a_s)
    assert gain == pytest.approx(gain_cf, abs=0.01)
    if b == 1.0:
        assert 1.5 < gain < 3.0       # sqrt(2) in distance (3 dB) less the multiplicity
    if b == 0.0:
        assert gain < 0.0             # no ISI: nothing to gain over the DFE


def test_der_mlsd_equals_direct_evaluation():
    """A non-Gaussian p_an (PAM4 delta distribution of three ISI samples convolved with a
    Gaussian), correlated noise and b = 0.6 against tests/naive.com_mlsd_der (direct
    convolutions, explicit rebinning, u from the 178A-51 list): the same formula, so they
    agree to rounding (rel 1e-9)."""
    ystep, n = 0.01, 601
    g = _gauss_pmf(n, ystep, 0.35)
    isi = np.zeros(n)
    isi[n // 2] = 1.0
    for h in (0.3, -0.12, 0.05):
        d = np.zeros(n)
        for lv in (-1, -1 / 3, 1 / 3, 1):
            d[n // 2 + int(round(h * lv / ystep))] += 0.25
        isi = np.convolve(isi, d, mode="same")
    p_an = np.convolve(isi, g, mode="same")
    p_an /= p_an.sum()
    rho = np.r_[1.0, 0.3, -0.1, 0.05, np.zeros(20)]
    a_s = 1.6
    der, terms = mlsd.der_mlsd(p_an, ystep, a_s, 0.6, rho, 4)
    der_ref, terms_ref = naive.com_mlsd_der(p_an, ystep, a_s, 0.6, rho, 4)
    assert terms == terms_ref
    assert der == pytest.approx(der_ref, rel=1e-9)
    assert 1e-7 < der < 1e-2 and terms > 3     # a tail, several event lengths


def test_der_mlsd_past_its_first_batch_of_event_lengths():
    """More than 32 event lengths (a tiny rel_tol and 60 lags): the frequency-domain sum
    grows its transform and starts again, and still equals the direct convolutions of
    tests/naive.com_mlsd_der term for term (rel 1e-9, the same number of lengths)."""
    ystep, n = 0.01, 301
    p_an = _gauss_pmf(n, ystep, 0.3)
    rho = np.r_[1.0, 0.25, np.zeros(60)]
    der, terms = mlsd.der_mlsd(p_an, ystep, 0.35, 0.5, rho, 4, rel_tol=1e-9)
    der_ref, terms_ref = naive.com_mlsd_der(p_an, ystep, 0.35, 0.5, rho, 4, rel_tol=1e-9)
    assert terms == terms_ref and 32 < terms < len(rho) - 1
    assert der == pytest.approx(der_ref, rel=1e-9)


def test_rounding_floor_of_the_fft_convolutions_is_dropped():
    """A narrow noise on a long grid (as in a COM far below zero): the FFT convolution's
    rounding (about eps times the peak in every bin) is set to 0, so the PMF's tails
    trim to the noise's own width and the sums of 178A-50 run on that, not on the whole
    grid; the trimmed mass is below 1e-13 and DER_MLSD equals the direct convolutions'."""
    ystep, n = 0.01, 40001
    rest = np.zeros(n)
    rest[n // 2] = 1.0
    _, p_an = mlsd.added_noise(rest, ystep, 0.04, 0.03, 1e-4, 3.0)
    kept = mlsd._trim(p_an)
    assert len(kept) < n // 20                       # about +-11 sigma of 0.28, not +-200
    assert 1.0 - kept.sum() < 1e-13
    rho = np.r_[1.0, 0.2, np.zeros(30)]
    der, terms = mlsd.der_mlsd(p_an, ystep, 1.0, 0.7, rho, 4)
    der_ref, terms_ref = naive.com_mlsd_der(kept / kept.sum(), ystep, 1.0, 0.7, rho, 4)
    assert terms == terms_ref and der == pytest.approx(der_ref, rel=1e-9)


def test_against_pychopmarg_functions():
    """PyChOpMarg 3.4's der_mlsd and solve_g_an on the same PMFs give the same numbers."""
    pcm = pytest.importorskip("pychopmarg.mlsd")
    ystep, n = 0.01, 1201
    rest = np.zeros(n)
    rest[n // 2] = 1.0
    for h in (0.2, 0.07):
        d = np.zeros(n)
        for lv in (-1, -1 / 3, 1 / 3, 1):
            d[n // 2 + int(round(h * lv / ystep))] += 0.25
        rest = np.convolve(rest, d, mode="same")
    g_an, p_an = mlsd.added_noise(rest, ystep, 0.04, 0.03, 1e-4, 3.0)
    g_ref, p_ref = pcm.solve_g_an(rest, ystep, 0.04, 0.03, 1e-4, 3.0)
    assert g_an == pytest.approx(g_ref, rel=1e-9)
    assert np.allclose(p_an, p_ref, atol=1e-15)
    rho = np.r_[1.0, 0.2, 0.05, np.zeros(30)]
    for b in (0.85, 0.4):
        der, terms = mlsd.der_mlsd(p_an, ystep, 1.5, b, rho, 4)
        der_ref, terms_ref = pcm.der_mlsd(p_ref, ystep, 1.5, b, rho, 4)
        assert terms == terms_ref and der == pytest.approx(der_ref, rel=1e-9)


def test_rx_noise_autocorr_equals_the_integral():
    """eta_0 through an 8th-order Butterworth at 2 f_b, at lags of 0..3 UI: the inverse FFT
    against the cosine integral done by quadrature (rel 1e-3: the 0.1 GHz grid's
    Riemann sum of a smooth integrand)."""
    fb = 53.125e9
    f = np.arange(0, 16 * fb + 0.05e9, 0.1e9)
    fc = 2 * fb
    h = 1 / np.sqrt(1 + (f / fc) ** 8)
    r = mlsd.rx_noise_autocorr(1e-8, f, h, 1 / fb, 4)
    for lag in range(4):
        ref = 1e-8 * integrate.quad(lambda x: 1 / (1 + (x / fc) ** 8), 0, f[-1], weight="cos",
                                    wvar=2 * np.pi * lag / fb, limit=400)[0] / 1e9
        assert r[lag] == pytest.approx(ref, rel=1e-3, abs=1e-3 * abs(r[0]))


def _one_plus_d_params():
    base = _ideal(preset("802.3ck-kr"), eta0=5e-6)
    return dataclasses.replace(base, dfe_max=(1.0,), dfe_min=(0.0,), mlsd=True)


@pytest.fixture(scope="module")
def one_plus_d_file(tmp_path_factory):
    """A thru whose pulse (with the 1-UI rectangle and the reference filter) is (1 + D)
    times a raised-cosine pulse of roll-off 1: UI samples h0 = h1, all others zero."""
    p = _one_plus_d_params()
    fb = p.fb_gbd
    f = np.arange(0, 32 * fb / 2 + 0.05, 0.1)
    x = f / fb
    h = np.zeros(len(f), complex)
    ok = x < 1
    h[ok] = ((1 + np.exp(-2j * np.pi * x[ok])) * np.cos(np.pi * x[ok] / 2) ** 2
             / (np.sinc(x[ok]) * h_r(p, f[ok] * 1e9)))
    return _write_s2p(tmp_path_factory.mktemp("commlsd") / "one_plus_d.s2p", f, h)


def test_com_of_a_one_plus_d_thru(one_plus_d_file):
    """The 1 + D thru, one DFE tap (limit 1), RX noise only (eta_0 through the reference
    filter at 2 f_b): COM_DFE = 20 log10(A_s / (sigma Q^-1(DER_0))) and the MLSD result is
    the Gaussian closed form with the filter's autocorrelation at UI lags (by quadrature)
    and the DFE tap COM chose; the MLSD gains 2-3 dB (3 dB of distance less the error
    events' multiplicity). Tolerance: the pulse's other samples at the cursor phase (a
    voltage bound, as in test_com.py) and one grid step, in dB of A_ni."""
    p = _one_plus_d_params()
    (case,) = compute_com(one_plus_d_file, preset=p).cases
    ml = case.mlsd
    fc = p.f_r * p.fb_gbd
    grid_fmax = 32 * p.fb_gbd / 2

    def r(lag):
        return p.eta0 * integrate.quad(lambda x: 1 / (1 + (x / fc) ** 8), 0, grid_fmax,
                                       weight="cos", wvar=2 * np.pi * lag / p.fb_gbd, limit=400)[0]
    rr = np.array([r(k) for k in range(40)])
    sigma = math.sqrt(rr[0])
    a_s = case.a_s_v
    m = p.samples_per_ui
    ix = case.cursor_ix
    s = case.pulse_eq[ix % m::m].copy()
    n0 = ix // m
    h0 = s[n0]
    s[n0] = 0.0
    s[n0 + 1] -= ml["b"] * h0
    ystep = min(a_s / 1000, 1e-5)
    a_ni = sigma * stats.norm.isf(p.der0)
    tol = 20 * math.log10(1 + (2 * np.abs(s).sum() + 2 * ystep) / a_ni)
    assert tol < 0.05
    assert ml["com_dfe_db"] == pytest.approx(20 * math.log10(a_s / a_ni), abs=tol)
    assert 1 + ml["g_an"] == pytest.approx(10 ** 0.3, rel=0.01)
    sigma_an = sigma * math.sqrt(1 + ml["g_an"])
    der_cf, _ = _closed_der(a_s, sigma_an, ml["b"], rr / rr[0])
    gain_cf = 20 * math.log10(sigma_an * stats.norm.isf(der_cf) / a_s)
    assert ml["gain_db"] == pytest.approx(gain_cf, abs=2 * tol)
    assert ml["b"] > 0.99 and 2.0 < ml["gain_db"] < 3.0
    assert case.com_db == pytest.approx(ml["com_dfe_db"] + ml["gain_db"])
    assert case.as_dict()["mlsd"] == ml


def test_mlsd_key_checks():
    """On only in 802.3dj-kr (D3.3 KR); on needs one DFE tap (one clear line naming the
    key)."""
    for name in ("802.3ck-kr", "802.3ck-cr", "802.3ck-c2c", "802.3ck-c2m", "100gbase-kr4"):
        assert preset(name).mlsd is False
    assert preset("802.3dj-kr").mlsd is True
    p = apply_overrides(preset("802.3dj-kr"), {"mlsd": "false"})
    assert p.mlsd is False
    with pytest.raises(ConfigError, match="mlsd"):
        apply_overrides(preset("802.3ck-kr"), {"mlsd": "true"})
    with pytest.raises(ConfigError, match="mlsd_dcom_an_db"):
        apply_overrides(preset("802.3dj-kr"), {"mlsd": "true", "mlsd_dcom_an_db": "-1"})


def test_closed_eye_gives_no_gain():
    """A DER_MLSD beyond the median of the added-noise distribution (a closed eye) has no
    amplitude: the gain is None and COM stays COM_DFE (no math error)."""
    from types import SimpleNamespace
    ystep, n = 0.01, 801
    g = _gauss_pmf(n, ystep, 0.5)
    y = (np.arange(n) - n // 2) * ystep
    delta = np.zeros(n)
    delta[n // 2] = 1.0
    budget = SimpleNamespace(y=y, a_s=0.1, a_ni=1.0, sigma_tx=0.0, sigma_rj=0.0, sigma_n=0.5,
                             dfe_taps=np.array([0.85]),
                             parts={"p_isi": delta, "p_dd": delta, "p_xt": delta, "p_g": g,
                                    "isi": np.zeros(40), "h_j": np.zeros(40), "xt": []})
    p = preset("802.3dj-kr")
    r = mlsd.mlsd_com(p, budget, -20.0, np.r_[0.25, np.zeros(39)], np.zeros(1), 0.0)
    assert r.der_mlsd > 0.5 and r.gain_db is None and r.com_db == -20.0


def test_added_noise_without_rx_noise_and_with_very_little():
    """The penalty noise is a scale g of the RX noise's variance var_rn, so g var_rn is
    the same whatever var_rn is (to the bisection's 1e-6): with var_rn 1e-280 the
    search used to stop at g = 1e12 with a ValueError traceback (eta0 = 1e-300 on the
    802.3dj preset); with var_rn = 0 (eta0 = 0) there is nothing to scale, which is one
    line, ConfigError."""
    from serdes.errors import ConfigError

    ystep, n = 0.01, 1201
    rest = np.zeros(n)
    rest[n // 2] = 1.0
    d = np.zeros(n)
    for lv in (-1, -1 / 3, 1 / 3, 1):
        d[n // 2 + int(round(0.2 * lv / ystep))] += 0.25
    rest = np.convolve(rest, d, mode="same")
    g1, p1 = mlsd.added_noise(rest, ystep, 0.04, 0.03, 1e-4, 3.0)
    g2, p2 = mlsd.added_noise(rest, ystep, 0.04, 1e-280, 1e-4, 3.0)
    assert g2 * 1e-280 == pytest.approx(g1 * 0.03, rel=3e-6)
    assert np.allclose(p1, p2, atol=1e-9)
    with pytest.raises(ConfigError, match="eta0 = 0 leaves none"):
        mlsd.added_noise(rest, ystep, 0.04, 0.0, 1e-4, 3.0)


@pytest.mark.parametrize("na, nb", [(1, 1), (7, 3), (3, 7), (1001, 1001), (1000, 257),
                                    (8001, 15)])
def test_fft_convolve_is_scipy_signals_fftconvolve(na, nb):
    """The PMF convolutions' own FFT convolution (serdes.com.noise.fft_convolve: scipy.fft
    only) gives scipy.signal.fftconvolve's numbers to the bit, "full" and "same"."""
    from scipy.signal import fftconvolve

    from serdes.com.noise import fft_convolve

    rng = np.random.default_rng(na * 7 + nb)
    a, b = rng.random(na), rng.random(nb)
    for mode in ("full", "same"):
        want = fftconvolve(a, b, mode=mode)
        got = fft_convolve(a, b, mode=mode)
        assert got.shape == want.shape and np.array_equal(got, want)


def test_mlsd_with_quantization_noise_against_pychopmarg():
    """The 802.3dj-kr preset's MLSD COM with its quantization noise (N_qb 6), fixed RX FFE
    taps, one candidate (g_DC -12, g_DC2 -2, TX FFE off), on a synthetic 30 dB line
    whose eye is open at 106.25 GBd, both package cases, against PyChOpMarg 3.4 with
    mlsd=True: the MLSD gain within 0.01 dB, DER_MLSD within 5 %, g_an within 2 %, COM
    within 0.02 dB (measured: gains within 1e-4 dB, DER_MLSD within 3.3 %, g_an within
    0.5 %, COM equal in case 1 and one bin of the A_s / 1000 grid of A_ni apart in case 2,
    0.012 dB; docs/com.md, "MLSD and the C2M eye window")."""
    pytest.importorskip("pychopmarg", reason="PyChOpMarg (peer) not installed")
    import sys
    from pathlib import Path
    sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "benchmarks"))
    from com_pychopmarg_d3p3 import ONE, compare

    rows = list(compare("line30", grid=ONE, quant=True, mlsd=True))
    assert [r["package_case"] for r in rows] == [1, 2]
    for r in rows:
        o, ref = r["mlsd"]["ours"], r["mlsd"]["pychopmarg"]
        assert o["gain_db"] > 0.5 and ref["gain_db"] > 0.5       # the MLSD gains here
        assert abs(o["gain_db"] - ref["gain_db"]) < 0.01
        assert o["der_mlsd"] == pytest.approx(ref["der_mlsd"], rel=0.05)
        assert o["g_an"] == pytest.approx(ref["g_an"], rel=0.02)
        assert abs(r["delta_com_db"]) < 0.02
        assert r["sigma_quant_v"] > 0


def test_text_summary_names_the_mlsd_com_beside_the_dfe_one(one_plus_d_file):
    """With the MLSD on, a case's COM is the MLSD receiver's while A_s, A_ni, the eye and
    VEC are the DFE receiver's: the text summary gives both COMs, so that 20 log10(A_s /
    A_ni) is read as the DFE one; without the MLSD there is no such line."""
    from serdes.commands.com import summary

    p = _one_plus_d_params()
    res = compute_com(one_plus_d_file, preset=p)
    (case,) = res.cases
    ml = case.mlsd
    text = summary(res)
    assert (f"MLSD (178A.1.10): COM {ml['com_db']:.2f} dB, the DFE receiver's "
            f"{ml['com_dfe_db']:.2f} dB") in text
    assert f"COM {case.com_db:.2f} dB  A_s" in text
    assert ml["com_dfe_db"] == pytest.approx(20 * math.log10(case.a_s_v / case.a_ni_v))
    off = compute_com(one_plus_d_file, preset=dataclasses.replace(p, mlsd=False))
    assert off.cases[0].mlsd is None and "MLSD" not in summary(off)
    assert "not modelled" not in text     # nothing of this preset's method left out


def test_report_figure_titles_the_mlsd_com_beside_the_dfe_one(one_plus_d_file, monkeypatch,
                                                              tmp_path):
    """The figure's distribution panel draws the DFE receiver's A_s and A_ni: with the
    MLSD its title gives both COMs."""
    import serdes.plot.eye as ploteye
    from serdes.plot.com import report_figure

    titles = []
    monkeypatch.setattr(ploteye, "save_figure",
                        lambda fig, path, dpi=None: titles.append([a.get_title() for a in fig.axes]))
    p = _one_plus_d_params()
    res = compute_com(one_plus_d_file, preset=p)
    ml = res.cases[0].mlsd
    report_figure(res, tmp_path / "a.png")
    report_figure(compute_com(one_plus_d_file, preset=dataclasses.replace(p, mlsd=False)),
                  tmp_path / "b.png")
    on, off = titles
    assert (f"COM {ml['com_db']:.2f} dB (MLSD; the DFE's {ml['com_dfe_db']:.2f} dB, drawn)"
            in on)
    assert not any("MLSD" in t for t in off)


def test_sweep_columns_carry_the_dfe_com_beside_the_mlsd_one(one_plus_d_file):
    """serdes sweep --com's columns: com_db is the MLSD COM and com_dfe_db the DFE
    receiver's, which com_a_s_mv / com_a_ni_mv give; without the MLSD they are equal."""
    from serdes.com.columns import COM_COLUMNS, com_columns

    p = _one_plus_d_params()
    on = com_columns((one_plus_d_file, [], []), p)
    off = com_columns((one_plus_d_file, [], []), dataclasses.replace(p, mlsd=False))
    assert list(on) == list(COM_COLUMNS) == list(off)
    assert on["com_dfe_db"] == pytest.approx(20 * math.log10(on["com_a_s_mv"] / on["com_a_ni_mv"]))
    assert on["com_db"] > on["com_dfe_db"] + 1.0        # the 1 + D thru's MLSD gain, 2-3 dB
    assert off["com_db"] == off["com_dfe_db"] == pytest.approx(on["com_dfe_db"])


def test_mlsd_com_comes_before_the_window_com(one_plus_d_file):
    """With the MLSD and a C2M timing window both on, COM is the MLSD receiver's, as the
    IEEE code (4.50) reports its MLSE COM when T_O is set too; the window's COM stays in
    eye_window, and without the MLSD it is the case's COM."""
    p = dataclasses.replace(_one_plus_d_params(), eye_t_o_mui=50.0)
    (c,) = compute_com(one_plus_d_file, preset=p).cases
    assert c.com_db == c.mlsd["com_db"] and c.eye_window["com_db"] is not None
    (d,) = compute_com(one_plus_d_file, preset=dataclasses.replace(p, mlsd=False)).cases
    assert d.com_db == d.eye_window["com_db"] < d.eye_window["com_t_s_db"]
    assert d.eye_window["com_t_s_db"] == pytest.approx(c.mlsd["com_dfe_db"])
