"""Fibonacci LFSR kernel for PRBS bit streams.

Model: y[i] = XOR over taps t of y[i - t], i.e. the generator polynomial
1 + sum_t x^t with x^t a delay of t bits (the ITU-T O.150 / IEEE 802.3
convention).  The register is a non-negative integer whose bit k-1 holds
y[i - k] (bit 0 = most recent output), so a state holds the last `order`
outputs and the next output is the feedback bit itself.

The kernel emits c = min(taps) bits per step: y[i .. i+c-1] only depend on
bits already in the register, so they are formed with one shift and XOR per
tap instead of one loop iteration per bit.
"""

import numpy as np

from serdes.errors import ConfigError
from serdes.kernels import args
from serdes.kernels.jit import njit


@njit(cache=True)
def _lfsr_fill(out, state, order, taps):
    """Fill `out` (uint8) with the next len(out) bits; return the new state.

    state: int64 register (bit k-1 = y[i-k]), order: register length,
    taps: int64 array of delays, each in 1..order, with max(taps) == order.
    Requires order + min(taps) <= 62 so the shifted register fits in int64.
    """
    n = out.shape[0]
    c = taps[0]
    for k in range(taps.shape[0]):
        if taps[k] < c:
            c = taps[k]
    mask = (np.int64(1) << order) - 1
    cmask = (np.int64(1) << c) - 1
    s = np.int64(state)
    i = 0
    while i < n:
        block = np.int64(0)
        for k in range(taps.shape[0]):
            block ^= s >> (taps[k] - c)
        block &= cmask
        r = n - i
        if r >= c:
            r = c
        else:
            block >>= c - r        # keep the r oldest bits, y[i .. i+r-1]
        for j in range(r):
            out[i + j] = (block >> (r - 1 - j)) & 1
        s = ((s << r) | block) & mask
        i += r
    return s


def lfsr_bits(n, state, order, taps):
    """The next n bits (uint8 0/1) of the LFSR with register ``state``; returns
    (bits, new state) (see _lfsr_fill)."""
    n = args.integer("n", n, lo=0)
    order = args.integer("order", order, lo=2, hi=61)
    state = args.integer("state", state, lo=1, hi=(1 << order) - 1)
    taps = args.array("taps", taps, dtype=np.int64, min_len=1)
    if taps.min() < 1 or taps.max() != order or order + taps.min() > 62:
        raise ConfigError(f"taps: delays must be in 1..{order} with the largest = order and "
                          f"order + smallest <= 62, got {taps.tolist()}")
    out = np.empty(n, dtype=np.uint8)
    return out, int(_lfsr_fill(out, state, order, taps))
