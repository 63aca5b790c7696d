"""COM of a channel set: ``compute_com(thru, fext=[...], next=[...], preset=..., overrides=...)``.

For each package case of the preset: the packaged pulse responses (``pulse.py``), the
FOM search over the CTLE x TX FFE grid (``fom.py``), then A_s and A_ni at the chosen
equalization (``noise.py``); COM of the channel is the lowest over the cases.
"""

from __future__ import annotations

import dataclasses
import time
from dataclasses import dataclass, field

import numpy as np

from serdes.com import c2m_search as _c2m
from serdes.com import fom as _fom
from serdes.com import mmse as _mmse
from serdes.com import mmse_grid as _mmse_grid
from serdes.com import mlsd as _mlsd
from serdes.com import noise as _noise
from serdes.com.eye import eye_at_der0, eye_over_window
from serdes.com.params import ComParams, apply_overrides, preset as _preset
from serdes.com.pulse import Channel, ComGrid, channel_vtf, h_r, read_channel, xsinc

__all__ = ["CaseResult", "ComResult", "compute_com"]


@dataclass
class CaseResult:
    package_case: int
    lengths: dict
    com_db: float
    a_s_v: float
    a_ni_v: float
    fom_db: float
    unequalized_peak_v: float
    tx_taps: list
    g_dc_db: float
    g_dc2_db: float
    dfe_taps: list
    rx_ffe_taps: list
    sigmas_v: dict
    n_fom: int
    eye_height_v: float = None
    vec_db: float = None
    mlsd: dict = None
    quant: dict = None     # 802.3dj quantization noise: step, rms at the detector, search
    eye_window: dict = None
    #: floating RX FFE taps (rx_ffe_n_wg > 0): positions in the span, UI after the
    #: cursor, tap values (cursor tap 1)
    rx_ffe_float: dict = None
    # for the figure
    pulse_uneq: np.ndarray = field(repr=False, default=None)
    pulse_eq: np.ndarray = field(repr=False, default=None)
    cursor_ix: int = 0
    landscape: np.ndarray = field(repr=False, default=None)
    #: landscape holds upper bounds of the FOM, exact only at the chosen CTLE setting
    landscape_bound: bool = False
    tx_fom: np.ndarray = field(repr=False, default=None)
    y: np.ndarray = field(repr=False, default=None)
    pdf: np.ndarray = field(repr=False, default=None)

    @property
    def com_t_s_db(self) -> float:
        """20 log10(A_s / A_ni) at T_s: the COM of the DFE receiver, which ``com_db`` is
        but with the MLSD (its receiver's) or the C2M window (the window's)."""
        return float(20 * np.log10(self.a_s_v / self.a_ni_v))

    def as_dict(self) -> dict:
        return {"package_case": self.package_case, "package_lengths_mm": self.lengths,
                "com_db": self.com_db, "a_s_v": self.a_s_v, "a_ni_v": self.a_ni_v,
                "fom_db": self.fom_db, "unequalized_peak_v": self.unequalized_peak_v,
                "tx_taps": self.tx_taps, "g_dc_db": self.g_dc_db, "g_dc2_db": self.g_dc2_db,
                "dfe_taps": self.dfe_taps, "rx_ffe_taps": self.rx_ffe_taps,
                "sigma_v": self.sigmas_v, "fom_evaluations": self.n_fom,
                "eye_height_v": self.eye_height_v, "vec_db": self.vec_db,
                **({"mlsd": self.mlsd} if self.mlsd is not None else {}),
                **({"quant": self.quant} if self.quant is not None else {}),
                **({"eye_window": self.eye_window} if self.eye_window is not None else {}),
                **({"rx_ffe_float": self.rx_ffe_float} if self.rx_ffe_float is not None else {})}


