"""The COM parameter set (:class:`ComParams`), its ``--set`` overrides and its checks.

The values of the presets, with their sources, are in ``params.py``."""

from __future__ import annotations

import dataclasses
import math
from dataclasses import dataclass

import numpy as np

from serdes.errors import ConfigError

__all__ = ["ComParams", "apply_overrides", "check"]


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
    #: ADC quantization noise of the RX FFE receiver (802.3dj 178A.1.7.6, ``quant.py``):
    #: N_qb bits (0: off) and the clipping probability P_qc
    n_qb: int = 0
    p_qc: float = 1e-7
    #: eye height / VEC also over the C2M timing window T_s +- T_O (milli-UI; 0: at T_s
    #: only), sampled at eye_samples_per_ui points per UI (``eye.eye_over_window``)
    eye_t_o_mui: float = 0.0
    eye_samples_per_ui: int = 100
    #: sigma_r (UI) of the Gaussian histogram window over T_O (0: equal weights)
    eye_sigma_r_ui: float = 0.0
    #: pass limits on the window eye (C2M sheet: EH_min 10 mV, VEC 12 dB; 0: not judged)
    eye_eh_min_mv: float = 0.0
    eye_vec_max_db: float = 0.0
    #: the IEEE code's Min_VEO_Test (mV; 0: off): with T_O set, its C2M-mode search,
    #: the candidate with the largest COM over the window without crosstalk
    #: (``c2m_search``), instead of the largest FOM
    eye_min_veo_test_mv: float = 0.0
    erl_t_fx2_ns: float = -1.0
    #: ERL as the IEEE code computes it (``erl.py``): the TDR source's Gaussian 20-80 %
    #: time (ns), the Tukey window from f_r f_b to f_b, the TX package in port 2's TDR
    #: (TDR_W_TXPKG), the distribution bin (V; 10 x the sheets' PDF bin size) and the
    #: pass limit (dB; 0: not judged)
    erl_tr_tdr_ns: float = 0.01
    erl_tukey: bool = True
    erl_tdr_w_txpkg: bool = False
    erl_bin: float = 1e-4
    erl_limit_db: float = 0.0
    #: False: no RX package (the C2M host-output sheet sets C_d, L_s, C_b, C_p and z_p of
    #: the RX to 0: the die termination R_d sits at the channel's port)
    rx_package: bool = True
    #: package class of the presets that have several (802.3dj-kr: "A", the default, or
    #: "B", serdes.presets.PACKAGE_CLASSES); setting it replaces the package values and
    #: cases by the class's row ("": the preset has one class)
    package_class: str = ""
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
    #: floating DFE taps of the 802.3ck KR / CR sheets (``floating.py``): dfe_n_bg groups
    #: (sheet N_bg; 0: none) of dfe_n_bf taps (N_bf) placed among taps N_b + 1 .. dfe_n_f
    #: (N_f), each within +-dfe_bmaxg (bmaxg); the taps from dfe_tail_start (N_tail_start;
    #: 0: no limit) on have a root-sum-square of at most dfe_b_rss_max (B_float_RSS_MAX)
    dfe_n_bg: int = 0
    dfe_n_bf: int = 3
    dfe_n_f: int = 0
    dfe_bmaxg: float = 0.0
    dfe_tail_start: int = 0
    dfe_b_rss_max: float = 0.0
    #: floating RX FFE taps (802.3dj 178A.1.8.1, ``mmse_float.py``): rx_ffe_n_wg groups
    #: (N_wg; 0: none) of rx_ffe_n_wf taps (N_wf) among the positions N_fix ..
    #: rx_ffe_n_max - 1 of the FFE span (N_max), each within +-rx_ffe_float_max of the
    #: cursor tap
    rx_ffe_n_wg: int = 0
    rx_ffe_n_wf: int = 4
    rx_ffe_n_max: int = 0
    rx_ffe_float_max: float = 0.05
    source: str = ""

    # ------------------------------------------------------------------ derived
    @property
    def tx_grid(self) -> np.ndarray:
        """All TX FFE settings of the grid with c(0) >= c0_min, rows of the non-cursor
        taps (pre-cursor taps first); the first tap varies slowest."""
        axes = self._tx_axes()
        if not axes:
            return np.zeros((1, 0))
        grid = np.stack(np.meshgrid(*axes, indexing="ij"), axis=-1).reshape(-1, len(axes))
        keep = 1.0 - np.abs(grid).sum(axis=1) >= self.c0_min - 1e-12
        return grid[keep]

    def _tx_axes(self) -> list:
        """Each TX tap's values, tx_min to tx_max in tx_step (one value: a fixed tap)."""
        axes = []
        for lo, hi, st in zip(self.tx_min, self.tx_max, self.tx_step):
            if st <= 0 or hi <= lo:
                axes.append(np.array([lo]))
            else:
                n = int(round((hi - lo) / st)) + 1
                axes.append(np.round(lo + st * np.arange(n), 10))
        return axes

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

    def settings(self) -> dict:
        """Every ``--set`` key with this set's value (lists for the tuples): given back to
        :func:`apply_overrides` on the named preset it makes this set again, so a JSON
        result (its ``params``) says what it was computed with."""
        out = {}
        for f in dataclasses.fields(self):
            if f.name in _SKIP:
                continue
            v = getattr(self, f.name)
            out[f.name] = [float(x) for x in v] if isinstance(v, tuple) else v
        if not out.get("package_class"):
            out.pop("package_class", None)    # no class: the preset's own packages
        return out

    def describe(self) -> str:
        return (f"{self.name}: {self.fb_gbd:g} GBd, PAM{self.levels}, DER_0 {self.der0:g}, "
                f"{len(self.g_dc)}x{len(self.g_dc2)} CTLE x {len(self.tx_grid)} TX settings, "
                f"{len(self.dfe_max)} DFE taps, {len(self.cases)} package case(s)")


