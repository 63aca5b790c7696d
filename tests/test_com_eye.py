"""Eye height and VEC at DER_0 (serdes/com/eye.py) against the closed form of an ideal
thru with one echo and white noise (the COM closed-form channel of test_com.py)."""

from __future__ import annotations

import dataclasses
import math

import numpy as np
import pytest
from scipy import integrate, optimize, stats

from serdes.com.core import compute_com
from serdes.com.eye import eye_at_der0
from serdes.com.params import preset
from serdes.com.pulse import ComGrid, h_r
from tests.test_com import SYNTHETIC_GAIN, ECHO, ECHO_UI, _ideal, _write_s2p


pytestmark = SYNTHETIC_GAIN   # channels with gain by construction (tests/test_com.py)


@pytest.fixture(scope="module")
def echo_file(tmp_path_factory):
    fb = preset("802.3ck-kr").fb_gbd
    f = np.arange(0, 32 * fb / 2 + 0.05, 0.1)
    h = 1.0 + ECHO * np.exp(-2j * np.pi * f * ECHO_UI / fb)
    return _write_s2p(tmp_path_factory.mktemp("comeye") / "echo.s2p", f, h)


def test_eye_height_and_vec_closed_form(echo_file):
    """Noise + interference around a level is (echo x PAM4 symbol) + Gaussian, symmetric:
    the lower and upper DER_0 quantiles are both a solving DER_0 = 1/4 sum_v
    Phi((-a - v 0.1 h0)/sigma), so EH = 2 (A_s - a) and VEC = 20 log10(A_s / (A_s - a)).
    Tolerance: the bound on the pulse's other samples at the cursor phase (both sides)."""
    p = _ideal(preset("802.3ck-kr"), eta0=2e-9)
    (case,) = compute_com(echo_file, preset=p).cases
    grid = ComGrid.of(p)
    h0 = case.a_s_v * (p.levels - 1) / p.rlm
    fc = p.f_r * p.fb_gbd
    sigma = math.sqrt(p.eta0 * fc * integrate.quad(lambda x: 1 / (1 + x ** 8), 0,
                                                   grid.f[-1] / 1e9 / fc)[0])
    vals = ECHO * h0 * np.array([-1, -1 / 3, 1 / 3, 1])
    a = optimize.brentq(lambda x: np.mean(stats.norm.cdf((-x - vals) / sigma)) - p.der0, 0, 1)
    ix = case.cursor_ix
    s = case.pulse_eq[ix % grid.m::grid.m].copy()
    n0 = ix // grid.m
    s[[n0, n0 + ECHO_UI]] = 0
    s[n0 + 1:n0 + 1 + len(p.dfe_max)] = 0
    bound = np.abs(s).sum() + 2 * min(case.a_s_v / 1000, 1e-5) + 1e-3 * a
    eh_cf = 2 * (case.a_s_v - a)
    assert abs(case.eye_height_v - eh_cf) <= 2 * bound
    vec_cf = 20 * np.log10(case.a_s_v / (case.a_s_v - a))
    tol_db = 20 * np.log10(1 + 2 * bound / eh_cf)
    assert abs(case.vec_db - vec_cf) <= tol_db
    assert tol_db < 0.1
    # the JSON fields carry the same numbers
    d = case.as_dict()
    assert d["eye_height_v"] == case.eye_height_v and d["vec_db"] == case.vec_db


def test_eye_from_known_distribution_and_closed_eye():
    """A Gaussian PMF alone: both quantiles are sigma Q^-1(DER_0) (to the grid step); a
    noise wider than the level spacing closes the eye (VEC undefined)."""
    step, sigma, a_s, der0 = 1e-5, 1e-3, 5e-3, 1e-4
    y = (np.arange(40001) - 20000) * step
    pdf = np.exp(-y ** 2 / (2 * sigma ** 2))
    eh, vec = eye_at_der0(y, pdf, a_s, der0)
    q = -stats.norm.ppf(der0) * sigma
    assert eh == pytest.approx(2 * (a_s - q), abs=2 * step)
    assert vec == pytest.approx(20 * np.log10(a_s / (a_s - q)), abs=0.01)
    eh, vec = eye_at_der0(y, pdf, 3e-3, der0)
    assert eh < 0 and vec is None