@dataclass
class ComResult:
    preset: str
    params: ComParams
    thru: str
    fext: list
    next: list
    cases: list
    elapsed_s: float
    #: the thru's pulse peaks negative (P and N crossed): the receiver inverts its input
    thru_inverted: bool = False

    @property
    def com_db(self) -> float:
        return min(c.com_db for c in self.cases)

    def _c2m_sheet(self) -> bool:
        """The named preset judges its eye over the C2M timing window T_O (the C2M sheet,
        whose Min_VEO_Test of 5 mV puts the IEEE code's search in its C2M mode)."""
        from serdes.com.params import PRESETS

        base = PRESETS.get(self.params.name)
        return base is not None and base.eye_t_o_mui > 0

    def _window_off(self) -> bool:
        """The named preset judges its eye over the C2M timing window T_O and this run set
        T_O = 0 (the other presets have no such window: nothing is left out there)."""
        return self._c2m_sheet() and self.params.eye_t_o_mui <= 0

    def eye_window_passes(self) -> bool | None:
        """The channel's verdict on the C2M criteria over the timing window: every package
        case passes (None without a window or without limits to judge by)."""
        judged = [c.eye_window["passes"] for c in self.cases
                  if c.eye_window is not None and c.eye_window["passes"] is not None]
        return all(judged) if judged else None

    def as_dict(self) -> dict:
        return {"preset": self.preset, "elapsed_s": self.elapsed_s, "com_db": self.com_db,
                **({"package_class": self.params.package_class} if self.params.package_class else {}),
                **({"eye_window_passes": self.eye_window_passes()}
                   if any(c.eye_window is not None for c in self.cases) else {}),
                "thru": self.thru, "thru_inverted": self.thru_inverted,
                "fext": self.fext, "next": self.next,
                "der0": self.params.der0, "cases": [c.as_dict() for c in self.cases],
                "params": self.params.settings(),
                "not_modelled": self.not_modelled()}

    def not_modelled(self) -> str:
        """What of the preset's method this run leaves out ("" when nothing): parts turned
        off by its values, and the IEEE code's C2M-mode search, which is not built."""
        p = self.params
        rx_ffe = len(p.rx_ffe_max) > 0
        return ", ".join(
            (["C2M eye timing window (T_O = 0)"] if self._window_off() else [])
            # with T_O and the C2M sheet's Min_VEO_Test the IEEE code's search picks the
            # candidate by the window's COM; ours by the FOM (docs/com.md, "Method")
            + (["the IEEE code's C2M-mode search (its candidate by the window's COM; "
                "eye_min_veo_test_mv = 0)"]
               if self._c2m_sheet() and p.eye_t_o_mui > 0 and p.eye_min_veo_test_mv <= 0
               else [])
            + (["RX FFE floating taps (rx_ffe_n_wg = 0)"] if rx_ffe and not p.rx_ffe_n_wg else [])
            + (["quantization noise (n_qb = 0)"] if rx_ffe and not p.n_qb else [])
            + (["MLSD (mlsd = false)"] if rx_ffe and not p.mlsd else []))


_apply_tx = _fom.apply_tx


