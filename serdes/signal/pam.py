"""PAM-M levels, IEEE 802.3 Gray mapping and 1/(1+D) mod M precoding.

Conventions (M in {2, 4}):
* symbol index i in 0..M-1 is the i-th level from the bottom;
* levels are normalised so the outer levels are -1 and +1; PAM4 levels are
  [-1, -rlm/3, rlm/3, 1], where rlm is the IEEE ratio of level mismatch
  (802.3 120D.3.1.2: RLM = min(3*ES1, 3*ES2, 2 - 3*ES1, 2 - 3*ES2), which
  equals rlm for these levels), 1 = equally spaced, allowed 0.5..1;
* PAM4 bits map in pairs, first bit = MSB, with Gray coding
  00->0, 01->1, 11->2, 10->3 (802.3 120.5.7.1); PAM2 (NRZ) maps bit b to b;
* precoding (802.3 120.5.7.2) acts on symbol indices after Gray coding:
  P(j) = (G(j) - P(j-1)) mod M; decoding G(j) = (P(j) + P(j-1)) mod M.
"""

import operator

import numpy as np

from serdes.errors import ConfigError

_ALLOWED_M = (2, 4)
_GRAY4 = np.array([0, 1, 3, 2], dtype=np.uint8)   # (msb<<1 | lsb) -> symbol
_UNGRAY4 = np.array([0, 1, 3, 2], dtype=np.uint8)  # symbol -> (msb<<1 | lsb)


def _check_m(m):
    try:
        ok = operator.index(m) in _ALLOWED_M
    except TypeError:
        ok = False
    if not ok:
        raise ConfigError(f"m (PAM order) must be one of {_ALLOWED_M}, got {m!r}")
    return operator.index(m)


def _as_digits(x, top, what):
    """1-D uint8 copy of x, checking integer/bool values in 0..top."""
    a = np.asarray(x)
    if a.ndim != 1:
        raise ConfigError(f"{what} must be a 1-D array, got shape {a.shape}")
    if a.size == 0:
        return np.zeros(0, dtype=np.uint8)
    if a.dtype != np.bool_ and not np.issubdtype(a.dtype, np.integer):
        raise ConfigError(f"{what} must hold integers in 0..{top}, got dtype {a.dtype}")
    if a.min() < 0 or a.max() > top:
        raise ConfigError(f"{what} must hold integers in 0..{top}, "
                          f"got values in {a.min()}..{a.max()}")
    return a.astype(np.uint8)


def _check_state(state, m):
    try:
        s = operator.index(state)
    except TypeError:
        s = None
    if s is None or not 0 <= s < m:
        raise ConfigError(f"state (previous precoded symbol) must be an integer "
                          f"in 0..{m - 1}, got {state!r}")
    return s


def levels(m, rlm=1.0):
    """Return the M signal levels (float64, bottom to top, outer levels +-1)."""
    m = _check_m(m)
    rlm = float(rlm)
    if not 0.5 <= rlm <= 1.0:
        raise ConfigError(f"rlm (ratio of level mismatch) must be in 0.5..1, got {rlm}")
    if m == 2:
        return np.array([-1.0, 1.0])
    return np.array([-1.0, -rlm / 3.0, rlm / 3.0, 1.0])


def bits_to_symbols(bits, m):
    """Map bits (0/1) to uint8 symbol indices; PAM4 uses MSB-first Gray pairs."""
    m = _check_m(m)
    b = _as_digits(bits, 1, "bits")
    if m == 2:
        return b
    if b.size % 2:
        raise ConfigError(f"len(bits) must be a multiple of 2 for PAM4, got {b.size}")
    pairs = b.reshape(-1, 2)
    return _GRAY4[(pairs[:, 0] << 1) | pairs[:, 1]]


def symbols_to_bits(symbols, m):
    """Inverse of bits_to_symbols: uint8 symbol indices (0..m-1) to bits."""
    m = _check_m(m)
    s = _as_digits(symbols, m - 1, "symbols")
    if m == 2:
        return s
    code = _UNGRAY4[s]
    out = np.empty(2 * s.size, dtype=np.uint8)
    out[0::2] = code >> 1
    out[1::2] = code & 1
    return out


def precode(symbols, m, state=0):
    """1/(1+D) mod M precoding; return (precoded uint8 symbols, new state).

    state is the previous precoded symbol P(j-1) (0 at link start).
    """
    from serdes.kernels import precode as kprecode  # loaded by precoded links only

    m = _check_m(m)
    s = _as_digits(symbols, m - 1, "symbols")
    out, last = kprecode.precode(s, m, _check_state(state, m))
    return out, int(last)


def unprecode(symbols, m, state=0):
    """Undo precode: G(j) = (P(j) + P(j-1)) mod M; return (symbols, new state).

    state is the previous received precoded symbol P(j-1).
    """
    from serdes.kernels import precode as kprecode

    m = _check_m(m)
    s = _as_digits(symbols, m - 1, "symbols")
    out, last = kprecode.unprecode(s, m, _check_state(state, m))
    return out, int(last)
