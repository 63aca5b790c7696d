"""802.3dj-kr package classes (P802.3dj/D3.3 Table 178-14): class A (the default) and
class B (``--set package_class=B``), the values written out here independently of
serdes/presets.py, and the class B package's S-parameters against a slow element-by-
element cascade of the Annex 93A closed forms (and PyChOpMarg's device model when it is
installed)."""

from __future__ import annotations

import dataclasses

import numpy as np
import pytest

from serdes.cli import main as cli_main
from serdes.com.params import preset, preset_names
from serdes.com.paramset import apply_overrides
from serdes.com.pulse import package_s
from serdes.errors import ConfigError

F = np.linspace(10e6, 110e9, 157)

# Table 178-14 class B (D3.3, as transcribed in PyChOpMarg 3.4 config/ieee_8023dj_d3p3.py):
# the die ladder, C_b, C_p and R_d of class A; four segments; its own line model
CLASS_B = dict(c_d=(4e-5, 9e-5, 1.1e-4), l_s=(0.13, 0.15, 0.14), c_b=3e-5, c_p=4e-5,
               r_d=46.25, r0=46.25, z_c=(87.5, 95.0, 100.0, 78.0), gamma0=5e-4, a1=6.5e-4,
               a2=2.93e-4, tau=6.141e-3)
# z_p1 (mm) of Test 1 and Test 2, TX / RX; segments 2-4: 2.0, 1.3, 1.5 mm
CLASS_B_Z1 = {1: (45.0, 44.0), 2: (30.0, 29.0)}


def _gamma(f_hz, g0, a1, a2, tau):
    """Eqs. 93A-9..93A-11, per mm (f in GHz)."""
    fg = f_hz / 1e9
    return (g0 + a1 * (1 + 1j) * np.sqrt(fg) + a2 * fg * (1 - 1j * 2 / np.pi * np.log(fg))
            + 1j * 2 * np.pi * fg * tau)


def _star(a, b):
    """Two 2-port S matrices joined (port 2 of a to port 1 of b), written out."""
    d = 1 - a[1, 1] * b[0, 0]
    return np.array([[a[0, 0] + a[0, 1] * a[1, 0] * b[0, 0] / d, a[0, 1] * b[0, 1] / d],
                     [a[1, 0] * b[1, 0] / d, b[1, 1] + b[1, 0] * b[0, 1] * a[1, 1] / d]])


def slow_package_s(v, lengths, side, f=F):
    """Die first: C_d(n), L_s(n) ..., C_b, the line segments, C_p; each element's S matrix
    from its closed form (eq. 93A-8 for a shunt C, the series-L dual, eqs. 93A-12..14 for
    a line with rho = (Z_c - 2 R_0) / (Z_c + 2 R_0)), joined one frequency at a time."""
    r0 = v["r0"]
    out = np.empty((len(f), 2, 2), dtype=complex)
    for i, fi in enumerate(f):
        w = 2 * np.pi * fi
        els = []

        def shunt(c):
            x = 1j * w * c * 1e-9 * r0
            return np.array([[-x / (2 + x), 2 / (2 + x)], [2 / (2 + x), -x / (2 + x)]])

        def series(ll):
            x = 1j * w * ll * 1e-9 / r0
            return np.array([[x / (2 + x), 2 / (2 + x)], [2 / (2 + x), x / (2 + x)]])

        for cd, ls in zip(v["c_d"], v["l_s"]):
            els += [shunt(cd), series(ls)]
        els.append(shunt(v["c_b"]))
        g = _gamma(np.array([fi]), v["gamma0"], v["a1"], v["a2"], v["tau"])[0]
        for zc, zp in zip(v["z_c"], lengths):
            rho = (zc - 2 * r0) / (zc + 2 * r0)
            e1, e2 = np.exp(-g * zp), np.exp(-2 * g * zp)
            s11 = rho * (1 - e2) / (1 - rho ** 2 * e2)
            s21 = (1 - rho ** 2) * e1 / (1 - rho ** 2 * e2)
            els.append(np.array([[s11, s21], [s21, s11]]))
        els.append(shunt(v["c_p"]))
        s = els[0]
        for e in els[1:]:
            s = _star(s, e)
        out[i] = s if side == "tx" else s[::-1, ::-1]
    return out


