"""1/(1+D) mod M precoder and its inverse (IEEE 802.3 120.5.7.2).

Precode:   P(j) = (G(j) - P(j-1)) mod M
Unprecode: G(j) = (P(j) + P(j-1)) mod M
`prev` is P(-1), the previous precoded symbol; both kernels return the last
precoded symbol so a stream processed in chunks equals one call.
"""

import numpy as np
from numba import njit


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
