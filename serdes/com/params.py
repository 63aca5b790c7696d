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
package, line, cases      Annex 93A         serdes/presets.py      serdes/presets.py
========================  ================  =====================  ====================

802.3ck-c2m (Annex 120G host output, TP1a): DER_0 1e-5; A_v = A_fe 0.415 V, A_ne 0.45 V;
eta_0 4.1e-8; SNR_TX 32.5 dB; T_r 0.0075 ns; TX FFE as KR; CTLE f_z 12.58, f_p1 20, f_p2
28, f_LF 1.328125 GHz, g_DC -13..0, g_DC2 -3..0 in 0.5 dB steps, limited to the sheet's
G_Qual / G2_Qual pairs (``ctle_qual``, ``ComParams.ctle_allowed``); 4 DFE taps, b_max 0.4,
0.15, 0.15, 0.1, b_min 0.1, -0.35 x 3 (see ``_c2m``); no RX package (``rx_package``);
ERL N_bx 0, T_fx 0 / 0.2 ns (ports 1 / 2), N 800. rho_x 0.618 and beta_x 0 in every
802.3ck sheet.

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
  not modelled                floating RX FFE taps (N_wg 2 groups of N_wf 4 taps
                              within +-0.05, up to N_max 87), quantization noise
                              (N_qb 6, P_qc 1e-7)
  ==========================  ==============================================

  The channel's S-parameters are renormalized from 50 ohm to 2 R_0 (178A-4) before the
  packages are joined. The earlier set of PyChOpMarg's ``config/ieee_8023dj.py`` (TX
  steps 0.005, 16 RX FFE taps) is :func:`dj_early`, used by the PyChOpMarg comparison.
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
  against EH 10 mV, VEC 12 dB (``eye_*``, eye.py). Not modelled: the floating DFE taps of
  KR and CR (N_bg 3 groups of N_bf 3 taps within N_f 40 UI).
