"""FIR and pulse-sum kernels: private @njit kernels (``_name``) behind public wrappers
(``name``) that check and convert their arguments (see serdes.kernels.args).

Conventions: an input ``x`` carries ``len(taps) - 1`` samples of history in front, and
the output has ``len(x) - len(taps) + 1`` samples ("valid" convolution), so that a
stream processed in chunks gives exactly the same samples as one piece.
"""

import numpy as np

from serdes.errors import ConfigError
from serdes.kernels import args
from serdes.kernels.jit import njit


@njit(cache=True, fastmath=True)
def _fir_valid(x, taps):
    """y[k] = sum_j taps[j] * x[k + L - 1 - j] for k = 0 .. len(x) - L.

    The taps are reversed once so that the inner loop runs forward over contiguous
    memory and vectorizes; every output uses the same summation order whatever the
    chunking, so chunked runs stay bit-identical.
    """
    L = taps.shape[0]
    n = x.shape[0] - L + 1
    y = np.empty(max(n, 0), dtype=np.float64)
    rev = taps[::-1].copy()
    for k in range(n):
        acc = 0.0
        for j in range(L):
            acc += rev[j] * x[k + j]
        y[k] = acc
    return y


@njit(cache=True)
def _cubic(p, pos):
    """4-point Lagrange interpolation of p at fractional index pos (zero outside)."""
    i = int(np.floor(pos))
    t = pos - i
    n = p.shape[0]
    y0 = p[i - 1] if 0 <= i - 1 < n else 0.0
    y1 = p[i] if 0 <= i < n else 0.0
    y2 = p[i + 1] if 0 <= i + 1 < n else 0.0
    y3 = p[i + 2] if 0 <= i + 2 < n else 0.0
    return (-t * (t - 1.0) * (t - 2.0) / 6.0 * y0 + (t + 1.0) * (t - 1.0) * (t - 2.0) / 2.0 * y1
            - (t + 1.0) * t * (t - 2.0) / 2.0 * y2 + (t + 1.0) * t * (t - 1.0) / 6.0 * y3)


@njit(cache=True)
def _pulse_sum_jitter(a, p_fine, m, phase, offsets, n_ui):
    """Samples of sum_n a_n p(kT + phi + j_k - nT) with a jittered sampling instant.

    a       symbols with n_ui - 1 of history in front
    p_fine  pulse response on the fine grid, m samples per UI, zero-padded so that
            every jittered position stays inside; p_fine[phase + j*m] is the j-th
            symbol-spaced sample without jitter
    offsets the sampling-time offset of each output sample, in fine samples

    All taps of one sample share the fractional position, so the 4-point Lagrange
    weights are computed once per sample.
    """
    n = a.shape[0] - n_ui + 1
    y = np.empty(max(n, 0), dtype=np.float64)
    last = p_fine.shape[0] - 3 - (n_ui - 1) * m
    for k in range(n):
        pos = phase + offsets[k]
        i = int(np.floor(pos))
        if i < 1:
            i = 1
        elif i > last:
            i = last
        t = pos - i
        w0 = -t * (t - 1.0) * (t - 2.0) / 6.0
        w1 = (t + 1.0) * (t - 1.0) * (t - 2.0) / 2.0
        w2 = -(t + 1.0) * t * (t - 2.0) / 2.0
        w3 = (t + 1.0) * t * (t - 1.0) / 6.0
        acc = 0.0
        top = k + n_ui - 1
        for j in range(n_ui):
            q = i + j * m
            acc += a[top - j] * (w0 * p_fine[q - 1] + w1 * p_fine[q] + w2 * p_fine[q + 1]
                                 + w3 * p_fine[q + 2])
        y[k] = acc
    return y


@njit(cache=True)
def _interp_cubic(p, positions):
    """p interpolated at fractional indices (4-point Lagrange, zero outside)."""
    out = np.empty(positions.shape[0], dtype=np.float64)
    for i in range(positions.shape[0]):
        out[i] = _cubic(p, positions[i])
    return out


@njit(cache=True)
def _upsample_pulse_sum(a, p_fine, m, n_ui):
    """Oversampled waveform sum_n a_n p(t - nT) at t = (k*m + r) dt, r = 0..m-1.

    a carries n_ui - 1 symbols of history; p_fine has n_ui * m samples.
    """
    n = a.shape[0] - n_ui + 1
    w = np.zeros(max(n, 0) * m, dtype=np.float64)
    for k in range(n):
        top = k + n_ui - 1
        for j in range(n_ui):
            s = a[top - j]
            if s == 0.0:
                continue
            off = j * m
            for r in range(m):
                w[k * m + r] += s * p_fine[off + r]
    return w


