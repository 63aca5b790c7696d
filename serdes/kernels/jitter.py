"""Jittered pulse sums: private @njit kernels behind checking public wrappers, and the
NumPy helpers that prepare their tables and bound their error.

y_k = sum_j a_{k-j} p(jT + phi + d_k) with a sampling offset d_k per sample.

- Exact ("rows"): 4-point Lagrange interpolation of the fine-grid pulse, as
  :func:`serdes.kernels.fir.pulse_sum_jitter`, rearranged as
  y_k = sum_q w_q(t_k) sum_j a_{k-j} p[i_k + q - 1 + j m]: each inner sum is a contiguous
  dot product with one polyphase row of the pulse, four independent accumulators.
- Taylor-2: y_k = A0_k + d_k A1_k + d_k^2 / 2 A2_k with A_r = sum_j a_{k-j} p^(r)(jT + phi + s)
  three FIRs over the symbols. ``s`` is a slow offset (sinusoidal and dual-Dirac jitter)
  held per segment of samples, for which the taps are re-sampled; d_k is what remains.
  :func:`taylor_error_bound` bounds |Taylor - exact| per sample; the pulse engine takes
  the expansion only when that bound is small against the noise.

Offsets and derivatives are in fine samples (m per UI).
"""

import numpy as np

from serdes.errors import ConfigError
from serdes.kernels import args
from serdes.kernels.fir import interp_cubic
from serdes.kernels.jit import njit


@njit(cache=True, fastmath=True, inline="always")
def _lagrange_rows(a, k, r0, r1, r2, r3, t):
    """sum_q w_q(t) sum_j a[k + j] r_q[j]: the 4-point Lagrange weights at t in [0, 1)
    (nodes -1, 0, 1, 2) on four dot products with consecutive polyphase rows, four
    independent accumulators; inlined into both exact kernels below."""
    c0 = 0.0
    c1 = 0.0
    c2 = 0.0
    c3 = 0.0
    for j in range(r0.shape[0]):
        v = a[k + j]
        c0 += v * r0[j]
        c1 += v * r1[j]
        c2 += v * r2[j]
        c3 += v * r3[j]
    return (-t * (t - 1.0) * (t - 2.0) / 6.0 * c0
            + (t + 1.0) * (t - 1.0) * (t - 2.0) / 2.0 * c1
            - (t + 1.0) * t * (t - 2.0) / 2.0 * c2
            + (t + 1.0) * t * (t - 1.0) / 6.0 * c3)


@njit(cache=True, fastmath=True, inline="always")
def _row_at(pos, first, n_rows):
    """(r, t): the first of the four rows around fine position ``pos`` and the fraction
    past the second, the integer position clipped to the rows held (as the fine-grid
    kernel clips to its padded pulse)."""
    i = int(np.floor(pos))
    if i < first + 1:
        i = first + 1
    elif i > first + n_rows - 3:
        i = first + n_rows - 3
    return i - 1 - first, pos - i


@njit(cache=True, fastmath=True)
def _pulse_sum_rows(a, rows, first, phase, offsets):
    """Exact jittered pulse sum from polyphase rows.

    rows[r, i] = p_fine[first + r + (n_ui - 1 - i) * m] (taps reversed so the symbol
    window runs forward); a carries n_ui - 1 symbols of history.
    """
    n_rows, n_ui = rows.shape
    n = a.shape[0] - n_ui + 1
    y = np.empty(max(n, 0), dtype=np.float64)
    for k in range(n):
        r, t = _row_at(phase + offsets[k], first, n_rows)
        y[k] = _lagrange_rows(a, k, rows[r], rows[r + 1], rows[r + 2], rows[r + 3], t)
    return y