def _rc(t):
    """Raised-cosine pulse of roll-off 1 (t in UI), peak 1, zeros at every other whole UI."""
    t = np.asarray(t, dtype=float)
    den = 1 - (2 * t) ** 2
    out = np.sinc(t) * np.cos(np.pi * t) / np.where(np.abs(den) < 1e-12, 1.0, den)
    return np.where(np.abs(den) < 1e-12, np.pi / 4 * np.sinc(0.5), out)


def _rc_params(t_o):
    base = _ideal(preset("802.3ck-kr"), eta0=2e-7)
    return dataclasses.replace(base, dfe_max=(1.0,) * 12, dfe_min=(-1.0,) * 12, eye_t_o_mui=t_o)


@pytest.fixture(scope="module")
def rc_file(tmp_path_factory):
    """A thru whose pulse (with the 1-UI rectangle and the reference filter) is A_v times
    the raised-cosine pulse: no ISI at T_s, known ISI and amplitude at every offset."""
    p = _rc_params(0.0)
    fb = p.fb_gbd
    f = np.arange(0, 32 * fb / 2 + 0.05, 0.1)
    x = f / fb
    h = np.zeros(len(f), complex)
    ok = x < 1
    h[ok] = np.cos(np.pi * x[ok] / 2) ** 2 / (np.sinc(x[ok]) * h_r(p, f[ok] * 1e9))
    return _write_s2p(tmp_path_factory.mktemp("comeyew") / "rc.s2p", f, h)


