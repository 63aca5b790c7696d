"""COM parameters (IEEE 802.3 Annex 93A) and the presets, in one table with sources.

Units follow the COM tables: f_b in GBd, frequencies in GHz, times in ns, C in nF
(single-ended), L in nH, lengths in mm, eta_0 in V^2/GHz, RJ and A_DD in UI.

Every preset value can be overridden (``overrides={"der0": 1e-5}`` or ``serdes com --set
der0=1e-5``); lists are given comma-separated on the command line.

========================  ================  =====================  ====================
value                     100gbase-kr4      802.3ck-kr (cr)        802.3ck-c2c
========================  ================  =====================  ====================
f_b (GBd), L, M           25.78125, 2, 32   53.125, 4, 32          53.125, 4, 32
DER_0                     1e-5              1e-4                   1e-5
A_v, A_fe, A_ne (V)       0.4, 0.4, 0.6     0.413, 0.413, 0.608    0.413, 0.413, 0.608
eta_0 (V^2/GHz)           5.2e-8            8.2e-9 (cr: 9e-9)      2e-8
SNR_TX (dB), RLM          27, 1             33 (cr: 32.5), 0.95    33, 0.95
sigma_RJ, A_DD (UI)       0.01, 0.05        0.01, 0.02             0.01, 0.02
T_r (ns)                  0 (no filter)     0.0075                 0.0075
f_r (f_b), R_0 (ohm)      0.75, 50          0.75, 50               0.75, 50
CTLE g_DC (dB)            -12..0            -20..0                 -20..0
CTLE g_DC2 (dB)           0                 -6..0                  -4..0
f_z = f_p1, f_p2, f_LF    f_b/4, f_b, -     f_b/2.5, f_b, f_b/80   f_b/2.5, f_b, f_b/80
TX c(-3), c(-2)           -                 -0.06..0, 0..0.12      -0.04..0, 0..0.1
TX c(-1), c(1)            -0.18..0, -0.38..0 -0.34..0, -0.2..0     -0.28..0, -0.1..0
TX step, c(0) min         0.02, 0           0.02, 0.54             0.02, 0.54
DFE N_b                   14                12                     6
b_max(1..N_b)             1                 0.85 0.3 0.2x5 0.1x5   0.65 0.15 0.1x4
b_min(1..N_b)             -1                0.3 0.05 -0.03x10      0.3 0.05 -0.04x4
ERL N_bx, T_fx (ns), N    (12, 0, 1000)     21, 0, 3500            6, 0, 2000
                                            (cr: 0, 0.3, 4500)
ERL pass limit (dB)       - (not judged)    9.7 (cr: 8.25)         9.7
package, line, cases      Annex 93A         serdes/presets.py      serdes/presets.py
========================  ================  =====================  ====================

802.3ck-c2m (Annex 120G host output, TP1a): DER_0 1e-5; A_v = A_fe 0.415 V, A_ne 0.45 V;
eta_0 4.1e-8; SNR_TX 32.5 dB; T_r 0.0075 ns; TX FFE as KR; CTLE f_z 12.58, f_p1 20, f_p2
28, f_LF 1.328125 GHz, g_DC -13..0, g_DC2 -3..0 in 0.5 dB steps, limited to the sheet's
G_Qual / G2_Qual pairs (``ctle_qual``, ``ComParams.ctle_allowed``); 4 DFE taps, b_max 0.4,
0.15, 0.15, 0.1, b_min 0.1, -0.35 x 3 (see ``_c2m``); no RX package (``rx_package``);
ERL N_bx 0, T_fx 0 / 0.2 ns (ports 1 / 2), N 800, TX package in port 2's TDR (TDR_W_TXPKG 1),
pass limit 7.3 dB. rho_x 0.618, beta_x 0, TR_TDR 0.01 ns and Tukey_Window 1 in every
802.3ck sheet (``erl_*`` keys; 802.3dj-kr and 100gbase-kr4 have no ERL limit here).

Sources and standing (``SOURCES`` below; each preset's ``source``):

* 802.3dj-kr: IEEE P802.3dj/D3.3 (draft) Table 178-15, the KR column, and Table 178-14
  (package class A; Test 1 and Test 2 are the two package cases), as transcribed in
  PyChOpMarg 3.4 ``pychopmarg/config/ieee_8023dj_d3p3.py`` (``com_params("KR")``):

  ==========================  ==============================================
  f_b (GBd), L, M, DER_0      106.25, 4, 32, 2e-4
  A_v, A_fe, A_ne (V)         0.385, 0.385, 0.481
  eta_0, SNR_TX, RLM          7.5e-9 V^2/GHz, 33.5 dB, 0.95
  sigma_RJ, A_DD, T_r         0.01 UI, 0.02 UI, 0.004 ns
  R_0 = R_d (ohm), f_r        46.25, 0.55 f_b
  CTLE                        g_DC -20..0, g_DC2 -6..0 (1 dB steps);
                              f_z = f_p1 = f_b/2.5, f_p2 = f_b, f_LF = f_b/80
  TX c(-3), c(-2)             0, 0..0.14 (step 0.02)
  TX c(-1), c(1), c(0) min    -0.34..0, -0.2..0 (step 0.02), 0.54
  RX FFE                      N_fix 15 taps, d_w 6 pre-cursor, +-0.7 of the cursor tap
  DFE                         1 tap, 0..0.85
  MLSD                        on (178A.1.10, dCOM_an 3 dB; ``mlsd.py``)
  quantization noise          N_qb 6, P_qc 1e-7 (178A.1.7.6; ``quant.py``)
  not modelled                floating RX FFE taps (N_wg 2 groups of N_wf 4 taps
                              within +-0.05, up to N_max 87)
  ==========================  ==============================================

  The channel's S-parameters are renormalized from 50 ohm to 2 R_0 (178A-4) before the
  packages are joined. The earlier set of PyChOpMarg's ``config/ieee_8023dj.py`` (TX
  steps 0.005, 16 RX FFE taps) is :func:`dj_early`, used by the PyChOpMarg comparison.
  Package class (Table 178-14): ``package_class`` "A" (default) or "B" (four line
  segments, Test 1 45 / 44 mm, Test 2 30 / 29 mm TX / RX; ``serdes.presets.PACKAGE_CLASSES``).
* 100gbase-kr4: IEEE 802.3 Clause 93, Table 93-8 (COM parameter values) with the Annex
  93A package (single line segment, Z_c 78.2 ohm). Its ERL keys are provisional defaults
  (Clause 93 has no ERL).
* 802.3ck-kr, -cr, -c2c, -c2m: every value above read from the task force's final COM
  configuration sheets (``config_com_ieee8023_93a=3ck_SA_KR_08_17_2022.xlsx``,
  ``..._SA_CR_CA_08_17_2022``, ``..._SA_120F_C2C_08_17_2022``,
  ``..._SA_120g_C2M_tp1a_08_17_2022``, sheet COM_Settings) as published in the COM code
  repository Omer-Sella/COM (``config_sheets_100G/``); the KR and C2C values agree with
  the earlier d3p1 sheets as transcribed in cortalo/serdeskit. The DFE limits are applied
  as the IEEE code applies them (``dfe_clipper``: each tap clipped to [b_min, b_max] times
  the cursor), so the positive b_min(1) = 0.3 and b_min(2) = 0.05 are lower bounds. The
  CR sheet's host boards (Include PCB = 1) are ``include_pcb`` / ``board_*`` (board.py);
  the C2M eye over T_O = 50 mUI with the Gaussian window (sigma_r 0.02 UI) is judged
  against EH 10 mV, VEC 12 dB (``eye_*``, eye.py), and the sheet's Min_VEO_Test of 5 mV
  (``eye_min_veo_test_mv``) puts the search in the IEEE code's C2M mode (c2m_search.py;
  ``--set eye_min_veo_test_mv=0`` searches by the FOM as the other presets). The floating DFE taps of KR and CR
  (N_bg 3 groups of N_bf 3 taps among taps 13..N_f = 40, bmaxg KR 0.05 / CR 0.03, the
  taps from N_tail_start 25 on with RSS <= B_float_RSS_MAX 0.02) are ``dfe_n_bg``,
  ``dfe_n_bf``, ``dfe_n_f``, ``dfe_bmaxg``, ``dfe_tail_start``, ``dfe_b_rss_max``
  (floating.py; the C2C sheet has N_bg 0, C2M none; ``--set dfe_n_bg=0`` turns them off).
"""

