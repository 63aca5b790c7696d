"""The waveform engine's ADC samples without forming the whole fine grid: a private
@njit kernel (``_sample_waveform``) behind its checking wrapper (``sample_waveform``).

The ADC reads the oversampled waveform w = sum_n a_n p(. - nT) + noise only at its
(jittered) sampling instants, by 4-point Lagrange interpolation of the fine samples
around each instant. Interpolation is linear, so the signal part equals the symbols
times the *interpolated pulse* (4 fine pulse samples per symbol-spaced tap instead of m
fine waveform samples per UI; as polyphase rows of the pulse, one contiguous dot
product per row), and the noise part needs the filtered noise only at the
few fine offsets of a UI that the instants can reach (``S``, one column per offset
residue, from :mod:`serdes.engines.wave_noise`). Same weights and samples as
interpolating the formed waveform; only the rounding of the sums differs.
"""

import numpy as np
from numba import njit

from serdes.errors import ConfigError
from serdes.kernels import args


@njit(cache=True, fastmath=True)
def _sample_waveform(a, a0, T, tdmin, jhi, phase, offs, u0, S, s0, col, noise):
    """x[k] = w(u m + phase + offs[k]) for UI u = u0 + k, w interpolated (4-point
    Lagrange) on the fine grid (m = ``col.shape[0]`` samples per UI).

    a       symbols, a[v - a0] of absolute UI v (zeros before the first symbol)
    T       polyphase rows of the pulse (:func:`polyphase_rows`): the signal at fine
            sample u m + d is sum_t a[u - jhi + t] T[d - tdmin, t]; each row is one
            contiguous dot product with a contiguous slice of symbols, which vectorizes
    offs    sampling offsets in fine samples
    S       filtered noise, S[v - s0, col[r]] at fine sample v m + r (used when ``noise``)
    """
    n = offs.shape[0]
    m = col.shape[0]
    nt = T.shape[1]
    x = np.empty(n, dtype=np.float64)
    for k in range(n):
        u = u0 + k
        pos = phase + offs[k]
        i = int(np.floor(pos))
        t = pos - i
        b = u - jhi - a0
        if t == 0.0:  # on the grid: the weights are exactly (0, 1, 0, 0)
            r = i - tdmin
            acc = 0.0
            for q in range(nt):
                acc += a[b + q] * T[r, q]
            if noise:
                acc += S[u + i // m - s0, col[i % m]]
        else:
            r = i - 1 - tdmin
            y0 = 0.0
            y1 = 0.0
            y2 = 0.0
            y3 = 0.0
            for q in range(nt):
                s = a[b + q]
                y0 += s * T[r, q]
                y1 += s * T[r + 1, q]
                y2 += s * T[r + 2, q]
                y3 += s * T[r + 3, q]
            if noise:
                d = i - 1
                y0 += S[u + d // m - s0, col[d % m]]
                y1 += S[u + (d + 1) // m - s0, col[(d + 1) % m]]
                y2 += S[u + (d + 2) // m - s0, col[(d + 2) % m]]
                y3 += S[u + (d + 3) // m - s0, col[(d + 3) % m]]
            acc = (-t * (t - 1.0) * (t - 2.0) / 6.0 * y0
                   + (t + 1.0) * (t - 1.0) * (t - 2.0) / 2.0 * y1
                   - (t + 1.0) * t * (t - 2.0) / 2.0 * y2
                   + (t + 1.0) * t * (t - 1.0) / 6.0 * y3)
        x[k] = acc
    return x


def polyphase_rows(p_fine, m, dmin, dmax):
    """(T, jhi): T[d - dmin, t] = p(d + (jhi - t) m) for fine offsets d = dmin..dmax of a
    UI (p = the fine pulse, zero outside its samples), t over every symbol-spaced tap
    that is nonzero for some d (from jhi down)."""
    p = args.array("p_fine", p_fine, finite=True, min_len=1)
    m = args.integer("m", m, lo=1)
    dmin, dmax = args.integer("dmin", dmin), args.integer("dmax", dmax, lo=dmin)
    jlo, jhi = -(dmax // m), (p.shape[0] - 1 - dmin) // m
    idx = np.arange(dmin, dmax + 1)[:, None] + (jhi - np.arange(jhi - jlo + 1)) * m
    ok = (idx >= 0) & (idx < p.shape[0])
    return np.ascontiguousarray(np.where(ok, p[np.where(ok, idx, 0)], 0.0)), jhi


def sample_waveform(a, a0, T, tdmin, jhi, phase, offs, u0, m, S=None, s0=0, col=None):
    """Waveform samples at u m + phase + offs[k] (fine samples) for UIs u0.. (see
    :func:`_sample_waveform`); every symbol, pulse row and noise sample the instants
    reach must be in ``a`` / ``T`` / ``S`` (checked here, once per call)."""
    m = args.integer("m", m, lo=1)
    phase = args.integer("phase", phase)
    a0, u0, s0, tdmin, jhi = (args.integer(k, v) for k, v in (
        ("a0", a0), ("u0", u0), ("s0", s0), ("tdmin", tdmin), ("jhi", jhi)))
    a = args.array("a", a)
    T = args.array("T", T, ndim=2)
    offs = args.array("offs", offs, finite=True)
    n = offs.shape[0]
    noise = S is not None
    S = args.array("S", S if noise else np.zeros((0, 0)), ndim=2)
    col = args.array("col", col if noise else np.zeros(m, np.int64), dtype=np.int64)
    if col.shape[0] != m:
        raise ConfigError(f"col: needs one entry per fine offset ({m}), got {col.shape[0]}")
    if n == 0:
        return np.empty(0)
    imin = int(np.floor(phase + offs.min()))
    imax = int(np.floor(phase + offs.max()))
    grid = bool(np.all(offs == np.floor(offs)))
    dlo, dhi = (imin, imax) if grid else (imin - 1, imax + 2)
    if dlo < tdmin or dhi >= tdmin + T.shape[0]:
        raise ConfigError(f"T: the instants reach fine offsets {dlo}..{dhi} of a UI, "
                          f"the pulse rows hold {tdmin}..{tdmin + T.shape[0] - 1}")
    lo, hi = u0 - jhi, u0 + n - 1 - jhi + T.shape[1] - 1
    if lo - a0 < 0 or hi - a0 >= a.shape[0]:
        raise ConfigError(f"a: the instants need the symbols of UIs {lo}..{hi}, "
                          f"the array holds {a0}..{a0 + a.shape[0] - 1}")
    if noise:
        need = np.arange(dlo, dhi + 1) % m
        if np.any(col[need] < 0) or np.any(col[need] >= S.shape[1]):
            raise ConfigError(f"S: the instants reach fine offsets {dlo}..{dhi} of a UI, "
                              f"not all of them are columns of S")
        rlo, rhi = u0 + dlo // m, u0 + n - 1 + dhi // m
        if rlo - s0 < 0 or rhi - s0 >= S.shape[0]:
            raise ConfigError(f"S: the instants need the noise of UIs {rlo}..{rhi}, "
                              f"S holds {s0}..{s0 + S.shape[0] - 1}")
    return _sample_waveform(a, a0, T, tdmin, jhi, phase, offs, u0, S, s0, col, noise)
