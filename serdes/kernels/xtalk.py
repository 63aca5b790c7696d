"""Crosstalk kernel: every aggressor's symbol FIR at the victim's sampling instants.

``out[n] += sum_i b[k0 + n - shift_g - start - i] * (taps[g, i] + off[n] * dtaps[g, i])``
for the samples n of segment g (a block of constant aggressor phase): ``b`` holds the
aggressor's symbol values from absolute index ``start`` on, ``shift_g`` the whole UIs its
phase has walked, ``off`` the victim's sampling offsets (UI) and ``dtaps`` the taps'
slope (empty: no jitter term). Each output sums in the same order whatever the chunk.
"""

import numpy as np
from numba import njit

from serdes.errors import ConfigError
from serdes.kernels import args


TILE = 512  # samples per tile: the two accumulators stay in the L1 cache


@njit(cache=True, fastmath=True)
def _xtalk_add(out, b, start, k0, seg, shift, taps, dtaps, off):
    # per tile of samples, taps outer and samples inner: the inner loop runs over
    # contiguous memory and vectorizes; each output adds its taps in one fixed order
    # (i = 0, 1, ...) whatever the chunk or tile
    L = taps.shape[1]
    jit = dtaps.shape[0] > 0
    acc = np.empty(TILE)
    dacc = np.empty(TILE)
    for g in range(seg.shape[0] - 1):
        for t0 in range(seg[g], seg[g + 1], TILE):
            m = min(TILE, seg[g + 1] - t0)
            q = k0 + t0 - shift[g] - start   # b index of sample t0, tap 0
            acc[:m] = 0.0
            for i in range(L):
                c = taps[g, i]
                for n in range(m):
                    acc[n] += c * b[q + n - i]
            if jit:
                dacc[:m] = 0.0
                for i in range(L):
                    c = dtaps[g, i]
                    for n in range(m):
                        dacc[n] += c * b[q + n - i]
                for n in range(m):
                    out[t0 + n] += acc[n] + off[t0 + n] * dacc[n]
            else:
                for n in range(m):
                    out[t0 + n] += acc[n]


def xtalk_add(out, b, start, k0, seg, shift, taps, dtaps, off) -> None:
    """Add one aggressor's sum to ``out`` in place (see the module notes)."""
    out = args.state("out", out)
    b = args.array("b", b)
    seg = args.array("seg", seg, dtype=np.int64, min_len=2)
    shift = args.array("shift", shift, dtype=np.int64)
    taps = args.array("taps", taps, ndim=2, finite=True)
    dtaps = args.array("dtaps", dtaps, ndim=2, finite=True)
    off = args.array("off", off)
    start, k0 = args.integer("start", start), args.integer("k0", k0)
    nseg = seg.shape[0] - 1
    if shift.shape[0] != nseg or taps.shape[0] != nseg:
        raise ConfigError(f"shift/taps: need one row per segment ({nseg})")
    if dtaps.shape[0] not in (0, nseg) or (dtaps.shape[0] and dtaps.shape[1] != taps.shape[1]):
        raise ConfigError("dtaps: empty or shaped like taps")
    if seg[0] < 0 or seg[-1] > out.shape[0] or np.any(np.diff(seg) < 0):
        raise ConfigError(f"seg: increasing sample indices within 0..{out.shape[0]}")
    if dtaps.shape[0] and off.shape[0] < seg[-1]:
        raise ConfigError(f"off: needs {seg[-1]} values, got {off.shape[0]}")
    L = taps.shape[1]
    for g in range(nseg):
        if seg[g + 1] > seg[g]:
            lo = k0 + seg[g] - shift[g] - start - (L - 1)
            hi = k0 + seg[g + 1] - 1 - shift[g] - start
            if lo < 0 or hi >= b.shape[0]:
                raise ConfigError(f"b: symbols {start}..{start + b.shape[0] - 1} do not cover "
                                  f"segment {g} ({lo + start}..{hi + start})")
    _xtalk_add(out, b, start, k0, seg, shift, taps, dtaps, off)
