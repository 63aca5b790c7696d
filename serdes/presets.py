"""Package and reference-receiver presets of the IEEE 802.3 COM tables, in one table.

Units as in the COM tables: capacitances single-ended in nF, inductances in nH,
package line lengths in mm (die side first), Z_c differential in ohm, the line model
gamma0 (1/mm), a1 (sqrt(ns)/mm), a2 (ns/mm), tau (ns/mm); R_d single-ended; f_r in
units of the symbol rate (the 4th-order Butterworth reference receiver filter).
``serdes/com/params.py`` takes its package values and cases from here (one table).

=============  ================  ============  ======  =======  ====  ==========  ====
preset         C_d (nF)          L_s (nH)      C_b nF  C_p nF   R_d   Z_c (ohm)   f_r
=============  ================  ============  ======  =======  ====  ==========  ====
802.3ck-kr     1.2e-4            0.12          0.3e-4  0.87e-4  50    87.5, 92.5  0.75
802.3ck-cr     1.2e-4            0.12          0.3e-4  0.87e-4  50    87.5, 92.5  0.75
802.3ck-c2c    1.2e-4            0.12          0.3e-4  0.87e-4  50    87.5, 92.5  0.75
802.3ck-c2m    1.2e-4 (RX: 0)    0.12 (RX: 0)  0.3e-4  0.87e-4  50    87.5, 92.5  0.75
802.3dj-kr     4e-5, 9e-5, 1.1e-4  .13,.15,.14  3e-5    4e-5     46.25 87.5, 92.5  0.55
=============  ================  ============  ======  =======  ====  ==========  ====

Line model: 802.3ck gamma0 = 0, a1 = 9.909e-4, a2 = 2.772e-4, tau = 6.141e-3; 802.3dj
gamma0 = 5e-4, a1 = 8.9e-4, a2 = 2e-4, tau = 6.141e-3. The second line segment is
z_pB = 1.8 mm at 92.5 ohm wherever a side has a line.

Package cases (main segment z_p in mm, TX / NEXT / FEXT / RX; ``PACKAGE_CASES``); the
link (``serdes run``) uses case 1, COM evaluates every case:

=============  ================  ================
preset         case 1            case 2
=============  ================  ================
802.3ck-kr     12 / 12 / 12 / 12  31 / 29 / 31 / 29
802.3ck-cr     12 / 12 / 12 / 12  31 / 29 / 31 / 29
802.3ck-c2c    13 / 11 / 13 / 11  31 / 29 / 31 / 29
802.3ck-c2m    15 / 0 / 15 / 0    30 / 0 / 30 / 0
802.3dj-kr     33 / 33 / 33 / 33  12 / 12 / 12 / 12
=============  ================  ================

802.3ck-c2m (Annex 120G host output, TP1a) has no RX package (``NO_RX_PACKAGE``: C_d,
L_s, C_b, C_p and z_p of the RX are 0 in its sheet, R_d remains), and neither the NEXT
aggressor's package nor the RX side has a line (z_p and z_pB 0).

Sources, row by row (``PRESET_SOURCES`` carries the same text):

* 802.3ck-kr, -cr, -c2c, -c2m -- verified: the task force's final COM configuration
  sheets ``config_com_ieee8023_93a=3ck_SA_KR_08_17_2022.xlsx``, ``..._SA_CR_CA_08_17_2022``
  (Clause 162 cable assembly), ``..._SA_120F_C2C_08_17_2022`` and
  ``..._SA_120g_C2M_tp1a_08_17_2022`` (sheet COM_Settings), as published in the COM code
  repository Omer-Sella/COM (``config_sheets_100G/``), read value by value: C_d, L_s, C_b,
  C_p ([TX RX]), R_d [50 50], package_Z_c [87.5 87.5; 92.5 92.5], the z_p rows of both
  cases, package_tl_gamma0_a1_a2 [0 9.909e-4 2.772e-4], package_tl_tau 6.141e-3, f_r
  0.75. The earlier d3p1 KR and C2C sheets (``..._3ck_d3p1_KR_11_30_21``,
  ``..._120F_C2C_11_30_21``, transcribed in cortalo/serdeskit
  ``examples/compute_com_kr_backplane.py`` and ``compute_com_c2c.py``) agree where they
  are transcribed. The host boards the CR sheet adds (Include PCB = 1) are part of COM
  (``serdes.com.board``, ``include_pcb``), not of the link's packages.
* 802.3dj-kr -- verified: IEEE P802.3dj/D3.3 Table 178-14 (device package, class A)
  and Table 178-15 (f_r), as transcribed in PyChOpMarg 3.4
  ``pychopmarg/config/ieee_8023dj_d3p3.py``: the 3-section die ladder, C_b, C_p,
  R_d = R_0 = 46.25 ohm, the two segments (z_p1 at 87.5 ohm, 1.8 mm at 92.5 ohm), the
  class A line model, Test 1 (z_p1 = 33 mm) and Test 2 (12 mm) as the two package
  cases (NEXT and FEXT aggressors take the TX length of the test), f_r = 0.55. Draft
  values (D3.3), not a published standard. Class B (45/44 and 30/29 mm, four segments)
  is in ``PACKAGE_CLASSES`` (below). (Before: PyChOpMarg's early ``ieee_8023dj.py``, R_d 50,
  33 mm only, f_r 0.58; ``serdes.com.params.dj_early`` keeps it for the PyChOpMarg comparison.)

Package classes (``PACKAGE_CLASSES``; COM key ``package_class``, 802.3dj-kr only): D3.3
Table 178-14 defines class A (the row above, the default) and class B, a channel being
judged with the class(es) it is meant to support. Class B, as transcribed in PyChOpMarg 3.4
``config/ieee_8023dj_d3p3.py`` (``package_class_b``, ``ZP1_KR_C2C``): the same die ladder,
C_b, C_p and R_d; four line segments Z_c 87.5 / 95 / 100 / 78 ohm of z_p1 / 2.0 / 1.3 /
1.5 mm; line model gamma0 5e-4, a1 6.5e-4, a2 2.93e-4, tau 6.141e-3; Test 1 z_p1 TX 45 mm,
RX 44 mm, Test 2 TX 30 mm, RX 29 mm; the NEXT and FEXT aggressors take the TX length (as
PyChOpMarg's device models do: its NEXT device defaults to the TX one). Draft values.

The 93A defaults of the IEEE COM code (a1 = 1.734e-3, a2 = 1.455e-4, used by the
100GBASE-KR4 tables) are not the 802.3ck values; the ck rows used them before.
Override any value with ``package.*`` keys.
"""