def compute_com(thru, fext=(), next=(), preset: str | ComParams = "802.3ck-kr",
                overrides=None, progress=None, stage=None) -> ComResult:
    """COM of ``thru`` with its aggressors per package case of ``preset`` (see
    docs/com.md); ``progress(done, total)``: called before the first package case and
    as each ends; ``stage(text)``: where the RX FFE presets' search is within a case
    (its bound pass by CTLE setting, then its exact pass by candidates)."""
    t0 = time.perf_counter()
    p = _preset(preset) if isinstance(preset, str) else preset
    p = apply_overrides(p, overrides)
    grid = ComGrid.of(p)
    chans = [_channel(thru, "thru")]
    chans += [_channel(f, "fext") for f in fext]
    chans += [_channel(f, "next") for f in next]
    kinds = [c.kind for c in chans[1:]]
    _check_coverage(chans, p)
    offs = _fom.tx_offsets(p)
    m = grid.m
    xs = xsinc(grid)
    cases, inverted = [], None
    if progress is not None:
        progress(0, len(p.cases))
    for n, case in enumerate(p.cases, start=1):
        vtfs = [channel_vtf(p, grid, c, case) for c in chans]
        if inverted is None:   # P and N crossed in the thru: the RX inverts its input
            raw = np.fft.irfft(xs * vtfs[0])
            inverted = bool(raw[int(np.argmax(np.abs(raw)))] < 0)
        if inverted:
            vtfs[0] = -vtfs[0]
        # the time window is circular: a thru with almost no delay would put its
        # pre-cursors at the end; delay every channel alike so the peak is >= 20 UI in
        pk0 = int(np.argmax(np.fft.irfft(xs * vtfs[0])))
        if pk0 < 20 * m or pk0 > grid.n_t // 2:
            d = (20 * m - pk0) % grid.n_t
            shift = np.exp(-2j * np.pi * grid.f * d * grid.ui / m)
            vtfs = [v * shift for v in vtfs]
        if len(p.rx_ffe_max):
            best, pv, ix, b, rx_all = _case_mmse(p, grid, vtfs, kinds, offs, xs, stage)
            rx_taps = rx_all[:len(p.rx_ffe_max)]
        else:
            best, pv, ix, b = _case_93a(p, grid, vtfs, kinds, offs, xs)
            rx_taps = rx_all = []
        uneq = np.fft.irfft(xs * vtfs[0]) * p.a_v
        com = 20 * np.log10(b.a_s / b.a_ni)
        eh, vec = eye_at_der0(b.y, b.pdf, b.a_s, p.der0)
        ew = eye_over_window(p, grid.m, pv, ix, b) if p.eye_t_o_mui > 0 else None
        if ew is not None:
            ew["com_t_s_db"] = float(com)
            c2m = b.parts.get("c2m_search")
            if c2m == "none":       # the search found no open eye: the FOM's choice
                ew["c2m_search"] = {"min_veo_test_mv": p.eye_min_veo_test_mv,
                                    "no_candidate": True}
            elif c2m is not None:   # the IEEE code's C2M-mode search chose the candidate
                ew["c2m_search"] = {
                    "min_veo_test_mv": c2m.min_veo_test_mv, "com_no_xt_db": c2m.com_db,
                    "eye_height_no_xt_v": c2m.eye_height_v, "eh_1st_v": c2m.eh_1st_v,
                    "candidates_first_test": c2m.first_test,
                    "candidates_bounded": c2m.bounded, "candidates_eye": c2m.eyes}
        ml = None
        if p.mlsd:   # 178A.1.10: COM is the MLSD receiver's, the DFE receiver's in "mlsd"
            r_rn = _mlsd.rx_noise_autocorr(p.eta0, grid.f, b.parts["h_rx"], grid.ui,
                                           len(b.parts["isi"]))
            ml = _mlsd.mlsd_com(p, b, float(com), r_rn, b.parts["tx_pulse"],
                                10 ** (-p.snr_tx_db / 10)).as_dict()
            com = ml["com_db"]
        elif ew is not None and ew["com_db"] is not None:
            # with T_O set the IEEE code (4.50) reports COM over the window,
            # 20 log10(2 A_s / (2 A_s - EH)); with its MLSE on, the MLSE's (as above)
            com = ew["com_db"]
        cases.append(CaseResult(
            package_case=n, lengths={k: list(v) for k, v in case.items()}, com_db=float(com),
            a_s_v=b.a_s, a_ni_v=b.a_ni, fom_db=best.fom_db,
            unequalized_peak_v=float(uneq.max()), tx_taps=[float(x) for x in best.tx_taps],
            g_dc_db=best.g_dc, g_dc2_db=best.g_dc2, dfe_taps=[float(x) for x in b.dfe_taps],
            rx_ffe_taps=rx_taps, n_fom=best.n_evaluated, eye_height_v=eh, vec_db=vec, mlsd=ml,
            eye_window=ew, rx_ffe_float=_float_taps(p, rx_all),
            quant=({"step_v": b.parts["quant_step_v"], "n_qb": p.n_qb, "p_qc": p.p_qc,
                    "exact_candidates": int(best.n_exact)} if p.n_qb else None),
            sigmas_v={"tx": b.sigma_tx, "rx_noise": b.sigma_n, "rj": b.sigma_rj,
                      "isi": b.sigma_isi, "xt": b.sigma_xt, "dd": b.sigma_dd,
                      **({"quant": float(np.sqrt(np.sum(np.square(rx_all)) / 12)
                                         * b.parts["quant_step_v"])} if p.n_qb else {})},
            pulse_uneq=uneq, pulse_eq=pv, cursor_ix=ix, landscape=best.landscape,
            landscape_bound=best.landscape_bound,
            tx_fom=best.tx_fom_at_best, y=b.y, pdf=b.pdf))
        if progress is not None:
            progress(n, len(p.cases))
    return ComResult(p.name, p, chans[0].path, [c.path for c in chans if c.kind == "fext"],
                     [c.path for c in chans if c.kind == "next"], cases, time.perf_counter() - t0,
                     thru_inverted=bool(inverted))