_SKIP = {"name", "source", "cases"}


def _coerce(key: str, current, text):
    if isinstance(current, str):
        return str(text).strip()
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
    if "package_class" in changes:      # the class's package first, other keys on top
        from serdes.presets import com_package
        pc = changes.pop("package_class")
        p = dataclasses.replace(p, package_class=pc, **com_package(p.name, pc))
    new = dataclasses.replace(p, **changes)
    check(new)
    return new


#: TX settings at most before the c(0) filter (their rows are formed at once; the earlier
#: 802.3dj set, dj_early(), has 919,425)
MAX_TX_SETTINGS = 1 << 23
#: the COM frequency grid's points at most (f_b x M / 2 / f_step; the presets: 41k-170k)
MAX_FREQ_POINTS = 1 << 22


def _unequal(p, *keys) -> None:
    """One line naming each list's length: lists of one value per tap must match."""
    names = ", ".join(keys[:-1]) + f" and {keys[-1]}"
    n = ", ".join(f"{k} {len(getattr(p, k))}" for k in keys)
    raise ConfigError(f"com: {names} need the same number of values (one per tap); "
                      f"given: {n}")


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
    n_f = p.fb_gbd * p.samples_per_ui / (2.0 * p.f_step_ghz)
    if n_f > MAX_FREQ_POINTS:
        raise ConfigError(
            f"com: fb_gbd x samples_per_ui / (2 f_step_ghz) = {n_f:,.0f} frequency points, "
            f"more than {MAX_FREQ_POINTS:,} (about 0.4 GB per channel file at that size); "
            "raise f_step_ghz or lower samples_per_ui")
    for k in ("a_v", "a_fe", "a_ne"):
        if not 1e-9 <= getattr(p, k) <= 10:   # below, the signal's square underflows
            bad(k, "a number in [1e-9, 10] V")
    if not 0 <= p.snr_tx_db <= 1000:   # a negative SNR_TX (noise above the signal) is a sign slip
        bad("snr_tx_db", "a number in [0, 1000] dB (the presets: 27-33.5)")
    if not 0 <= p.eta0 <= 1e-3:
        bad("eta0", "a number in [0, 0.001] V^2/GHz (the presets: 8.2e-9 - 2e-8)")
    for k in ("sigma_rj", "a_dd"):
        if not 0 <= getattr(p, k) <= 0.5:
            bad(k, "a number in [0, 0.5] UI")
    if not 0 <= p.t_r_ns <= 1:
        bad("t_r_ns", "a number in [0, 1] ns")
    # the CTLE's zero and poles (eq. 93A-22): a pole or zero at 0 Hz divides by zero, a
    # negative one is not a filter
    for k in ("f_z_ghz", "f_p1_ghz", "f_p2_ghz", "f_lf_ghz"):
        if not 1e-3 <= getattr(p, k) <= 1e4:
            bad(k, "a number in [0.001, 10000] GHz")
    for k in ("g_dc", "g_dc2"):
        if any(not -60 <= g <= 60 for g in getattr(p, k)):
            bad(k, "gains in [-60, 60] dB")
    for k in ("c_d", "l_s"):
        hi, unit = (1e-2, "nF") if k == "c_d" else (10.0, "nH")
        if any(not 0 <= x <= hi for x in getattr(p, k)):
            bad(k, f"values in [0, {hi:g}] {unit}")
    if not p.c_d or len(p.l_s) not in (1, len(p.c_d)):
        bad("l_s", f"one value, or one per c_d section ({len(p.c_d)})")
    if not 0.01 <= p.rlm <= 1:
        bad("rlm", "a number in [0.01, 1]")
    if not (len(p.tx_min) == len(p.tx_max) == len(p.tx_step)):
        _unequal(p, "tx_min", "tx_max", "tx_step")
    if any(hi < lo for lo, hi in zip(p.tx_min, p.tx_max)):
        bad("tx_max", "tx_max >= tx_min for every tap (equal: a fixed tap)")
    if any(st < 0 for st in p.tx_step):
        bad("tx_step", "steps >= 0 (0: the tap fixed at tx_min)")
    if not 0 <= p.tx_n_pre <= len(p.tx_min):
        bad("tx_n_pre", f"an integer in [0, {len(p.tx_min)}]")
    if len(p.dfe_max) != len(p.dfe_min):
        _unequal(p, "dfe_min", "dfe_max")
    if any(hi < lo for lo, hi in zip(p.dfe_min, p.dfe_max)):
        bad("dfe_max", "dfe_max >= dfe_min for every tap")
    if not p.g_dc or not p.g_dc2:
        bad("g_dc", "at least one value in g_dc and in g_dc2")
    n_tx = math.prod(a.shape[0] for a in p._tx_axes())
    if n_tx > MAX_TX_SETTINGS:
        raise ConfigError(
            f"com: tx_min..tx_max in tx_step spans {n_tx:,} TX settings before the c(0) "
            f"limit, more than {MAX_TX_SETTINGS:,} (the presets: 200-5,544); coarsen tx_step "
            "or narrow the range")
    if len(p.tx_grid) == 0:
        bad("c0_min", "a value that leaves at least one TX setting in the grid")
    if len(p.rx_ffe_min) != len(p.rx_ffe_max):
        _unequal(p, "rx_ffe_min", "rx_ffe_max")
    if any(hi < lo for lo, hi in zip(p.rx_ffe_min, p.rx_ffe_max)):
        bad("rx_ffe_max", "rx_ffe_max >= rx_ffe_min for every tap")
    if len(p.rx_ffe_max) and not 0 <= p.rx_ffe_pre < len(p.rx_ffe_max):
        bad("rx_ffe_pre", f"the cursor tap's index, an integer in [0, {len(p.rx_ffe_max) - 1}]")
    if len(p.rx_ffe_max) and not p.rx_ffe_min[p.rx_ffe_pre] <= 1 <= p.rx_ffe_max[p.rx_ffe_pre]:
        # the limits are relative to the cursor tap (clipped to w_min,i c .. w_max,i c)
        bad("rx_ffe_pre", f"a tap whose limits hold 1 (relative to itself), not "
            f"[{p.rx_ffe_min[p.rx_ffe_pre]:g}, {p.rx_ffe_max[p.rx_ffe_pre]:g}]")
    if not len(p.rx_ffe_max) and p.rx_ffe_pre != 0:
        bad("rx_ffe_pre", "0 unless the receiver has an RX FFE (rx_ffe_max)")
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
    if not 0 <= p.erl_tr_tdr_ns <= 1:
        bad("erl_tr_tdr_ns", "a number in [0, 1] ns")
    if not 0 < p.erl_bin <= 0.1:
        bad("erl_bin", "a number in (0, 0.1] V")
    if not 0 <= p.erl_limit_db <= 100:
        bad("erl_limit_db", "a number in [0, 100] dB (0: not judged)")
    if p.mlsd and len(p.dfe_max) != 1:
        bad("mlsd", "false unless the receiver has exactly one DFE tap (dfe_max of length 1)")
    for k in ("eye_eh_min_mv", "eye_vec_max_db"):
        if getattr(p, k) < 0:
            bad(k, "a number >= 0 (0: not judged)")
    if not 0 <= p.eye_t_o_mui <= 500:
        bad("eye_t_o_mui", "a number in [0, 500] milli-UI")
    if not 0 <= p.eye_min_veo_test_mv <= 1000:
        bad("eye_min_veo_test_mv", "a number in [0, 1000] mV (0: the search by the FOM)")
    if p.eye_min_veo_test_mv > 0 and (p.eye_t_o_mui <= 0 or len(p.rx_ffe_max)
                                      or p.dfe_n_bg > 0):
        bad("eye_min_veo_test_mv", "0 unless eye_t_o_mui > 0 and the receiver has no RX FFE "
            "and no floating DFE taps (the IEEE code's C2M-mode search, as the C2M sheet's "
            "receiver)")
    if not 0 <= p.eye_sigma_r_ui <= 1:
        bad("eye_sigma_r_ui", "a number in [0, 1] UI (0: equal weights over T_O)")
    if not 8 <= p.eye_samples_per_ui <= 1000:
        bad("eye_samples_per_ui", "an integer in [8, 1000]")
    if len(p.board_mm) != 4 or min(p.board_mm) < 0:
        bad("board_mm", "4 lengths >= 0 mm (z_bp TX, NEXT, FEXT, RX)")
    if len(p.board_line) != 4:
        bad("board_line", "4 values (the line model's gamma0, a1, a2, tau)")
    for k in ("board_c0_nf", "board_c1_nf"):
        if not 0 <= getattr(p, k) <= 1e-2:
            bad(k, "a number in [0, 0.01] nF")
    # the reference and termination resistances: the S-parameters are renormalised from
    # the files' 50 ohm to r0 (a division by r0 + 50)
    for k in ("r0", "r_d", "board_z_c"):
        if not 1 <= getattr(p, k) <= 1000:
            bad(k, "a number in [1, 1000] ohm")
    if not 0 <= p.n_qb <= 16:
        bad("n_qb", "an integer in [0, 16] bits (0: no quantization noise)")
    if p.n_qb and not len(p.rx_ffe_max):
        bad("n_qb", "0 unless the receiver has an RX FFE (rx_ffe_max; 178A.1.7.6)")
    if not 0 < p.p_qc < 0.5:
        bad("p_qc", "a probability in (0, 0.5)")
    if p.mlsd and not 0 < p.mlsd_dcom_an_db <= 20:
        bad("mlsd_dcom_an_db", "a number in (0, 20] dB")
    if p.dfe_n_bg < 0 or p.dfe_n_bg > 16:
        bad("dfe_n_bg", "an integer in [0, 16] (0: no floating DFE taps)")
    if p.dfe_n_bg > 0:
        nb = len(p.dfe_max)
        if not 1 <= p.dfe_n_bf <= 64:
            bad("dfe_n_bf", "an integer in [1, 64]")
        if not nb + p.dfe_n_bg * p.dfe_n_bf <= p.dfe_n_f <= 1000:
            bad("dfe_n_f", f"an integer in [{nb + p.dfe_n_bg * p.dfe_n_bf}, 1000] (N_b + "
                "dfe_n_bg x dfe_n_bf .. 1000 UI)")
        if not 0 <= p.dfe_bmaxg <= 1:
            bad("dfe_bmaxg", "a number in [0, 1]")
        if p.dfe_tail_start != 0 and not nb < p.dfe_tail_start <= p.dfe_n_f:
            bad("dfe_tail_start", f"0 (no tail limit) or an integer in [{nb + 1}, {p.dfe_n_f}]")
        if p.dfe_b_rss_max < 0:
            bad("dfe_b_rss_max", "a number >= 0")
        if p.mlsd or len(p.rx_ffe_max):
            bad("dfe_n_bg", "0 with an RX FFE or MLSD (floating DFE taps are for the "
                "Annex 93A DFE receiver)")
    # the floating taps' values are checked with the taps off too: a bad one would
    # otherwise wait silently until rx_ffe_n_wg turns them on
    if not 0 <= p.rx_ffe_n_wg <= 16:
        bad("rx_ffe_n_wg", "an integer in [0, 16] (0: no floating RX FFE taps)")
    if not 1 <= p.rx_ffe_n_wf <= 64:
        bad("rx_ffe_n_wf", "an integer in [1, 64]")
    if not 0 <= p.rx_ffe_float_max <= 1:
        bad("rx_ffe_float_max", "a number in [0, 1] (relative to the cursor tap)")
    lo = len(p.rx_ffe_max) + p.rx_ffe_n_wf
    if p.rx_ffe_n_wg:
        if not len(p.rx_ffe_max):
            bad("rx_ffe_n_wg", "0 unless the receiver has an RX FFE (rx_ffe_max)")
        if not lo <= p.rx_ffe_n_max <= 512:
            bad("rx_ffe_n_max", f"an integer in [{lo}, 512] taps (N_fix + rx_ffe_n_wf .. 512)")
    elif not (p.rx_ffe_n_max == 0 or lo <= p.rx_ffe_n_max <= 512):
        bad("rx_ffe_n_max", f"0 (no floating taps) or an integer in [{lo}, 512] taps "
            "(N_fix + rx_ffe_n_wf .. 512)")
