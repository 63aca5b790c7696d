"""COM (serdes/com): closed form on a synthetic channel, the vectorized FOM search against
a slow direct evaluation, PyChOpMarg at the same equalization, and the CLI interface."""

from __future__ import annotations

import dataclasses
import json
import math

import numpy as np
import pytest
from scipy import integrate, optimize, stats

from serdes.cli import main as cli_main
from serdes.com import fom as comfom
from serdes.com.core import compute_com
from serdes.com.params import PRESETS, apply_overrides, preset
from serdes.com.pulse import ComGrid, channel_vtf, read_channel, xsinc


# The closed-form channels of these tests (an ideal thru with an echo, 1 + D) have a gain
# above 1 by construction, so their files warn as not passive; that warning is tested in
# tests/test_touchstone.py.
SYNTHETIC_GAIN = pytest.mark.filterwarnings(
    "ignore:.*not passive, largest singular value of S is:RuntimeWarning")
pytestmark = SYNTHETIC_GAIN

ECHO_UI = 20
ECHO = 0.1


def _write_s2p(path, f_ghz, s21):
    with open(path, "w") as fh:
        fh.write("# GHz S RI R 50\n")
        for f, h in zip(f_ghz, s21):
            fh.write(f"{f:.6f} 0 0 {h.real:.12e} {h.imag:.12e} {h.real:.12e} {h.imag:.12e} 0 0\n")
    return path


def _ideal(p, **kw):
    """No package, no TX edge, a flat CTLE and a wide reference filter (2 f_b), one TX setting."""
    none = {k: (0.0,) for k in ("tx", "next", "fext", "rx")}
    base = dict(c_d=(0.0,), l_s=(0.0,), c_b=0.0, c_p=0.0, z_c=(100.0,), cases=(none,),
                t_r_ns=0.0, f_r=2.0, g_dc=(0.0,), g_dc2=(0.0,), f_z_ghz=1e7, f_p1_ghz=1e7,
                f_p2_ghz=1e7, tx_min=(0.0,) * 4, tx_max=(0.0,) * 4, tx_step=(0.0,) * 4,
                samples_per_ui=32, f_step_ghz=0.1, snr_tx_db=300.0, sigma_rj=0.0, a_dd=0.0,
                # symmetric DFE limits (the preset's b_min(1) = 0.3 would add ISI to a flat channel)
                dfe_max=(0.85,) + (0.3,) * 11, dfe_min=(0.0,) + (-0.3,) * 11,
                dfe_n_bg=0)   # fixed taps only (floating taps: tests/test_com_float.py)
    base.update(kw)
    return dataclasses.replace(p, **base)


@pytest.fixture(scope="module")
def echo_file(tmp_path_factory):
    p = preset("802.3ck-kr")
    fb = p.fb_gbd
    f = np.arange(0, 32 * fb / 2 + 0.05, 0.1)
    h = 1.0 + ECHO * np.exp(-2j * np.pi * f * ECHO_UI / fb)
    return _write_s2p(tmp_path_factory.mktemp("com") / "echo.s2p", f, h)


def test_a_tiny_signal_leaves_the_rx_noise_quantile(echo_file):
    """With A_v = 1e-9 V the signal and every term that scales with it (TX noise, ISI,
    jitter) vanish beside the RX noise, so A_ni is the Gaussian's DER_0 quantile,
    sigma_n Q^-1(DER_0). The distribution's step is A_s / 1000: here that asked for
    1e11 points (an allocation of 684 GiB, a MemoryError traceback); the step now grows
    to keep MAX_PDF_POINTS, and A_ni still comes out to 1e-6 of the closed form."""
    from serdes.com import noise as comnoise

    p = _ideal(preset("802.3ck-kr"), eta0=2e-9, a_v=1e-9)
    res = compute_com(echo_file, preset=p)
    c = res.cases[0]
    assert len(c.y) <= comnoise.MAX_PDF_POINTS
    q = stats.norm.isf(p.der0)
    assert c.a_ni_v == pytest.approx(c.sigmas_v["rx_noise"] * q, rel=1e-6)
    assert c.com_db == pytest.approx(20 * math.log10(c.a_s_v / c.a_ni_v), abs=1e-9)
    assert c.com_db < -100


