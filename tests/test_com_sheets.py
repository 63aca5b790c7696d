"""What the 802.3ck configuration sheets add beyond plain values (serdes/com/params.py):
the C2M CTLE pairs (G_Qual / G2_Qual, applied as the IEEE COM code applies them), the
C2M host output without an RX package, and the ERL gating of the sheets (a fixture delay
per port, N longer than half the COM time window). The allowed pairs and the bare-RX
transfer are written out here independently of the code under test."""

from __future__ import annotations

import dataclasses

import numpy as np
import pytest

from serdes.analog.package import Package, PackageParams, terminated_transfer
from serdes.com import fom as comfom
from serdes.com.erl import compute_erl
from serdes.com.params import ComParams, PRESETS, apply_overrides, preset
from serdes.com.pulse import ComGrid, channel_vtf, read_channel
from serdes.errors import ConfigError

from tests.test_com import SYNTHETIC_GAIN

pytestmark = SYNTHETIC_GAIN   # channels with gain by construction (tests/test_com.py)

# The C2M sheet: G_Qual [-2 -9; -2 -11; -4 -10; -4 -9] (g_DC ranges, dB) with G2_Qual
# [0 -1 -2 -3] (g_DC2 limits). The IEEE code sorts G2_Qual descending and makes bands:
# the first g_DC2 = 0 exactly, then -1 <= g_DC2 < 0, -2 <= g_DC2 < -1, -3 <= g_DC2 < -2;
# in each band g_DC must lie in [low, high). Written out for the sheet's grid
# (g_DC -13..0 step 1, g_DC2 -3..0 step 0.5):
C2M_PAIRS = {
    0.0: range(-9, -2),
    -0.5: range(-11, -2), -1.0: range(-11, -2),
    -1.5: range(-10, -4), -2.0: range(-10, -4),
    -2.5: range(-9, -4), -3.0: range(-9, -4),
}


def test_c2m_ctle_pairs_follow_g_qual():
    p = PRESETS["802.3ck-c2m"]
    for g2 in p.g_dc2:
        got = [int(g) for g in p.g_dc if p.ctle_allowed(g, g2)]
        assert got == list(C2M_PAIRS[g2]), g2
    # the other presets search the whole product grid
    for name in ("802.3ck-kr", "802.3ck-cr", "802.3ck-c2c"):
        q = PRESETS[name]
        assert all(q.ctle_allowed(a, b) for a in q.g_dc for b in q.g_dc2)
    with pytest.raises(ConfigError, match="ctle_qual"):
        apply_overrides(p, {"ctle_qual": "0,-2"})
    with pytest.raises(ConfigError, match="ctle_qual"):
        apply_overrides(p, {"ctle_qual": "0,-20,-30"})


def _write_s2p(path, f_ghz, s21):
    with open(path, "w") as fh:
        fh.write("# GHz S RI R 50\n")
        for f, h in zip(f_ghz, s21):
            fh.write(f"{f:.6f} 0 0 {h.real:.12e} {h.imag:.12e} {h.real:.12e} {h.imag:.12e} 0 0\n")
    return path


def test_search_skips_the_pairs_g_qual_forbids(tmp_path):
    """The FOM search evaluates only the allowed pairs (the landscape is -inf elsewhere)
    and picks its best among them."""
    p = PRESETS["802.3ck-c2m"]
    p = dataclasses.replace(p, tx_min=(0.0, 0.0, -0.1, 0.0), tx_max=(0.0, 0.0, 0.0, 0.0),
                            tx_step=(0.02, 0.02, 0.1, 0.02), g_dc=(-12.0, -10.0, -6.0, -2.0),
                            g_dc2=(-3.0, -1.0, 0.0))
    fb = p.fb_gbd
    f = np.arange(0, 32 * fb / 2 + 0.05, 0.1)
    thru = _write_s2p(tmp_path / "lossy.s2p", f, np.exp(-(0.8 * f / fb * (1 + 1j)) - 2j * np.pi * f * 0.3))
    grid = ComGrid.of(p)
    vtfs = [channel_vtf(p, grid, read_channel(thru, "thru"), p.cases[0])]
    best = comfom.search(p, grid, vtfs, [])
    for i, a in enumerate(p.g_dc):
        for j, b in enumerate(p.g_dc2):
            allowed = int(a) in C2M_PAIRS[b]
            assert np.isfinite(best.landscape[i, j]) == allowed, (a, b)
    assert int(best.g_dc) in C2M_PAIRS[best.g_dc2]
    assert best.n_evaluated == len(p.tx_grid) * sum(
        int(a) in C2M_PAIRS[b] for a in p.g_dc for b in p.g_dc2)


