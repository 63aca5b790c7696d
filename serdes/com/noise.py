"""Noise, ISI and crosstalk distributions at the chosen equalization and A_ni
(Annex 93A.1.7): COM = 20 log10(A_s / A_ni).

* Gaussian part: TX noise h0^2 10^(-SNR_TX/10) (eq. 93A-30), RX noise eta_0 through
  H_r H_ctf (eq. 93A-35, f > 0), random jitter sigma_RJ^2 sigma_X^2 sum h_J^2
  (eq. 93A-32), h_J the pulse slope at the cursor phase every UI (central difference).
* Delta distributions (eqs. 93A-39/40): each sample h of the residual ISI (all UIs at
  the cursor phase, pre-cursors included, DFE span reduced by the clipped DFE taps), of
  each aggressor at its own phase of largest energy (eq. 93A-33), and of the
  dual-Dirac jitter A_DD h_J, takes the L values h (2l/(L-1) - 1) with equal
  probability; samples with |h| <= 1e-3 A_s are dropped (93A.1.7.1 Note 2).
* Everything is binned on one voltage grid (bin min(A_s/1000, 10 uV), wide enough
  that no distribution is clipped) and convolved; A_ni is the voltage below which the
  lower tail holds DER_0 (eq. 93A-45).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from serdes.com import floating as _floating
from serdes.kernels import com_pmf as _pmf

__all__ = ["Budget", "a_ni", "budget", "conv", "delta_pmf", "fft_convolve", "quant_pmf"]

FILTER_REL = 1e-3
#: the noise and ISI distribution's points at most: its step is A_s / 1000 (1e-5 V at
#: most), coarser only where the support would need more points (noise and ISI over
#: 2000 A_s: a COM below -60 dB), which asked for terabytes when A_s was tiny
MAX_PDF_POINTS = 1 << 22


@dataclass
class Budget:
    a_s: float
    a_ni: float
    h0: float
    sigma_tx: float
    sigma_n: float
    sigma_rj: float
    sigma_isi: float
    sigma_xt: float
    sigma_dd: float
    dfe_taps: np.ndarray
    y: np.ndarray
    pdf: np.ndarray
    parts: dict


def delta_pmf(h: np.ndarray, levels: int, npts: int, ystep: float) -> np.ndarray:
    """PMF on the centred grid of ``npts`` bins of sum_i h_i x_i, x_i uniform on the L
    levels (2l/(L-1) - 1); each sample's values rounded to the grid."""
    lv = 2.0 * np.arange(levels) / (levels - 1) - 1.0
    h = np.asarray(h, dtype=float)
    # every sample's values rounded as x * lv / ystep, then accumulated in numba
    sh = np.round(h[:, None] * lv[None, :] / ystep).astype(np.int64)
    pmf = _pmf.accumulate(sh, levels, npts)
    if pmf is None:
        raise ValueError("voltage grid too small for the distribution")
    return pmf


def fft_convolve(a: np.ndarray, b: np.ndarray, mode: str = "full") -> np.ndarray:
    """Linear convolution of two 1-D real arrays by real FFTs of the next fast length,
    "full" (len(a) + len(b) - 1 samples) or "same" (the centre len(a)): the steps of
    scipy.signal.fftconvolve (the same numbers, tests), without importing
    scipy.signal, which took 0.44 s of every `serdes com` run's start."""
    import scipy.fft as sf

    if mode not in ("full", "same"):
        raise ValueError(f"fft_convolve: mode {mode!r} is not 'full' or 'same'")
    n = len(a) + len(b) - 1
    nf = sf.next_fast_len(n, True)
    out = sf.irfftn(sf.rfftn(a, [nf], axes=[0]) * sf.rfftn(b, [nf], axes=[0]), [nf],
                    axes=[0])[:n]
    if mode == "full":
        return out.copy()
    start = (n - len(a)) // 2
    return out[start:start + len(a)].copy()