@njit(cache=True, fastmath=True)
def _lane_pulse_sum_rows(a, rows, first, phase, offsets, lane0):
    """_pulse_sum_rows with the rows of lane l = (lane0 + k) mod N for sample k (the
    time-interleaved ADC, serdes.kernels.adc_ti): rows[l, r, i] =
    p_l[first + r + (n_ui - 1 - i) m]. A kernel of its own: run with one lane, the
    lane bookkeeping cost the single converter 6-8 % of CPU time."""
    n_lanes, n_rows, n_ui = rows.shape
    n = a.shape[0] - n_ui + 1
    y = np.empty(max(n, 0), dtype=np.float64)
    lane = lane0
    for k in range(n):
        r, t = _row_at(phase + offsets[k], first, n_rows)
        y[k] = _lagrange_rows(a, k, rows[lane, r], rows[lane, r + 1], rows[lane, r + 2],
                              rows[lane, r + 3], t)
        lane += 1
        if lane == n_lanes:
            lane = 0
    return y


@njit(cache=True, fastmath=True)
def _pulse_sum_taylor(a, t0, t1, t2, delta):
    """y_k = A0 + d_k (A1 + d_k / 2 A2), A_r = sum_i a[k + i] t_r[i] (reversed taps).

    a carries n_ui - 1 symbols of history in front and 3 spare values at the end: four
    outputs are formed at once (12 accumulators; each loaded symbol feeds 12
    multiply-adds, about 3x the cost of one FIR) and every output, whichever of the four
    lanes it falls in, is summed the same way, so chunked runs stay bit-identical (test).
    """
    n_ui = t0.shape[0]
    n = delta.shape[0]
    y = np.empty(n + 3, dtype=np.float64)
    k = 0
    while k < n:
        c00 = 0.0
        c01 = 0.0
        c02 = 0.0
        c03 = 0.0
        c10 = 0.0
        c11 = 0.0
        c12 = 0.0
        c13 = 0.0
        c20 = 0.0
        c21 = 0.0
        c22 = 0.0
        c23 = 0.0
        for i in range(n_ui):
            x0 = t0[i]
            x1 = t1[i]
            x2 = t2[i]
            v0 = a[k + i]
            v1 = a[k + i + 1]
            v2 = a[k + i + 2]
            v3 = a[k + i + 3]
            c00 += x0 * v0
            c01 += x0 * v1
            c02 += x0 * v2
            c03 += x0 * v3
            c10 += x1 * v0
            c11 += x1 * v1
            c12 += x1 * v2
            c13 += x1 * v3
            c20 += x2 * v0
            c21 += x2 * v1
            c22 += x2 * v2
            c23 += x2 * v3
        y[k] = c00 + delta[k] * (c10 + 0.5 * delta[k] * c20)
        if k + 3 < n:
            y[k + 1] = c01 + delta[k + 1] * (c11 + 0.5 * delta[k + 1] * c21)
            y[k + 2] = c02 + delta[k + 2] * (c12 + 0.5 * delta[k + 2] * c22)
            y[k + 3] = c03 + delta[k + 3] * (c13 + 0.5 * delta[k + 3] * c23)
        else:
            if k + 1 < n:
                y[k + 1] = c01 + delta[k + 1] * (c11 + 0.5 * delta[k + 1] * c21)
            if k + 2 < n:
                y[k + 2] = c02 + delta[k + 2] * (c12 + 0.5 * delta[k + 2] * c22)
        k += 4
    return y[:n]


@njit(cache=True)
def _rj_offsets(z, rj, m, neg):
    """Random-jitter offsets in fine samples: 0 for the first ``neg`` outputs (instants
    before the first symbol), then clip(rj z, -8 rj, 8 rj) m with z[k - neg]. One pass
    with the operations of the NumPy form (zeros, += clip, times m) in the same order and
    no fastmath, so the values are the same to the bit (test)."""
    n = neg + z.shape[0]
    out = np.empty(n, dtype=np.float64)
    lo = -8 * rj
    hi = 8 * rj
    mf = float(m)
    for k in range(neg):
        out[k] = 0.0 * mf
    for k in range(z.shape[0]):
        v = rj * z[k]
        if v < lo:
            v = lo
        elif v > hi:
            v = hi
        out[neg + k] = (0.0 + v) * mf
    return out


