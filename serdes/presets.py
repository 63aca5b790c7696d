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
802.3ck-c2m    1.2e-4            0.12          0.3e-4  0.87e-4  50    87.5, 92.5  0.75
802.3dj-kr     4e-5, 9e-5, 1.1e-4  .13,.15,.14  3e-5    4e-5     46.25 87.5, 92.5  0.55
=============  ================  ============  ======  =======  ====  ==========  ====

Line model: 802.3ck gamma0 = 0, a1 = 9.909e-4, a2 = 2.772e-4, tau = 6.141e-3; 802.3dj
gamma0 = 5e-4, a1 = 8.9e-4, a2 = 2e-4, tau = 6.141e-3. The second line segment is
z_pB = 1.8 mm at 92.5 ohm in every row.

Package cases (main segment z_p in mm, TX / NEXT / FEXT / RX; ``PACKAGE_CASES``); the
link (``serdes run``) uses case 1, COM evaluates every case:

=============  ================  ================
preset         case 1            case 2
=============  ================  ================
802.3ck-kr     12 / 12 / 12 / 12  31 / 29 / 31 / 29
802.3ck-cr     12 / 12 / 12 / 12  31 / 29 / 31 / 29
802.3ck-c2c    13 / 11 / 13 / 11  31 / 29 / 31 / 29
802.3ck-c2m    12 / 12 / 12 / 12  31 / 29 / 31 / 29
802.3dj-kr     33 / 33 / 33 / 33  12 / 12 / 12 / 12
=============  ================  ================

Sources, row by row (``PRESET_SOURCES`` carries the same text):