def test_closed_form_echo_and_white_noise(echo_file):
    """An ideal thru with one echo of 0.1 at 20 UI (beyond the 12 DFE taps) and white RX
    noise only: the noise + interference is (echo x a PAM4 symbol) + Gaussian, so
    DER_0 = 1/4 sum_v Phi((-A_ni - v 0.1 h0) / sigma), v in {+-1, +-1/3}, with sigma^2 =
    eta_0 f_c int_0^{f_max/f_c} dx / (1 + x^8) (the 4th-order Butterworth at f_c = 2 f_b)."""
    p = _ideal(preset("802.3ck-kr"), eta0=2e-9)
    res = compute_com(echo_file, preset=p)
    (case,) = res.cases
    h0 = case.a_s_v * (p.levels - 1) / p.rlm
    # the rectangular UI pulse of amplitude A_v sampled on its top: the Mueller-Mueller
    # condition holds all along the flat top (h(+-1 UI) = 0), where the Butterworth step
    # response still ripples by a few per cent
    assert h0 == pytest.approx(p.a_v, rel=0.03)
    grid = ComGrid.of(p)
    fc = p.f_r * p.fb_gbd
    sigma = math.sqrt(p.eta0 * fc * integrate.quad(lambda x: 1 / (1 + x ** 8), 0,
                                                   grid.f[-1] / 1e9 / fc)[0])
    assert case.sigmas_v["rx_noise"] == pytest.approx(sigma, rel=2e-3)  # sum vs integral
    vals = ECHO * h0 * np.array([-1, -1 / 3, 1 / 3, 1])

    def der(a):
        return np.mean(stats.norm.cdf((-a - vals) / sigma)) - p.der0

    a_ni = optimize.brentq(der, 0, 1)
    # other ISI: every sample at the cursor phase but the cursor, the echo and the DFE
    # span (cancelled: its taps are within their limits), a bound
    ix = case.cursor_ix
    s = case.pulse_eq[ix % grid.m::grid.m].copy()
    n0 = ix // grid.m
    nb = len(p.dfe_max)
    assert np.all(np.abs(s[n0 + 1:n0 + 1 + nb] / s[n0]) < np.array(p.dfe_max))
    s[[n0, n0 + ECHO_UI]] = 0
    s[n0 + 1:n0 + 1 + nb] = 0
    bound = np.abs(s).sum() + 2 * min(case.a_s_v / 1000, 1e-5)
    assert abs(case.a_ni_v - a_ni) <= bound + 1e-3 * a_ni
    com_cf = 20 * np.log10(case.a_s_v / a_ni)
    tol_db = 20 * np.log10(1 + (bound + 1e-3 * a_ni) / a_ni)
    assert abs(case.com_db - com_cf) <= tol_db
    assert tol_db < 0.3  # the bound is tight enough to mean something


