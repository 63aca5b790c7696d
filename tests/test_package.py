"""Annex 93A package stages, the S-parameter cascade of the link, the COM reference
Butterworth and the presets, each against an independent reference."""

from __future__ import annotations

import math
import os
from dataclasses import replace
from pathlib import Path

import numpy as np
import pytest

from conftest import EARLIER_DEFAULT
from serdes.analog.butterworth import ButterworthFilter, butterworth_response
from serdes.analog.package import Package, PackageParams
from serdes.channel.loss import LossLine
from serdes.config import Config
from serdes.errors import ConfigError
from serdes.presets import PACKAGE_PRESETS, package_preset
from serdes.stage import cascade

CHANNELS = Path(os.environ.get("SERDES_CHANNELS", Path(__file__).resolve().parents[1].parent
                               / "shared" / "channels"))
F = np.linspace(10e6, 120e9, 601)  # off 0 Hz: scikit-rf moves 0 Hz off zero internally


def gamma_93a(f_hz, g0, a1, a2, tau):
    """Eq. 93A-9..93A-11 written out (f in GHz): per mm."""
    fg = f_hz / 1e9
    return (g0 + a1 * (1 + 1j) * np.sqrt(fg) + a2 * fg * (1 - 1j * 2 / np.pi * np.log(fg))
            + 1j * 2 * np.pi * fg * tau)


def skrf_package(p: PackageParams, side: str, f=F):
    """The package as a scikit-rf cascade (die first for 'tx', mirrored for 'rx')."""
    import skrf
    from skrf.media import DefinedGammaZ0

    freq = skrf.Frequency.from_f(f, unit="hz")
    lumped = DefinedGammaZ0(frequency=freq, z0_port=p.r0_ohm, z0=p.r0_ohm)
    parts = []
    for cd, ls in zip(p.c_d_nf, p.l_s_nh):
        parts += [lumped.shunt_capacitor(cd * 1e-9), lumped.inductor(ls * 1e-9)]
    parts.append(lumped.shunt_capacitor(p.c_b_nf * 1e-9))
    g = gamma_93a(f, p.gamma0_per_mm, p.a1, p.a2, p.tau_ns_per_mm) * 1e3  # per metre
    for zc, zp in zip(p.z_c_ohm, p.z_p_mm):
        line = DefinedGammaZ0(frequency=freq, z0_port=p.r0_ohm, z0=zc / 2.0, gamma=g)
        parts.append(line.line(zp, "mm"))
    parts.append(lumped.shunt_capacitor(p.c_p_nf * 1e-9))
    net = parts[0]
    for q in parts[1:]:
        net = net ** q
    if side == "rx":
        net = net.flipped()
    return net


@pytest.mark.parametrize("preset", ["802.3ck-kr", "802.3dj-kr"])
@pytest.mark.parametrize("side", ["tx", "rx"])
def test_package_s_matrix_equals_scikit_rf_cascade(preset, side):
    p = replace(package_preset(preset), r_d_ohm=55.0)
    ours = Package(p, side).s_matrix(F)
    ref = skrf_package(p, side).s
    assert np.max(np.abs(ours - ref)) < 1e-9


@pytest.mark.parametrize("side", ["tx", "rx"])
def test_a_long_matched_package_line_is_its_propagation_factor(side):
    """A matched package line (Z_c / 2 = R0, no capacitors) of length L has S21 = S12 =
    exp(-gamma L) and S11 = S22 = 0, also where gamma L is hundreds of nepers (a 1 m line
    up to the top of a link's fine grid). Through cosh and sinh, S12 = 2 (A D - B C) / den
    cancelled to garbage there: the RX side, whose S21 is that S12 mirrored, gave a 1 m
    package a pulse 10 times the TX swing."""
    f = np.linspace(0.0, 850e9, 341)
    for mm in (12.0, 300.0, 1000.0):
        p = PackageParams(c_d_nf=(0.0,), l_s_nh=(0.0,), c_b_nf=0.0, c_p_nf=0.0,
                          z_c_ohm=(100.0,), z_p_mm=(mm,))
        s = Package(p, side).s_matrix(f)
        ref = np.exp(-gamma_93a(np.maximum(f, 1e-3), p.gamma0_per_mm, p.a1, p.a2,
                                p.tau_ns_per_mm) * mm)
        ref[0] = 1.0
        assert np.all(np.isfinite(s))
        np.testing.assert_allclose(s[:, 1, 0], ref, rtol=1e-9, atol=1e-300)
        np.testing.assert_allclose(s[:, 0, 1], ref, rtol=1e-9, atol=1e-300)
        assert np.max(np.abs(s[:, 0, 0])) < 1e-12 and np.max(np.abs(s[:, 1, 1])) < 1e-12