def test_class_b_values_and_class_a_default():
    a = preset("802.3dj-kr")
    assert a.package_class == "A"
    assert apply_overrides(a, {"package_class": "A"}) == a   # the default is class A
    b = apply_overrides(a, ["package_class=B"])
    assert b.package_class == "B"
    for k, want in CLASS_B.items():
        assert np.allclose(np.atleast_1d(getattr(b, k)), np.atleast_1d(want), rtol=1e-12, atol=0), k
    for test, (ztx, zrx) in CLASS_B_Z1.items():
        c = b.cases[test - 1]
        assert c["tx"] == c["next"] == c["fext"] == (ztx, 2.0, 1.3, 1.5)
        assert c["rx"] == (zrx, 2.0, 1.3, 1.5)
    # every other value of the preset is unchanged; other keys apply on top of the class
    same = [k for k in a.__dataclass_fields__ if k not in set(CLASS_B) | {"cases", "package_class"}]
    assert all(getattr(a, k) == getattr(b, k) for k in same)
    assert apply_overrides(a, ["package_class=B", "a1=7e-4"]).a1 == 7e-4


@pytest.mark.parametrize("test", [1, 2])
@pytest.mark.parametrize("side", ["tx", "rx"])
def test_class_b_package_equals_the_slow_closed_form_cascade(test, side):
    b = apply_overrides(preset("802.3dj-kr"), {"package_class": "B"})
    lengths = b.cases[test - 1][side]
    ours = package_s(b, lengths, side, F)
    ref = slow_package_s(CLASS_B, (CLASS_B_Z1[test][0 if side == "tx" else 1], 2.0, 1.3, 1.5), side)
    assert np.max(np.abs(ours - ref)) < 1e-10
    # and it is not class A's: the four segments and longer line change S21 by > 0.1
    a = preset("802.3dj-kr")
    assert np.max(np.abs(ours[:, 1, 0] - package_s(a, a.cases[test - 1][side], side, F)[:, 1, 0])) > 0.1


@pytest.mark.parametrize("test", [1, 2])
def test_class_b_package_equals_pychopmarg_device_model(test):
    pytest.importorskip("pychopmarg", reason="PyChOpMarg (peer) not installed")
    from pychopmarg.config.ieee_8023dj_d3p3 import R0, kr_c2c_device
    from pychopmarg.devmodel import s_rx_model, s_tx_model

    b = apply_overrides(preset("802.3dj-kr"), {"package_class": "B"})
    case = b.cases[test - 1]
    for side, model in (("tx", s_tx_model), ("rx", s_rx_model)):
        ref = model(F, kr_c2c_device("B", test, side == "rx"), R0).s
        assert np.max(np.abs(package_s(b, case[side], side, F) - ref)) < 1e-9, side


def test_bad_package_class_is_one_line_with_exit_2(tmp_path, capsys):
    with pytest.raises(ConfigError, match="package_class = 'C' is not allowed for preset "
                       "802.3dj-kr: expected one of A, B"):
        apply_overrides(preset("802.3dj-kr"), {"package_class": "C"})
    with pytest.raises(ConfigError, match="802.3ck-kr: expected no package_class"):
        apply_overrides(preset("802.3ck-kr"), {"package_class": "B"})
    with pytest.raises(ConfigError, match="100gbase-kr4: expected no package_class"):
        apply_overrides(preset("100gbase-kr4"), {"package_class": "B"})
    # "" (the preset's own package) on every preset, those without a package table too
    for name in preset_names():
        p = preset(name)
        q = apply_overrides(p, ["package_class="])
        assert dataclasses.replace(q, package_class=p.package_class) == p, name
    thru = tmp_path / "t.s2p"
    thru.write_text("# GHz S RI R 50\n0 0 0 1 0 1 0 0 0\n60 0 0 1 0 1 0 0 0\n")
    assert cli_main(["com", str(thru), "--preset", "802.3dj-kr", "--set", "package_class=C"]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "package_class = 'C'" in err
