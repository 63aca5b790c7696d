"""Joint MMSE design of a symbol-spaced FFE and DFE from the sampled pulse response.

Model at the ADC output: y_k = sum_j h_j a_{k-j} + n_k with E[a^2] = s2 and noise
autocorrelation R_n. The FFE output z_k = sum_i w_i y_{k-i} estimates a_{k-d},
d = cursor + pre; a DFE with taps b cancels the post-cursors f_{d+1..d+D} of the
combined response f = w * h. Minimising E[(z_k - sum_m b_m a_{k-d-m} - a_{k-d})^2]
over w and b gives b = H_D^T w and

    w = (s2 (H H^T - H_D H_D^T) + R_n)^(-1) s2 h_d,

with H the N x (N + L - 1) convolution matrix of h and H_D its DFE columns. The MMSE
solution is biased (f_d < 1); taps are rescaled so that f_d = 1 for a slicer with
fixed thresholds (this unbiased design is also the FFE of largest SNR with f_d = 1).
``mmse_ffe_free`` is the general form, with any set of post-cursor lags removed by
decision-fed paths (DFE, reflection canceller taps, an MLSE target).

A DFE tap beyond the tap limit is clipped; the FFE is then designed again with that
lag *fixed*: the DFE subtracts c a_{k-d-j} with c = +-limit, and the FFE minimises the
error power with f_d = 1,

    E[e^2] = w^T Q w - 2 s2 c w^T h_{d+j} + s2 c^2,  Q = s2 (H H^T - H_F H_F^T - h_d h_d^T) + R_n,
    w = Q^(-1) (s2 c h_{d+j} + mu h_d),  mu such that h_d^T w = 1,

so it may leave part of the lag's ISI to the limited tap and absorb the rest (the design
without re-optimisation is one feasible point, so the SNR can only rise). A lag that
then exceeds the limit is fixed in turn.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from serdes.dsp.linalg import solve_pos, toeplitz


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


def _design_setup(h, cursor: int, noise_autocorr, n_taps: int, n_pre: int, free_lags):
    """The shared start of the FFE designs: the convolution matrix H of the pulse, the
    decision delay d, the columns of the decision-fed lags and the noise covariance."""
    H = convolution_matrix(np.asarray(h, dtype=np.float64), n_taps)
    d = cursor + n_pre
    lags = np.asarray(free_lags, dtype=np.int64).reshape(-1)
    cols = d + lags[(lags >= 1) & (d + lags < H.shape[1])]
    r = np.zeros(n_taps)
    k = min(n_taps, noise_autocorr.shape[0])
    r[:k] = noise_autocorr[:k]
    return H, d, cols, toeplitz(r)


def mmse_ffe_free(h: np.ndarray, cursor: int, noise_autocorr: np.ndarray, *, n_taps: int,
                  n_pre: int, free_lags, level_power: float):
    """MMSE FFE for pulse samples ``h`` with the lags ``free_lags`` (>= 1, after the
    cursor) removed by decision-fed paths. Returns (w, f, Rn) with f = w * h, f_d = 1,
    d = cursor + n_pre, and Rn the FFE-span noise covariance."""
    H, d, cols, Rn = _design_setup(h, cursor, noise_autocorr, n_taps, n_pre, free_lags)
    Ryy = level_power * (H @ H.T - H[:, cols] @ H[:, cols].T) + Rn
    # a tiny diagonal load keeps a noiseless design well conditioned
    Ryy += np.eye(n_taps) * 1e-12 * np.trace(Ryy) / n_taps
    w = solve_pos(Ryy, level_power * H[:, d])
    f = w @ H
    return w / f[d], f / f[d], Rn


def mmse_ffe_fixed(h: np.ndarray, cursor: int, noise_autocorr: np.ndarray, *, n_taps: int,
                   n_pre: int, free_lags, fixed: dict, level_power: float):
    """The FFE with f_d = 1 of least error power when the lags ``free_lags`` are removed
    exactly and each lag j of ``fixed`` is removed by a feedback of fixed value
    ``fixed[j]`` (a clipped DFE tap; module notes). Returns (w, f, Rn, err) with ``err``
    the error power at the slicer (residual ISI, the fixed lags' mismatch and noise)."""
    s2 = float(level_power)
    H, d, cols, Rn = _design_setup(h, cursor, noise_autocorr, n_taps, n_pre, free_lags)
    hd = H[:, d]
    Q = s2 * (H @ H.T - H[:, cols] @ H[:, cols].T - np.outer(hd, hd)) + Rn
    Q += np.eye(n_taps) * 1e-12 * np.trace(Q) / n_taps
    g = np.zeros(n_taps)
    c2 = 0.0
    for j, c in fixed.items():
        if d + int(j) < H.shape[1]:
            g += s2 * float(c) * H[:, d + int(j)]
            c2 += s2 * float(c) ** 2
    qg, qh = solve_pos(Q, g), solve_pos(Q, hd)
    mu = (1.0 - hd @ qg) / (hd @ qh)
    w = qg + mu * qh
    f = w @ H
    err = float(w @ Q @ w - 2.0 * w @ g + c2)
    return w, f, Rn, err


def clipped_dfe_design(h: np.ndarray, cursor: int, noise_autocorr: np.ndarray, *,
                       n_taps: int, n_pre: int, n_dfe: int, other_lags=(),
                       level_power: float, dfe_limit: float, reoptimise: bool = True):
    """FFE and DFE taps with the DFE taps limited to +-``dfe_limit``; ``other_lags``: more
    lags removed exactly (reflection canceller). With ``reoptimise`` a clipped lag is
    fixed at the limit and the FFE designed again (module notes), until no DFE tap
    exceeds the limit. Returns (w, f, Rn, b, err)."""
    s2 = float(level_power)
    d = cursor + n_pre
    others = [int(j) for j in other_lags]
    free = list(range(1, n_dfe + 1))
    fixed: dict[int, float] = {}
    w, f, Rn = mmse_ffe_free(h, cursor, noise_autocorr, n_taps=n_taps, n_pre=n_pre,
                             free_lags=free + others, level_power=s2)
    while True:
        m = min(n_dfe, f.shape[0] - d - 1)
        over = [j for j in free if j <= m and abs(f[d + j]) > dfe_limit]
        if not (reoptimise and over):
            break
        for j in over:
            fixed[j] = float(np.sign(f[d + j]) * dfe_limit)
            free.remove(j)
        w, f, Rn, _ = mmse_ffe_fixed(h, cursor, noise_autocorr, n_taps=n_taps, n_pre=n_pre,
                                     free_lags=free + others, fixed=fixed, level_power=s2)
    m = min(n_dfe, f.shape[0] - d - 1)
    b = np.zeros(n_dfe)
    b[:m] = np.clip(f[d + 1:d + 1 + m], -dfe_limit, dfe_limit)
    for j, c in fixed.items():
        if j <= m:
            b[j - 1] = c
    resid = f.copy()
    resid[d] = 0.0
    resid[d + 1:d + 1 + m] -= b[:m]
    ok = [j for j in others if d + j < f.shape[0]]
    resid[[d + j for j in ok]] = 0.0
    err = s2 * float(resid @ resid) + float(w @ Rn @ w)
    return w, f, Rn, b, err


def mmse_ffe_dfe(h: np.ndarray, cursor: int, noise_autocorr: np.ndarray, *, n_taps: int,
                 n_pre: int, n_dfe: int, level_power: float, dfe_limit: float,
                 reoptimise: bool = True) -> EqualizerTaps:
    """MMSE FFE/DFE taps for pulse samples ``h`` (main cursor at ``cursor``); a clipped
    DFE tap makes the FFE be designed again with that lag fixed (``reoptimise``)."""
    w, f, Rn, b, err = clipped_dfe_design(h, cursor, noise_autocorr, n_taps=n_taps,
                                          n_pre=n_pre, n_dfe=n_dfe, level_power=level_power,
                                          dfe_limit=dfe_limit, reoptimise=reoptimise)
    d = cursor + n_pre
    snr = 10 * np.log10(level_power / err) if err > 0 else np.inf
    return EqualizerTaps(ffe=np.ascontiguousarray(w), dfe=np.ascontiguousarray(b), delay=d,
                         combined=f, predicted_snr_db=float(snr))