# ------------------------------------------------------------------ NumPy helpers
def pulse_rows(p_fine, m: int, n_ui: int, first: int, count: int) -> np.ndarray:
    """The polyphase rows of :func:`_pulse_sum_rows`: rows[r, i] =
    p_fine[first + r + (n_ui - 1 - i) m], r = 0 .. count - 1."""
    p_fine = args.array("p_fine", p_fine)
    if first < 0 or first + count - 1 + (n_ui - 1) * m >= p_fine.shape[0] or count < 4:
        raise ConfigError(f"pulse_rows: rows {first}..{first + count - 1} of {n_ui} UI "
                          f"(m = {m}) do not fit in {p_fine.shape[0]} fine samples")
    idx = first + np.arange(count)[:, None] + (n_ui - 1 - np.arange(n_ui))[None, :] * m
    return np.ascontiguousarray(p_fine[idx])


def derivatives(p_fine) -> np.ndarray:
    """(3, L): the fine pulse, its first and second derivative per fine sample (5-point
    central differences, error h^4/30 p^(5) and h^4/90 p^(6); zero outside)."""
    f = np.concatenate([np.zeros(2), args.array("p_fine", p_fine), np.zeros(2)])
    d1 = (-f[4:] + 8 * f[3:-1] - 8 * f[1:-3] + f[:-4]) / 12.0
    d2 = (-f[4:] + 16 * f[3:-1] - 30 * f[2:-2] + 16 * f[1:-3] - f[:-4]) / 12.0
    return np.ascontiguousarray(np.stack([f[2:-2], d1, d2]))


def _window_max_sum(d, centres, half):
    """sum over centres c of max |d| over indices c - half .. c + half (zero where the
    window misses d), summed in the centres' order."""
    ad = np.concatenate([np.zeros(2 * half), np.abs(d), np.zeros(2 * half)])
    win = np.lib.stride_tricks.sliding_window_view(ad, 2 * half + 1)
    c = np.asarray(centres, dtype=np.int64)
    inside = (c >= -half) & (c < d.shape[0] + half)
    peaks = np.zeros(c.shape[0])
    peaks[inside] = win[c[inside] + half].max(axis=1)
    total = 0.0
    for v in peaks.tolist():
        total += v
    return total


