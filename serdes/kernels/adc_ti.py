"""Time-interleaved ADC kernels: per-lane conversion and per-lane pulse sums (private
@njit kernels behind checking public wrappers). Sample k belongs to lane
(lane0 + k) mod N."""

import numpy as np
from numba import njit

from serdes.errors import ConfigError
from serdes.kernels import args
from serdes.kernels.jitter import _lane_pulse_sum_rows


@njit(cache=True)
def _lane_convert(x, noise, gains, offsets, lane0, lsb, bits):
    """y_k = Q(g_l x_k + o_l + noise_k) with l = (lane0 + k) mod N; the mid-rise
    quantizer of serdes.kernels.adc (bits = 0: none). ``noise`` is empty or len(x)."""
    n_lanes = gains.shape[0]
    top = (1 << (bits - 1)) - 1 if bits > 0 else 0
    bot = -(1 << (bits - 1)) if bits > 0 else 0
    y = np.empty(x.shape[0], dtype=np.float64)
    has_noise = noise.shape[0] == x.shape[0]
    lane = lane0
    for k in range(x.shape[0]):
        v = gains[lane] * x[k] + offsets[lane]
        if has_noise:
            v += noise[k]
        if bits > 0:
            c = np.floor(v / lsb)
            if c > top:
                c = top
            elif c < bot:
                c = bot
            v = (c + 0.5) * lsb
        y[k] = v
        lane += 1
        if lane == n_lanes:
            lane = 0
    return y


@njit(cache=True, fastmath=True)
def _lane_fir(a, taps, lane0):
    """y_k = sum_i a[k + i] taps[l, i], l = (lane0 + k) mod N (taps reversed; a carries
    n_ui - 1 symbols of history)."""
    n_lanes, n_ui = taps.shape
    n = a.shape[0] - n_ui + 1
    y = np.empty(max(n, 0), dtype=np.float64)
    lane = lane0
    for k in range(n):
        t = taps[lane]
        c = 0.0
        for i in range(n_ui):
            c += a[k + i] * t[i]
        y[k] = c
        lane += 1
        if lane == n_lanes:
            lane = 0
    return y


@njit(cache=True, fastmath=True)
def _lane_pulse_sum_taylor(a, taps, delta, lane0):
    """Taylor-2 per lane: y_k = A0 + d_k (A1 + d_k / 2 A2), A_r = sum_i a[k + i]
    taps[l, r, i] (reversed taps of p_l, p_l', p_l'' at the lane's static instant),
    l = (lane0 + k) mod N; three accumulators against the exact kernel's four, and the
    lanes' tap sets (3 n_ui per lane) stay in cache where the exact kernel's rows do not."""
    n_lanes = taps.shape[0]
    n_ui = taps.shape[2]
    n = a.shape[0] - n_ui + 1
    y = np.empty(max(n, 0), dtype=np.float64)
    lane = lane0
    for k in range(n):
        t0 = taps[lane, 0]
        t1 = taps[lane, 1]
        t2 = taps[lane, 2]
        c0 = 0.0
        c1 = 0.0
        c2 = 0.0
        for i in range(n_ui):
            v = a[k + i]
            c0 += v * t0[i]
            c1 += v * t1[i]
            c2 += v * t2[i]
        d = delta[k]
        y[k] = c0 + d * (c1 + 0.5 * d * c2)
        lane += 1
        if lane == n_lanes:
            lane = 0
    return y


def lane_convert(x, noise, gains, offsets, lane0, lsb, bits) -> np.ndarray:
    """Per-lane gain, offset, noise and quantization (see _lane_convert)."""
    x = args.array("x", x)
    noise = args.array("noise", noise)
    if noise.shape[0] not in (0, x.shape[0]):
        raise ConfigError(f"noise: needs 0 or {x.shape[0]} values, got {noise.shape[0]}")
    gains = args.array("gains", gains, finite=True, min_len=1)
    offsets = args.array("offsets", offsets, finite=True, min_len=1)
    if offsets.shape[0] != gains.shape[0]:
        raise ConfigError("offsets: one per lane, as gains")
    bits = args.integer("bits", bits, lo=0, hi=62)
    lsb = args.real("lsb", lsb, positive=bits > 0, nonneg=True)
    return _lane_convert(x, noise, gains, offsets,
                         args.integer("lane0", lane0, lo=0, hi=gains.shape[0] - 1), lsb, bits)


def lane_fir(a, taps, lane0) -> np.ndarray:
    """Per-lane symbol FIR (see _lane_fir)."""
    taps = args.array("taps", taps, ndim=2, finite=True)
    a = args.array("a", a, min_len=taps.shape[1] - 1)
    return _lane_fir(a, taps, args.integer("lane0", lane0, lo=0, hi=taps.shape[0] - 1))


def lane_pulse_sum_rows(a, rows, first, phase, offsets, lane0) -> np.ndarray:
    """Per-lane exact jittered pulse sum (see serdes.kernels.jitter._lane_pulse_sum_rows)."""
    rows = args.array("rows", rows, ndim=3, finite=True)
    if rows.shape[1] < 4:
        raise ConfigError(f"rows: need at least 4 rows per lane, got {rows.shape[1]}")
    a = args.array("a", a, min_len=rows.shape[2] - 1)
    offsets = args.array("offsets", offsets, finite=True)
    if offsets.shape[0] != a.shape[0] - rows.shape[2] + 1:
        raise ConfigError("offsets: one per output sample")
    return _lane_pulse_sum_rows(a, rows, args.integer("first", first), args.real("phase", phase),
                                offsets, args.integer("lane0", lane0, lo=0,
                                                      hi=rows.shape[0] - 1))


def lane_pulse_sum_taylor(a, taps, delta, lane0) -> np.ndarray:
    """Per-lane Taylor-2 jittered pulse sum (see _lane_pulse_sum_taylor); ``taps`` is
    (lanes, 3, n_ui), ``delta`` the offsets (fine samples) from each lane's instant."""
    taps = args.array("taps", taps, ndim=3, finite=True)
    if taps.shape[1] != 3:
        raise ConfigError(f"taps: expected (lanes, 3, n_ui), got shape {taps.shape}")
    a = args.array("a", a, min_len=taps.shape[2] - 1)
    delta = args.array("delta", delta, finite=True)
    if delta.shape[0] != a.shape[0] - taps.shape[2] + 1:
        raise ConfigError("delta: one per output sample")
    return _lane_pulse_sum_taylor(a, taps, delta,
                                  args.integer("lane0", lane0, lo=0, hi=taps.shape[0] - 1))
