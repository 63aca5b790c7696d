"""Joint MMSE design of a symbol-spaced FFE and DFE from the sampled pulse response.

Model at the ADC output: y_k = sum_j h_j a_{k-j} + n_k with E[a^2] = s2 and noise
autocorrelation R_n. The FFE output z_k = sum_i w_i y_{k-i} estimates a_{k-d},
d = cursor + pre; a DFE with taps b cancels the post-cursors f_{d+1..d+D} of the
combined response f = w * h. Minimising E[(z_k - sum_m b_m a_{k-d-m} - a_{k-d})^2]
over w and b gives b = H_D^T w and

    w = (s2 (H H^T - H_D H_D^T) + R_n)^(-1) s2 h_d,

with H the N x (N + L - 1) convolution matrix of h and H_D its DFE columns. The MMSE
solution is biased (f_d < 1); taps are rescaled so that f_d = 1 for a slicer with
fixed thresholds, and DFE taps are clipped to the tap limit. ``mmse_ffe_free`` is the
general form, with any set of post-cursor lags removed by decision-fed paths (DFE,
reflection canceller taps, an MLSE target).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from scipy.linalg import solve, toeplitz


@dataclass(frozen=True)
class EqualizerTaps:
    ffe: np.ndarray        # w, applied to ADC samples (1/V)
    dfe: np.ndarray        # b, in units of the (normalised) symbol levels
    delay: int             # decision at FFE output k is about symbol k - delay
    combined: np.ndarray   # f = w * h, cursor at index ``delay``
    predicted_snr_db: float


def convolution_matrix(h: np.ndarray, n_taps: int) -> np.ndarray:
    """H with H[i, i + j] = h[j]: the vector of the last n_taps samples is H @ a."""
    L = h.shape[0]
    H = np.zeros((n_taps, n_taps + L - 1))
    for i in range(n_taps):
        H[i, i:i + L] = h
    return H


def mmse_ffe_free(h: np.ndarray, cursor: int, noise_autocorr: np.ndarray, *, n_taps: int,
                  n_pre: int, free_lags, level_power: float):
    """MMSE FFE for pulse samples ``h`` with the lags ``free_lags`` (>= 1, after the
    cursor) removed by decision-fed paths. Returns (w, f, Rn) with f = w * h, f_d = 1,
    d = cursor + n_pre, and Rn the FFE-span noise covariance."""
    h = np.asarray(h, dtype=np.float64)
    H = convolution_matrix(h, n_taps)
    d = cursor + n_pre
    lags = np.asarray(free_lags, dtype=np.int64).reshape(-1)
    cols = d + lags[(lags >= 1) & (d + lags < H.shape[1])]
    r = np.zeros(n_taps)
    k = min(n_taps, noise_autocorr.shape[0])
    r[:k] = noise_autocorr[:k]
    Rn = toeplitz(r)
    Ryy = level_power * (H @ H.T - H[:, cols] @ H[:, cols].T) + Rn
    # a tiny diagonal load keeps a noiseless design well conditioned
    Ryy += np.eye(n_taps) * 1e-12 * np.trace(Ryy) / n_taps
    w = solve(Ryy, level_power * H[:, d], assume_a="pos")
    f = w @ H
    return w / f[d], f / f[d], Rn


def mmse_ffe_dfe(h: np.ndarray, cursor: int, noise_autocorr: np.ndarray, *, n_taps: int,
                 n_pre: int, n_dfe: int, level_power: float, dfe_limit: float) -> EqualizerTaps:
    """MMSE FFE/DFE taps for pulse samples ``h`` (main cursor at ``cursor``)."""
    w, f, Rn = mmse_ffe_free(h, cursor, noise_autocorr, n_taps=n_taps, n_pre=n_pre,
                             free_lags=np.arange(1, n_dfe + 1), level_power=level_power)
    d = cursor + n_pre
    cols = np.arange(d + 1, min(d + 1 + n_dfe, f.shape[0]))
    b = np.zeros(n_dfe)
    b[: cols.shape[0]] = f[cols]
    b = np.clip(b, -dfe_limit, dfe_limit)
    resid = f.copy()
    resid[d] = 0.0
    resid[cols] -= b[: cols.shape[0]]
    err = level_power * float(resid @ resid) + float(w @ Rn @ w)
    snr = 10 * np.log10(level_power / err) if err > 0 else np.inf
    return EqualizerTaps(ffe=np.ascontiguousarray(w), dfe=np.ascontiguousarray(b), delay=d,
                         combined=f, predicted_snr_db=float(snr))