def _fom_direct(p, grid, vtfs, kinds, gdc, gdc2, taps):
    """FOM of one setting the slow obvious way: the equalized pulses by FFT, the cursor by
    a loop over candidates, sums over every sample (eqs. 93A-25..36)."""
    from serdes.com.pulse import ctle, h_r

    m, L = grid.m, p.levels
    var_x = (L ** 2 - 1) / (3 * (L - 1) ** 2)
    f = grid.f
    offs = comfom.tx_offsets(p)
    htx = sum(c * np.exp(-2j * np.pi * f * k / grid.fb_hz) for c, k in zip(taps, offs))
    hc = ctle(p, f, gdc, gdc2)
    pv = np.fft.irfft(xsinc(grid) * vtfs[0] * hc * htx) * p.a_v
    pk = int(np.argmax(pv))
    best, exact = None, []
    for ix in range(pk - m, pk + m):
        if pv[ix] <= 0:
            continue
        b1 = min(p.dfe_max[0], max(p.dfe_min[0], pv[ix + m] / pv[ix]))
        r = abs(pv[ix - m] - (pv[ix + m] - b1 * pv[ix]))
        if r < comfom.MM_EPS:
            exact.append(ix)
        elif best is None or r < best[0]:
            best = (r, ix)
    if exact:
        pre = [i for i in exact if i <= pk]
        ix = pre[-1] if pre else exact[0]
    else:
        ix = best[1]
    h = pv[ix % m::m]
    n0 = ix // m
    h0 = h[n0]
    isi = h.copy()
    isi[n0] = 0
    for j in range(len(p.dfe_max)):
        b = min(p.dfe_max[j], max(p.dfe_min[j], isi[n0 + 1 + j] / h0))
        isi[n0 + 1 + j] -= b * h0
    if p.dfe_n_bg:   # floating taps placed by the literal reference of the IEEE code's rule
        from naive import com_float_banks

        lo = n0 + 1 + len(p.dfe_max)
        seg = isi[lo:n0 + 1 + p.dfe_n_f].copy()
        t = np.zeros(len(seg))
        for i in com_float_banks(seg, h0, p.dfe_n_bf, p.dfe_n_bg, p.dfe_bmaxg):
            t[i] = min(p.dfe_bmaxg, max(-p.dfe_bmaxg, seg[i] / h0))
        k = p.dfe_tail_start - len(p.dfe_max) - 1
        rss = np.sqrt(np.sum(t[k:] ** 2))
        if p.dfe_tail_start and rss > 0 and rss >= p.dfe_b_rss_max:
            t[k:] *= p.dfe_b_rss_max / rss
        isi[lo:lo + len(seg)] -= t * h0
    pad = np.pad(pv, 1)
    ixs = ix % m + m * np.arange(len(pv) // m)
    hj = (pad[ixs + 2] - pad[ixs]) * m / 2
    xt = 0.0
    for v, kind in zip(vtfs[1:], kinds):
        amp = p.a_ne if kind == "next" else p.a_fe
        pa = np.fft.irfft(xsinc(grid) * v * hc * (1 if kind == "next" else htx)) * amp
        xt += max(np.sum(pa[k::m] ** 2) for k in range(m))
    var_n = p.eta0 * np.sum(np.abs(h_r(p, f) * hc) ** 2) * (f[1] - f[0]) / 1e9
    a_s = p.rlm * h0 / (L - 1)
    den = (h0 ** 2 * 10 ** (-p.snr_tx_db / 10) + var_x * np.sum(isi ** 2)
           + (p.a_dd ** 2 + p.sigma_rj ** 2) * var_x * np.sum(hj ** 2) + var_x * xt + var_n)
    return 10 * np.log10(a_s ** 2 / den)


@pytest.mark.parametrize("floating", [False, True])
def test_vectorized_search_equals_direct_evaluation(echo_file, tmp_path, floating):
    """Every FOM of the vectorized search equals the slow direct evaluation (same maths,
    different arithmetic: agreement to 1e-5 dB, the differences being the samples at
    the ends of the circular window, where the search sums linearly) on a channel with ISI and one aggressor
    of each kind. ``floating``: the KR sheet's floating DFE taps, with two late echoes
    (17.5 and 30.5 UI, the second in the tail of the RSS limit) for them to take."""
    p0 = preset("802.3ck-kr")
    fb = p0.fb_gbd
    f = np.arange(0, 32 * fb / 2 + 0.05, 0.1)
    late = (0.06 * np.exp(-2j * np.pi * f * 17.5 / fb) + 0.04 * np.exp(-2j * np.pi * f * 30.5 / fb)
            if floating else 0.0)
    lossy = np.exp(-(0.6 * f / fb * (1 + 1j)) - 2j * np.pi * f * 0.3) * (1 + 0.05 * np.exp(-2j * np.pi * f * 3.5 / fb) + late)
    thru = _write_s2p(tmp_path / "lossy.s2p", f, lossy)
    xt = _write_s2p(tmp_path / "xt.s2p", f, 0.02 * np.exp(-2j * np.pi * f * 0.31) * f / f[-1])
    p = _ideal(p0, c_d=(1.2e-4,), l_s=(0.12,), c_b=0.3e-4, c_p=0.87e-4, z_c=(87.5, 92.5),
               cases=({k: (12.0, 1.8) for k in ("tx", "next", "fext", "rx")},),
               t_r_ns=0.004, f_r=0.75, g_dc=(-6.0, -4.0), g_dc2=(-2.0,), f_z_ghz=fb / 2.5,
               f_p1_ghz=fb / 2.5, f_p2_ghz=fb, tx_min=(0.0, 0.0, -0.2, -0.2),
               tx_max=(0.0, 0.04, 0.0, 0.0), tx_step=(0.02, 0.02, 0.1, 0.1),
               snr_tx_db=33.0, sigma_rj=0.01, a_dd=0.02, dfe_max=p0.dfe_max, dfe_min=p0.dfe_min,
               dfe_n_bg=p0.dfe_n_bg if floating else 0)
    grid = ComGrid.of(p)
    chans = [read_channel(thru, "thru"), read_channel(xt, "fext"), read_channel(xt, "next")]
    vtfs = [channel_vtf(p, grid, c, p.cases[0]) for c in chans]
    best = comfom.search(p, grid, vtfs, ["fext", "next"])
    C = comfom.full_taps(p, p.tx_grid)
    assert len(C) == 3 * 3 * 3
    for k in range(len(C)):
        ref = _fom_direct(p, grid, vtfs, ["fext", "next"], best.g_dc, best.g_dc2, C[k])
        assert best.tx_fom_at_best[k] == pytest.approx(ref, abs=1e-5)


def test_presets_and_package_table_agree():
    from serdes.presets import PACKAGE_PRESETS

    assert set(PRESETS) == {"802.3ck-kr", "802.3ck-cr", "802.3ck-c2c", "802.3ck-c2m",
                            "802.3dj-kr", "100gbase-kr4"}
    for name in ("802.3ck-kr", "802.3dj-kr"):
        pk, cp = PACKAGE_PRESETS[name], PRESETS[name]
        assert tuple(pk["c_d_nf"]) == cp.c_d and pk["c_p_nf"] == cp.c_p
        assert tuple(pk["z_c_ohm"]) == cp.z_c and (pk["a1"], pk["a2"]) == (cp.a1, cp.a2)
    # the 802.3ck TX grid: c(-3) 4 x c(-2) 7 x c(-1) 18 x c(1) 11 with c(0) >= 0.54
    g = PRESETS["802.3ck-kr"].tx_grid
    assert g.shape[1] == 4 and np.all(1 - np.abs(g).sum(axis=1) >= 0.54 - 1e-12)
    assert len(g) < 4 * 7 * 18 * 11


# The 802.3ck COM configuration sheets of the task force's final set
# (config_com_ieee8023_93a=3ck_SA_KR_08_17_2022.xlsx, ..._SA_CR_CA_08_17_2022, ..._SA_120F_C2C_
# 08_17_2022 and ..._SA_120g_C2M_tp1a_08_17_2022, sheet COM_Settings, as published in the COM
# code repository Omer-Sella/COM, config_sheets_100G/), values written out here from the
# sheets, independently of serdes/com/params.py. Units as in the sheets. The KR and C2C values
# also agree with the earlier d3p1 sheets as transcribed in cortalo/serdeskit.
_KR = dict(
    fb_gbd=53.125, levels=4, samples_per_ui=32, f_step_ghz=0.01, der0=1e-4, a_v=0.413,
    a_fe=0.413, a_ne=0.608, eta0=8.2e-9, snr_tx_db=33.0, rlm=0.95, sigma_rj=0.01, a_dd=0.02,
    t_r_ns=0.0075, f_r=0.75, r0=50.0, f_z_ghz=21.25, f_p1_ghz=21.25, f_p2_ghz=53.125,
    f_lf_ghz=0.6640625, g_dc=list(range(-20, 1)), g_dc2=list(range(-6, 1)), c0_min=0.54,
    tx=[(-0.06, 0.0), (0.0, 0.12), (-0.34, 0.0), (-0.2, 0.0)],
    b_max=[0.85, 0.3, 0.2, 0.2, 0.2, 0.2, 0.2, 0.1, 0.1, 0.1, 0.1, 0.1],
    b_min=[0.3, 0.05] + [-0.03] * 10,
    # ERL: rho_x, beta_x, N_bx, fixture delay time (ns, both ports), N
    erl_rho_x=0.618, erl_beta_x_ghz=0.0, erl_n_bx=21, erl_t_fx_ns=0.0, erl_n_ui=3500,
    # ERL as the IEEE code computes it: TR_TDR (ns), Tukey_Window, TDR_W_TXPKG, ERL Pass
    # threshold (dB)
    erl_tr_tdr_ns=0.01, erl_tukey=True, erl_tdr_w_txpkg=False, erl_limit_db=9.7)
# the floating DFE taps: N_bg, N_bf, N_f, N_tail_start, B_float_RSS_MAX, bmaxg (KR 0.05,
# CR 0.03); the C2C sheet has N_bg 0, the C2M sheet no such keys
_FLOAT = dict(dfe_n_bg=3, dfe_n_bf=3, dfe_n_f=40, dfe_tail_start=25, dfe_b_rss_max=0.02)
SHEETS = {
    "802.3ck-kr": dict(_KR, **_FLOAT, dfe_bmaxg=0.05),
    "802.3ck-cr": dict(_KR, **_FLOAT, dfe_bmaxg=0.03, eta0=9e-9, snr_tx_db=32.5, erl_n_bx=0, erl_t_fx_ns=0.3,
                       erl_n_ui=4500, erl_limit_db=8.25,
                       # Include PCB = 1: z_bp TX, NEXT, FEXT, RX; board_Z_c; board_tl
                       # gamma0 a1 a2, tau; C_0, C_1 (nF)
                       include_pcb=True, board_mm=[110.3] * 4, board_z_c=100.0,
                       board_line=[0.0, 3.8206e-4, 9.5909e-5, 5.79e-3],
                       board_c0_nf=0.29e-4, board_c1_nf=0.19e-4),
    "802.3ck-c2c": dict(
        _KR, der0=1e-5, eta0=2e-8, g_dc2=list(range(-4, 1)),
        tx=[(-0.04, 0.0), (0.0, 0.1), (-0.28, 0.0), (-0.1, 0.0)],
        b_max=[0.65, 0.15, 0.1, 0.1, 0.1, 0.1], b_min=[0.3, 0.05, -0.04, -0.04, -0.04, -0.04],
        erl_n_bx=6, erl_n_ui=2000, dfe_n_bg=0),
    # b_min(2..N_b) reads "[ -0.15 - 0.15 - 0.05 ]": MATLAB's eval gives one number, -0.35
    # (binary minus between spaces), which the IEEE code assigns to taps 2..4
    "802.3ck-c2m": dict(
        _KR, der0=1e-5, a_v=0.415, a_fe=0.415, a_ne=0.45, eta0=4.1e-8, snr_tx_db=32.5,
        f_z_ghz=12.58, f_p1_ghz=20.0, f_p2_ghz=28.0, f_lf_ghz=1.328125,
        g_dc=list(range(-13, 1)), g_dc2=[-3.0, -2.5, -2.0, -1.5, -1.0, -0.5, 0.0],
        b_max=[0.4, 0.15, 0.15, 0.1], b_min=[0.1, -0.35, -0.35, -0.35],
        erl_n_bx=0, erl_t_fx_ns=0.0, erl_t_fx2_ns=0.2, erl_n_ui=800, erl_tdr_w_txpkg=True,
        erl_limit_db=7.3),
}


@pytest.mark.parametrize("name", sorted(SHEETS))
def test_ck_presets_equal_the_config_sheets(name):
    want, p = dict(SHEETS[name]), PRESETS[name]
    tx, b_max, b_min = want.pop("tx"), want.pop("b_max"), want.pop("b_min")
    for key, value in want.items():
        got = getattr(p, key)
        if isinstance(value, list):
            assert list(got) == pytest.approx(value), key
        else:
            assert got == pytest.approx(value, rel=1e-12), key
    # TX FFE: c(-3), c(-2), c(-1), c(1) in steps of 0.02, three pre-cursor taps
    assert p.tx_n_pre == 3 and list(p.tx_step) == pytest.approx([0.02] * 4)
    # flat lists: pytest.approx does not compare nested (min, max) pairs in every version
    assert [v for pair in zip(p.tx_min, p.tx_max) for v in pair] == pytest.approx(
        [v for pair in tx for v in pair])
    assert list(p.dfe_max) == pytest.approx(b_max) and list(p.dfe_min) == pytest.approx(b_min)
    g = p.tx_grid
    axes = [np.arange(lo, hi + 1e-9, 0.02) for lo, hi in tx]
    full = np.stack(np.meshgrid(*axes, indexing="ij"), -1).reshape(-1, 4)
    assert len(g) == int(np.sum(1 - np.abs(full).sum(axis=1) >= 0.54 - 1e-9))
    assert "unverified" not in p.source and "Omer-Sella/COM" in p.source
    assert p.source.split(" (")[0].endswith(
        {"802.3ck-kr": "KR", "802.3ck-cr": "CR_CA", "802.3ck-c2c": "120F_C2C",
         "802.3ck-c2m": "120g_C2M_tp1a"}[name] + "_08_17_2022.xlsx")
    # the C2M host output has no RX package; the others have one
    assert p.rx_package == (name != "802.3ck-c2m")


def test_override_errors():
    p = preset("802.3ck-kr")
    assert apply_overrides(p, ["der0=1e-5"]).der0 == 1e-5
    assert apply_overrides(p, {"g_dc": "-3,-2"}).g_dc == (-3.0, -2.0)
    from serdes.errors import ConfigError

    for bad in (["nope=1"], ["der0=x"], ["der0=2"], ["levels=1"], ["der0"], ["g_dc="]):
        with pytest.raises(ConfigError):
            apply_overrides(p, bad)
    # amplitudes whose square underflows (A_v 1e-300 gave a FOM of -inf at every
    # candidate, a COM of -5978 dB and a TX setting chosen from nothing) and an RLM that
    # leaves no signal are refused in one line; the smallest values allowed still work
    # a reference resistance of -50 ohm divided by zero in the renormalisation from the
    # files' 50 ohm (a traceback), and an SNR_TX of -33.5 dB (a sign slip) put the signal
    # so far below the noise that the final budget ran for minutes: both refused in one line
    for key, low, ok in (("a_v", "1e-300", "1e-9"), ("a_fe", "1e-12", "1e-9"),
                         ("a_ne", "0", "1e-9"), ("rlm", "1e-3", "0.01"),
                         ("r0", "-50", "1"), ("r_d", "0", "1000"), ("board_z_c", "0", "1"),
                         ("snr_tx_db", "-33.5", "0")):
        with pytest.raises(ConfigError, match=f"{key} = .* is not allowed"):
            apply_overrides(p, [f"{key}={low}"])
        assert getattr(apply_overrides(p, [f"{key}={ok}"]), key) == float(ok)


def test_cli_json_interface(echo_file, capsys):
    rc = cli_main(["com", str(echo_file), "--json", "--set", "g_dc=-1,0", "--set", "g_dc2=0",
                   "--set", "tx_min=0,0,-0.1,0", "--set", "tx_max=0,0,0,0",
                   "--set", "f_step_ghz=0.1"])
    assert rc == 0
    out = json.loads(capsys.readouterr().out)
    assert out["preset"] == "802.3ck-kr" and out["elapsed_s"] > 0
    assert [c["package_case"] for c in out["cases"]] == [1, 2]
    for c in out["cases"]:
        for k in ("package_case", "com_db", "a_s_v", "a_ni_v", "unequalized_peak_v", "tx_taps",
                  "g_dc_db", "g_dc2_db", "dfe_taps"):
            assert k in c
        assert len(c["tx_taps"]) == 5 and len(c["dfe_taps"]) == 40   # N_f: floating taps
        assert c["com_db"] == pytest.approx(20 * math.log10(c["a_s_v"] / c["a_ni_v"]))
    # the parameters it ran with, every --set key: on the preset they make the same set
    assert out["params"]["g_dc"] == [-1.0, 0.0] and out["params"]["f_step_ghz"] == 0.1
    same = apply_overrides(preset("802.3ck-kr"), out["params"])
    assert same == apply_overrides(preset("802.3ck-kr"), {
        "g_dc": "-1,0", "g_dc2": "0", "tx_min": "0,0,-0.1,0", "tx_max": "0,0,0,0",
        "f_step_ghz": "0.1"})


@pytest.mark.parametrize("name", sorted(PRESETS))
def test_settings_of_a_preset_make_it_again(name):
    """ComParams.settings() (the JSON's params, serdes com --params) holds every --set
    key; applied to the preset it gives the same set, also with a package class or an
    override on top."""
    p = preset(name)
    st = p.settings()
    allowed = {f.name for f in dataclasses.fields(p)} - {"name", "source", "cases"}
    assert set(st) == allowed - ({"package_class"} if not p.package_class else set())
    assert apply_overrides(p, st) == p
    q = apply_overrides(p, {"der0": "3e-5", "eta0": "1e-8"})
    assert apply_overrides(p, q.settings()) == q and q.settings()["der0"] == 3e-5
    if p.package_class:
        b = apply_overrides(p, {"package_class": "B"})
        assert apply_overrides(p, b.settings()) == b and b.cases != p.cases


def test_cli_params_prints_the_effective_set(capsys):
    """serdes com --params: the preset with its --set overrides as key = value lines (or
    JSON), no THRU needed; without THRU and without --params: one line, exit code 2."""
    assert cli_main(["com", "--preset", "802.3dj-kr", "--set", "der0=1e-5", "--params"]) == 0
    out = capsys.readouterr().out
    assert out.startswith("# 802.3dj-kr: 106.25 GBd") and "\nder0 = 1e-05\n" in out
    assert "\ng_dc2 = -6,-5,-4,-3,-2,-1,0\n" in out and "\nmlsd = true\n" in out
    assert cli_main(["com", "--preset", "802.3ck-c2m", "--params", "--json"]) == 0
    d = json.loads(capsys.readouterr().out)
    assert d["preset"] == "802.3ck-c2m" and d["params"]["eye_t_o_mui"] == 50.0
    assert apply_overrides(preset("802.3ck-c2m"), d["params"]) == preset("802.3ck-c2m")
    assert cli_main(["com"]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert err == ["serdes: error: com: a THRU channel file is required (or --params)"]
    # --params prints and stops: a channel or an output given with it is refused, not
    # silently dropped
    assert cli_main(["com", "thru.s4p", "--erl", "--params"]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert err == ["serdes: error: com: --params prints the parameter set and stops; it takes "
                   "no THRU, --fext, --next, --erl or -o (given: THRU, --erl)"]
    for extra in (["--fext", "f.s4p"], ["--next", "n.s4p"], ["-o", "r.png"]):
        assert cli_main(["com", "--params", *extra]) == 2
        assert f"(given: {extra[0]})" in capsys.readouterr().err


def test_cli_draws_its_progress_per_package_case(echo_file, capsys):
    """--progress: a line of package cases done, erased at the end (the 802.3dj search
    with floating taps ran over a minute silent)."""
    rc = cli_main(["com", str(echo_file), "--set", "g_dc=-1,0", "--set", "g_dc2=0",
                   "--set", "tx_min=0,0,-0.1,0", "--set", "tx_max=0,0,0,0",
                   "--set", "f_step_ghz=0.1", "--progress", "--json"])
    assert rc == 0
    cap = capsys.readouterr()
    assert "com 802.3ck-kr: [" in cap.err and "2/2 package cases" in cap.err
    assert cap.err.endswith("\r\x1b[K") and json.loads(cap.out)["cases"]


def test_cli_writes_the_report_figure(echo_file, capsys, tmp_path):
    """-o draws the report (serdes/plot/com.py): a PNG of about 12 x 8 inches at the asked
    resolution (cut to the drawn area)."""
    out = tmp_path / "com.png"
    rc = cli_main(["com", str(echo_file), "--set", "g_dc=-1,0", "--set", "g_dc2=0",
                   "--set", "tx_min=0,0,-0.1,0", "--set", "tx_max=0,0,0,0",
                   "--set", "f_step_ghz=0.1", "-o", str(out), "--dpi", "50"])
    assert rc == 0 and str(out) in capsys.readouterr().out
    data = out.read_bytes()
    assert data[:8] == b"\x89PNG\r\n\x1a\n"
    width, height = int.from_bytes(data[16:20], "big"), int.from_bytes(data[20:24], "big")
    assert 500 <= width <= 600 and 330 <= height <= 400     # 12 x 8 inches at 50 dpi


def test_report_figure_says_when_its_landscape_holds_bounds(echo_file, monkeypatch, tmp_path):
    """The figure's FOM landscape is each CTLE setting's best FOM where the search
    evaluates every candidate, and its best upper bound under the quantization noise's
    branch and bound (CaseResult.landscape_bound): the colour bar and title say which."""
    import serdes.plot.eye as ploteye
    from serdes.plot.com import report_figure

    res = compute_com(echo_file, overrides={"g_dc": "-1,0", "g_dc2": "0",
                                            "tx_min": "0,0,-0.1,0", "tx_max": "0,0,0,0",
                                            "f_step_ghz": "0.1"})
    assert not any(c.landscape_bound for c in res.cases)
    seen = []
    monkeypatch.setattr(ploteye, "save_figure",
                        lambda fig, path, dpi=None: seen.append(
                            [a.get_ylabel() for a in fig.axes] + [a.get_title() for a in fig.axes]))
    report_figure(res, tmp_path / "a.png")
    for c in res.cases:
        c.landscape_bound = True
    report_figure(res, tmp_path / "b.png")
    exact, bounds = seen
    assert "best FOM over TX settings (dB)" in exact and "FOM landscape" in exact
    assert not any("bound" in t for t in exact)
    assert "FOM upper bound over TX settings (dB)" in bounds
    assert "FOM landscape (bounds; exact at +)" in bounds


@pytest.mark.parametrize("argv, words", [
    (["--preset", "nope"], "--preset = 'nope'"),
    (["--set", "der0=abc"], "der0 = 'abc'"),
    (["--set", "unknown=1"], "unknown key 'unknown'"),
    # 6.4e8 frequency points: the process was killed for memory
    (["--set", "fb_gbd=500", "--set", "samples_per_ui=256", "--set", "f_step_ghz=1e-4"],
     "640,000,000 frequency points, more than 4,194,304"),
    # 5e8 TX settings: their rows took all 24 GB before the search began
    (["--set", "tx_step=0.001,0.001,0.001,0.001"], "505,901,121 TX settings"),
    # a CTLE pole or zero at 0 Hz divided by zero: a traceback (argmin of an empty
    # sequence); a negative one gave a COM
    (["--set", "f_lf_ghz=0"], "f_lf_ghz = 0.0"),
    (["--set", "f_z_ghz=-1"], "f_z_ghz = -1.0"),
    (["--set", "g_dc2=1e9"], "g_dc2 = (1000000000.0,)"),   # OverflowError
    (["--set", "a_dd=1e9"], "a_dd = 1000000000.0"),         # ValueError (voltage grid)
    # silently dropped or reversed: the second L_s, an empty tap range, a DFE limit
    (["--set", "l_s=0.1,0.2"], "one value, or one per c_d section (1)"),
    (["--set", "tx_min=0.1,0,-0.28,-0.1"], "tx_max >= tx_min"),
    (["--set", "tx_step=-0.02,0.02,0.02,0.02"], "steps >= 0"),
    (["--set", "dfe_min=0.9,0.05,-0.04,-0.04,-0.04,-0.04,-0.04,-0.04,-0.04,-0.04,-0.04,"
      "-0.04"], "dfe_max >= dfe_min"),
    (["--set", "rx_ffe_pre=1"], "0 unless the receiver has an RX FFE"),
    (["--preset", "802.3dj-kr", "--set", "rx_ffe_pre=-1"], "an integer in [0, 14]"),
    (["--preset", "802.3dj-kr", "--set", "rx_ffe_pre=3"], "limits hold 1"),
    (["--set", "eye_vec_max_db=-1"], "eye_vec_max_db = -1.0"),
    # lists of one value per tap that do not match: the line named tx_min and printed
    # its 4 values when tx_step was the short one
    (["--set", "tx_step=0.02,0.02"], "given: tx_min 4, tx_max 4, tx_step 2"),
    (["--set", "dfe_min=0"], "given: dfe_min 1, dfe_max 12"),
    (["--preset", "802.3dj-kr", "--set", "rx_ffe_min=0.1"], "given: rx_ffe_min 1, rx_ffe_max 15"),
])
def test_cli_bad_input_one_line_exit_2(echo_file, capsys, argv, words):
    assert cli_main(["com", str(echo_file), *argv]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and words in err


def test_cli_missing_file(capsys, tmp_path):
    assert cli_main(["com", str(tmp_path / "none.s4p")]) == 2
    assert "file not found" in capsys.readouterr().err


def test_pychopmarg_same_equalization(channels_dir):
    """Against PyChOpMarg 3.4 at the equalization our search chose (its own search needs
    an RX FFE, which the 802.3ck reference receiver does not have): COM within 0.3 dB,
    the unequalized peak within 0.5 %."""
    pytest.importorskip("pychopmarg")
    import sys
    from pathlib import Path

    sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "benchmarks"))
    from com_pychopmarg import pcm_at

    d = channels_dir / "ieee8023ck_KR_ortho_tracy_3ck_02_0119"
    thru, fext, nxt = (str(d / "DPO_12in_Meg7_THRU.s4p"), [str(d / "DPO_12in_Meg7_FENG89.s4p")],
                       [str(d / "DPO_12in_Meg7_NENF89.s4p")])
    # a 50 MHz grid step (20 ns window, enough for this channel) keeps PyChOpMarg's set-up short
    # fixed DFE taps only: PyChOpMarg has no floating DFE taps
    p = apply_overrides(preset("802.3ck-kr"), {"g_dc": "-10,-9", "g_dc2": "-3", "f_step_ghz": "0.05",
                                               "tx_min": "0,0,-0.24,-0.2", "tx_max": "0,0.06,-0.16,0",
                                               "dfe_n_bg": "0"})
    res = compute_com(thru, fext, nxt, p)
    c = res.cases[0]
    ref = pcm_at(p, thru, fext, nxt, 0, c.g_dc_db, c.g_dc2_db, c.tx_taps)
    assert abs(c.com_db - ref["com_db"]) < 0.3
    assert c.unequalized_peak_v == pytest.approx(ref["uneq_peak"], rel=5e-3)