def test_a_one_metre_rx_package_delays_and_attenuates_the_pulse():
    """package.z_p_rx_mm = 1000 (allowed): the pulse arrives about 1000 mm x 6.1 ps/mm
    (the line's tau) later and lower than with the preset's length, and stays a pulse
    (it was refused: 'the channel response does not decay')."""
    from serdes.build import build_link

    def link(mm):
        return build_link(Config.default().with_overrides(
            ["package.preset=802.3ck-kr", f"package.z_p_rx_mm={mm}", "ctle.auto=false"]))

    short, long = link(12), link(1000)
    pk_s, pk_l = np.argmax(short._pulse_window), np.argmax(long._pulse_window)
    delay_ui = (pk_l - pk_s) / long.m
    expect = 988 * 6.141e-3 * 1e-9 / long.ui_s
    assert abs(delay_ui - expect) < 0.1 * expect
    assert 0 < long._pulse_window.max() < short._pulse_window.max()
    assert long._pulse_window.min() > -0.05 * long._pulse_window.max()


def test_link_cascade_equals_scikit_rf_terminated_at_the_die():
    """TX package, a matched loss line, RX package, the dies terminated in R_d = 55 ohm:
    the link's transfer (eq. 93A-18) is S21 of the scikit-rf cascade renormalised to
    R_d at both ports (power waves, equal real references: S21 = 2 V_load / E)."""
    import skrf

    p = replace(package_preset("802.3ck-kr"), r_d_ohm=55.0)
    line = LossLine(loss_db=20.0, f_ref_hz=26.5625e9)
    h = line.response(F)
    freq = skrf.Frequency.from_f(F, unit="hz")
    s_line = np.zeros((F.size, 2, 2), dtype=complex)
    s_line[:, 1, 0] = s_line[:, 0, 1] = h
    net = skrf_package(p, "tx") ** skrf.Network(frequency=freq, s=s_line, z0=50.0) \
        ** skrf_package(p, "rx")
    net.renormalize(55.0)
    ours = cascade([Package(p, "tx"), line, Package(p, "rx")], F)
    assert np.max(np.abs(ours - net.s[:, 1, 0])) < 1e-9
    # and the reflections matter: the product of the stand-alone responses differs
    prod = Package(p, "tx").response(F) * h * Package(p, "rx").response(F)
    assert np.max(np.abs(ours - prod)) > 1e-3


@pytest.mark.parametrize("side", ["tx", "rx"])
@pytest.mark.parametrize("r_d", [50.0, 55.0])
def test_die_capacitance_alone_is_a_first_order_pole(side, r_d):
    """C_d only: the die R_d with C_d across it against R0 = 50 ohm. TX: a source R_d || C_d
    driving R0; RX: R0 driving R_d || C_d. Both: H = (2 R0 / (R_d + R0) on TX, 2 R_d /
    (R_d + R0) on RX) / (1 + j f / f_p), f_p = 1 / (2 pi C_d (R_d || R0))."""
    c = 1.2e-4
    p = PackageParams(c_d_nf=(c,), l_s_nh=(0.0,), c_b_nf=0.0, c_p_nf=0.0, r_d_ohm=r_d,
                      z_c_ohm=(90.0,), z_p_mm=(0.0,))
    f = np.concatenate([[0.0], F])
    h = Package(p, side).response(f)
    r0 = 50.0
    f_p = 1.0 / (2 * math.pi * c * 1e-9 * (r_d * r0 / (r_d + r0)))
    dc = 2 * (r0 if side == "tx" else r_d) / (r_d + r0)
    assert np.max(np.abs(h - dc / (1 + 1j * f / f_p))) < 1e-12
    if r_d == 50.0:  # f_p = 1 / (pi R0 C_d) = 53.05 GHz for 120 fF
        assert f_p == pytest.approx(1.0 / (math.pi * r0 * c * 1e-9), rel=1e-12)
        hp = Package(p, side).response(np.array([f_p]))[0]
        assert abs(hp) == pytest.approx(1 / math.sqrt(2), rel=1e-12)


