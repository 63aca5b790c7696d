"""The RX FFE reference receiver of Annex 178A (802.3dj): MMSE FFE/DFE taps and FOM.

At a cursor sampling time t_s the victim pulse (TX FFE and CTLE applied, no RX FFE) is
sampled once per UI, h[n]. With N_w RX FFE taps w (d_w pre-cursor taps), N_b DFE taps b
and the noise autocorrelation R_n[k] at whole-UI lags at the FFE input, the mean squared
error at the detector, per unit signal power sigma_X^2, is (178A-32..36)

    MSE / sigma_X^2 = w^T R w + 1 + b^T b - 2 w^T h_0 - 2 w^T H_b^T b,
    R = H^T H + toeplitz(R_n) / sigma_X^2,

H the convolution matrix of h (H[n, i] = h[n - i]), h_0 its cursor row (n = cursor UI +
d_w), H_b the N_b rows after it. It is minimised subject to h_0^T w = 1 (unit cursor),
a linear KKT system; DFE taps beyond their limits are clipped and the FFE solved again
with them fixed; FFE taps beyond their limits (relative to the cursor tap) are clipped and
the FFE renormalised to a unit cursor, the DFE taps recomputed from it. FOM =
20 log10(RLM / (L - 1) / sqrt(MSE)). The sampling time is searched over +-M/2 samples
around the pulse peak (every sample).

R_n (178A-17) is the sum of, at the sampling phase:
* RX noise: eta_0 through H_r H_ctf, stationary (its autocorrelation at UI lags);
* TX noise (178A-21): 10^(-SNR_TX/10) times the autocorrelation of the UI samples of the
  pulse of H_t H_21 H_r H_ctf A_v (no TX FFE, no sigma_X^2);
* jitter: sigma_X^2 (A_DD^2 + sigma_RJ^2) times the autocorrelation of h_J, the victim
  pulse slope per UI at the sampling phase (178A-23);
* crosstalk (178A-20): sigma_X^2 times the autocorrelation of each aggressor's UI
  samples at its own phase of largest energy.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

__all__ = ["MmseSolution", "solve_taps", "noise_acf", "acf", "rx_noise_acf", "search_ts",
           "agg_samples", "apply_rx_ffe", "search_grid_fast", "MmseBest"]


@dataclass
class MmseSolution:
    fom_db: float
    mse: float
    w: np.ndarray       # RX FFE taps, unit cursor response (h_0^T w = 1)
    b: np.ndarray       # DFE taps
    ts: int = 0         # sampling index in the fine pulse


def acf(x: np.ndarray, nlag: int) -> np.ndarray:
    """Linear autocorrelation r[k] = sum_n x[n] x[n + k], k = 0 .. nlag - 1."""
    n = len(x)
    return np.array([float(x[:n - k] @ x[k:]) if k < n else 0.0 for k in range(nlag)])


_T_BLOCK = 128      # UIs per block of phase_table's transpose (128 x 32 doubles: 32 KB)


def phase_table(x: np.ndarray, m: int) -> np.ndarray:
    """T[ph, n] = x[ph + n m] (whole UIs only), contiguous. The transpose is copied in
    blocks of _T_BLOCK UIs, each of which stays in the L1 cache: 0.28 against 1.83 ms for
    the 802.3dj pulse's 10,625 UIs x 32 phases in one strided copy (the same values:
    a copy), which every CTLE setting's tables take."""
    n = len(x) // m
    v = np.asarray(x[: n * m]).reshape(n, m)
    out = np.empty((m, n), dtype=v.dtype)
    for i in range(0, n, _T_BLOCK):
        out[:, i:i + _T_BLOCK] = v[i:i + _T_BLOCK].T
    return out


def acf_rows(t: np.ndarray, nlag: int) -> np.ndarray:
    """acf of every row of ``t``: r[ph, k] = sum_n t[ph, n] t[ph, n + k], by FFT over
    the rows zero-padded to a length >= n + nlag (no wrap-around; 5x faster than the
    sums on the 802.3dj window, the same values to ~4e-15 of lag 0)."""
    import scipy.fft as sf

    n = t.shape[1]
    nf = sf.next_fast_len(n + nlag, real=True)
    F = sf.rfft(t, nf, axis=1)
    r = sf.irfft(F.real ** 2 + F.imag ** 2, nf, axis=1)[:, :min(nlag, n)]
    if nlag > n:
        r = np.concatenate((r, np.zeros((t.shape[0], nlag - n))), axis=1)
    return np.ascontiguousarray(r)