@njit(cache=True)
def _upsample_pulse_sum_shifted(a, shift, p_pad, pad, m, n_ui):
    """Oversampled waveform sum_n a_n p(t - nT - tau_n) at t = (k*m + r) dt: each
    symbol's pulse moved by its own ``shift`` = tau_n / dt (fine samples), 4-point
    Lagrange interpolation of the fine pulse (the weights once per symbol and tap).

    a, shift: symbols and their shifts with n_ui - 1 of history in front; p_pad: the
    fine pulse (n_ui * m samples) with ``pad`` zeros on each side, pad > |shift| + 2.
    """
    n = a.shape[0] - n_ui + 1
    w = np.zeros(max(n, 0) * m, dtype=np.float64)
    for k in range(n):
        top = k + n_ui - 1
        for j in range(n_ui):
            s = a[top - j]
            if s == 0.0:
                continue
            pos = pad + j * m - shift[top - j]
            i = int(np.floor(pos))
            t = pos - i
            w0 = -s * t * (t - 1.0) * (t - 2.0) / 6.0
            w1 = s * (t + 1.0) * (t - 1.0) * (t - 2.0) / 2.0
            w2 = -s * (t + 1.0) * t * (t - 2.0) / 2.0
            w3 = s * (t + 1.0) * t * (t - 1.0) / 6.0
            for r in range(m):
                q = i + r
                w[k * m + r] += (w0 * p_pad[q - 1] + w1 * p_pad[q] + w2 * p_pad[q + 1]
                                 + w3 * p_pad[q + 2])
    return w


# ------------------------------------------------------------------ public wrappers
def fir_valid(x, taps) -> np.ndarray:
    """"Valid" FIR of x (len(taps) - 1 samples of history in front) by taps."""
    taps = args.array("taps", taps, finite=True, min_len=1)
    return _fir_valid(args.array("x", x), taps)


def pulse_sum_jitter(a, p_fine, m, phase, offsets, n_ui) -> np.ndarray:
    """sum_n a_n p(kT + phase + offsets_k - nT) (see :func:`_pulse_sum_jitter`)."""
    m = args.integer("m", m, lo=1)
    n_ui = args.integer("n_ui", n_ui, lo=1)
    a = args.array("a", a, min_len=n_ui - 1)
    p_fine = args.array("p_fine", p_fine)
    if p_fine.shape[0] - 3 - (n_ui - 1) * m < 1:
        raise ConfigError(f"p_fine: {p_fine.shape[0]} samples cannot hold {n_ui} UI of "
                          f"{m} samples plus 4 interpolation points")
    offsets = args.array("offsets", offsets)
    n = a.shape[0] - n_ui + 1
    if offsets.shape[0] != n:
        raise ConfigError(f"offsets: needs one value per output ({n}), got {offsets.shape[0]}")
    return _pulse_sum_jitter(a, p_fine, m, args.real("phase", phase), offsets, n_ui)


def interp_cubic(p, positions) -> np.ndarray:
    """p at fractional indices ``positions`` (4-point Lagrange, zero outside)."""
    return _interp_cubic(args.array("p", p), args.array("positions", positions))


def upsample_pulse_sum(a, p_fine, m, n_ui, shift=None) -> np.ndarray:
    """Oversampled waveform sum_n a_n p(t - nT), m samples per UI; with ``shift`` (one
    per symbol, fine samples) sum_n a_n p(t - nT - shift_n dt): each symbol's own
    transmit-time offset (TX jitter), the pulse interpolated (4-point Lagrange, zero
    outside its n_ui * m samples)."""
    m = args.integer("m", m, lo=1)
    n_ui = args.integer("n_ui", n_ui, lo=1)
    p_fine = args.array("p_fine", p_fine, min_len=n_ui * m)
    a = args.array("a", a, min_len=n_ui - 1)
    if shift is None:
        return _upsample_pulse_sum(a, p_fine, m, n_ui)
    shift = args.array("shift", shift, finite=True)
    if shift.shape != a.shape:
        raise ValueError(f"shift: {shift.shape[0]} values for {a.shape[0]} symbols")
    pad = int(np.ceil(np.max(np.abs(shift), initial=0.0))) + 3
    p_pad = np.zeros(n_ui * m + 2 * pad)
    p_pad[pad:pad + n_ui * m] = p_fine[:n_ui * m]
    return _upsample_pulse_sum_shifted(a, shift, p_pad, pad, m, n_ui)