def taylor_error_bound(p_fine, m: int, phase: float, n_ui: int, delta_max: float,
                       slow_max: float, a_max: float) -> float:
    """A bound on |Taylor-2 - exact| for one sample, offsets in fine samples.

    |d_k| <= delta_max around slow offsets |s| <= slow_max, |a| <= a_max. Terms, each as
    a_max times a sum over the taps of the largest n-th difference of the fine pulse
    within reach of the tap (|p^(n)| per fine sample^n, up to O(h) in the differences):
    the third-order remainder delta^3 / 6 |p'''|; the 4-point Lagrange error
    (9/16) / 4! |p''''| of the exact kernel and of the re-sampled Taylor taps (p, and p',
    p'' weighted by delta, delta^2 / 2); the difference errors of p' (|p^(5)| / 30) and p''
    (|p^(6)| / 90) weighted the same way.
    """
    p = args.array("p_fine", p_fine)
    half = int(np.ceil(slow_max + delta_max)) + 2
    centres = [int(round(phase)) + j * m for j in range(n_ui)]
    w = {n: _window_max_sum(np.diff(p, n), [c - n // 2 for c in centres], half)
         for n in (3, 4, 5, 6)}
    lag = 9.0 / 16.0 / 24.0
    d = float(delta_max)
    e3 = d ** 3 / 6.0 * w[3]
    e_interp = lag * (2 * w[4] + d * w[5] + d * d / 2 * w[6])
    e_diff = d * w[5] / 30.0 + d * d / 2 * w[6] / 90.0
    return float(a_max) * (e3 + e_interp + e_diff)


# ------------------------------------------------------------------ public wrappers
def pulse_sum_rows(a, rows, first, phase, offsets) -> np.ndarray:
    """Exact jittered pulse sum from :func:`pulse_rows` (see :func:`_pulse_sum_rows`)."""
    rows = args.array("rows", rows, ndim=2)
    if rows.shape[0] < 4:
        raise ConfigError(f"rows: need at least 4 polyphase rows, got {rows.shape[0]}")
    n_ui = rows.shape[1]
    a = args.array("a", a, min_len=n_ui - 1)
    offsets = args.array("offsets", offsets)
    n = a.shape[0] - n_ui + 1
    if offsets.shape[0] != n:
        raise ConfigError(f"offsets: needs one value per output ({n}), got {offsets.shape[0]}")
    return _pulse_sum_rows(a, rows, args.integer("first", first, lo=0),
                           args.real("phase", phase), offsets)


def taylor_taps(derivs, phase, m, n_ui, slow) -> np.ndarray:
    """(S, 3, n_ui) reversed taps of p, p', p'' at phase + slow[s] + j m:
    taps[s, r, n_ui - 1 - j] = derivs[r] at phase + slow[s] + j m (4-point Lagrange, zero
    outside, :func:`serdes.kernels.fir.interp_cubic`: a kernel every run loads anyway,
    so a jittered run loads no kernel of its own for this set-up step)."""
    derivs = args.array("derivs", derivs, ndim=2)
    if derivs.shape[0] != 3:
        raise ConfigError(f"derivs: expected 3 rows (p, p', p''), got {derivs.shape[0]}")
    phase = args.real("phase", phase)
    m = args.integer("m", m, lo=1)
    n_ui = args.integer("n_ui", n_ui, lo=1)
    slow = args.array("slow", slow)
    pos = (phase + slow[:, None]) + (np.arange(n_ui) * m).astype(np.float64)[None, :]
    taps = np.empty((slow.shape[0], 3, n_ui), dtype=np.float64)
    for r in range(3):
        vals = interp_cubic(derivs[r], pos.reshape(-1)).reshape(slow.shape[0], n_ui)
        taps[:, r, :] = vals[:, ::-1]
    return taps


def pulse_sum_taylor(a, taps, seg, delta) -> np.ndarray:
    """Taylor-2 jittered pulse sum: outputs seg[s] .. seg[s + 1] - 1 with the reversed
    tap sets taps[s] = (p, p', p'') (see :func:`_pulse_sum_taylor`); a carries
    n_ui - 1 symbols of history. One kernel call per segment (a Python loop: segments
    are 1024 UI long, so the loop costs a few ns per sample at most)."""
    taps = args.array("taps", taps, ndim=3)
    if taps.shape[1] != 3:
        raise ConfigError(f"taps: expected (segments, 3, n_ui), got shape {taps.shape}")
    n_ui = taps.shape[2]
    a = args.array("a", a, min_len=n_ui - 1)
    n = a.shape[0] - n_ui + 1
    seg = np.ascontiguousarray(seg, dtype=np.int64)
    if seg.shape != (taps.shape[0] + 1,) or seg[0] != 0 or seg[-1] != n \
            or np.any(np.diff(seg) < 0):
        raise ConfigError(f"seg: expected {taps.shape[0] + 1} rising bounds from 0 to {n}")
    delta = args.array("delta", delta)
    if delta.shape[0] != n:
        raise ConfigError(f"delta: needs one value per output ({n}), got {delta.shape[0]}")
    a = np.concatenate([a, np.zeros(3)])
    if taps.shape[0] == 1:
        return _pulse_sum_taylor(a, taps[0, 0], taps[0, 1], taps[0, 2], delta)
    y = np.empty(n)
    for s in range(taps.shape[0]):
        lo, hi = int(seg[s]), int(seg[s + 1])
        if hi > lo:
            y[lo:hi] = _pulse_sum_taylor(a[lo:hi + n_ui + 2], taps[s, 0], taps[s, 1],
                                         taps[s, 2], delta[lo:hi])
    return y


def rj_offsets(z, rj, m, neg) -> np.ndarray:
    """Random-jitter offsets in fine samples from standard normals ``z`` (see
    :func:`_rj_offsets`): ``neg`` zeros, then one value per normal."""
    return _rj_offsets(args.array("z", z), args.real("rj", rj), args.integer("m", m, lo=1),
                       args.integer("neg", neg, lo=0))
