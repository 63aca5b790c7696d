"""The slicer-SNR sums of a chunk in one pass, to the bit as NumPy forms them.

The SNR meter (:class:`serdes.pipeline.SnrMeter`) and the split run's per-block tally
(:mod:`serdes.parallel`) need ``sum((soft - levels[sent])**2)`` and
``sum(levels[sent]**2)`` per chunk. Written in NumPy that is a gather, a subtraction,
two squares and two reductions over temporaries (about 1.7 ms per 65536-symbol chunk,
some 15 % of the counting time); here it is one pass without temporaries.

The numbers stay those of ``np.sum``: NumPy adds float64 by pairwise summation (blocks
of at most 128 values summed with 8 interleaved partial sums, halves split at a
multiple of 8), and the same tree of additions is walked here, so the reported SNR does
not change by a bit (tests/test_tally.py compares it with ``np.sum`` on many lengths).
"""

import numpy as np

from serdes.errors import ConfigError
from serdes.kernels import args
from serdes.kernels.jit import njit

_BLOCK = 128  # NumPy's PW_BLOCKSIZE


@njit(cache=True, inline="always")
def _leaf(levels, sent, soft, s, n):
    """NumPy's pairwise_sum of a block of n <= 128 values, for both sums at once."""
    if n < 8:
        re = 0.0
        rs = 0.0
        for i in range(s, s + n):
            g = levels[sent[i]]
            d = soft[i] - g
            re += d * d
            rs += g * g
        return re, rs
    e0 = np.empty(8)
    s0 = np.empty(8)
    for j in range(8):
        g = levels[sent[s + j]]
        d = soft[s + j] - g
        e0[j] = d * d
        s0[j] = g * g
    i = 8
    m = n - n % 8
    while i < m:
        for j in range(8):
            g = levels[sent[s + i + j]]
            d = soft[s + i + j] - g
            e0[j] += d * d
            s0[j] += g * g
        i += 8
    re = ((e0[0] + e0[1]) + (e0[2] + e0[3])) + ((e0[4] + e0[5]) + (e0[6] + e0[7]))
    rs = ((s0[0] + s0[1]) + (s0[2] + s0[3])) + ((s0[4] + s0[5]) + (s0[6] + s0[7]))
    while i < n:
        g = levels[sent[s + i]]
        d = soft[s + i] - g
        re += d * d
        rs += g * g
        i += 1
    return re, rs


@njit(cache=True)
def _snr_sums(levels, sent, soft, lo, hi):
    """(sum of squared slicer errors, sum of squared levels) over lo..hi-1, in NumPy's
    order: the pairwise tree walked with an explicit stack (left half, right half, add)."""
    n = hi - lo
    if n <= 0:
        return 0.0, 0.0
    work = np.empty((256, 3), dtype=np.int64)   # (start, length, 1: add the top two)
    acc_e = np.empty(128)
    acc_s = np.empty(128)
    w = 0
    top = 0
    work[0, 0] = lo
    work[0, 1] = n
    work[0, 2] = 0
    w = 1
    while w > 0:
        w -= 1
        s = work[w, 0]
        m = work[w, 1]
        if work[w, 2] == 1:
            acc_e[top - 2] = acc_e[top - 2] + acc_e[top - 1]
            acc_s[top - 2] = acc_s[top - 2] + acc_s[top - 1]
            top -= 1
        elif m <= _BLOCK:
            re, rs = _leaf(levels, sent, soft, s, m)
            acc_e[top] = re
            acc_s[top] = rs
            top += 1
        else:
            m2 = m // 2
            m2 -= m2 % 8
            work[w, 0] = 0
            work[w, 1] = 0
            work[w, 2] = 1
            work[w + 1, 0] = s + m2
            work[w + 1, 1] = m - m2
            work[w + 1, 2] = 0
            work[w + 2, 0] = s
            work[w + 2, 1] = m2
            work[w + 2, 2] = 0
            w += 3
    return acc_e[0], acc_s[0]


def snr_sums(levels, sent, soft, lo: int = 0, hi: int | None = None) -> tuple[float, float]:
    """``(np.sum(d * d), np.sum(g * g))`` with ``g = levels[sent[lo:hi]]`` and
    ``d = soft[lo:hi] - g``, bit for bit, in one pass."""
    lv = args.array("levels", levels, min_len=1)
    idx = args.array("sent", sent, dtype=np.uint8)
    v = args.array("soft", soft)
    if idx.shape[0] != v.shape[0]:
        raise ConfigError(f"sent and soft differ in length: {idx.shape[0]} != {v.shape[0]}")
    n = v.shape[0]
    hi = n if hi is None else args.integer("hi", hi, lo=0, hi=n)
    lo = args.integer("lo", lo, lo=0, hi=hi)
    if hi > lo and int(idx[lo:hi].max()) >= lv.shape[0]:
        raise ConfigError(f"sent: level index {int(idx[lo:hi].max())} for "
                         f"{lv.shape[0]} levels")
    return _snr_sums(lv, idx, v, lo, hi)