def _check_coverage(chans, p) -> None:
    """A warning for each file whose data end below f_b / 2: COM extrapolates the rest
    (the IEEE code's rule, :func:`serdes.com.pulse.to_grid`), so above its data the
    result stands on a straight-line guess."""
    import warnings

    nyq = p.fb_gbd * 1e9 / 2
    for c in chans:
        if c.f_hz[-1] < nyq:
            warnings.warn(f"{c.path}: data end at {c.f_hz[-1] / 1e9:.4g} GHz, below the "
                          f"{nyq / 1e9:.4g} GHz of f_b / 2; COM extrapolates the rest in "
                          "a straight line (as the IEEE code does), and rests on that guess",
                          RuntimeWarning, stacklevel=3)


def _float_taps(p, w: list) -> dict | None:
    """The floating RX FFE taps of the span ``w`` (the positions beyond the fixed taps
    where a group placed a tap: nonzero)."""
    if not p.rx_ffe_n_wg:
        return None
    pos = [k for k in range(len(p.rx_ffe_max), len(w)) if w[k] != 0.0]
    return {"positions": pos, "ui_after_cursor": [k - p.rx_ffe_pre for k in pos],
            "taps": [w[k] for k in pos], "n_wg": p.rx_ffe_n_wg, "n_wf": p.rx_ffe_n_wf,
            "n_max": p.rx_ffe_n_max, "limit": p.rx_ffe_float_max}


def _channel(c, kind: str) -> Channel:
    """A file path, or a :class:`~serdes.com.pulse.Channel` already made (e.g. the
    synthetic line of a sweep point, ``serdes.build.build_com_channels``)."""
    if isinstance(c, Channel):
        return Channel(c.path, kind, c.f_hz, c.sdd)
    return read_channel(c, kind)


def _case_93a(p, grid, vtfs, kinds, offs, xs):
    """Annex 93A: FOM search with TX FFE, CTLE and DFE; A_s, A_ni at the best (with
    eye_min_veo_test_mv and T_O set, at the IEEE code's C2M-mode choice, c2m_search)."""
    m = grid.m
    best = _fom.search(p, grid, vtfs, kinds)
    c2m = None
    if p.eye_min_veo_test_mv > 0 and p.eye_t_o_mui > 0:
        # None: no candidate passed its tests, even at 0 (every eye closed); the IEEE
        # code reports no equalization then, we the FOM's choice and say so
        c2m = _c2m.search(p, grid, vtfs, kinds) or "none"
        if c2m != "none":
            best = _fom_at(p, grid, vtfs, kinds, best, c2m)
    basis = _fom.ctle_basis(p, grid.f)
    hc = _fom.ctle_weights(best.g_dc, best.g_dc2) @ basis
    p0 = np.fft.irfft(xs * vtfs[0] * hc) * p.a_v
    pk = int(np.argmax(p0))
    pv = _apply_tx(p0, best.tx_taps, offs, m)
    ix = pk + best.cursor_offset
    aggs = []
    for v, kind in zip(vtfs[1:], kinds):
        amp = p.a_ne if kind == "next" else p.a_fe
        pa = np.fft.irfft(xs * v * hc) * amp
        aggs.append(pa if kind == "next" else _apply_tx(pa, best.tx_taps, offs, m))
    b = _noise.budget(p, grid, pv, aggs, ix, h_r(p, grid.f) * hc)
    b.parts.update(h_rx=h_r(p, grid.f) * hc, tx_pulse=np.array([b.h0]))   # eq. 93A-30: white
    b.parts["c2m_search"] = c2m
    return best, pv, ix, b


def _fom_at(p, grid, vtfs, kinds, full, c2m):
    """The FOM search's result moved to the C2M-mode choice: its FOM and cursor (a search
    over that one candidate), every TX setting's FOM at its CTLE setting (the figure's),
    the landscape of the whole grid."""
    cell = dataclasses.replace(p, g_dc=(c2m.g_dc,), g_dc2=(c2m.g_dc2,))
    at_cell = _fom.search(cell, grid, vtfs, kinds)
    rest = np.delete(c2m.tx_taps, p.tx_n_pre)
    one = _fom.search(dataclasses.replace(cell, tx_min=tuple(rest), tx_max=tuple(rest)),
                      grid, vtfs, kinds)
    return dataclasses.replace(one, landscape=full.landscape, n_evaluated=full.n_evaluated,
                               tx_fom_at_best=at_cell.tx_fom_at_best)


