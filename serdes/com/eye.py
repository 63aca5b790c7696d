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
``eye_t_o_mui``), pooling the distributions of the window as the IEEE MATLAB COM code does.
"""

from __future__ import annotations

import math

import numpy as np

from serdes.com.noise import FILTER_REL, conv, delta_pmf

__all__ = ["eye_at_der0", "eye_over_window"]


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


def _shifted(pv: np.ndarray, m: int, frac_ui: float) -> np.ndarray:
    """The pulse ``pv`` (period len(pv), m samples per UI) read frac_ui UI later, by the
    exact band-limited (Fourier) shift."""
    n = len(pv)
    k = np.fft.rfftfreq(n)                      # cycles per sample
    return np.fft.irfft(np.fft.rfft(pv) * np.exp(2j * np.pi * k * frac_ui * m), n)


def eye_over_window(p, m: int, pv: np.ndarray, ix: int, budget) -> dict:
    """Eye height and VEC over the C2M timing window T_s +- T_O (``p.eye_t_o_mui``, in
    milli-UI), as the IEEE MATLAB COM code evaluates VEC/VEO for C2M (COM_eye_width): the
    window is sampled at ``p.eye_samples_per_ui`` points per UI (floor(T_O/1000 x that)
    offsets each side); at each offset the ISI (DFE taps held at their T_s values x
    h0(T_s)), the jitter slope (RJ and dual-Dirac) and the level means A_s(t) (L - 1) x
    level are those of the pulse at that time, the crosstalk and the TX/RX noise those of
    T_s; each level's distributions over the window are pooled with equal weights (a
    rectangular histogram window), the eye's top is the lower DER_0 quantile of the upper
    level, its bottom the upper quantile of the lower level, EH = top - bottom (the worst
    eye: all are equal here, the distributions being level-independent), VEC =
    20 log10(2 A_s / EH) with A_s at T_s. Also the smallest per-offset EH (``eye_height_min_v``)."""
    L = p.levels
    var_x = (L ** 2 - 1) / (3.0 * (L - 1) ** 2)
    nw = int(math.floor(p.eye_t_o_mui / 1000.0 * p.eye_samples_per_ui))
    offs = np.arange(-nw, nw + 1) / p.eye_samples_per_ui
    ph, n0 = ix % m, ix // m
    h0_ts = budget.h0
    thr = FILTER_REL * budget.a_s
    var_fixed = budget.sigma_tx ** 2 + budget.sigma_n ** 2
    dfe = np.asarray(budget.dfe_taps, dtype=float)
    rows = []
    for d in offs:
        s = _shifted(pv, m, d) if d else pv
        h0 = float(s[ix])
        a_s = p.rlm * h0 / (L - 1)
        isi = s[ph::m].copy()
        isi[n0] = 0.0
        isi[n0 + 1:n0 + 1 + len(dfe)] -= dfe[:len(isi) - n0 - 1] * h0_ts
        pad = np.pad(s, 1)
        h_j = (pad[ph + m * np.arange(len(s) // m) + 2] - pad[ph + m * np.arange(len(s) // m)]) * (m / 2.0)
        var_g = var_fixed + p.sigma_rj ** 2 * var_x * float(np.sum(h_j ** 2))
        h_dd = p.a_dd * h_j
        rows.append((a_s, isi[np.abs(isi) > thr], h_dd[np.abs(h_dd) > thr], var_g))
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
    up = np.zeros(npts)        # upper level (mean +A_s(t)) around the eye centre
    lo = np.zeros(npts)        # lower level (mean -A_s(t))
    eh_each = []
    for a_s, isi, hdd, var_g in rows:
        g = np.exp(-y ** 2 / (2 * var_g)) if var_g > 0 else (y == 0).astype(float)
        dist = conv(conv(conv(delta_pmf(isi, L, npts, ystep), delta_pmf(hdd, L, npts, ystep)),
                         g / g.sum()), xt)
        dist /= dist.sum()
        sh = int(round(a_s / ystep))
        u, w = np.roll(dist, sh), np.roll(dist, -sh)
        eh_each.append(_lower_q(y, u, p.der0) - _upper_q(y, w, p.der0))
        up += u
        lo += w
    eh = _lower_q(y, up / len(rows), p.der0) - _upper_q(y, lo / len(rows), p.der0)
    vec = 20.0 * math.log10(2.0 * budget.a_s / eh) if eh > 0 else None
    return {"t_o_mui": float(p.eye_t_o_mui), "offsets": int(len(rows)), "eye_height_v": float(eh),
            "vec_db": vec, "eye_height_min_v": float(min(eh_each))}


def _lower_q(y, w, q):
    c = np.cumsum(w) / w.sum()
    return float(y[np.nonzero(c >= q)[0][0]])


def _upper_q(y, w, q):
    cc = np.cumsum(w[::-1])[::-1] / w.sum()
    return float(y[np.nonzero(cc >= q)[0][-1]])