def rx_noise_acf(eta0: float, h_rx: np.ndarray, f: np.ndarray, m: int, nlag: int) -> np.ndarray:
    """Autocorrelation at lags of whole UIs of eta_0 (V^2/GHz, one-sided) through
    ``h_rx`` (on the grid ``f``, f[0] = 0, M samples per UI)."""
    df = f[1] - f[0]
    n = 2 * (len(f) - 1)
    r = np.fft.irfft(eta0 * 1e-9 / 2 * np.abs(h_rx) ** 2) * n * df
    return r[: nlag * m: m].copy()


def agg_samples(pa: np.ndarray, m: int) -> tuple[int, np.ndarray]:
    """Phase of largest energy of an aggressor pulse and its UI samples there."""
    t = phase_table(pa, m)
    k = int(np.argmax(np.einsum("pn,pn->p", t, t)))
    return k, t[k]


def noise_acf(p, v: np.ndarray, g: np.ndarray, xt_samples: list, r_rx: np.ndarray, ts: int,
              m: int, nlag: int) -> np.ndarray:
    """R_n[k] (V^2) at the FFE input for the sampling index ``ts`` (see module doc).
    ``v`` victim pulse, ``g`` the TX-noise pulse, ``xt_samples`` aggressor UI samples."""
    L = p.levels
    var_x = (L ** 2 - 1) / (3.0 * (L - 1) ** 2)
    ph = ts % m
    r = r_rx[:nlag].copy()
    r += 10 ** (-p.snr_tx_db / 10) * acf(g[ph::m], nlag)
    pad = np.pad(v, 1)
    ixs = ph + m * np.arange(len(v) // m)
    h_j = (pad[ixs + 2] - pad[ixs]) * (m / 2.0)
    r += var_x * (p.a_dd ** 2 + p.sigma_rj ** 2) * acf(h_j, nlag)
    for s in xt_samples:
        r += var_x * acf(s, nlag)
    return r


def solve_taps(h: np.ndarray, rn: np.ndarray, dh: int, p) -> MmseSolution:
    """MMSE RX FFE / DFE for the UI samples ``h`` with the cursor at index ``dh`` and
    the noise autocorrelation ``rn`` (V^2, lags 0 .. N_w - 1)."""
    nw, dw, nb = len(p.rx_ffe_max), p.rx_ffe_pre, len(p.dfe_max)
    d = dh + dw
    rows = (d + np.arange(nb + 1))[:, None] - np.arange(nw)[None, :]
    hr = np.where((rows >= 0) & (rows < len(h)), h[np.clip(rows, 0, len(h) - 1)], 0.0)
    return solve_rows(acf(h, nw), rn, hr, p)


def solve_rows(rh: np.ndarray, rn: np.ndarray, hr: np.ndarray, p) -> MmseSolution:
    """:func:`solve_taps` from the autocorrelation ``rh`` of the UI samples (lags
    0 .. N_w - 1) and the rows ``hr`` of their convolution matrix at the cursor and the
    DFE taps (hr[r, i] = h[cursor + d_w + r - i])."""
    L = p.levels
    var_x = (L ** 2 - 1) / (3.0 * (L - 1) ** 2)
    nw, dw, nb = len(p.rx_ffe_max), p.rx_ffe_pre, len(p.dfe_max)
    wmin, wmax = np.asarray(p.rx_ffe_min), np.asarray(p.rx_ffe_max)
    bmin, bmax = np.asarray(p.dfe_min), np.asarray(p.dfe_max)
    idx = np.abs(np.arange(nw)[:, None] - np.arange(nw)[None, :])
    R = rh[:nw][idx] + rn[:nw][idx] / var_x
    h0, hb = hr[0], hr[1:]
    # KKT: R w - H_b^T b - lam h_0 = h_0; b = H_b w; h_0^T w = 1
    n = nw + nb + 1
    A = np.zeros((n, n))
    A[:nw, :nw] = R
    A[:nw, nw:nw + nb] = -hb.T
    A[:nw, -1] = -h0
    A[nw:nw + nb, :nw] = -hb
    A[nw:nw + nb, nw:nw + nb] = np.eye(nb)
    A[-1, :nw] = h0
    y = np.concatenate((h0, np.zeros(nb), [1.0]))
    x = np.linalg.solve(A, y)
    w, b = x[:nw], x[nw:nw + nb]
    b_lim = np.clip(b, bmin, bmax)
    if not np.array_equal(b_lim, b):
        A2 = np.zeros((nw + 1, nw + 1))
        A2[:nw, :nw] = R
        A2[:nw, -1] = -h0
        A2[-1, :nw] = h0
        w = np.linalg.solve(A2, np.concatenate((h0 + hb.T @ b_lim, [1.0])))[:nw]
    b = b_lim
    c = w[dw]
    w_lim = np.minimum(wmax * c, np.maximum(wmin * c, w))
    if not np.array_equal(w_lim, w):
        w = w_lim / float(h0 @ w_lim)
        b = np.clip(hb @ w, bmin, bmax)
    mse = var_x * float(w @ R @ w + 1 + b @ b - 2 * w @ h0 - 2 * w @ hb.T @ b)
    fom = 20 * np.log10(p.rlm / (L - 1) / np.sqrt(mse)) if mse > 0 else -np.inf
    return MmseSolution(float(fom), mse, w, b)


def solve_rows_batch(rh: np.ndarray, rn: np.ndarray, hr: np.ndarray, p):
    """:func:`solve_rows` for a stack of problems (leading axis B): the same steps
    (KKT, DFE clip and re-solve, FFE clip and renormalisation) row by row.
    Returns fom (B,), w (B, N_w), b (B, N_b)."""
    L = p.levels
    var_x = (L ** 2 - 1) / (3.0 * (L - 1) ** 2)
    nw = len(p.rx_ffe_max)
    idx = np.abs(np.arange(nw)[:, None] - np.arange(nw)[None, :])
    R = rh[:, :nw][:, idx] + rn[:, :nw][:, idx] / var_x
    return solve_r_batch(R, hr, p, np.asarray(p.rx_ffe_min), np.asarray(p.rx_ffe_max))


def solve_r_batch(R: np.ndarray, hr: np.ndarray, p, wmin: np.ndarray, wmax: np.ndarray):
    """The steps of :func:`solve_rows_batch` from the matrices R (B, n, n), the rows hr
    (B, N_b + 1, n) and the FFE limits (n or B x n; tap ``p.rx_ffe_pre`` the cursor)."""
    L = p.levels
    var_x = (L ** 2 - 1) / (3.0 * (L - 1) ** 2)
    nw, dw, nb = R.shape[1], p.rx_ffe_pre, len(p.dfe_max)
    bmin, bmax = np.asarray(p.dfe_min), np.asarray(p.dfe_max)
    wmin, wmax = np.broadcast_to(wmin, (R.shape[0], nw)), np.broadcast_to(wmax, (R.shape[0], nw))
    B = R.shape[0]
    h0, hb = hr[:, 0], hr[:, 1:]
    n = nw + nb + 1
    A = np.zeros((B, n, n))
    A[:, :nw, :nw] = R
    A[:, :nw, nw:nw + nb] = -np.swapaxes(hb, 1, 2)
    A[:, :nw, -1] = -h0
    A[:, nw:nw + nb, :nw] = -hb
    A[:, nw:nw + nb, nw:nw + nb] = np.eye(nb)
    A[:, -1, :nw] = h0
    y = np.concatenate((h0, np.zeros((B, nb)), np.ones((B, 1))), axis=1)
    x = np.linalg.solve(A, y[..., None])[..., 0]
    w, b = x[:, :nw], x[:, nw:nw + nb]
    b_lim = np.clip(b, bmin, bmax)
    hit = (b_lim != b).any(axis=1)
    if hit.any():
        A2 = np.zeros((int(hit.sum()), nw + 1, nw + 1))
        A2[:, :nw, :nw] = R[hit]
        A2[:, :nw, -1] = -h0[hit]
        A2[:, -1, :nw] = h0[hit]
        y2 = np.concatenate((h0[hit] + np.einsum("kbi,kb->ki", hb[hit], b_lim[hit]),
                             np.ones((int(hit.sum()), 1))), axis=1)
        w[hit] = np.linalg.solve(A2, y2[..., None])[..., 0][:, :nw]
    b = b_lim
    c = w[:, dw:dw + 1]
    w_lim = np.minimum(wmax * c, np.maximum(wmin * c, w))
    ch = (w_lim != w).any(axis=1)
    if ch.any():
        wl = w_lim[ch] / np.einsum("ki,ki->k", h0[ch], w_lim[ch])[:, None]
        w[ch] = wl
        b[ch] = np.clip(np.einsum("kbi,ki->kb", hb[ch], wl), bmin, bmax)
    mse = var_x * (np.einsum("ki,kij,kj->k", w, R, w) + 1 + np.sum(b * b, axis=1)
                   - 2 * np.einsum("ki,ki->k", w, h0) - 2 * np.einsum("ki,kbi,kb->k", w, hb, b))
    with np.errstate(divide="ignore", invalid="ignore"):
        fom = np.where(mse > 0, 20 * np.log10(p.rlm / (L - 1) / np.sqrt(np.abs(mse))), -np.inf)
    return fom, w, b


def slope_table(v: np.ndarray, m: int) -> np.ndarray:
    """Phase table of the pulse slope per UI, (v[i + 1] - v[i - 1]) M / 2 (178A-23)."""
    pad = np.pad(v, 1)
    return phase_table((pad[2:] - pad[:-2]) * (m / 2.0), m)


def search_ts(p, v: np.ndarray, acf_g: np.ndarray, acf_xt: np.ndarray, r_rx: np.ndarray,
              m: int) -> MmseSolution:
    """Best MMSE solution over sampling times within +-M/2 of the victim's peak.
    ``acf_g`` the TX-noise pulse's acf per phase (M x N_w), ``acf_xt`` the crosstalk's
    (sigma_X^2 included), ``r_rx`` the RX noise's (see :func:`noise_acf`, the same sum)."""
    L = p.levels
    var_x = (L ** 2 - 1) / (3.0 * (L - 1) ** 2)
    nw = len(p.rx_ffe_max)
    tv = phase_table(v, m)
    acf_j = acf_rows(slope_table(v, m), nw)
    rn_ph = (r_rx[None, :] + 10 ** (-p.snr_tx_db / 10) * acf_g
             + var_x * (p.a_dd ** 2 + p.sigma_rj ** 2) * acf_j + acf_xt[None, :])
    pk = int(np.argmax(v))
    best = None
    for ts in range(pk - m // 2, pk + m // 2 + 1):
        dh, ph = divmod(ts, m)
        s = solve_taps(tv[ph], rn_ph[ph], dh, p)
        if best is None or s.fom_db > best.fom_db:
            s.ts = ts
            best = s
    return best


def apply_rx_ffe(x: np.ndarray, w: np.ndarray, dw: int, m: int) -> np.ndarray:
    """A fine-sampled pulse through the RX FFE (taps 1 UI apart, tap ``dw`` the cursor)."""
    out = np.zeros_like(x)
    for i, wi in enumerate(w):
        out += wi * np.roll(x, (i - dw) * m)
    return out


@dataclass
class MmseBest:
    fom_db: float
    g_dc: float
    g_dc2: float
    tx_taps: np.ndarray      # all TX taps, cursor included, in offset order
    sol: MmseSolution
    landscape: np.ndarray    # best FOM (dB) per (g_dc, g_dc2)
    tx_fom_at_best: np.ndarray
    n_evaluated: int
    #: the landscape holds each CTLE setting's best upper bound, exact only at the chosen
    #: one (the branch and bound of the quantization noise evaluates no more)
    landscape_bound: bool = False


def _circ_acf_rows(t: np.ndarray, nlag: int) -> np.ndarray:
    """Circular autocorrelation of every row of ``t`` at lags 0 .. nlag - 1."""
    import scipy.fft as sf

    F = sf.rfft(t, axis=1)
    return sf.irfft(F.real ** 2 + F.imag ** 2, n=t.shape[1], axis=1)[:, :nlag]


def _pair_forms(t: np.ndarray, offs: np.ndarray, nlag: int, iu, mult) -> np.ndarray:
    """G with (c_i c_j)_pairs @ G = c^T G_lag c = the (linear) acf at each lag of the rows
    of v = sum_i c_i roll(t, k_i) (rolled along the UIs, as the TX FFE is applied):
    G_lag[i, j] = rho(lag + k_i - k_j) - wrap_lag[i, j], rho the circular acf of t's rows
    and wrap the products the circular acf has across the window's end (pair i < j
    weighs G_ij + G_ji, i = i weighs G_ii: mult is 2 off the diagonal, 1 on it).
    Returns (n_pairs, rows * nlag)."""
    n = t.shape[1]
    span = int(np.abs(offs).max()) * 2
    rho = _circ_acf_rows(t, nlag + span + 1)
    lag = np.arange(nlag)
    ix = np.abs(lag[:, None, None] + offs[None, :, None] - offs[None, None, :])   # (nlag, K, K)
    g = rho[:, ix]                                                                 # (P, nlag, K, K)
    # the wrap at lag L: sum_(j < L) t[(n - L + j - k_a) % n] t[(j - k_b) % n], from the
    # last and the first nlag - 1 UIs of each rolled row, gathered once
    q = np.arange(nlag - 1)
    ya = t[:, (n - nlag + 1 + q[None, :] - offs[:, None]) % n]                    # (P, K, nlag - 1)
    yb = t[:, (q[None, :] - offs[:, None]) % n]
    for L in range(1, nlag):
        g[:, L] -= np.einsum("paj,pbj->pab", ya[:, :, nlag - 1 - L:], yb[:, :, :L])
    g = g + np.swapaxes(g, -1, -2)         # G_ij + G_ji: not symmetric for lag != 0
    g = g[:, :, iu[0], iu[1]] * (mult / 2.0)                                       # (P, nlag, pairs)
    return g.reshape(-1, g.shape[-1]).T.copy()


def search_grid_fast(p, grid, vtfs: list, kinds: list, chunk: int = 256) -> MmseBest:
    """Best MMSE FOM over g_DC x g_DC2 x the TX FFE grid (every point, every sampling
    time within +-M/2 of the peak; ``vtfs[0]`` the thru, the rest aggressors), with the TX
    FFE taken as linear: the UI-sample autocorrelations
    of the victim, its slope and the FEXT aggressors for every TX setting are quadratic
    forms in the taps (circular autocorrelations over the window), the cursor rows a few
    gathered samples; only the MMSE solves remain per candidate."""
    if p.rx_ffe_n_wg:
        raise NotImplementedError("search_grid_fast: floating RX FFE taps are searched by "
                                  "mmse_grid.search_grid_numba only")
    from serdes.com.fom import _pairs, ctle_basis, ctle_weights, full_taps, tx_offsets
    from serdes.com.pulse import h_r, xsinc

    m = grid.m
    offs = tx_offsets(p)
    C = full_taps(p, p.tx_grid)
    iu, mult = _pairs(len(offs))
    CC = C[:, iu[0]] * C[:, iu[1]]
    basis = ctle_basis(p, grid.f)
    xs = xsinc(grid)
    amps = [p.a_v] + [p.a_ne if k == "next" else p.a_fe for k in kinds]
    base = [np.fft.irfft(xs * v * basis, axis=1) * a for v, a in zip(vtfs, amps)]
    hr_f = h_r(p, grid.f)
    nw, dw, nb = len(p.rx_ffe_max), p.rx_ffe_pre, len(p.dfe_max)
    L = p.levels
    var_x = (L ** 2 - 1) / (3.0 * (L - 1) ** 2)
    k_tx = 10 ** (-p.snr_tx_db / 10)
    k_j = var_x * (p.a_dd ** 2 + p.sigma_rj ** 2)
    w = 4 * m
    landscape = np.full((len(p.g_dc), len(p.g_dc2)), -np.inf)
    best = None
    n_eval = 0
    for i, gdc in enumerate(p.g_dc):
        for j, gdc2 in enumerate(p.g_dc2):
            if not p.ctle_allowed(gdc, gdc2):   # the sheet's G_Qual pairs
                continue
            wt = ctle_weights(gdc, gdc2)
            r_rx = rx_noise_acf(p.eta0, hr_f * (wt @ basis), grid.f, m, nw)
            p0 = wt @ base[0]
            t0 = phase_table(p0, m)
            N = t0.shape[1]
            acf_g = acf_rows(t0, nw)
            g_v = _pair_forms(t0, offs, nw, iu, mult)
            g_j = _pair_forms(slope_table(p0, m), offs, nw, iu, mult)
            acf_next = np.zeros(nw)
            g_fext = []
            for bv, k in zip(base[1:], kinds):
                a = wt @ bv
                if k == "next":
                    acf_next += var_x * acf(agg_samples(a, m)[1], nw)
                else:
                    g_fext.append(_pair_forms(phase_table(a, m), offs, nw, iu, mult))
            pk0 = int(np.argmax(p0))
            idx = pk0 + np.arange(-w, w + 1)
            S = np.stack([p0[(idx - k * m) % len(p0)] for k in offs])
            nn = np.arange(nb + 1)[:, None] - np.arange(nw)[None, :]
            dts = np.arange(-(m // 2), m // 2 + 1)
            foms = np.empty(len(C))
            top = None
            for s0 in range(0, len(C), chunk):
                c = C[s0:s0 + chunk]
                cc = CC[s0:s0 + chunk]
                rr = np.arange(len(c))
                av = (cc @ g_v).reshape(len(c), m, nw)
                aj = (cc @ g_j).reshape(len(c), m, nw)
                axt = np.tile(acf_next, (len(c), 1))
                for g in g_fext:
                    ga = (cc @ g).reshape(len(c), m, nw)
                    axt += var_x * ga[rr, np.argmax(ga[:, :, 0], axis=1)]
                rn_all = r_rx[None, None, :] + k_tx * acf_g[None] + k_j * aj + axt[:, None, :]
                kk = np.argmax(c @ S, axis=1)
                if (kk == 0).any() or (kk == S.shape[1] - 1).any():
                    raise RuntimeError("com: the TX FFE moved the pulse peak out of the search window")
                ts = idx[kk][:, None] + dts[None, :]                       # (R, T)
                dh, ph = np.divmod(ts, m)
                cols = ((dh + dw)[:, :, None, None, None] + nn[None, None, None]
                        - offs[None, None, :, None, None]) % N              # (R, T, K, nb+1, nw)
                rows = np.einsum("rk,rtkbi->rtbi", c, t0[ph[:, :, None, None, None], cols])
                fo, ww, bb = solve_rows_batch(
                    av[rr[:, None], ph].reshape(-1, nw),
                    rn_all[rr[:, None], ph].reshape(-1, nw),
                    rows.reshape(-1, nb + 1, nw), p)
                fo = fo.reshape(len(c), -1)
                kt = np.argmax(fo, axis=1)
                foms[s0:s0 + len(c)] = fo[rr, kt]
                ww = ww.reshape(len(c), -1, nw)
                bb = bb.reshape(len(c), -1, nb)
                r = int(np.argmax(fo[rr, kt]))         # keep this chunk's best only
                if top is None or fo[r, kt[r]] > top[3]:
                    top = (ww[r, kt[r]].copy(), bb[r, kt[r]].copy(), int(ts[r, kt[r]]),
                           float(fo[r, kt[r]]))
            n_eval += len(C)
            k = int(np.argmax(foms))
            landscape[i, j] = foms[k]
            if best is None or foms[k] > best.fom_db:
                w_k, b_k, ts_k, f_k = top
                sol = MmseSolution(float(f_k), float("nan"), w_k.copy(), b_k.copy(), ts_k)
                best = MmseBest(float(foms[k]), float(gdc), float(gdc2), C[k].copy(), sol,
                                landscape, foms.copy(), 0)
    best.n_evaluated = n_eval
    best.landscape = landscape
    return best
