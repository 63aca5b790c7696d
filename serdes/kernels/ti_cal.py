"""Background calibration kernel of a time-interleaved ADC (private ``_ti_cal_run``
behind the checking wrapper ``ti_cal_run``); the model is in serdes.dsp.ti_cal."""

import numpy as np
from numba import njit

from serdes.errors import ConfigError
from serdes.kernels import args


@njit(cache=True)
def _ti_cal_run(x, j0, off, gain, esum, ecount, ring, scal, h, mu, out):
    """Samples j0 .. j0 + n - 1 in, offset- and gain-corrected samples out (no delay).

    off, gain: per-lane estimates (V, factor), updated in place (LMS steps mu[0], mu[1]);
    esum, ecount: the skew detector y_{c-1} (y_c - y_{c-2}) summed per lane of c - 1;
    ring: the last 2K + 1 outputs; scal: [input power, R'(T) estimate] (running averages,
    step mu[2]); h: the K taps of the differentiator that estimates R'(T) = E[y_{c-1} y'_c]
    at the delayed sample c = j - K."""
    n_lanes = off.shape[0]
    K = h.shape[0]
    W = 2 * K + 1
    for i in range(x.shape[0]):
        j = j0 + i
        l = j % n_lanes
        d = x[i] - off[l]
        off[l] += mu[0] * d
        u = gain[l] * d
        scal[0] += mu[2] * (d * d - scal[0])
        if scal[0] > 0.0:
            gain[l] += mu[1] * gain[l] * (scal[0] - u * u) / scal[0]
        out[i] = u
        for q in range(W - 1):
            ring[q] = ring[q + 1]
        ring[W - 1] = u
        if j >= 2:
            lm = (j - 1) % n_lanes
            esum[lm] += ring[W - 2] * (u - ring[W - 3])
            ecount[lm] += 1.0
        if j >= W:
            dv = 0.0
            for q in range(K):
                dv += h[q] * (ring[K + 1 + q] - ring[K - 1 - q])
            scal[1] += mu[2] * (ring[K - 1] * dv - scal[1])
    return out


def ti_cal_run(x, j0, off, gain, esum, ecount, ring, scal, h, mu) -> np.ndarray:
    """One chunk of the background calibration (see _ti_cal_run); state updated in place."""
    x = args.array("x", x)
    off = args.state("off", off)
    lanes = off.shape[0]
    gain = args.state("gain", gain, size=lanes)
    esum = args.state("esum", esum, size=lanes)
    ecount = args.state("ecount", ecount, size=lanes)
    h = args.array("h", h, finite=True, min_len=1)
    ring = args.state("ring", ring, size=2 * h.shape[0] + 1)
    scal = args.state("scal", scal, size=2)
    mu = args.array("mu", mu, finite=True)
    if mu.shape[0] != 3:
        raise ConfigError("mu: expected 3 steps (offset, gain, averages)")
    j0 = args.integer("j0", j0)
    if j0 < 0:
        raise ConfigError(f"j0: the calibration starts at sample 0, got {j0}")
    return _ti_cal_run(x, j0, off, gain, esum, ecount, ring, scal, h, mu,
                       np.empty(x.shape[0]))