from __future__ import annotations

from serdes.analog.package import PackageParams
from serdes.errors import ConfigError

__all__ = ["PACKAGE_PRESETS", "PACKAGE_CASES", "PRESET_SOURCES", "RX_FILTER_F_R",
           "NO_RX_PACKAGE", "PACKAGE_CLASSES", "package_preset", "preset_names", "com_package"]

_CK = dict(c_d_nf=(1.2e-4,), l_s_nh=(0.12,), c_b_nf=0.3e-4, c_p_nf=0.87e-4, r_d_ohm=50.0,
           z_c_ohm=(87.5, 92.5), z_p_mm=(12.0, 1.8), gamma0_per_mm=0.0, a1=9.909e-4,
           a2=2.772e-4, tau_ns_per_mm=6.141e-3)
_DJ = dict(c_d_nf=(4.0e-5, 9.0e-5, 1.1e-4), l_s_nh=(0.13, 0.15, 0.14), c_b_nf=3.0e-5,
           c_p_nf=4.0e-5, r_d_ohm=46.25, z_c_ohm=(87.5, 92.5), z_p_mm=(33.0, 1.8),
           gamma0_per_mm=5.0e-4, a1=8.9e-4, a2=2.0e-4, tau_ns_per_mm=6.141e-3)

#: preset name -> package values (both sides use the same values; lengths per case)
PACKAGE_PRESETS: dict[str, dict] = {
    "802.3ck-kr": _CK,
    "802.3ck-cr": _CK,
    "802.3ck-c2c": dict(_CK, z_p_mm=(13.0, 1.8)),
    "802.3ck-c2m": dict(_CK, z_p_mm=(15.0, 1.8)),
    "802.3dj-kr": _DJ,
}