from __future__ import annotations

import dataclasses

import numpy as np

from serdes.errors import ConfigError
from serdes.presets import SHEET_SA as _SA, com_package
from serdes.com.paramset import ComParams, apply_overrides  # noqa: F401  (re-exported)

__all__ = ["ComParams", "PRESETS", "preset", "preset_names", "apply_overrides", "dj_early"]


#: preset name -> where its non-package values come from (the package: serdes/presets.py)
SOURCES = {
    "802.3ck-kr": _SA.format("KR_08_17_2022.xlsx") + "; the earlier d3p1 sheet (..._3ck_d3p1_KR_"
    "11_30_21.xlsx, transcribed in cortalo/serdeskit examples/compute_com_kr_backplane.py) "
    "agrees on every value it carries; verified; with its floating DFE taps (N_bg 3, N_bf 3, "
    "N_f 40, bmaxg 0.05, N_tail_start 25, B_float_RSS_MAX 0.02)",
    "802.3ck-cr": _SA.format("CR_CA_08_17_2022.xlsx") + " (Clause 162 cable assembly); "
    "verified; with its host boards (Include PCB = 1: 110.3 mm of 100 ohm board, line "
    "[0 3.8206e-4 9.5909e-5], tau 5.79e-3 ns/mm, C_0 0.29e-4 nF, C_1 0.19e-4 nF, each "
    "side); with its floating DFE taps (N_bg 3, N_bf 3, N_f 40, bmaxg 0.03, N_tail_start "
    "25, B_float_RSS_MAX 0.02)",
    "802.3ck-c2c": _SA.format("120F_C2C_08_17_2022.xlsx") + "; the d3p1 sheet (transcribed in "
    "cortalo/serdeskit examples/compute_com_c2c.py) agrees; verified",
    "802.3ck-c2m": _SA.format("120g_C2M_tp1a_08_17_2022.xlsx") + " (Annex 120G host output, "
    "TP1a); verified, with its eye criteria (VEC / EH over T_O = 50 mUI with the "
    "Gaussian histogram window, sigma_r 0.02 UI, 100 samples per UI; limits VEC 12 dB, "
    "EH 10 mV)",
    "802.3dj-kr": "IEEE P802.3dj/D3.3 Table 178-15 (KR COM parameters) and Table 178-14 "
                  "(package class A, Test 1 and Test 2), draft values, as transcribed in "
                  "PyChOpMarg 3.4 config/ieee_8023dj_d3p3.py com_params(\"KR\"); verified; "
                  "with its floating RX FFE taps (N_wg 2 x N_wf 4 up to N_max 87), "
                  "quantization noise (N_qb 6, P_qc 1e-7) and MLSD COM (178A.1.10)",
}

