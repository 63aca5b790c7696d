"""Package and reference-receiver presets of the IEEE 802.3 COM tables, in one table.

Units as in the COM tables: capacitances single-ended in nF, inductances in nH,
package line lengths in mm (die side first), Z_c differential in ohm, the line model
gamma0 (1/mm), a1 (sqrt(ns)/mm), a2 (ns/mm), tau (ns/mm); R_d single-ended; f_r in
units of the symbol rate (the 4th-order Butterworth reference receiver filter).

=============  ==============  ======  ======  =======  ====  ==========  ==========  ====
preset         C_d (nF)        L_s nH  C_b nF  C_p nF   R_d   Z_c (ohm)   z_p (mm)    f_r
=============  ==============  ======  ======  =======  ====  ==========  ==========  ====
802.3ck-kr     1.2e-4          0.12    0.3e-4  0.87e-4  50    87.5, 92.5  12, 1.8     0.75
802.3ck-cr     1.2e-4          0.12    0.3e-4  0.87e-4  50    87.5, 92.5  12, 1.8     0.75
802.3ck-c2c    1.2e-4          0.12    0.3e-4  0.87e-4  50    87.5, 92.5  12, 1.8     0.75
802.3ck-c2m    1.2e-4          0.12    0.3e-4  0.87e-4  50    87.5, 92.5  12, 1.8     0.75
802.3dj-kr     4e-5,9e-5,1.1e-4 .13,.15,.14 3e-5 4e-5   50    87.5, 92.5  33, 1.8     0.58
=============  ==============  ======  ======  =======  ====  ==========  ==========  ====

Line model: 802.3ck gamma0 = 0, a1 = 1.734e-3, a2 = 1.455e-4, tau = 6.141e-3 (the
defaults of the IEEE COM reference code, ``package_tl_gamma0_a1_a2`` and
``package_tl_tau``); 802.3dj gamma0 = 5e-4, a1 = 8.9e-4, a2 = 2e-4, tau = 6.141e-3.

Sources and their standing:

* 802.3dj-kr: PyChOpMarg (capn-freako/PyChOpMarg, ``src/pychopmarg/config/ieee_8023dj.py``,
  the 802.3dj COM parameters of its authors, Annex 178A): the 3-section die ladder,
  C_b, C_p, R_d, the two line segments (z_p = 33 mm at 87.5 ohm then z_pB = 1.8 mm at
  92.5 ohm), the line model and f_r = 0.58.
* 802.3ck: the element *form* (C_d, L_s, C_b, C_p, two line segments) and units follow
  the IEEE COM reference code (its ``C_d``/``L_s``/``C_b``/``C_p`` keywords in nF/nH,
  single-ended, and its ``make_full_pkg`` element order); the *values* are those of the
  802.3ck COM configuration sheets (Tables 162-?/163-10, Annexes 120F/120G) as
  published by the task force, which were not available to check here: treat the ck
  rows as provisional until compared with the standard's tables. The four ck rows
  share one package; they differ in the standard by the channel-side settings (and
  z_p cases 12 / 31 mm), which COM evaluates as separate cases: the preset takes the
  first (12 mm). Override any value with ``package.*`` keys.
"""

from __future__ import annotations

from serdes.analog.package import PackageParams
from serdes.errors import ConfigError

__all__ = ["PACKAGE_PRESETS", "RX_FILTER_F_R", "package_preset", "preset_names"]

_CK = dict(c_d_nf=(1.2e-4,), l_s_nh=(0.12,), c_b_nf=0.3e-4, c_p_nf=0.87e-4, r_d_ohm=50.0,
           z_c_ohm=(87.5, 92.5), z_p_mm=(12.0, 1.8), gamma0_per_mm=0.0, a1=1.734e-3,
           a2=1.455e-4, tau_ns_per_mm=6.141e-3)
_DJ = dict(c_d_nf=(4.0e-5, 9.0e-5, 1.1e-4), l_s_nh=(0.13, 0.15, 0.14), c_b_nf=3.0e-5,
           c_p_nf=4.0e-5, r_d_ohm=50.0, z_c_ohm=(87.5, 92.5), z_p_mm=(33.0, 1.8),
           gamma0_per_mm=5.0e-4, a1=8.9e-4, a2=2.0e-4, tau_ns_per_mm=6.141e-3)

#: preset name -> package values (both sides use the same values and lengths)
PACKAGE_PRESETS: dict[str, dict] = {
    "802.3ck-kr": _CK,
    "802.3ck-cr": _CK,
    "802.3ck-c2c": _CK,
    "802.3ck-c2m": _CK,
    "802.3dj-kr": _DJ,
}

#: preset name -> f_r of the reference receiver filter (Butterworth at f_r * f_b)
RX_FILTER_F_R: dict[str, float] = {
    "802.3ck-kr": 0.75, "802.3ck-cr": 0.75, "802.3ck-c2c": 0.75, "802.3ck-c2m": 0.75,
    "802.3dj-kr": 0.58,
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