@pytest.mark.parametrize("sigma_r", [0.0, 0.02])
def test_eye_over_the_c2m_window_closed_form(rc_file, sigma_r):
    """T_O = 100 mUI at 100 points per UI: offsets d = -0.10..0.10 UI, weighted equally
    (sigma_r = 0) or by the Gaussian histogram window exp(-d^2 / (2 sigma_r^2)) (the IEEE
    code's window; sigma_r in UI). At each offset level n sits at RLM A_v r(d) v_n
    (v_n = -1, -1/3, 1/3, 1) with ISI A_v r(d + k) x_k (k != 0, x_k PAM4) and the Gaussian
    RX noise; each level's pooled CDF is sum_d w_d E_x Phi((y - mean - ISI) / sigma) /
    sum_d w_d, exact over |k| <= 3 (4^6 symbol patterns); eye n runs from the upper DER_0
    quantile of level n to the lower one of level n + 1, and EH is the worst eye (its
    levels' means move by different amounts over the window). Tolerance: the ISI
    beyond |k| = 3 (a voltage bound from r), the linear interpolation of the 32-per-UI
    pulse (A_v max|r''| / (8 x 32^2)) and two grid steps. The per-offset minimum is
    checked the same way, and a window narrower than one sample gives the eye at T_s."""
    p = dataclasses.replace(_rc_params(100.0), eye_sigma_r_ui=sigma_r)
    (case,) = compute_com(rc_file, preset=p).cases
    ew = case.eye_window
    assert ew["offsets"] == 21 and ew["window"] == ("gaussian" if sigma_r else "rectangle")
    assert ew["passes"] is None          # no limits set (the C2M preset sets 10 mV, 12 dB)
    assert case.pulse_eq[case.cursor_ix] == pytest.approx(p.a_v, rel=1e-3)
    fc = p.f_r * p.fb_gbd
    sigma = math.sqrt(p.eta0 * integrate.quad(lambda x: 1 / (1 + (x / fc) ** 8), 0, 16 * p.fb_gbd)[0])
    ds = np.arange(-10, 11) / 100
    w = np.exp(-0.5 * (ds / sigma_r) ** 2) if sigma_r else np.ones(len(ds))
    ks = np.array([-3, -2, -1, 1, 2, 3])
    lv = np.array([-1, -1 / 3, 1 / 3, 1])
    pats = np.array(np.meshgrid(*[lv] * len(ks), indexing="ij")).reshape(len(ks), -1)
    isi = [p.a_v * (_rc(d + ks) @ pats) for d in ds]
    means = [[p.rlm * p.a_v * _rc(d) * v for v in lv] for d in ds]
    far = np.r_[np.arange(-400, -3), np.arange(4, 400)]
    tt = np.linspace(-0.2, 0.2, 401)
    curv = np.max(np.abs(np.gradient(np.gradient(_rc(tt), tt), tt)))
    bound = (max(p.a_v * np.abs(_rc(d + far)).sum() for d in ds) + p.a_v * curv / (8 * 32 ** 2) * 8
             + 2 * min(case.a_s_v / 1000, 1e-5))

    def cdf(y, n, sel):
        return sum(w[i] * np.mean(stats.norm.cdf((y - means[i][n] - isi[i]) / sigma)) for i in sel) / w[sel].sum()

    def eh(n, sel):
        top = optimize.brentq(lambda y: cdf(y, n + 1, sel) - p.der0, -1, 1)
        bot = optimize.brentq(lambda y: 1 - cdf(y, n, sel) - p.der0, -1, 1)
        return top - bot

    allsel = np.arange(len(ds))
    want = min(eh(n, allsel) for n in range(3))
    assert ew["eye_height_v"] == pytest.approx(want, abs=2 * bound)
    each = min(eh(n, np.array([i])) for i in (0, 10, 20) for n in range(3))
    assert ew["eye_height_min_v"] == pytest.approx(each, abs=2 * bound)
    assert ew["eye_height_v"] < case.eye_height_v - 4 * bound      # the window costs height
    assert ew["vec_db"] == pytest.approx(20 * np.log10(2 * case.a_s_v / ew["eye_height_v"]))
    # the COM the IEEE code reports with T_O set, 20 log10(2 A_s / (2 A_s - EH)), of the
    # closed-form EH: its slope, 20 / ln 10 / (2 A_s - EH) dB per volt, carries EH's
    # tolerance
    a_ni_w = 2 * case.a_s_v - want
    assert ew["com_db"] == pytest.approx(20 * np.log10(2 * case.a_s_v / a_ni_w),
                                         abs=20 / np.log(10) * 2 * bound / (a_ni_w - 2 * bound))
    # it is the case's COM, as the code reports it; A_s / A_ni stay those of T_s
    assert case.com_db == ew["com_db"]
    assert ew["com_t_s_db"] == pytest.approx(20 * np.log10(case.a_s_v / case.a_ni_v))
    assert ew["com_db"] < ew["com_t_s_db"]       # the window's eye is the smaller one
    (c0,) = compute_com(rc_file, preset=dataclasses.replace(p, eye_t_o_mui=5.0)).cases
    assert c0.eye_window["offsets"] == 1
    step = min(c0.a_s_v / 1000, 1e-5)
    assert c0.eye_window["eye_height_v"] == pytest.approx(c0.eye_height_v, abs=2 * step)
    # one offset: EH = 2 (A_s - A_ni), so the IEEE form is the COM at T_s (two grid steps
    # of EH through the same slope)
    assert c0.com_db == c0.eye_window["com_db"] == pytest.approx(
        c0.eye_window["com_t_s_db"], abs=20 / np.log(10) * 2 * step / (2 * c0.a_ni_v - 2 * step))
    # without the window the case's COM is that of T_s
    (cn,) = compute_com(rc_file, preset=dataclasses.replace(p, eye_t_o_mui=0.0)).cases
    assert cn.eye_window is None and cn.com_db == pytest.approx(ew["com_t_s_db"])