def test_matched_ideal_thru_between_dies_is_one():
    """No package elements, R_d = R0: nothing to reflect, H = 1."""
    p = PackageParams(c_d_nf=(0.0,), l_s_nh=(0.0,), c_b_nf=0.0, c_p_nf=0.0, r_d_ohm=50.0,
                      z_c_ohm=(100.0,), z_p_mm=(0.0,))
    h = cascade([Package(p, "tx"), LossLine(loss_db=0.0, f_ref_hz=1e9), Package(p, "rx")], F)
    assert np.max(np.abs(h - 1.0)) < 1e-12


def test_touchstone_mixed_mode_equals_scikit_rf_se2gmm():
    path = CHANNELS / "ieee8023ck_KR_ortho_tracy_3ck_02_0119" / "DPO_4in_Meg7_THRU.s4p"
    if not path.exists():
        pytest.skip(f"real channel data not found at {path}")
    from serdes.channel.touchstone import TouchstoneChannel
    from serdes.channel.touchstone_io import load_touchstone
    import skrf

    ch = TouchstoneChannel(path)
    _, f, s = load_touchstone(path)
    net = skrf.Network(frequency=skrf.Frequency.from_f(f, unit="hz"), s=s, z0=50.0)
    net = net.renumbered([0, 2, 1, 3], [0, 1, 2, 3])  # thru 1->2, 3->4 to se2gmm's order
    net.se2gmm(p=2)
    assert np.max(np.abs(ch.mixed_mode() - net.s[:, :2, :2])) < 1e-12


def test_butterworth_against_scipy_and_its_closed_forms():
    from scipy import signal

    fb, f_r = 53.125e9, 0.75
    f3 = f_r * fb
    stage = ButterworthFilter(f_r=f_r, symbol_rate_hz=fb)
    f = np.concatenate([[0.0], F])
    b, a = signal.butter(4, 2 * np.pi * f3, analog=True)
    _, ref = signal.freqs(b, a, worN=2 * np.pi * f)
    assert np.max(np.abs(stage.response(f) - ref)) < 1e-9
    h3 = stage.response(np.array([f3]))[0]
    assert 20 * np.log10(abs(h3)) == pytest.approx(-10 * np.log10(2), abs=1e-9)
    lo, hi = np.abs(butterworth_response(np.array([10 * f3, 100 * f3]), f3))
    slope = 20 * np.log10(lo / hi)  # dB per decade, 10 log10((1 + 1e16) / (1 + 1e8))
    assert slope == pytest.approx(10 * np.log10((1 + 1e16) / (1 + 1e8)), abs=1e-6)
    assert slope == pytest.approx(80.0, abs=1e-6)


def test_presets_match_the_schema_and_build():
    from serdes.build import build_link
    from serdes.schema import SCHEMA

    assert SCHEMA["package"]["preset"].choices == ("none",) + tuple(PACKAGE_PRESETS)
    base = build_link(Config.default().with_overrides(EARLIER_DEFAULT))
    off = build_link(Config.default().with_overrides(EARLIER_DEFAULT).with_overrides(["package.preset=none"]))
    assert np.array_equal(base.h_total, off.h_total)
    link = build_link(Config.default().with_overrides(EARLIER_DEFAULT).with_overrides(
        ["package.preset=802.3ck-kr", "package.z_p_rx_mm=30", "package.r_d_ohm=55"]))
    tx, rx = link.channel_stages[0], link.channel_stages[-1]
    assert isinstance(tx, Package) and isinstance(rx, Package)
    assert tx.params.z_p_mm == (12.0, 1.8) and rx.params.z_p_mm == (30.0, 1.8)
    assert tx.params.r_d_ohm == 55.0
    with pytest.raises(ConfigError, match="package.preset"):
        Config.default().with_overrides(EARLIER_DEFAULT).with_overrides(["package.preset=802.3xx"])


def test_afe_model_selects_the_filters():
    from serdes.analog.peaking import ShuntPeakedAfe
    from serdes.build import build_rx_stages

    def kinds(model):
        cfg = Config.default().with_overrides(EARLIER_DEFAULT).with_overrides([f"afe.model={model}", "afe.f_r=0.75"])
        return [type(s) for s in build_rx_stages(cfg)][1:]

    assert kinds("shunt") == [ShuntPeakedAfe]
    assert kinds("butterworth") == [ButterworthFilter]
    assert kinds("both") == [ShuntPeakedAfe, ButterworthFilter]


