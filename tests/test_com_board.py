"""The CR sheet's host boards (Include PCB = 1, serdes/com/board.py): the board's loss
against the closed-form Annex 93A line (eqs. 93A-9..93A-14 written out here), the order
of its shunt capacitances and its place in the cascade against a cascade built with
scikit-rf from the 93A element formulas, and the preset values."""

from __future__ import annotations

import dataclasses

import numpy as np
import pytest

from serdes.com.board import board_lengths, board_s, with_boards
from serdes.com.params import PRESETS, apply_overrides
from serdes.com.pulse import Channel, ComGrid, channel_vtf
from serdes.errors import ConfigError

R0 = 50.0
CR = PRESETS["802.3ck-cr"]


def _gamma_93a(f_hz, g0, a1, a2, tau):
    """Eqs. 93A-9..93A-11, f in GHz, per mm."""
    fg = f_hz / 1e9
    g1 = a1 * (1 + 1j)
    g2 = a2 * (1 - 2j / np.pi * np.log(fg)) + 2j * np.pi * tau
    return g0 + g1 * np.sqrt(fg) + g2 * fg


def _line_93a(f_hz, z_c, d_mm, coeffs):
    """Eqs. 93A-12..93A-14: S of a line of differential Z_c between 2 R0 ports."""
    rho = (z_c - 2 * R0) / (z_c + 2 * R0)
    e = np.exp(-d_mm * _gamma_93a(f_hz, *coeffs))
    s11 = rho * (1 - e ** 2) / (1 - rho ** 2 * e ** 2)
    s21 = (1 - rho ** 2) * e / (1 - rho ** 2 * e ** 2)
    return np.stack([np.stack([s11, s21], -1), np.stack([s21, s11], -1)], -2)


def _cap_93a(f_hz, c_nf):
    """Eq. 93A-8: a single-ended shunt C in the R0 reference."""
    x = 2j * np.pi * f_hz * c_nf * 1e-9 * R0
    s11, s21 = -x / (2 + x), 2 / (2 + x)
    return np.stack([np.stack([s11, s21], -1), np.stack([s21, s11], -1)], -2)


F = np.linspace(10e6, 40e9, 400)


def test_matched_board_loss_is_the_closed_form_line():
    """C_0 = C_1 = 0 and Z_c = 2 R_0: the board is exp(-gamma z_bp); its insertion loss
    at the 802.3ck Nyquist frequency (26.5625 GHz) is the closed form to rounding."""
    p = dataclasses.replace(CR, board_c0_nf=0.0, board_c1_nf=0.0)
    s = board_s(p, 110.3, "tx", F)
    want = np.exp(-110.3 * _gamma_93a(F, *p.board_line))
    np.testing.assert_allclose(s[:, 1, 0], want, rtol=1e-12, atol=1e-15)
    np.testing.assert_allclose(np.abs(s[:, 0, 0]), 0.0, atol=1e-12)
    fn = np.array([26.5625e9])
    il = -20 * np.log10(abs(board_s(p, 110.3, "tx", fn)[0, 1, 0]))
    a1, a2 = p.board_line[1], p.board_line[2]
    il_closed = 8.685889638 * 110.3 * (a1 * np.sqrt(26.5625) + a2 * 26.5625)
    assert il == pytest.approx(il_closed, rel=1e-9)
    assert 4.3 < il < 4.5   # the loss the sheet's board adds at Nyquist (without C_0, C_1)


def test_board_and_its_place_against_scikit_rf_cascade():
    """TX package side: C_0, line, C_1, channel, C_1, line, C_0 (the IEEE code's add_brd);
    built here from the 93A element formulas and cascaded by scikit-rf. Z_c 90 ohm so the
    line reflects too; the swapped capacitors give a measurably different answer."""
    rf = pytest.importorskip("skrf", reason="scikit-rf is needed for the reference cascade")
    p = dataclasses.replace(CR, board_z_c=90.0, board_mm=(100.0, 60.0, 80.0, 120.0),
                            board_c0_nf=0.8e-4, board_c1_nf=0.3e-4)
    freq = rf.Frequency.from_f(F, unit="hz")

    def net(s):
        return rf.Network(frequency=freq, s=s, z0=R0)

    # a reflective synthetic channel: a 150 mm line of 80 ohm
    ch = _line_93a(F, 80.0, 150.0, (0.0, 1.2e-3, 1.5e-4, 6e-3))
    for kind, (l_tx, l_rx) in {"thru": (100.0, 120.0), "fext": (80.0, 120.0),
                               "next": (120.0, 60.0)}.items():
        assert board_lengths(p, kind) == (l_tx, l_rx)
        c0, c1 = net(_cap_93a(F, p.board_c0_nf)), net(_cap_93a(F, p.board_c1_nf))
        tx = net(_line_93a(F, 90.0, l_tx, p.board_line))
        rx = net(_line_93a(F, 90.0, l_rx, p.board_line))
        ref = c0 ** tx ** c1 ** net(ch) ** c1 ** rx ** c0
        got = with_boards(p, ch, kind, F)
        np.testing.assert_allclose(got, ref.s, rtol=0, atol=1e-12)
        swapped = c1 ** tx ** c0 ** net(ch) ** c0 ** rx ** c1
        assert np.max(np.abs(swapped.s[:, 0, 0] - got[:, 0, 0])) > 1e-2
    # off: the channel untouched
    assert with_boards(dataclasses.replace(p, include_pcb=False), ch, "thru", F) is ch


def test_boards_sit_inside_the_packages():
    """channel_vtf with include_pcb equals channel_vtf without it of a channel whose
    S-parameters already carry the boards: TX package . boards . channel . RX package."""
    p = dataclasses.replace(CR, f_step_ghz=0.05)
    grid = ComGrid.of(p)
    f = np.arange(0.05e9, 60e9, 0.05e9)
    sdd = _line_93a(f, 95.0, 200.0, (0.0, 1.0e-3, 1.3e-4, 6e-3))
    case = p.cases[0]
    on = channel_vtf(p, grid, Channel("syn", "thru", f, sdd), case)
    pre = Channel("syn", "thru", f, with_boards(p, sdd, "thru", f))
    off = channel_vtf(dataclasses.replace(p, include_pcb=False), grid, pre, case)
    np.testing.assert_allclose(on, off, rtol=0, atol=1e-12 * np.abs(off).max())
    plain = channel_vtf(dataclasses.replace(p, include_pcb=False), grid,
                        Channel("syn", "thru", f, sdd), case)
    k = int(round(26.5625e9 / grid.f_step_hz))
    # the two boards add close to twice the 4.4 dB of one at Nyquist (plus their caps)
    extra = 20 * np.log10(abs(plain[k]) / abs(on[k]))
    assert 8.0 < extra < 10.5


def test_presets_and_overrides():
    assert CR.include_pcb
    for name, q in PRESETS.items():
        if name != "802.3ck-cr":
            assert not q.include_pcb, name
    assert not apply_overrides(CR, ["include_pcb=false"]).include_pcb
    assert apply_overrides(CR, ["board_mm=50,60,70,80"]).board_mm == (50.0, 60.0, 70.0, 80.0)
    with pytest.raises(ConfigError, match="board_mm"):
        apply_overrides(CR, ["board_mm=50,60"])
    with pytest.raises(ConfigError, match="board_c1_nf = 1.0 is not allowed"):
        apply_overrides(CR, ["board_c1_nf=1"])
    with pytest.raises(ConfigError, match="board_line = .* is not allowed"):
        apply_overrides(CR, ["board_line=0,0,0.00579"])