#: presets without an RX package (the C2M host-output sheet: C_d, L_s, C_b, C_p and z_p of
#: the RX all 0, the die termination R_d at the channel's port)
NO_RX_PACKAGE = frozenset({"802.3ck-c2m"})

def _case(tx, nxt, fext, rx, zb=1.8):
    return {"tx": (tx, zb), "next": (nxt, zb), "fext": (fext, zb), "rx": (rx, zb)}


#: preset name -> package cases (segment lengths in mm per side, die side first)
PACKAGE_CASES: dict[str, tuple] = {
    "802.3ck-kr": (_case(12.0, 12.0, 12.0, 12.0), _case(31.0, 29.0, 31.0, 29.0)),
    "802.3ck-cr": (_case(12.0, 12.0, 12.0, 12.0), _case(31.0, 29.0, 31.0, 29.0)),
    "802.3ck-c2c": (_case(13.0, 11.0, 13.0, 11.0), _case(31.0, 29.0, 31.0, 29.0)),
    # C2M: NEXT and RX have no line at all (z_p and z_pB 0 in the sheet)
    "802.3ck-c2m": tuple({"tx": (z, 1.8), "next": (0.0, 0.0), "fext": (z, 1.8), "rx": (0.0, 0.0)}
                         for z in (15.0, 30.0)),
    # P802.3dj/D3.3 Table 178-14, class A: Test 1 and Test 2 line 1 lengths
    "802.3dj-kr": (_case(33.0, 33.0, 33.0, 33.0), _case(12.0, 12.0, 12.0, 12.0)),
}

#: the task force's final 802.3ck COM sheets ({}: the sheet's name tail); also used by
#: serdes.com.params for the non-package values
SHEET_SA = ("IEEE 802.3ck COM configuration sheet config_com_ieee8023_93a=3ck_SA_{} (sheet "
            "COM_Settings; the task force's final set, dated 08/17/2022, as published in the "
            "COM code repository Omer-Sella/COM, config_sheets_100G/)")
_SA = SHEET_SA
#: preset name -> where its values come from ("unverified" when not checked)
PRESET_SOURCES: dict[str, str] = {
    "802.3ck-kr": _SA.format("KR_08_17_2022.xlsx") + ": C_d, L_s, C_b, C_p, R_d, package_Z_c, "
    "z_p cases [12 31; 1.8 1.8] (TX, FEXT) and [12 29; 1.8 1.8] (NEXT, RX), line model, f_r; "
    "the d3p1 sheet (cortalo/serdeskit examples/compute_com_kr_backplane.py) agrees on case 1; "
    "verified",
    "802.3ck-cr": _SA.format("CR_CA_08_17_2022.xlsx") + ": the same package and cases as KR; "
    "verified (the host boards the sheet adds, Include PCB = 1, are in COM, not in the "
    "link's packages)",
    "802.3ck-c2c": _SA.format("120F_C2C_08_17_2022.xlsx") + ": cases [13 31] (TX, FEXT), "
    "[11 29] (NEXT, RX); the d3p1 sheet (cortalo/serdeskit examples/compute_com_c2c.py) "
    "agrees; verified",
    "802.3ck-c2m": _SA.format("120g_C2M_tp1a_08_17_2022.xlsx") + ": TX and FEXT package as "
    "KR with z_p [15 30; 1.8 1.8], NEXT z_p [0 0; 0 0], no RX package (C_d, L_s, C_b, C_p, "
    "z_p of the RX 0); verified",
    "802.3dj-kr": "IEEE P802.3dj/D3.3 Table 178-14 (class A, Test 1 and Test 2) as transcribed "
                  "in PyChOpMarg 3.4 pychopmarg/config/ieee_8023dj_d3p3.py (draft values); verified",
}