def test_package_lowers_the_cursor_and_its_reflections_reach_both_engines():
    """With the 802.3ck-kr packages the pulse (before the VGA) has a lower main cursor,
    and a reflection between the package discontinuities; on an FFE-only link the
    statistical engine's BER stays within 1.5x of the counted one (about 1300 counted
    errors: the 95 % interval of the count is about +-6 %)."""
    from serdes.build import build
    from serdes.report import run_report

    sets = ["link.symbols=400000", "dfe.taps=0", "link.target_errors=1000"]
    plain = build(Config.default().with_overrides(EARLIER_DEFAULT).with_overrides(sets))
    pkg = build(Config.default().with_overrides(EARLIER_DEFAULT).with_overrides(sets + ["package.preset=802.3ck-kr"]))
    p0, p1 = plain.link._pulse_unscaled, pkg.link._pulse_unscaled
    assert p1.taps[p1.cursor] < 0.95 * p0.taps[p0.cursor]
    # the loss line alone gives a tail that only decays; with the packages a reflection
    # returns after the round trip between the die-side discontinuities of one package
    # (2 x (12 + 1.8) mm x 6.141 ps/mm = 169.5 ps = 9.0 UI at 53.125 GBd)
    t0, t1 = p0.taps[p0.cursor + 1:p0.cursor + 16], p1.taps[p1.cursor + 1:p1.cursor + 16]
    assert np.all(np.diff(t0) < 0)
    first_rise = int(np.argmax(np.diff(t1) > 0)) + 2  # UI after the cursor
    assert np.any(np.diff(t1) > 0) and abs(first_rise - 2 * 13.8 * 6.141e-3 * 53.125) <= 1.5
    rep = run_report(pkg, stat=True)
    counted = rep.counted.ber
    stat = rep.stat_ber
    assert rep.counted.bit_errors >= 1000
    assert 1 / 1.5 < stat / counted < 1.5


def test_packages_on_a_real_channel_both_engines_agree():
    """The 802.3ck-kr packages around a measured KR channel (its SDD11/SDD22 in the
    cascade): counted and statistical BER within 1.5x (FFE only, >= 1000 errors)."""
    path = CHANNELS / "ieee8023ck_KR_ortho_tracy_3ck_02_0119" / "DPO_12in_Meg7_THRU.s4p"
    if not path.exists():
        pytest.skip(f"real channel data not found at {path}")
    from serdes.build import build
    from serdes.report import run_report

    sets = ["link.symbols=400000", "dfe.taps=0", "channel.model=touchstone",
            f"channel.file={path}", "package.preset=802.3ck-kr"]
    system = build(Config.default().with_overrides(EARLIER_DEFAULT).with_overrides(sets))
    assert type(system.link.channel_stages[0]).__name__ == "Package"
    rep = run_report(system, stat=True)
    assert rep.counted.bit_errors >= 1000
    assert 1 / 1.5 < rep.stat_ber / rep.counted.ber < 1.5


def test_cli_refuses_an_unknown_preset_in_one_line():
    import subprocess
    import sys

    r = subprocess.run([sys.executable, "-m", "serdes.cli", "run", "--set",
                        "package.preset=802.3zz"], capture_output=True, text=True, timeout=600)
    assert r.returncode == 2
    assert "package.preset" in r.stderr and "802.3ck-kr" in r.stderr
    assert len(r.stderr.strip().splitlines()) == 1