* 802.3ck-kr -- verified: the 802.3ck KR COM configuration sheet
  ``config_com_ieee8023_93a=3ck_d3p1_KR_11_30_21.xlsx`` (sheet COM_Settings, in the task
  force's ``mellitz_3ck_adhoc_01_032322_COM3p70.zip``, ieee802.org/3/ck/public/tools),
  as transcribed value by value in cortalo/serdeskit
  ``examples/compute_com_kr_backplane.py``: C_d, L_s, C_b, C_p, R_d [50 50],
  package_Z_c [87.5 87.5; 92.5 92.5], z_p case 1 = 12 mm (all four) then 1.8 mm, the
  line model [0 9.909e-4 2.772e-4] and tau 6.141e-3, f_r 0.75. Case 2 (31/29/31/29)
  is not in that transcription: unverified.
* 802.3ck-c2c -- verified: the C2C sheet
  ``config_com_ieee8023_93a=3ck_d3p1_120F_C2C_11_30_21.xlsx`` (Annex 120F, same zip),
  transcribed in cortalo/serdeskit ``examples/compute_com_c2c.py`` and
  ``tests/package/test_cascade_vs_matlab_c2c.py`` (checked there against MATLAB COM 3.70):
  the same elements and line model as KR, z_p (TX) [13 31], (NEXT) [11 29],
  (FEXT) [13 31], (RX) [11 29], f_r 0.75.
* 802.3ck-cr, 802.3ck-c2m -- unverified (provisional): no readable copy of the CR
  (Clause 162) or C2M (Annex 120G) sheets was found; these rows repeat the KR values.
* 802.3dj-kr -- verified: IEEE P802.3dj/D3.3 Table 178-14 (device package, class A)
  and Table 178-15 (f_r), as transcribed in PyChOpMarg 3.4
  ``pychopmarg/config/ieee_8023dj_d3p3.py``: the 3-section die ladder, C_b, C_p,
  R_d = R_0 = 46.25 ohm, the two segments (z_p1 at 87.5 ohm, 1.8 mm at 92.5 ohm), the
  class A line model, Test 1 (z_p1 = 33 mm) and Test 2 (12 mm) as the two package
  cases (NEXT and FEXT aggressors take the TX length of the test), f_r = 0.55. Draft
  values (D3.3), not a published standard. Class B (45/44 and 30/29 mm, four segments)
  is not a preset. (Before: PyChOpMarg's early ``ieee_8023dj.py``, R_d 50, 33 mm only,
  f_r 0.58; ``serdes.com.params.dj_early`` keeps it for the PyChOpMarg comparison.)

The 93A defaults of the IEEE COM code (a1 = 1.734e-3, a2 = 1.455e-4, used by the
100GBASE-KR4 tables) are not the 802.3ck values; the ck rows used them before.
Override any value with ``package.*`` keys.
"""

from __future__ import annotations

from serdes.analog.package import PackageParams
from serdes.errors import ConfigError

__all__ = ["PACKAGE_PRESETS", "PACKAGE_CASES", "PRESET_SOURCES", "RX_FILTER_F_R",
           "package_preset", "preset_names", "com_package"]

_CK = dict(c_d_nf=(1.2e-4,), l_s_nh=(0.12,), c_b_nf=0.3e-4, c_p_nf=0.87e-4, r_d_ohm=50.0,
           z_c_ohm=(87.5, 92.5), z_p_mm=(12.0, 1.8), gamma0_per_mm=0.0, a1=9.909e-4,
           a2=2.772e-4, tau_ns_per_mm=6.141e-3)
_DJ = dict(c_d_nf=(4.0e-5, 9.0e-5, 1.1e-4), l_s_nh=(0.13, 0.15, 0.14), c_b_nf=3.0e-5,
           c_p_nf=4.0e-5, r_d_ohm=46.25, z_c_ohm=(87.5, 92.5), z_p_mm=(33.0, 1.8),
           gamma0_per_mm=5.0e-4, a1=8.9e-4, a2=2.0e-4, tau_ns_per_mm=6.141e-3)

#: preset name -> package values (both sides use the same values and lengths)
PACKAGE_PRESETS: dict[str, dict] = {
    "802.3ck-kr": _CK,
    "802.3ck-cr": _CK,
    "802.3ck-c2c": dict(_CK, z_p_mm=(13.0, 1.8)),
    "802.3ck-c2m": _CK,
    "802.3dj-kr": _DJ,
}

def _case(tx, nxt, fext, rx, zb=1.8):
    return {"tx": (tx, zb), "next": (nxt, zb), "fext": (fext, zb), "rx": (rx, zb)}


#: preset name -> package cases (segment lengths in mm per side, die side first)
PACKAGE_CASES: dict[str, tuple] = {
    "802.3ck-kr": (_case(12.0, 12.0, 12.0, 12.0), _case(31.0, 29.0, 31.0, 29.0)),
    "802.3ck-cr": (_case(12.0, 12.0, 12.0, 12.0), _case(31.0, 29.0, 31.0, 29.0)),
    "802.3ck-c2c": (_case(13.0, 11.0, 13.0, 11.0), _case(31.0, 29.0, 31.0, 29.0)),
    "802.3ck-c2m": (_case(12.0, 12.0, 12.0, 12.0), _case(31.0, 29.0, 31.0, 29.0)),
    # P802.3dj/D3.3 Table 178-14, class A: Test 1 and Test 2 line 1 lengths
    "802.3dj-kr": (_case(33.0, 33.0, 33.0, 33.0), _case(12.0, 12.0, 12.0, 12.0)),
}

_SHEETS = ("IEEE 802.3ck COM config sheet {} (mellitz_3ck_adhoc_01_032322_COM3p70.zip, "
           "ieee802.org/3/ck/public/tools) as transcribed in cortalo/serdeskit {}")
#: preset name -> where its values come from ("unverified" when not checked)
PRESET_SOURCES: dict[str, str] = {
    "802.3ck-kr": _SHEETS.format("config_com_ieee8023_93a=3ck_d3p1_KR_11_30_21.xlsx",
                                 "examples/compute_com_kr_backplane.py")
    + "; verified except package case 2 (unverified)",
    "802.3ck-cr": "unverified (provisional): repeats 802.3ck-kr; no readable Clause 162 sheet",
    "802.3ck-c2c": _SHEETS.format("config_com_ieee8023_93a=3ck_d3p1_120F_C2C_11_30_21.xlsx",
                                  "examples/compute_com_c2c.py") + "; verified",
    "802.3ck-c2m": "unverified (provisional): repeats 802.3ck-kr; no readable Annex 120G sheet",
    "802.3dj-kr": "IEEE P802.3dj/D3.3 Table 178-14 (class A, Test 1 and Test 2) as transcribed "
                  "in PyChOpMarg 3.4 pychopmarg/config/ieee_8023dj_d3p3.py (draft values); verified",
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


def com_package(name: str) -> dict:
    """The package fields of a COM parameter set (``serdes.com.params.ComParams``) of a
    preset: the same table as the link's packages."""
    v = PACKAGE_PRESETS[name]
    return dict(c_d=tuple(v["c_d_nf"]), l_s=tuple(v["l_s_nh"]), c_b=v["c_b_nf"],
                c_p=v["c_p_nf"], r_d=v["r_d_ohm"], z_c=tuple(v["z_c_ohm"]),
                cases=PACKAGE_CASES[name], gamma0=v["gamma0_per_mm"], a1=v["a1"],
                a2=v["a2"], tau=v["tau_ns_per_mm"], f_r=RX_FILTER_F_R[name])