def _case_mmse(p, grid, vtfs, kinds, offs, xs, stage=None):
    """Annex 178A: MMSE RX FFE/DFE FOM search; A_s, A_ni at the best, with the RX FFE
    (normalised to a unit cursor tap) applied to the victim and aggressor pulses and the
    noise, TX noise per 178A-21 and each aggressor at its phase at the FFE input."""
    m = grid.m
    best = _mmse_grid.search_grid_numba(p, grid, vtfs, kinds, stage=stage)
    basis = _fom.ctle_basis(p, grid.f)
    hc = _fom.ctle_weights(best.g_dc, best.g_dc2) @ basis
    dw = p.rx_ffe_pre
    w = best.sol.w / best.sol.w[dw]
    p0 = np.fft.irfft(xs * vtfs[0] * hc) * p.a_v
    pv = _mmse.apply_rx_ffe(_apply_tx(p0, best.tx_taps, offs, m), w, dw, m)
    ix = best.sol.ts
    aggs, phases, pre_aggs = [], [], []
    for v, kind in zip(vtfs[1:], kinds):
        amp = p.a_ne if kind == "next" else p.a_fe
        pa = np.fft.irfft(xs * v * hc) * amp
        if kind == "fext":
            pa = _apply_tx(pa, best.tx_taps, offs, m)
        phases.append(_mmse.agg_samples(pa, m)[0])
        pre_aggs.append(pa)
        aggs.append(_mmse.apply_rx_ffe(pa, w, dw, m))
    g = _mmse.apply_rx_ffe(p0, w, dw, m)
    var_tx = 10 ** (-p.snr_tx_db / 10) * float(np.sum(g[ix % m::m] ** 2))
    h_ffe = _ffe_response(w, dw, grid.f * grid.ui)
    step = _quant_step(p, grid, p0, _apply_tx(p0, best.tx_taps, offs, m), pre_aggs, phases,
                       ix, h_r(p, grid.f) * hc) if p.n_qb else 0.0
    b = _noise.budget(p, grid, pv, aggs, ix, h_r(p, grid.f) * hc * h_ffe, var_tx=var_tx,
                      xt_phases=phases, quant=(step, w) if p.n_qb else None)
    b.parts["quant_step_v"] = step
    if step:         # for the MLSD: Delta^2 / 12 white at the FFE input, through the FFE
        b.parts["q_acf"] = (w, step ** 2 / 12)
    b.parts.update(h_rx=h_r(p, grid.f) * hc * h_ffe, tx_pulse=g[ix % m::m])   # 178A-21
    best.cursor_offset = 0
    best.parts = {}
    return best, pv, ix, b, [float(x) for x in w]


def _ffe_response(w: np.ndarray, dw: int, fui: np.ndarray) -> np.ndarray:
    """H(f) = sum_k w_k exp(-2 pi j f (k - dw) UI) of an FFE with cursor tap dw at the
    frequencies ``fui`` (f UI), by Horner's rule in z = exp(-2 pi j f UI): one
    exponential per frequency instead of one per frequency and tap (the 87-tap span of
    the floating taps: 1.2 s per package case before)."""
    z = np.exp(-2j * np.pi * fui)
    h = np.full(len(fui), complex(w[-1]))
    for wk in w[-2::-1]:
        h = h * z + wk
    return h * np.exp(2j * np.pi * fui * dw)


def _quant_step(p, grid, p0, pvt, pre_aggs, phases, ix, hctf):
    """Delta of the final budget (178A.1.9): the signal at the FFE input (TX FFE, CTLE;
    every UI sample at the sampling phase), crosstalk at each aggressor's phase and
    dual-Dirac jitter as delta PMFs, RX noise, TX noise and RJ Gaussian (178A-44)."""
    from serdes.com.quant import final_step

    m, L = grid.m, p.levels
    var_x = (L ** 2 - 1) / (3.0 * (L - 1) ** 2)
    ph = ix % m
    pad = np.pad(pvt, 1)
    ixs = ph + m * np.arange(len(pvt) // m)
    h_j = (pad[ixs + 2] - pad[ixs]) * (m / 2.0)
    df_ghz = (grid.f[1] - grid.f[0]) / 1e9
    var_g = (p.eta0 * float(np.sum(np.abs(hctf[1:]) ** 2)) * df_ghz
             + 10 ** (-p.snr_tx_db / 10) * float(np.sum(p0[ph::m] ** 2))
             + p.sigma_rj ** 2 * var_x * float(np.sum(h_j ** 2)))
    xts = [pa[k::m] for pa, k in zip(pre_aggs, phases)]
    return final_step(p, pvt[ph::m], p.a_dd * h_j, xts, var_g)