def _rng(lo, hi, step=1.0):
    n = int(round((hi - lo) / step)) + 1
    return tuple(float(np.round(lo + step * i, 10)) for i in range(n))


def _ck(**kw):
    fb = 53.125
    base = dict(
        name="802.3ck-kr", fb_gbd=fb, levels=4, der0=1e-4, a_v=0.413, a_fe=0.413, a_ne=0.608,
        eta0=8.2e-9, snr_tx_db=33.0, rlm=0.95, sigma_rj=0.01, a_dd=0.02, t_r_ns=0.0075,
        g_dc=_rng(-20, 0), g_dc2=_rng(-6, 0), f_z_ghz=fb / 2.5, f_p1_ghz=fb / 2.5, f_p2_ghz=fb,
        f_lf_ghz=fb / 80, tx_min=(-0.06, 0.0, -0.34, -0.2), tx_max=(0.0, 0.12, 0.0, 0.0),
        tx_step=(0.02, 0.02, 0.02, 0.02), tx_n_pre=3, c0_min=0.54,
        # b_max(1), b_max(2..N_b); b_min(1), b_min(2..N_b) of the KR sheet. The IEEE code
        # fills b_min(1..N_b) with b_min(1), overwrites 2..N_b and clips each DFE tap to
        # [b_min, b_max] times the cursor (dfe_clipper): a positive b_min is a lower bound.
        dfe_max=(0.85, 0.3) + (0.2,) * 5 + (0.1,) * 5, dfe_min=(0.3, 0.05) + (-0.03,) * 10,
        # ERL: rho_x, beta_x, N_bx, fixture delay, N of the sheet
        erl_rho_x=0.618, erl_beta_x_ghz=0.0, erl_n_bx=21, erl_t_fx_ns=0.0, erl_n_ui=3500,
        erl_limit_db=9.7,  # ERL Pass threshold (TR_TDR 0.01 ns, Tukey_Window 1: defaults)
        r0=50.0, source=SOURCES["802.3ck-kr"])
    base.update(kw)
    base.update(com_package(base["name"]))  # the package table of serdes/presets.py
    return ComParams(**base)


