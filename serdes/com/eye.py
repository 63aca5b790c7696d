"""Eye height and vertical eye closure at DER_0 from the COM distributions.

The COM budget (``noise.py``) gives the distribution of noise + interference around a
symbol level at the cursor sample. Two adjacent levels are 2 A_s apart (A_s = RLM h0 /
(L - 1), half their distance); the eye between them at DER_0 is bounded from
below by the upper DER_0 quantile of the distribution around the lower level and from
above by the lower DER_0 quantile around the upper level:

    EH = 2 A_s - (v_up + v_low),   v_low = -y where CDF(y) = DER_0 (this is A_ni),
                                   v_up  =  y where 1 - CDF(y) = DER_0,

and the vertical eye closure is the eye amplitude over the eye height (Annex 120E style,
AV = 2 A_s the distance between the level means):

    VEC = 20 log10(2 A_s / EH)      (dB; undefined when the eye is closed, EH <= 0).

For the symmetric distributions of COM (every part is symmetric) v_up = v_low = A_ni,
so EH = 2 (A_s - A_ni) and VEC = 20 log10(A_s / (A_s - A_ni)), at the COM sampling time.
``eye_over_window`` evaluates them over the C2M timing window T_s +- T_O (key
``eye_t_o_mui``), pooling the distributions of the window with the weights of the IEEE
MATLAB COM code (Gaussian with sigma_r for the C2M sheet, ``eye_sigma_r_ui``), worst eye.
"""

from __future__ import annotations

import math

import numpy as np

from serdes.com.noise import FILTER_REL, conv, delta_pmf

__all__ = ["eye_at_der0", "eye_over_window", "vec_text", "window_weights"]


def vec_text(vec_db) -> str:
    """VEC for a reader: in dB, or a dash where the eye is closed (no VEC)."""
    return f"{vec_db:.2f} dB" if vec_db is not None else "- (eye closed)"


def eye_at_der0(y: np.ndarray, pdf: np.ndarray, a_s: float,
                der0: float) -> tuple[float, float | None]:
    """(eye height in V, VEC in dB or None for a closed eye) from the noise +
    interference PMF ``pdf`` on the voltage grid ``y`` and the half level spacing ``a_s``."""
    w = np.asarray(pdf, dtype=float)
    w = w / w.sum()
    cdf = np.cumsum(w)
    ccdf = np.cumsum(w[::-1])[::-1]          # P(Y >= y)
    v_low = -float(y[np.nonzero(cdf >= der0)[0][0]])
    v_up = float(y[np.nonzero(ccdf >= der0)[0][-1]])
    eh = 2.0 * a_s - (v_up + v_low)
    vec = 20.0 * math.log10(2.0 * a_s / eh) if eh > 0 else None
    return eh, vec


def _at(pv: np.ndarray, pos: np.ndarray) -> np.ndarray:
    """The pulse ``pv`` at fractional sample positions, linearly interpolated as the IEEE
    code's get_pdf_full resamples it (interp1 onto samples_for_C2M points per UI); 0 outside."""
    return np.interp(pos, np.arange(len(pv)), pv, left=0.0, right=0.0)


def window_weights(p) -> np.ndarray:
    """Weights of the offsets -n..n (n = floor(T_O / 1000 x eye_samples_per_ui)) as the IEEE
    code's COM_eye_width builds them: with ``eye_sigma_r_ui`` > 0 (Histogram_Window_Weight
    Gaussian) QL = T_O / sigma_r / 1000 and exp(-(k / (n / QL))^2 / 2); else all 1
    (rectangle)."""
    nw = int(math.floor(p.eye_t_o_mui / 1000.0 * p.eye_samples_per_ui))
    k = np.arange(-nw, nw + 1, dtype=float)
    if p.eye_sigma_r_ui > 0 and nw > 0:
        ql = p.eye_t_o_mui / p.eye_sigma_r_ui / 1000.0
        with np.errstate(over="ignore"):   # a tiny sigma_r: 0 off the centre, no warning
            return np.exp(-0.5 * (k / (nw / ql)) ** 2)
    return np.ones(len(k))