def conv(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """Convolution of two PMFs on the same centred odd grid, kept on that grid."""
    out = fft_convolve(a, b, mode="same")
    return np.maximum(out, 0.0)


def a_ni(y: np.ndarray, pdf: np.ndarray, der0: float) -> float:
    cdf = np.cumsum(pdf)
    cdf /= cdf[-1]
    return float(-y[np.nonzero(cdf >= der0)[0][0]])


def budget(p, grid, pv: np.ndarray, aggs: list, ix: int, hctf_rx: np.ndarray,
           var_tx: float | None = None, xt_phases: list | None = None,
           quant: tuple | None = None) -> Budget:
    """A_s, A_ni and the parts, from the victim pulse ``pv`` (equalized, no DFE), the
    aggressor pulses ``aggs`` (same equalization), the cursor sample ``ix`` and the
    RX transfer H_r H_ctf for the noise. ``var_tx`` replaces eq. 93A-30's TX noise (the
    RX FFE receiver's colored TX noise, 178A-21) and ``xt_phases`` each aggressor's phase
    (178A-20: chosen at the RX FFE input) when given; ``quant`` = (Delta, RX FFE taps)
    adds the quantization noise (178A-43/46, :func:`quant_pmf`)."""
    m = grid.m
    L = p.levels
    var_x = (L ** 2 - 1) / (3.0 * (L - 1) ** 2)
    h0 = float(pv[ix])
    a_s = p.rlm * h0 / (L - 1)
    f = grid.f
    df_ghz = (f[1] - f[0]) / 1e9
    var_n = p.eta0 * float(np.sum(np.abs(hctf_rx[1:]) ** 2)) * df_ghz
    if var_tx is None:
        var_tx = h0 ** 2 * 10 ** (-p.snr_tx_db / 10)
    ph, n0 = ix % m, ix // m
    pad = np.pad(pv, 1)
    ixs = ph + m * np.arange(len(pv) // m)
    h_j = (pad[ixs + 2] - pad[ixs]) * (m / 2.0)
    var_rj = p.sigma_rj ** 2 * var_x * float(np.sum(h_j ** 2))
    var_g = var_tx + var_rj + var_n
    thr = FILTER_REL * a_s
    h_dd = p.a_dd * h_j
    h_dd = h_dd[np.abs(h_dd) > thr]
    isi = pv[ph::m].copy()
    isi[n0] = 0.0
    nb = len(p.dfe_max)
    if p.dfe_n_bg > 0:   # floating DFE taps: N_f taps, positions chosen here (floating.py)
        post = isi[n0 + 1:n0 + 1 + p.dfe_n_f]
        dfe = _floating.dfe_taps(p, post, h0)[:len(post)]
    else:
        post = isi[n0 + 1:n0 + 1 + nb]
        dfe = np.clip(post / h0, np.asarray(p.dfe_min)[:len(post)], np.asarray(p.dfe_max)[:len(post)])
    isi[n0 + 1:n0 + 1 + len(post)] = post - dfe * h0
    var_isi = var_x * float(np.sum(isi ** 2))
    isi_f = isi[np.abs(isi) > thr]
    xts, xt_full = [], []
    for n, pa in enumerate(aggs):
        if xt_phases is None:
            e = [np.sum(pa[k::m] ** 2) for k in range(m)]
            s = pa[int(np.argmax(e))::m]
        else:
            s = pa[xt_phases[n]::m]
        xt_full.append(s)
        xts.append(s[np.abs(s) > thr])
    ystep = min(a_s / 1000.0, 1e-5)
    support = np.abs(isi_f).sum() + sum(np.abs(x).sum() for x in xts) + np.abs(h_dd).sum()
    if quant is not None:
        support += float(np.abs(quant[1]).sum()) * quant[0] / 2
    ymax = max(1.1 * a_s, support + 10 * np.sqrt(var_g) + 2 * ystep)
    ystep = max(ystep, ymax / (MAX_PDF_POINTS // 2 - 1))
    npts = 2 * int(np.ceil(ymax / ystep)) + 1
    y = (np.arange(npts) - npts // 2) * ystep
    p_j = delta_pmf(h_dd, L, npts, ystep)
    p_g = np.exp(-y ** 2 / (2 * var_g)) / np.sqrt(2 * np.pi * var_g) * ystep
    p_isi = delta_pmf(isi_f, L, npts, ystep)
    p_xt = np.zeros(npts)
    p_xt[npts // 2] = 1.0
    for x in xts:
        p_xt = conv(p_xt, delta_pmf(x, L, npts, ystep))
    var_xt = float(np.sum(y ** 2 * p_xt))
    var_dd = float(np.sum(y ** 2 * p_j))
    pdf = conv(conv(p_isi, conv(p_g, p_j)), p_xt)
    p_q = None
    if quant is not None and quant[0] > 0:
        p_q = quant_pmf(quant[0], quant[1], npts, ystep)
        pdf = conv(pdf, p_q)
    ani = a_ni(y, pdf, p.der0)
    return Budget(a_s, ani, h0, np.sqrt(var_tx), np.sqrt(var_n), np.sqrt(var_rj), np.sqrt(var_isi),
                  np.sqrt(var_xt), np.sqrt(var_dd), dfe,
                  y, pdf, {"p_isi": p_isi, "p_xt": p_xt, "p_g": p_g, "p_dd": p_j,
                                 # UI samples (unfiltered) for the MLSD's noise autocorrelation
                                 "isi": isi, "h_j": h_j, "xt": xt_full, "p_q": p_q})


def quant_pmf(step: float, taps, npts: int, ystep: float) -> np.ndarray:
    """PMF at the detector of the quantization noise (178A-43, 178A-46): the uniform
    PMF of width |w_k| Delta through each RX FFE tap w_k, convolved (each a centred
    boxcar of 2n + 1 grid steps, :func:`boxcar_same`; a tap of n = 0, such as the span's
    zeros between floating taps, leaves the PMF as it is)."""
    q = np.zeros(npts)
    q[npts // 2] = 1.0
    if step <= 0:
        return q
    for w in taps:
        n = int(round(abs(w) * step / 2 / ystep))
        if n > 0:
            q = boxcar_same(q, n)
    return q


def boxcar_same(q: np.ndarray, n: int) -> np.ndarray:
    """``conv(q, b)`` for the centred boxcar b of 2n + 1 steps of weight 1 / (2n + 1), as
    a running sum: out[i] = (sum of q[i - n .. i + n] inside the grid) / (2n + 1), O(npts)
    where the FFT convolution of two grid-long arrays took about 0.8 s at the grid's 2^22
    points (a signal far below the noise: 87 of them per package case with floating taps).
    The sums are differences of one cumulative sum, so each value's rounding is relative
    to the cumulative sum there: small in the lower tail, where A_ni is read."""
    npts = q.shape[0]
    c = np.concatenate(([0.0], np.cumsum(q)))
    i = np.arange(npts)
    out = (c[np.minimum(i + n + 1, npts)] - c[np.maximum(i - n, 0)]) / (2 * n + 1)
    return np.maximum(out, 0.0)