"""

from __future__ import annotations

import dataclasses
import math
from dataclasses import dataclass

import numpy as np

from serdes.errors import ConfigError
from serdes.presets import com_package

__all__ = ["ComParams", "PRESETS", "preset", "preset_names", "apply_overrides", "dj_early"]


@dataclass(frozen=True)
class ComParams:
    name: str
    fb_gbd: float
    levels: int
    der0: float
    a_v: float
    a_fe: float
    a_ne: float
    eta0: float
    snr_tx_db: float
    rlm: float
    sigma_rj: float
    a_dd: float
    t_r_ns: float
    f_r: float
    g_dc: tuple
    g_dc2: tuple
    f_z_ghz: float
    f_p1_ghz: float
    f_p2_ghz: float
    f_lf_ghz: float
    tx_min: tuple          # TX taps without the cursor, pre-cursor taps first
    tx_max: tuple
    tx_step: tuple
    tx_n_pre: int
    c0_min: float
    dfe_max: tuple         # one entry per DFE tap
    dfe_min: tuple
    c_d: tuple
    l_s: tuple
    c_b: float
    c_p: float
    r_d: float
    r0: float
    z_c: tuple
    #: package cases: each a dict "tx", "next", "fext", "rx" -> segment lengths (mm)
    cases: tuple
    gamma0: float = 0.0
    a1: float = 1.734e-3
    a2: float = 1.455e-4
    tau: float = 6.141e-3
    rx_ffe_min: tuple = ()
    rx_ffe_max: tuple = ()
    rx_ffe_pre: int = 0
    samples_per_ui: int = 32
    f_step_ghz: float = 0.01
    #: include pre-cursor ISI in the figure of merit (eq. 93A-31 sums over all n != 0)
    fom_precursors: bool = True
    #: effective return loss (Annex 93A.5, ``erl.py``): rho_x, beta_x (GHz), N_bx (UI),
    #: T_fx (ns; ``erl_t_fx2_ns`` for port 2, negative: as port 1), N (UI); the 802.3ck
    #: rows take them from the config sheets, the defaults are provisional (docs/com.md)
    erl_rho_x: float = 0.618
    erl_beta_x_ghz: float = 0.0
    erl_n_bx: int = 12
    erl_t_fx_ns: float = 0.0
    erl_n_ui: int = 1000
    #: COM with the MLSD reference receiver (802.3dj 178A.1.10, ``mlsd.py``; needs one DFE
    #: tap) and its added-RX-noise penalty dCOM_an (dB); off in every preset here
    mlsd: bool = False
    mlsd_dcom_an_db: float = 3.0
    #: eye height / VEC also over the C2M timing window T_s +- T_O (milli-UI; 0: at T_s
    #: only), sampled at eye_samples_per_ui points per UI (``eye.eye_over_window``)
    eye_t_o_mui: float = 0.0
    eye_samples_per_ui: int = 100
    #: sigma_r (UI) of the Gaussian histogram window over T_O (0: equal weights)
    eye_sigma_r_ui: float = 0.0
    #: pass limits on the window eye (C2M sheet: EH_min 10 mV, VEC 12 dB; 0: not judged)
    eye_eh_min_mv: float = 0.0
    eye_vec_max_db: float = 0.0
    erl_t_fx2_ns: float = -1.0
    #: False: no RX package (the C2M host-output sheet sets C_d, L_s, C_b, C_p and z_p of
    #: the RX to 0: the die termination R_d sits at the channel's port)
    rx_package: bool = True
    #: allowed (g_DC, g_DC2) pairs, the sheets' G_Qual / G2_Qual as flat triples
    #: (g_DC2 limit, g_DC high, g_DC low); empty: every pair (see ``ctle_allowed``)
    ctle_qual: tuple = ()
    #: host boards between packages and channel (the sheets' Include PCB, ``board.py``):
    #: z_bp TX, NEXT, FEXT, RX (mm), Z_c (ohm), line gamma0, a1, a2, tau; C_0, C_1 (nF)
    include_pcb: bool = False
    board_mm: tuple = (110.3, 110.3, 110.3, 110.3)
    board_z_c: float = 100.0
    board_line: tuple = (0.0, 3.8206e-4, 9.5909e-5, 5.79e-3)
    board_c0_nf: float = 0.29e-4
    board_c1_nf: float = 0.19e-4
    source: str = ""

    # ------------------------------------------------------------------ derived
    @property
    def tx_grid(self) -> np.ndarray:
        """All TX FFE settings of the grid with c(0) >= c0_min, rows of the non-cursor
        taps (pre-cursor taps first); the first tap varies slowest."""
        axes = []
        for lo, hi, st in zip(self.tx_min, self.tx_max, self.tx_step):
            if st <= 0 or hi <= lo:
                axes.append(np.array([lo if st <= 0 else lo]))
            else:
                n = int(round((hi - lo) / st)) + 1
                axes.append(np.round(lo + st * np.arange(n), 10))
        if not axes:
            return np.zeros((1, 0))
        grid = np.stack(np.meshgrid(*axes, indexing="ij"), axis=-1).reshape(-1, len(axes))
        keep = 1.0 - np.abs(grid).sum(axis=1) >= self.c0_min - 1e-12
        return grid[keep]

    def ctle_allowed(self, g_dc: float, g_dc2: float) -> bool:
        """Whether the CTLE setting is in the grid. With ``ctle_qual`` the rule of the
        IEEE COM code for G_Qual / G2_Qual: the g_DC2 limits sorted descending split g_DC2
        into bands (the first: g_DC2 equal to its limit; band k: limit_k <= g_DC2 <
        limit_{k-1}); in band k, g_DC must lie in [low_k, high_k)."""
        q = self.ctle_qual
        if not q:
            return True
        rows = sorted((tuple(q[i:i + 3]) for i in range(0, len(q) - 2, 3)), reverse=True)
        eps = 1e-9
        for k, (g2, hi, lo) in enumerate(rows):
            top = g2 + eps if k == 0 else rows[k - 1][0]
            if g2 - eps <= g_dc2 < top - (0 if k == 0 else eps):
                lo, hi = min(lo, hi), max(lo, hi)
                if lo - eps <= g_dc < hi - eps:
                    return True
        return False

    def describe(self) -> str:
        return (f"{self.name}: {self.fb_gbd:g} GBd, PAM{self.levels}, DER_0 {self.der0:g}, "
                f"{len(self.g_dc)}x{len(self.g_dc2)} CTLE x {len(self.tx_grid)} TX settings, "
                f"{len(self.dfe_max)} DFE taps, {len(self.cases)} package case(s)")


_SA = ("IEEE 802.3ck COM configuration sheet config_com_ieee8023_93a=3ck_SA_{} (sheet "
       "COM_Settings; the task force's final set, dated 08/17/2022, as published in the "
       "COM code repository Omer-Sella/COM, config_sheets_100G/)")
#: preset name -> where its non-package values come from (the package: serdes/presets.py)
SOURCES = {
    "802.3ck-kr": _SA.format("KR_08_17_2022.xlsx") + "; the earlier d3p1 sheet (..._3ck_d3p1_KR_"
    "11_30_21.xlsx, transcribed in cortalo/serdeskit examples/compute_com_kr_backplane.py) "
    "agrees on every value it carries; verified. Not modelled: floating DFE taps (N_bg 3, "
    "N_bf 3, N_f 40, bmaxg 0.05)",
    "802.3ck-cr": _SA.format("CR_CA_08_17_2022.xlsx") + " (Clause 162 cable assembly); "
    "verified; with its host boards (Include PCB = 1: 110.3 mm of 100 ohm board, line "
    "[0 3.8206e-4 9.5909e-5], tau 5.79e-3 ns/mm, C_0 0.29e-4 nF, C_1 0.19e-4 nF, each "
    "side). Not modelled: the floating DFE taps (N_bg 3, N_bf 3, N_f 40, bmaxg 0.03)",
    "802.3ck-c2c": _SA.format("120F_C2C_08_17_2022.xlsx") + "; the d3p1 sheet (transcribed in "
    "cortalo/serdeskit examples/compute_com_c2c.py) agrees; verified",
    "802.3ck-c2m": _SA.format("120g_C2M_tp1a_08_17_2022.xlsx") + " (Annex 120G host output, "
    "TP1a); verified, with its eye criteria (VEC / EH over T_O = 50 mUI with the "
    "Gaussian histogram window, sigma_r 0.02 UI, 100 samples per UI; limits VEC 12 dB, "
    "EH 10 mV)",
    "802.3dj-kr": "IEEE P802.3dj/D3.3 Table 178-15 (KR COM parameters) and Table 178-14 "
                  "(package class A, Test 1 and Test 2), draft values, as transcribed in "
                  "PyChOpMarg 3.4 config/ieee_8023dj_d3p3.py com_params(\"KR\"); verified. "
                  "Not modelled: floating RX FFE taps (N_wg 2 x N_wf 4 up to N_max 87), "
                  "quantization noise (N_qb 6)",
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
               eye_t_o_mui=50.0, eye_sigma_r_ui=0.02, eye_eh_min_mv=10.0,
               eye_vec_max_db=12.0, source=SOURCES["802.3ck-c2m"])


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
        f_r=0.58, cases=({"tx": (33.0, 1.8), "next": (33.0, 1.8), "fext": (33.0, 1.8),
                          "rx": (33.0, 1.8)},),
        source="PyChOpMarg 3.4 config/ieee_8023dj.py (early 802.3dj set, not a preset)")


PRESETS: dict[str, ComParams] = {
    "802.3ck-kr": _ck(),
    "802.3ck-cr": _ck(name="802.3ck-cr", eta0=9e-9, snr_tx_db=32.5, erl_n_bx=0, erl_n_ui=4500,
                      erl_t_fx_ns=0.3, include_pcb=True, source=SOURCES["802.3ck-cr"]),
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


_SKIP = {"name", "source", "cases"}


def _coerce(key: str, current, text):
    try:
        if isinstance(current, bool):
            if str(text).lower() in ("1", "true", "yes", "on"):  # noqa: SIM114
                return True
            if str(text).lower() in ("0", "false", "no", "off"):
                return False
            raise ValueError
        if isinstance(current, tuple):
            vals = text if isinstance(text, (list, tuple)) else [v for v in str(text).split(",") if v.strip()]
            out = tuple(float(v) for v in vals)
        elif isinstance(current, int):
            out = int(text)
        else:
            out = float(text)
    except (TypeError, ValueError):
        kind = ("a comma-separated list of numbers" if isinstance(current, tuple) else
                "true or false" if isinstance(current, bool) else
                "an integer" if isinstance(current, int) else "a number")
        raise ConfigError(f"com: {key} = {text!r} is not allowed: expected {kind}") from None
    vals = out if isinstance(out, tuple) else (out,)
    if not all(math.isfinite(float(v)) for v in vals):
        raise ConfigError(f"com: {key} = {text!r} is not allowed: values must be finite")
    return out


def apply_overrides(p: ComParams, overrides) -> ComParams:
    """``overrides``: a dict or ``["key=value", ...]``; each key a field of ComParams."""
    if not overrides:
        return p
    items = overrides.items() if isinstance(overrides, dict) else []
    if not isinstance(overrides, dict):
        parsed = []
        for item in overrides:
            if "=" not in item:
                raise ConfigError(f"com: --set {item!r} is not allowed: expected KEY=VALUE")
            k, v = item.split("=", 1)
            parsed.append((k.strip(), v.strip()))
        items = parsed
    allowed = [f.name for f in dataclasses.fields(ComParams) if f.name not in _SKIP]
    changes = {}
    for k, v in items:
        if k not in allowed:
            raise ConfigError(f"com: unknown key {k!r}; allowed: " + ", ".join(allowed))
        changes[k] = _coerce(k, getattr(p, k), v)
    new = dataclasses.replace(p, **changes)
    check(new)
    return new


def check(p: ComParams) -> None:
    def bad(key, allowed):
        raise ConfigError(f"com: {key} = {getattr(p, key)!r} is not allowed: expected {allowed}")
    if p.levels < 2 or p.levels > 16:
        bad("levels", "an integer in [2, 16]")
    if not 1e-15 <= p.der0 <= 0.1:
        bad("der0", "a number in [1e-15, 0.1]")
    if not 1.0 <= p.fb_gbd <= 500.0:
        bad("fb_gbd", "a number in [1, 500] GBd")
    if not 0.05 <= p.f_r <= 4.0:
        bad("f_r", "a number in [0.05, 4]")
    if p.samples_per_ui < 8 or p.samples_per_ui > 256:
        bad("samples_per_ui", "an integer in [8, 256]")
    if not 1e-4 <= p.f_step_ghz <= 1.0:
        bad("f_step_ghz", "a number in [1e-4, 1] GHz")
    for k in ("a_v", "a_fe", "a_ne"):
        if not 0 < getattr(p, k) <= 10:
            bad(k, "a number in (0, 10] V")
    for k in ("eta0", "sigma_rj", "a_dd", "t_r_ns"):
        if getattr(p, k) < 0:
            bad(k, "a number >= 0")
    if not 0 < p.rlm <= 1:
        bad("rlm", "a number in (0, 1]")
    if not (len(p.tx_min) == len(p.tx_max) == len(p.tx_step)):
        bad("tx_min", "tx_min, tx_max and tx_step of equal length")
    if not 0 <= p.tx_n_pre <= len(p.tx_min):
        bad("tx_n_pre", f"an integer in [0, {len(p.tx_min)}]")
    if len(p.dfe_max) != len(p.dfe_min):
        bad("dfe_max", "dfe_max and dfe_min of equal length")
    if not p.g_dc or not p.g_dc2:
        bad("g_dc", "at least one value in g_dc and in g_dc2")
    if len(p.tx_grid) == 0:
        bad("c0_min", "a value that leaves at least one TX setting in the grid")
    if len(p.rx_ffe_min) != len(p.rx_ffe_max):
        bad("rx_ffe_min", "rx_ffe_min and rx_ffe_max of equal length")
    if not 0 <= p.erl_rho_x <= 1:
        bad("erl_rho_x", "a number in [0, 1]")
    for k in ("erl_beta_x_ghz", "erl_t_fx_ns", "erl_n_bx"):
        if getattr(p, k) < 0:
            bad(k, "a number >= 0")
    if len(p.ctle_qual) % 3:
        bad("ctle_qual", "triples g_DC2 limit, g_DC high, g_DC low (a multiple of 3 numbers)")
    if not any(p.ctle_allowed(a, b) for a in p.g_dc for b in p.g_dc2):
        bad("ctle_qual", "pairs that allow at least one (g_dc, g_dc2) setting of the grid")
    if p.erl_t_fx2_ns < 0 and p.erl_t_fx2_ns != -1:
        bad("erl_t_fx2_ns", "a number >= 0, or -1 for the value of erl_t_fx_ns")
    if not 1 <= p.erl_n_ui <= 100000:
        bad("erl_n_ui", "an integer in [1, 100000] UI")
    if p.mlsd and len(p.dfe_max) != 1:
        bad("mlsd", "false unless the receiver has exactly one DFE tap (dfe_max of length 1)")
    if not 0 <= p.eye_t_o_mui <= 500:
        bad("eye_t_o_mui", "a number in [0, 500] milli-UI")
    if not 0 <= p.eye_sigma_r_ui <= 1:
        bad("eye_sigma_r_ui", "a number in [0, 1] UI (0: equal weights over T_O)")
    if not 8 <= p.eye_samples_per_ui <= 1000:
        bad("eye_samples_per_ui", "an integer in [8, 1000]")
    if len(p.board_mm) != 4 or min(p.board_mm) < 0 or len(p.board_line) != 4:
        bad("board_mm", "4 lengths >= 0 mm (z_bp TX, NEXT, FEXT, RX) and 4 board_line values")
    if not (0 <= p.board_c0_nf <= 1e-2 and 0 <= p.board_c1_nf <= 1e-2 and 1 <= p.board_z_c <= 1000):
        bad("board_c0_nf", "C_0, C_1 in [0, 0.01] nF and board_z_c in [1, 1000] ohm")
    if p.mlsd and not 0 < p.mlsd_dcom_an_db <= 20:
        bad("mlsd_dcom_an_db", "a number in (0, 20] dB")