def eye_over_window(p, m: int, pv: np.ndarray, ix: int, budget) -> dict:
    """Eye height and VEC over the C2M timing window T_s +- T_O (``p.eye_t_o_mui``, in
    milli-UI), as the IEEE MATLAB COM code (3.90) evaluates VEC/VEO for C2M
    (COM_eye_width with get_pdf_full): the pulse is read by linear interpolation at
    ``p.eye_samples_per_ui`` points per UI, floor(T_O/1000 x that) offsets each side; at
    each offset the ISI (DFE taps held at their T_s values x h0(T_s)), the jitter slope
    (central difference over one fine sample each side, for RJ and dual-Dirac) and the
    level means RLM h0(t) x (-1, ..., 1) are those of the pulse at that time, the crosstalk
    and the TX/RX noise those of T_s; each level's distributions over the window are
    summed with the window's weights (``window_weights``: Gaussian of sigma_r with the
    C2M sheet's Histogram_Window_Weight, else equal) and normalized; eye k's top is the
    lower DER_0 quantile of level k+1, its bottom the upper quantile of level k, EH is
    that of the worst of the L - 1 eyes, VEC = 20 log10(2 A_s / EH) with A_s at T_s. Also
    the smallest EH of any single offset and eye (``eye_height_min_v``), ``com_db``, the
    COM the IEEE code reports when T_O is set: 20 log10(2 A_s / (2 A_s - EH)) (equal to
    20 log10(A_s / A_ni) for a window of one offset; None if EH >= 2 A_s), which is then
    the case's COM (but with the MLSD; ``core`` adds ``com_t_s_db``, the COM at T_s)."""
    L = p.levels
    var_x = (L ** 2 - 1) / (3.0 * (L - 1) ** 2)
    wts = window_weights(p)
    nw = len(wts) // 2
    spu = float(p.eye_samples_per_ui)
    h0_ts = budget.h0
    thr = FILTER_REL * budget.a_s
    var_fixed = budget.sigma_tx ** 2 + budget.sigma_n ** 2
    dfe = np.asarray(budget.dfe_taps, dtype=float)
    ks = np.arange(-(ix // m), (len(pv) - 1 - ix) // m + 1)
    c0 = ix // m
    levels = np.linspace(-1.0, 1.0, L)
    rows = []
    for j in range(-nw, nw + 1):
        pos = ix + (j / spu) * m + ks * m
        isi = _at(pv, pos)
        h0 = float(isi[c0])
        isi[c0] = 0.0
        isi[c0 + 1:c0 + 1 + len(dfe)] -= dfe[:len(isi) - c0 - 1] * h0_ts
        h_j = (_at(pv, pos + m / spu) - _at(pv, pos - m / spu)) / 2.0 * spu
        var_g = var_fixed + p.sigma_rj ** 2 * var_x * float(np.sum(h_j ** 2))
        h_dd = p.a_dd * h_j
        rows.append((p.rlm * h0, isi[np.abs(isi) > thr], h_dd[np.abs(h_dd) > thr], var_g))
    ystep = float(budget.y[1] - budget.y[0])
    p_xt = budget.parts["p_xt"]
    xt_half = len(p_xt) // 2
    ymax = max(abs(r[0]) + np.abs(r[1]).sum() + np.abs(r[2]).sum() + 10 * math.sqrt(r[3]) for r in rows)
    ymax += xt_half * ystep + 2 * ystep
    npts = 2 * int(math.ceil(ymax / ystep)) + 1
    y = (np.arange(npts) - npts // 2) * ystep
    c = npts // 2
    xt = np.zeros(npts)
    k0 = c - xt_half
    xt[max(k0, 0):k0 + len(p_xt)] = p_xt[max(-k0, 0):]
    pooled = np.zeros((L, npts))
    eh_each = []
    for w, (amp, isi, hdd, var_g) in zip(wts, rows):
        g = np.exp(-y ** 2 / (2 * var_g)) if var_g > 0 else (y == 0).astype(float)
        dist = conv(conv(conv(delta_pmf(isi, L, npts, ystep), delta_pmf(hdd, L, npts, ystep)),
                         g / g.sum()), xt)
        dist /= dist.sum()
        lv = [np.roll(dist, int(round(amp * v / ystep))) for v in levels]
        eh_each.append(min(_lower_q(y, lv[n + 1], p.der0) - _upper_q(y, lv[n], p.der0)
                           for n in range(L - 1)))
        pooled += w * np.asarray(lv)
    eh = min(_lower_q(y, pooled[n + 1], p.der0) - _upper_q(y, pooled[n], p.der0)
             for n in range(L - 1))
    vec = 20.0 * math.log10(2.0 * budget.a_s / eh) if eh > 0 else None
    # the IEEE code's COM with T_O set (4.50, after COM_eye_width): A_ni = 2 A_s - EH of
    # the window, COM = 20 log10(2 A_s / A_ni); at T_O = 0 it is 20 log10(A_s / A_ni)
    a_ni = 2.0 * budget.a_s - eh
    com = 20.0 * math.log10(2.0 * budget.a_s / a_ni) if a_ni > 0 else None
    judged = p.eye_eh_min_mv > 0 or p.eye_vec_max_db > 0
    ok = (vec is not None and eh * 1e3 >= p.eye_eh_min_mv
          and (p.eye_vec_max_db <= 0 or vec <= p.eye_vec_max_db))
    return {"t_o_mui": float(p.eye_t_o_mui), "offsets": int(len(rows)),
            "window": "gaussian" if p.eye_sigma_r_ui > 0 and nw > 0 else "rectangle",
            "eye_height_v": float(eh), "vec_db": vec, "eye_height_min_v": float(min(eh_each)),
            "passes": bool(ok) if judged else None, "com_db": com}


def _lower_q(y, w, q):
    c = np.cumsum(w) / w.sum()
    return float(y[np.nonzero(c >= q)[0][0]])


def _upper_q(y, w, q):
    cc = np.cumsum(w[::-1])[::-1] / w.sum()
    return float(y[np.nonzero(cc >= q)[0][-1]])