def _c2m():
    """Annex 120G host output (TP1a): its own CTLE (f_z 12.58, f_p1 20, f_p2 28 GHz) with
    the G_Qual / G2_Qual pairs, 4 DFE taps, no RX package. b_min(2..N_b) is written
    ``[ -0.15 - 0.15 - 0.05 ]`` in the sheet, which MATLAB evaluates to the one number
    -0.35 (spaces on both sides of a minus make it a subtraction) and assigns to taps 2..4;
    we follow what the IEEE code does (the intent was probably -0.15, -0.15, -0.05)."""
    return _ck(name="802.3ck-c2m", der0=1e-5, a_v=0.415, a_fe=0.415, a_ne=0.45, eta0=4.1e-8,
               snr_tx_db=32.5, g_dc=_rng(-13, 0), g_dc2=_rng(-3, 0, 0.5), f_z_ghz=12.58,
               f_p1_ghz=20.0, f_p2_ghz=28.0, f_lf_ghz=1.328125,
               ctle_qual=(0.0, -2.0, -9.0, -1.0, -2.0, -11.0, -2.0, -4.0, -10.0,
                          -3.0, -4.0, -9.0),
               dfe_max=(0.4, 0.15, 0.15, 0.1), dfe_min=(0.1, -0.35, -0.35, -0.35),
               erl_n_bx=0, erl_n_ui=800, erl_t_fx_ns=0.0, erl_t_fx2_ns=0.2,
               erl_tdr_w_txpkg=True, erl_limit_db=7.3,
               eye_t_o_mui=50.0, eye_sigma_r_ui=0.02, eye_eh_min_mv=10.0,
               eye_vec_max_db=12.0, eye_min_veo_test_mv=5.0, source=SOURCES["802.3ck-c2m"])


def _kr4():
    fb = 25.78125
    return ComParams(
        name="100gbase-kr4", fb_gbd=fb, levels=2, der0=1e-5, a_v=0.4, a_fe=0.4, a_ne=0.6,
        eta0=5.2e-8, snr_tx_db=27.0, rlm=1.0, sigma_rj=0.01, a_dd=0.05, t_r_ns=0.0, f_r=0.75,
        g_dc=_rng(-12, 0), g_dc2=(0.0,), f_z_ghz=fb / 4, f_p1_ghz=fb / 4, f_p2_ghz=fb,
        f_lf_ghz=fb / 80, tx_min=(-0.18, -0.38), tx_max=(0.0, 0.0), tx_step=(0.02, 0.02),
        tx_n_pre=1, c0_min=0.0, dfe_max=(1.0,) * 14, dfe_min=(-1.0,) * 14,
        c_d=(2.5e-4,), l_s=(0.0,), c_b=0.0, c_p=1.8e-4, r_d=55.0, r0=50.0, z_c=(78.2,),
        cases=({"tx": (12.0,), "next": (12.0,), "fext": (12.0,), "rx": (12.0,)},
               {"tx": (30.0,), "next": (12.0,), "fext": (30.0,), "rx": (30.0,)}),
        source="IEEE 802.3 Clause 93 Table 93-8, Annex 93A")


def _dj():
    """802.3dj KR: IEEE P802.3dj/D3.3 Table 178-15 (COM parameters), package class A of
    Table 178-14 (``serdes/presets.py``), as transcribed in PyChOpMarg 3.4
    ``config/ieee_8023dj_d3p3.py`` (``com_params("KR")``)."""
    fb = 106.25
    nfix, dw = 15, 6
    return ComParams(
        name="802.3dj-kr", fb_gbd=fb, levels=4, der0=2e-4, a_v=0.385, a_fe=0.385, a_ne=0.481,
        eta0=7.5e-9, snr_tx_db=33.5, rlm=0.95, sigma_rj=0.01, a_dd=0.02, t_r_ns=0.004,
        g_dc=_rng(-20, 0), g_dc2=_rng(-6, 0), f_z_ghz=fb / 2.5, f_p1_ghz=fb / 2.5,
        f_p2_ghz=fb, f_lf_ghz=fb / 80, tx_min=(0.0, 0.0, -0.34, -0.2, 0.0, 0.0),
        tx_max=(0.0, 0.14, 0.0, 0.0, 0.0, 0.0), tx_step=(0.0, 0.02, 0.02, 0.02, 0.0, 0.0),
        tx_n_pre=3, c0_min=0.54, dfe_max=(0.85,), dfe_min=(0.0,),
        rx_ffe_min=(-0.7,) * dw + (1.0,) + (-0.7,) * (nfix - dw - 1),
        rx_ffe_max=(0.7,) * dw + (1.0,) + (0.7,) * (nfix - dw - 1), rx_ffe_pre=dw,
        r0=46.25, mlsd=True, mlsd_dcom_an_db=3.0,   # MLSD COM for KR (178A.1.10)
        n_qb=6, p_qc=1e-7,                          # quantization noise (178A.1.7.6)
        # floating RX FFE taps (178A.1.8.1): N_wg 2 groups of N_wf 4 within +-0.05 up
        # to N_max 87 (rx_ffe_n_wg=0 turns them off)
        rx_ffe_n_wg=2, rx_ffe_n_wf=4, rx_ffe_n_max=87, rx_ffe_float_max=0.05,
        package_class="A",                          # Table 178-14: A (default) or B
        **com_package("802.3dj-kr"), source=SOURCES["802.3dj-kr"])


