"""PRBS bit sources and the IEEE 802.3 QPRBS13 PAM4 test pattern.

Model: Fibonacci LFSRs, y[i] = XOR over t in taps of y[i - t], where the
polynomial x^n + ... + 1 is read with x^t = a delay of t bits (ITU-T O.150
and IEEE 802.3 convention).  The register state is a plain int whose bit
k-1 holds y[i - k] (bit 0 = the most recent output bit); each output bit is
the feedback bit, which is then shifted into bit 0.  Any non-zero state
gives a maximal-length sequence of period 2**order - 1.

QPRBS13 (IEEE Std 802.3 clause 94.2.9.3, 100GBASE-KP4, the 15548-symbol
PAM4 pattern also used by later PAM4 PMDs and OIF CEI): the PRBS13 generator
1 + x + x^2 + x^12 + x^13 is loaded with the lane-0 seed of the clause 94
PRBS13 seed table, cells S1..S13 (delays 1..13) = 0 0 0 0 0 1 0 1 0 1 0 1 1
(state int 0x1AA0 here), and run for 31096 bits taken as

    8191 bits as generated, 8191 bits inverted, 8191 bits as generated,
    then the next 6523 bits inverted

(3 full periods plus a truncated fourth; the generator runs on across the
segments).  Consecutive bit pairs, first bit = MSB, are Gray coded to PAM4
symbol indices (00->0, 01->1, 11->2, 10->3), giving 15548 symbols.  PRBS13Q
of 802.3 clause 120.5.11.2 is the same Gray-coded PRBS13 without the
inversions, with period 8191 symbols.
"""

import operator

import numpy as np

from serdes.errors import ConfigError
from serdes.kernels.prbs import lfsr_bits

#: name -> (order, taps as delays/exponents, highest first)
POLYNOMIALS = {
    "prbs7": (7, (7, 6)),
    "prbs9": (9, (9, 5)),
    "prbs11": (11, (11, 9)),
    "prbs13": (13, (13, 12, 2, 1)),
    "prbs15": (15, (15, 14)),
    "prbs23": (23, (23, 18)),
    "prbs31": (31, (31, 28)),
}

#: QPRBS13 lane-0 seed (S1..S13 = 0000010101011) as a state int, bit k-1 = S_k.
QPRBS13_SEED = 0x1AA0
#: Number of PAM4 symbols in one QPRBS13 period.
QPRBS13_LENGTH = 15548

_GRAY4 = np.array([0, 1, 3, 2], dtype=np.uint8)  # (msb<<1 | lsb) -> symbol


def _lookup(name):
    try:
        return POLYNOMIALS[name]
    except (KeyError, TypeError):
        raise ConfigError(
            f"prbs name {name!r} is unknown; allowed: {', '.join(POLYNOMIALS)}"
        ) from None


def _count(n, what="n"):
    try:
        n = operator.index(n)
    except TypeError:
        raise ConfigError(f"{what} must be a non-negative integer, got {n!r}") from None
    if n < 0:
        raise ConfigError(f"{what} must be a non-negative integer, got {n}")
    return n


class PrbsGenerator:
    """Streaming PRBS bit source: bits(a) then bits(b) equals bits(a + b).

    `state` is a plain int in 1 .. 2**order - 1 holding the last `order`
    output bits (bit 0 = most recent); default all ones.
    """

    def __init__(self, name, seed_state=None):
        self.name = name
        self.order, taps = _lookup(name)
        self.taps = taps
        self._taps = np.array(taps, dtype=np.int64)
        top = (1 << self.order) - 1
        if seed_state is None:
            self.state = top
        else:
            try:
                seed = operator.index(seed_state)
            except TypeError:
                seed = None
            if seed is None or not 1 <= seed <= top:
                raise ConfigError(
                    f"seed_state for {name} must be an integer in 1..{top} "
                    f"(non-zero {self.order}-bit register), got {seed_state!r}"
                )
            self.state = seed

    @property
    def period(self):
        """Sequence period in bits, 2**order - 1."""
        return (1 << self.order) - 1

    def skip(self, n):
        """Advance the state by n bits without forming them (jump ahead, O(log n))."""
        self.state = lfsr_jump(self.state, self.order, self.taps, _count(n))

    def bits(self, n):
        """Return the next n bits as a uint8 array of 0/1 and advance the state."""
        n = _count(n)
        out, self.state = lfsr_bits(n, self.state, self.order, self._taps)
        return out


def _step_map(order, taps):
    """The one-bit LFSR step as a GF(2)-linear map: column i is the image of the state
    with only bit i set (the feedback XORs the bits at delays ``taps`` into bit 0)."""
    mask = (1 << order) - 1
    cols = []
    for i in range(order):
        s = 1 << i
        fb = 0
        for t in taps:
            fb ^= (s >> (t - 1)) & 1
        cols.append(((s << 1) | fb) & mask)
    return cols


def _apply(cols, s):
    out = 0
    i = 0
    while s:
        if s & 1:
            out ^= cols[i]
        s >>= 1
        i += 1
    return out


_POWERS: dict = {}  # (order, taps) -> [step map ** (2 ** k) for k = 0, 1, ...]


def _powers(order, taps, bits):
    """The step map raised to 1, 2, 4, ... 2^(bits - 1), kept between calls: a split
    run seeks its generator once per range, and squaring the maps was most of a seek."""
    key = (int(order), tuple(int(t) for t in taps))
    have = _POWERS.get(key) or [_step_map(order, taps)]
    if len(have) < bits:
        have = list(have)
        while len(have) < bits:
            cols = have[-1]
            have.append([_apply(cols, c) for c in cols])
        _POWERS[key] = have   # one assignment: a concurrent reader sees a whole list
    return have


def lfsr_jump(state, order, taps, n):
    """The register ``state`` after ``n`` more output bits: the step map raised to the
    n-th power by repeated squaring over GF(2) (about log2(n) * order^2 bit operations,
    so the state at bit 10^14 costs well under a millisecond; the squared maps are kept,
    so a later jump costs one map application per set bit of ``n``)."""
    s = int(state)
    n = int(n)
    if n <= 0:
        return s
    for k, cols in enumerate(_powers(order, taps, n.bit_length())):
        if (n >> k) & 1:
            s = _apply(cols, s)
    return s


def prbs_bits(name, n, state=None):
    """Return n bits of PRBS `name` (see POLYNOMIALS) from `state` (default all ones)."""
    return PrbsGenerator(name, state).bits(n)


def qprbs13_symbols():
    """Return the 15548-symbol QPRBS13 pattern (IEEE 802.3 94.2.9.3) as uint8 0..3.

    Symbols are Gray-coded PAM4 indices (index i = i-th level from the bottom).
    """
    gen = PrbsGenerator("prbs13", QPRBS13_SEED)
    period = gen.period
    bits = gen.bits(2 * QPRBS13_LENGTH)
    bits[period:2 * period] ^= 1
    bits[3 * period:] ^= 1
    pairs = bits.reshape(-1, 2)
    return _GRAY4[(pairs[:, 0] << 1) | pairs[:, 1]]
