"""Noise whitening before the MLSE: the coloured error after a long FFE, its linear
predictor, and measurements of how white a noise is.

After an FFE that equalizes a lossy channel, the error at its output
``r_k = z_k - a_{k-d}`` (residual ISI and noise through the FFE) is coloured: the FFE
boosts high frequencies, so neighbouring samples are correlated. With its
autocorrelation ``R_r`` known, the order-L linear predictor ``p`` solves the
Yule-Walker equations ``toeplitz(R_r[0..L-1]) p = R_r[1..L]``; the whitening filter
``c = [1, -p_1, .., -p_L]`` leaves the prediction error
``r_k - sum_i p_i r_{k-i}``, whose variance ``R_r[0] - p . R_r[1..L]`` is the smallest any
such filter reaches, and whose autocorrelation is closer to white. The signal part
becomes ``c * a``: the whitened samples ``u = c * z`` are a partial-response signal with
target ``c`` for the Viterbi detector (noise-predictive MLSE).

The autocorrelation at the FFE output of a combined residual ``e`` (``e = f - delta_d``
with decision-fed lags removed) and coloured input noise ``R_n``:

    R_r[m] = s2 sum_j e_j e_{j+m} + sum_l (w * w~)[l] R_n[|m - l|].
"""

from __future__ import annotations

import numpy as np

from serdes.dsp.linalg import solve_toeplitz


def ffe_error_autocorr(resid: np.ndarray, w: np.ndarray, noise_autocorr: np.ndarray,
                       level_power: float, lags: int) -> np.ndarray:
    """R_r[0..lags-1] of residual ISI ``resid`` (combined response with the target
    removed) and of the noise with autocorrelation ``noise_autocorr`` through ``w``."""
    r = np.zeros(lags)
    isi = np.correlate(resid, resid, mode="full")[resid.shape[0] - 1:]
    n = min(lags, isi.shape[0])
    r[:n] = level_power * isi[:n]
    n_w = w.shape[0]
    ww = np.correlate(w, w, mode="full")  # lag l = -(N-1) .. N-1
    l = np.arange(-(n_w - 1), n_w)
    rn = np.zeros(lags + n_w + 1)
    k = min(rn.shape[0], noise_autocorr.shape[0])
    rn[:k] = noise_autocorr[:k]
    for m in range(lags):
        r[m] += float(ww @ rn[np.abs(m - l)])
    return r


def noise_predictor(autocorr: np.ndarray, order: int) -> tuple[np.ndarray, float]:
    """Whitening filter ``[1, -p_1, .., -p_L]`` of the order-L linear predictor of a
    noise with autocorrelation ``autocorr`` (Yule-Walker), and the prediction-error
    variance."""
    r = np.asarray(autocorr, dtype=np.float64)
    p = solve_toeplitz(r[:order], r[1:order + 1])
    var = float(r[0] - p @ r[1:order + 1])
    return np.concatenate([[1.0], -p]), var


def autocorr_normalized(x: np.ndarray, lags: int) -> np.ndarray:
    """rho[0..lags-1] = R[k] / R[0] of a (zero-mean) sample sequence (biased estimate)."""
    x = np.asarray(x, dtype=np.float64)
    n = x.shape[0]
    r = np.array([float(x[:n - k] @ x[k:]) for k in range(lags)]) / n
    return r / r[0]


def colour(rho: np.ndarray) -> float:
    """How far from white a normalised autocorrelation is: sum of rho[k]^2 over k >= 1
    (0 for white noise)."""
    return float(np.sum(np.asarray(rho)[1:] ** 2))