def test_verified_preset_rows_carry_the_published_values():
    """The rows of serdes/presets.py against the values of their sources, written out
    here independently (the 802.3ck KR, CR_CA, 120F C2C and 120g C2M TP1a COM
    configuration sheets of 08/17/2022; P802.3dj/D3.3 Table 178-14, class A); the link and
    COM use the same table and the link takes each side's case-1 length (C2C: TX 13 mm,
    RX 11 mm)."""
    from serdes.build import build_packages
    from serdes.com.params import PRESETS
    from serdes.presets import PACKAGE_CASES, PRESET_SOURCES

    ck = dict(c_d_nf=(1.2e-4,), l_s_nh=(0.12,), c_b_nf=0.3e-4, c_p_nf=0.87e-4, r_d_ohm=50.0,
              z_c_ohm=(87.5, 92.5), gamma0_per_mm=0.0, a1=9.909e-4, a2=2.772e-4,
              tau_ns_per_mm=6.141e-3)
    dj = dict(c_d_nf=(4e-5, 9e-5, 1.1e-4), l_s_nh=(0.13, 0.15, 0.14), c_b_nf=3e-5,
              c_p_nf=4e-5, r_d_ohm=46.25, z_c_ohm=(87.5, 92.5), gamma0_per_mm=5e-4,
              a1=8.9e-4, a2=2e-4, tau_ns_per_mm=6.141e-3)
    # z_p (TX), (NEXT), (FEXT), (RX) of the sheets: [case 1 case 2; z_pB z_pB]
    kr = ((12, 31), (12, 29), (12, 31), (12, 29))
    cases = {"802.3ck-kr": kr, "802.3ck-cr": kr,
             "802.3ck-c2c": ((13, 31), (11, 29), (13, 31), (11, 29)),
             "802.3ck-c2m": ((15, 30), (0, 0), (15, 30), (0, 0)),
             "802.3dj-kr": ((33, 12), (33, 12), (33, 12), (33, 12))}
    for name, want in (("802.3ck-kr", ck), ("802.3ck-cr", ck), ("802.3ck-c2c", ck),
                       ("802.3ck-c2m", ck), ("802.3dj-kr", dj)):
        assert "verified" in PRESET_SOURCES[name] and "unverified" not in PRESET_SOURCES[name]
        p = package_preset(name)
        for k, v in want.items():
            assert getattr(p, k) == pytest.approx(v, rel=1e-12), (name, k)
        sides = ("tx", "next", "fext", "rx")
        for i, case in enumerate(PACKAGE_CASES[name]):
            assert tuple(case[s][0] for s in sides) == tuple(c[i] for c in cases[name]), name
            # z_pB: 1.8 mm where the side has a line, 0 where the sheet has none (C2M)
            assert all(case[s][1] == (1.8 if case[s][0] else 0.0) for s in sides), name
        cp = PRESETS[name]
        assert (cp.c_d, cp.l_s, cp.c_b, cp.c_p, cp.r_d, cp.z_c) == (
            p.c_d_nf, p.l_s_nh, p.c_b_nf, p.c_p_nf, p.r_d_ohm, p.z_c_ohm)
        assert (cp.gamma0, cp.a1, cp.a2, cp.tau) == (p.gamma0_per_mm, p.a1, p.a2, p.tau_ns_per_mm)
        assert cp.cases == PACKAGE_CASES[name]
        assert cp.rx_package == (name != "802.3ck-c2m")
    assert PRESETS["802.3ck-kr"].f_r == 0.75 and PRESETS["802.3dj-kr"].f_r == 0.55
    assert PACKAGE_CASES["802.3dj-kr"][1] == {s: (12.0, 1.8) for s in ("tx", "next", "fext", "rx")}
    cfg = Config.default().with_overrides(EARLIER_DEFAULT).with_overrides(["package.preset=802.3ck-c2c"])
    tx, rx = build_packages(cfg)
    nxt, _ = build_packages(cfg, next_tx=True)
    assert (tx.params.z_p_mm, rx.params.z_p_mm, nxt.params.z_p_mm) == ((13.0, 1.8), (11.0, 1.8), (11.0, 1.8))
    # C2M host output: TX 15 mm, no RX package (only R_d), the NEXT's TX package without line
    cfg = Config.default().with_overrides(EARLIER_DEFAULT).with_overrides(["package.preset=802.3ck-c2m"])
    tx, rx = build_packages(cfg)
    nxt, _ = build_packages(cfg, next_tx=True)
    assert tx.params.z_p_mm == (15.0, 1.8) and nxt.params.z_p_mm == (0.0, 0.0)
    assert (rx.params.c_d_nf, rx.params.l_s_nh, rx.params.c_b_nf, rx.params.c_p_nf,
            rx.params.z_p_mm, rx.params.r_d_ohm) == ((0.0,), (0.0,), 0.0, 0.0, (0.0, 0.0), 50.0)
    s_rx = rx.s_matrix(np.array([1e9, 26.5625e9, 53.125e9]))
    assert np.abs(s_rx[:, 1, 0] - 1).max() < 1e-12 and np.abs(s_rx[:, 0, 0]).max() < 1e-12