def test_gaussian_window_weights_follow_sigma_r():
    """The IEEE code's QL = T_O / sigma_r / 1000 with sigma = n / QL samples is sigma_r in
    UI: at T_O 50 mUI, 100 points per UI, the C2M sheet's sigma_r 0.02 UI gives
    exp(-k^2 / 8) for k = -5..5."""
    from serdes.com.eye import window_weights

    p = preset("802.3ck-c2m")
    assert p.eye_t_o_mui == 50.0 and p.eye_sigma_r_ui == 0.02 and p.eye_samples_per_ui == 100
    assert p.eye_eh_min_mv == 10.0 and p.eye_vec_max_db == 12.0
    k = np.arange(-5, 6)
    np.testing.assert_allclose(window_weights(p), np.exp(-k ** 2 / 8.0), rtol=1e-12)
    np.testing.assert_allclose(window_weights(dataclasses.replace(p, eye_sigma_r_ui=0.0)), 1.0)
    # a tiny sigma_r (allowed: [0, 1] UI) weighs the centre alone, without an overflow
    # warning (it printed "serdes: warning: overflow encountered in square")
    import warnings

    with warnings.catch_warnings():
        warnings.simplefilter("error")
        w = window_weights(dataclasses.replace(p, eye_sigma_r_ui=1e-300))
    assert np.array_equal(w, (k == 0).astype(float))


@pytest.mark.parametrize("name, t_o, veo, off, search_off", [
    ("802.3ck-c2m", None, None, False, False), ("802.3ck-c2m", 0.0, None, True, False),
    ("802.3ck-c2m", None, 0.0, False, True),
    ("802.3ck-kr", None, None, False, False), ("802.3dj-kr", None, None, False, False),
    ("100gbase-kr4", None, None, False, False)])
def test_not_modelled_names_the_c2m_window_only_where_the_preset_has_one(name, t_o, veo, off,
                                                                         search_off):
    """The JSON's not_modelled (and the text's last line) lists the C2M timing window only
    when a preset that judges its eye over T_O ran with T_O = 0; KR, CR, C2C and the
    Clause 93 set have no such window (it was listed for every one of them). The IEEE
    code's C2M-mode search is listed when the C2M preset runs with the window but
    Min_VEO_Test = 0 (the sheet's 5 mV is the preset's)."""
    from types import SimpleNamespace

    from serdes.com.core import ComResult

    p = preset(name)
    if t_o is not None:
        p = dataclasses.replace(p, eye_t_o_mui=t_o)
    if veo is not None:
        p = dataclasses.replace(p, eye_min_veo_test_mv=veo)
    case = SimpleNamespace(com_db=1.0, eye_window=None, as_dict=lambda: {})
    text = ComResult(name, p, "thru.s4p", [], [], [case], 0.0).as_dict()["not_modelled"]
    assert ("C2M eye timing window" in text) == off
    assert ("C2M-mode search" in text) == search_off


def test_text_summary_gives_the_window_eye_and_its_verdict(rc_file):
    """The text summary prints the eye over T_s +- T_O (the C2M criteria) under the eye at
    T_s, with pass / FAIL against the preset's limits where it has them (the JSON's
    eye_window had it, the text did not)."""
    from serdes.commands.com import summary

    p = _rc_params(100.0)
    res = compute_com(rc_file, preset=p)
    ew = res.cases[0].eye_window
    line = (f"  over T_s +- 100 mUI (rectangle window, 21 offsets): eye height "
            f"{ew['eye_height_v'] * 1e3:.2f} mV, VEC {ew['vec_db']:.2f} dB")
    assert line + "\n" in summary(res) + "\n"          # no limits: no verdict
    assert (f"\n    COM over the window (the IEEE code's with T_O), 20 log10(2 A_s / (2 A_s - "
            f"EH)): {ew['com_db']:.2f} dB; at T_s {ew['com_t_s_db']:.2f} dB (A_s, A_ni and the "
            f"eye at T_s are its)\n") in summary(res) + "\n"
    assert f"case 1 (z_p TX/RX 0/0 mm): COM {ew['com_db']:.2f} dB  A_s" in summary(res)
    eh_mv = ew["eye_height_v"] * 1e3
    assert res.eye_window_passes() is None and "C2M eye over" not in summary(res)
    assert res.as_dict()["eye_window_passes"] is None
    for lim, word in ((0.5 * eh_mv, "pass"), (2 * eh_mv, "FAIL")):
        r = compute_com(rc_file, preset=dataclasses.replace(p, eye_eh_min_mv=lim,
                                                            eye_vec_max_db=30.0))
        assert r.cases[0].eye_window["passes"] == (word == "pass")
        assert f"{line}: {word} (eye height >= {lim:g} mV, VEC <= 30 dB)" in summary(r)
        # the channel's verdict: its second line, and eye_window_passes in the JSON
        assert r.eye_window_passes() == r.as_dict()["eye_window_passes"] == (word == "pass")
        assert summary(r).splitlines()[1] == "C2M eye over T_s +- 100 mUI: " + (
            "pass in every package case" if word == "pass" else "FAIL in package case 1")
    r0 = compute_com(rc_file, preset=dataclasses.replace(p, eye_t_o_mui=0.0))
    assert "over T_s" not in summary(r0) and "eye_window_passes" not in r0.as_dict()