#: COM package classes: preset name -> class -> (package values, cases); the preset's row
#: above is its first class (the default). P802.3dj/D3.3 Table 178-14 via PyChOpMarg 3.4.
_DJ_B = dict(_DJ, z_c_ohm=(87.5, 95.0, 100.0, 78.0), z_p_mm=(45.0, 2.0, 1.3, 1.5),
             a1=6.5e-4, a2=2.93e-4)


def _case_b(tx, rx):
    return {s: (z, 2.0, 1.3, 1.5) for s, z in (("tx", tx), ("next", tx), ("fext", tx), ("rx", rx))}


PACKAGE_CLASSES: dict[str, dict[str, tuple]] = {
    "802.3dj-kr": {"A": (_DJ, PACKAGE_CASES["802.3dj-kr"]),
                   "B": (_DJ_B, (_case_b(45.0, 44.0), _case_b(30.0, 29.0)))},
}
PACKAGE_CLASS_SOURCES: dict[str, str] = {
    "802.3dj-kr": "IEEE P802.3dj/D3.3 Table 178-14 (classes A and B, Test 1 and Test 2) as "
                  "transcribed in PyChOpMarg 3.4 pychopmarg/config/ieee_8023dj_d3p3.py "
                  "(package_class_a, package_class_b, ZP1_KR_C2C; draft values)",
}

#: preset name -> f_r of the reference receiver filter (Butterworth at f_r * f_b)
RX_FILTER_F_R: dict[str, float] = {
    "802.3ck-kr": 0.75, "802.3ck-cr": 0.75, "802.3ck-c2c": 0.75, "802.3ck-c2m": 0.75,
    "802.3dj-kr": 0.55,
}


def preset_names() -> tuple[str, ...]:
    return tuple(PACKAGE_PRESETS)


def package_preset(name: str, **overrides) -> PackageParams:
    """The :class:`PackageParams` of a preset, with keyword overrides."""
    if name not in PACKAGE_PRESETS:
        raise ConfigError(f"package.preset = {name!r} is not allowed: expected 'none' or one of "
                          + ", ".join(repr(n) for n in PACKAGE_PRESETS))
    values = dict(PACKAGE_PRESETS[name])
    values.update({k: v for k, v in overrides.items() if v is not None})
    return PackageParams(**values)


def com_package(name: str, package_class: str = "") -> dict:
    """The package fields of a COM parameter set (``serdes.com.params.ComParams``) of a
    preset: the same table as the link's packages; ``package_class`` picks a row of
    ``PACKAGE_CLASSES`` ("": the preset's own row; none for a preset whose package is not
    in the table, such as 100gbase-kr4: its values stay)."""
    if not package_class and name not in PACKAGE_PRESETS:
        return {}
    if package_class:
        classes = PACKAGE_CLASSES.get(name, {})
        if package_class not in classes:
            allowed = ("one of " + ", ".join(classes)) if classes else "no package_class (the preset has one)"
            raise ConfigError(f"com: package_class = {package_class!r} is not allowed for preset "
                              f"{name}: expected {allowed}")
        v, cases = classes[package_class]
    else:
        v, cases = PACKAGE_PRESETS[name], PACKAGE_CASES[name]
    return dict(c_d=tuple(v["c_d_nf"]), l_s=tuple(v["l_s_nh"]), c_b=v["c_b_nf"],
                c_p=v["c_p_nf"], r_d=v["r_d_ohm"], z_c=tuple(v["z_c_ohm"]),
                cases=cases, gamma0=v["gamma0_per_mm"], a1=v["a1"],
                a2=v["a2"], tau=v["tau_ns_per_mm"], f_r=RX_FILTER_F_R[name],
                rx_package=name not in NO_RX_PACKAGE)
