"""1/(1+D) mod M precoder and its inverse (IEEE 802.3 120.5.7.2).

Precode:   P(j) = (G(j) - P(j-1)) mod M
Unprecode: G(j) = (P(j) + P(j-1)) mod M
`prev` is P(-1), the previous precoded symbol; both kernels return the last
precoded symbol so a stream processed in chunks equals one call.
"""

import numpy as np
from numba import njit

from serdes.errors import ConfigError
from serdes.kernels import args


@njit(cache=True)
def _precode(g, m, prev):
    """Precode uint8 symbols g (0..m-1); return (p, last p or prev)."""
    p = np.empty(g.shape[0], dtype=np.uint8)
    q = np.int64(prev)
    for j in range(g.shape[0]):
        q = (np.int64(g[j]) - q + m) % m
        p[j] = q
    return p, q


@njit(cache=True)
def _unprecode(p, m, prev):
    """Decode precoded uint8 symbols p (0..m-1); return (g, last p or prev)."""
    g = np.empty(p.shape[0], dtype=np.uint8)
    q = np.int64(prev)
    for j in range(p.shape[0]):
        cur = np.int64(p[j])
        g[j] = (cur + q) % m
        q = cur
    return g, q


def _symbols(name, s, m):
    a = np.asarray(s)
    if a.dtype != np.uint8:
        if a.size and (a.dtype.kind not in "iu" or a.min() < 0 or a.max() > m - 1):
            raise ConfigError(f"{name}: expected integer symbols in 0..{m - 1}, "
                              f"got {a.dtype} values")
    a = args.array(name, a.astype(np.uint8, copy=False), dtype=np.uint8)
    if a.size and a.max() > m - 1:
        raise ConfigError(f"{name}: symbols must be in 0..{m - 1}, got {int(a.max())}")
    return a


def _check(m, prev):
    m = args.integer("m", m, lo=2, hi=256)
    return m, args.integer("prev", prev, lo=0, hi=m - 1)


def precode(g, m, prev):
    """1/(1+D) mod m precoding of symbols g from P(-1) = prev; returns (p, last p)."""
    m, prev = _check(m, prev)
    p, last = _precode(_symbols("g", g, m), m, prev)
    return p, int(last)


def unprecode(p, m, prev):
    """Undo precode: G(j) = (P(j) + P(j-1)) mod m from P(-1) = prev; returns (g, last p)."""
    m, prev = _check(m, prev)
    g, last = _unprecode(_symbols("p", p, m), m, prev)
    return g, int(last)
