"""Background calibration kernel of a time-interleaved ADC (private ``_ti_cal_run``
behind the checking wrapper ``ti_cal_run``); the model is in serdes.dsp.ti_cal."""

import numpy as np
from numba import njit

from serdes.errors import ConfigError
from serdes.kernels import args


@njit(cache=True)
def _ti_cal_run(x, j0, off, gain, skew, ring, scal, h, mu, out):
    """Samples j0 .. j0 + n - 1 in, corrected samples j0 - K .. j0 + n - 1 - K out.

    off, gain, skew: per-lane estimates (V, factor, UI), updated in place; ring: the last
    2K + 1 offset/gain-corrected samples and (from index 2K + 1) the last 3 outputs;
    scal: [input power, R'(T) estimate]; h: the K differentiator taps; mu: the steps
    (offset, gain, skew, power/slope averages)."""
    n_lanes = off.shape[0]
    K = h.shape[0]
    W = 2 * K + 1
    for i in range(x.shape[0]):
        j = j0 + i
        l = j % n_lanes
        d = x[i] - off[l]
        off[l] += mu[0] * d
        u = gain[l] * d
        scal[0] += mu[3] * (d * d - scal[0])
        if scal[0] > 0.0:
            gain[l] += mu[1] * gain[l] * (scal[0] - u * u) / scal[0]
        for q in range(W - 1):
            ring[q] = ring[q + 1]
        ring[W - 1] = u
        # the centre sample c = j - K and its derivative (per UI) from K samples each side
        c = j - K
        lc = c % n_lanes
        dv = 0.0
        for q in range(K):
            dv += h[q] * (ring[K + 1 + q] - ring[K - 1 - q])
        y = ring[K] - skew[lc] * dv
        out[i] = y
        # outputs c-2, c-1, c: the lag-1 correlations on each side of lane (c-1)
        ring[W] = ring[W + 1]
        ring[W + 1] = ring[W + 2]
        ring[W + 2] = y
        if c >= 2:
            scal[1] += mu[3] * (ring[W + 1] * dv - scal[1])
            if abs(scal[1]) > 1e-3 * scal[0]:
                e = ring[W + 1] * (ring[W + 2] - ring[W])
                lm = (c - 1) % n_lanes
                skew[lm] -= mu[2] * e / (2.0 * scal[1])
    return out


def ti_cal_run(x, j0, off, gain, skew, ring, scal, h, mu) -> np.ndarray:
    """One chunk of the background calibration (see _ti_cal_run); state updated in place."""
    x = args.array("x", x)
    off = args.state("off", off)
    lanes = off.shape[0]
    gain = args.state("gain", gain, size=lanes)
    skew = args.state("skew", skew, size=lanes)
    h = args.array("h", h, finite=True, min_len=1)
    ring = args.state("ring", ring, size=2 * h.shape[0] + 4)
    scal = args.state("scal", scal, size=2)
    mu = args.array("mu", mu, finite=True)
    if mu.shape[0] != 4:
        raise ConfigError("mu: expected 4 steps (offset, gain, skew, averages)")
    j0 = args.integer("j0", j0)
    if j0 < 0:
        raise ConfigError(f"j0: the calibration starts at sample 0, got {j0}")
    return _ti_cal_run(x, j0, off, gain, skew, ring, scal, h, mu, np.empty(x.shape[0]))