def test_c2m_without_rx_package_is_the_tx_package_into_r_d(tmp_path):
    """With an ideal thru, the C2M victim's transfer (TX package, thru, no RX package,
    R_d = R_0 at both ends) is the TX package alone between its die termination and a
    matched load, eq. 93A-18 written out on the package's S-parameters."""
    p = PRESETS["802.3ck-c2m"]
    f = np.arange(0.05, 60.0, 0.05)
    thru = _write_s2p(tmp_path / "ideal.s2p", f, np.ones_like(f, dtype=complex))
    ch = read_channel(thru, "thru")
    pp = PackageParams(c_d_nf=(1.2e-4,), l_s_nh=(0.12,), c_b_nf=0.3e-4, c_p_nf=0.87e-4,
                       r_d_ohm=50.0, z_c_ohm=(87.5, 92.5), z_p_mm=(15.0, 1.8), gamma0_per_mm=0.0,
                       a1=9.909e-4, a2=2.772e-4, tau_ns_per_mm=6.141e-3)
    s = Package(pp, "tx").s_matrix(f * 1e9)
    want = terminated_transfer(s, 0.0, 0.0)
    # channel_vtf puts the transfer on the COM grid with H_t and H_r: compare with them off
    q = dataclasses.replace(p, t_r_ns=0.0, f_r=4.0)
    grid = ComGrid.of(q)
    got = channel_vtf(q, grid, ch, q.cases[0])
    from serdes.com.pulse import h_r
    fg = grid.f
    band = (fg > 0.5e9) & (fg < 50e9)
    ref = np.interp(fg[band], f * 1e9, np.abs(want)) * np.abs(h_r(q, fg[band]))
    # |H| on the grid to 1 % (the grid transfer's impulse response is truncated at 1e-3)
    assert np.abs(np.abs(got[band]) - ref).max() < 0.01
    # and it differs from the same case with the KR-like RX package on
    with_rx = channel_vtf(dataclasses.replace(q, rx_package=True), grid, ch,
                          {"tx": (15.0, 1.8), "next": (0.0, 0.0), "fext": (15.0, 1.8), "rx": (15.0, 1.8)})
    assert np.abs(np.abs(with_rx[band]) - ref).max() > 0.05


GAMMA = 0.05


def _write_reflection(path, f_ghz, s11, s22):
    with open(path, "w") as fh:
        fh.write("# GHz S RI R 50\n")
        for f, a, d in zip(f_ghz, s11, s22):
            fh.write(f"{f:.6f} {a.real:.12e} {a.imag:.12e} 1 0 1 0 {d.real:.12e} {d.imag:.12e}\n")
    return path


def test_erl_fixture_delay_per_port_and_long_n(tmp_path):
    """The C2M sheet gates port 2 from 0.2 ns (port 1 from 0): the same reflection 5 UI
    (0.094 ns) from each port counts at port 1 and is gated out at port 2. With the CR
    sheet's N = 4500 UI (beyond half the 100 ns COM window), a reflection at 3000 UI
    (56 ns) is seen, with the ERL of the same reflection at 60 UI (both beyond the equalizer span,
    G = 1: the same pulse samples, shifted)."""
    p = dataclasses.replace(PRESETS["802.3ck-c2m"], f_step_ghz=0.05, erl_n_ui=120,
                            erl_tdr_w_txpkg=False)   # the channel alone at both ports
    fb = p.fb_gbd
    f = np.arange(0.0, 40.0, 0.05)
    r = GAMMA * np.exp(-2j * np.pi * f * 5 / fb)
    r1, r2 = compute_erl(_write_reflection(tmp_path / "both.s2p", f, r, r), p)
    assert r1.erl_db < 40 and r2.erl_db > 60
    q = PRESETS["802.3ck-cr"]
    assert q.erl_n_ui == 4500 and q.erl_n_ui * q.samples_per_ui > ComGrid.of(q).n_t // 2
    q = dataclasses.replace(q, erl_t_fx_ns=0.0)
    # 5 MHz steps: a 56 ns echo moves the phase by less than pi per step (unwrappable)
    f = np.arange(0.0, 40.0, 0.005)
    far = _write_reflection(tmp_path / "far.s2p", f, GAMMA * np.exp(-2j * np.pi * f * 3000 / fb),
                            np.zeros_like(f, dtype=complex))
    near = _write_reflection(tmp_path / "near.s2p", f, GAMMA * np.exp(-2j * np.pi * f * 60 / fb),
                             np.zeros_like(f, dtype=complex))
    e_far, e_near = compute_erl(far, q)[0].erl_db, compute_erl(near, q)[0].erl_db
    assert 15 < e_near < 40 and e_far == pytest.approx(e_near, abs=0.05)


def test_erl_t_fx2_override_and_error():
    p = preset("802.3ck-kr")
    assert apply_overrides(p, {"erl_t_fx2_ns": "0.1"}).erl_t_fx2_ns == 0.1
    with pytest.raises(ConfigError, match="erl_t_fx2_ns"):
        apply_overrides(p, {"erl_t_fx2_ns": "-0.5"})
    assert isinstance(p, ComParams)