def dj_early() -> ComParams:
    """The earlier 802.3dj parameter set (PyChOpMarg 3.4 ``config/ieee_8023dj.py``, before
    D3.3: 16 RX FFE taps, TX steps 0.005, 16 x 11 CTLE, R_d = R_0 = 50 ohm, one package
    case of 33 mm, f_r 0.58), kept for ``benchmarks/com_pychopmarg_dj.py``, which compares
    with PyChOpMarg's run of that configuration. Not a preset."""
    fb = 106.25
    return dataclasses.replace(
        _dj(), a_v=0.413, a_fe=0.413, a_ne=0.45, eta0=6.0e-9, snr_tx_db=33.0,
        g_dc=_rng(-15, 0), g_dc2=_rng(-5, 0, 0.5), f_z_ghz=42.5, f_p1_ghz=42.5,
        f_p2_ghz=fb, f_lf_ghz=1.328125, tx_min=(-0.06, 0.0, -0.34, -0.2, 0.0, 0.0),
        tx_max=(0.0, 0.12, 0.0, 0.0, 0.0, 0.0), tx_step=(0.005, 0.005, 0.005, 0.005, 0.0, 0.0),
        c0_min=0.5, rx_ffe_min=(-0.7,) * 5 + (1.0,) + (-0.7,) * 10,
        rx_ffe_max=(0.7,) * 5 + (1.0,) + (0.7,) * 10, rx_ffe_pre=5, r_d=50.0, r0=50.0,
        f_r=0.58, n_qb=0, rx_ffe_n_wg=0, cases=({"tx": (33.0, 1.8), "next": (33.0, 1.8), "fext": (33.0, 1.8),
                          "rx": (33.0, 1.8)},),
        source="PyChOpMarg 3.4 config/ieee_8023dj.py (early 802.3dj set, not a preset)")


#: the floating DFE taps of the KR and CR sheets (N_bg, N_bf, N_f, N_tail_start,
#: B_float_RSS_MAX; bmaxg differs: KR 0.05, CR 0.03); C2C has N_bg 0, C2M none
_FLOAT = dict(dfe_n_bg=3, dfe_n_bf=3, dfe_n_f=40, dfe_tail_start=25, dfe_b_rss_max=0.02)

PRESETS: dict[str, ComParams] = {
    "802.3ck-kr": _ck(**_FLOAT, dfe_bmaxg=0.05),
    "802.3ck-cr": _ck(name="802.3ck-cr", eta0=9e-9, snr_tx_db=32.5, erl_n_bx=0, erl_n_ui=4500,
                      erl_t_fx_ns=0.3, erl_limit_db=8.25, include_pcb=True, **_FLOAT, dfe_bmaxg=0.03,
                      source=SOURCES["802.3ck-cr"]),
    "802.3ck-c2c": _ck(name="802.3ck-c2c", der0=1e-5, eta0=2e-8, t_r_ns=0.0075, g_dc2=_rng(-4, 0),
                       tx_min=(-0.04, 0.0, -0.28, -0.1), tx_max=(0.0, 0.1, 0.0, 0.0),
                       dfe_max=(0.65, 0.15) + (0.1,) * 4, dfe_min=(0.3, 0.05) + (-0.04,) * 4,
                       erl_n_bx=6, erl_n_ui=2000, source=SOURCES["802.3ck-c2c"]),
    "802.3ck-c2m": _c2m(),
    "802.3dj-kr": _dj(),
    "100gbase-kr4": _kr4(),
}


def preset_names() -> tuple[str, ...]:
    return tuple(PRESETS)


def preset(name: str, option: str = "--preset") -> ComParams:
    """The named preset; ``option`` is the command-line option an error names."""
    if name not in PRESETS:
        raise ConfigError(f"{option} = {name!r} is not allowed: expected one of "
                          + ", ".join(PRESETS))
    return PRESETS[name]