def test_sweep_columns_carry_the_window_eye(rc_file):
    """serdes sweep --com: the eye over the C2M window, its verdict and the IEEE code's COM
    there are columns of the worst case (the C2M criteria were only in compute_com's
    result); null where the preset has no window."""
    from serdes.com.columns import COM_COLUMNS, com_columns

    p = dataclasses.replace(_rc_params(100.0), eye_eh_min_mv=1.0, eye_vec_max_db=30.0)
    on = com_columns((rc_file, [], []), p)
    (case,) = compute_com(rc_file, preset=p).cases
    ew = case.eye_window
    assert list(on) == list(COM_COLUMNS)
    # com_db is the window's COM, com_dfe_db that of A_s / A_ni at T_s
    assert on["com_db"] == on["com_window_db"] == pytest.approx(case.com_db)
    assert on["com_dfe_db"] == pytest.approx(20 * np.log10(on["com_a_s_mv"] / on["com_a_ni_mv"]))
    assert on["com_window_eye_height_mv"] == pytest.approx(1e3 * ew["eye_height_v"])
    assert (on["com_window_vec_db"], on["com_window_passes"], on["com_window_db"]) == (
        pytest.approx(ew["vec_db"]), True, pytest.approx(ew["com_db"]))
    off = com_columns((rc_file, [], []), dataclasses.replace(p, eye_t_o_mui=0.0))
    assert [off[k] for k in COM_COLUMNS if k.startswith("com_window")] == [None] * 4
    assert off["com_db"] == off["com_dfe_db"] == pytest.approx(on["com_dfe_db"])


def test_report_figure_gives_the_window_eye(rc_file, monkeypatch, tmp_path):
    """The report figure's title gives the drawn case's eye over the C2M window and its
    verdict (the figure showed the eye at T_s only)."""
    import serdes.plot.eye as ploteye
    from serdes.plot.com import report_figure

    p = dataclasses.replace(_rc_params(100.0), eye_eh_min_mv=1.0, eye_vec_max_db=30.0)
    res = compute_com(rc_file, preset=p)
    ew = res.cases[0].eye_window
    seen = []
    monkeypatch.setattr(ploteye, "save_figure", lambda fig, path, dpi=None: seen.append(
        [fig._suptitle.get_text()] + [a.get_title() for a in fig.axes]))
    report_figure(res, tmp_path / "a.png")
    assert seen[0][0].endswith(f"(package case 1); over T_s +- 100 mUI eye height "
                               f"{ew['eye_height_v'] * 1e3:.2f} mV, VEC {ew['vec_db']:.2f} dB "
                               "(pass)")
    # the distribution panel draws T_s's distribution under the window's COM
    assert (f"COM {ew['com_db']:.2f} dB (over the window; at T_s {ew['com_t_s_db']:.2f} dB, "
            "drawn)") in seen[0]
    r0 = compute_com(rc_file, preset=dataclasses.replace(p, eye_t_o_mui=0.0))
    report_figure(r0, tmp_path / "b.png")
    assert seen[1][0].endswith("(package case 1)")
    assert f"COM {r0.cases[0].com_db:.2f} dB" in seen[1]
