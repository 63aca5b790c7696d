"""GF(2^10) arithmetic tables and the RS(544,514) generator polynomial.

IEEE 802.3 Clause 91 (91.5.2.7), reused by Clauses 119, 134 and 161: symbols are
elements of GF(2^10) built on the primitive polynomial p(x) = x^10 + x^3 + 1 with
alpha = x a root; the code has t = 15, 2t = 30 check symbols and the generator
g(x) = prod_{j=0}^{2t-1} (x - alpha^j) (first consecutive root alpha^0).
"""

from __future__ import annotations

import numpy as np

M = 10                 # bits per RS symbol
Q = 1 << M             # field size
ORDER = Q - 1          # multiplicative order of alpha
PRIM_POLY = (1 << 10) | (1 << 3) | 1
N, K = 544, 514        # KP4 code length and message length (symbols)
T = (N - K) // 2       # correctable symbols per codeword


def tables() -> tuple[np.ndarray, np.ndarray]:
    """``(exp, log)``: exp[i] = alpha^i for i in 0..2*ORDER (doubled so a sum of two logs
    needs no modulo), log[x] for x != 0 (log[0] = -1, never used)."""
    exp = np.zeros(2 * ORDER + 1, dtype=np.int64)
    log = np.full(Q, -1, dtype=np.int64)
    x = 1
    for i in range(ORDER):
        exp[i] = x
        log[x] = i
        x <<= 1
        if x & Q:
            x ^= PRIM_POLY
    if x != 1 or (log[1:] < 0).any():
        raise AssertionError("x^10 + x^3 + 1 is not primitive")  # cannot happen
    exp[ORDER:2 * ORDER] = exp[:ORDER]
    exp[2 * ORDER] = exp[0]
    return exp, log


EXP, LOG = tables()


def mul(a: int, b: int) -> int:
    """Field product (plain Python, for tables and tests)."""
    if a == 0 or b == 0:
        return 0
    return int(EXP[LOG[a] + LOG[b]])


def generator(n_check: int = N - K) -> np.ndarray:
    """Coefficients of g(x) = prod_{j=0}^{n_check-1} (x - alpha^j), highest degree first
    (g[0] = 1, the monic leading coefficient)."""
    g = [1]
    for j in range(n_check):
        root = int(EXP[j])
        nxt = g + [0]                       # g(x) * x
        for i in range(1, len(nxt)):        # + root * g(x) (minus = plus in GF(2^m))
            nxt[i] ^= mul(root, g[i - 1])
        g = nxt
    return np.array(g, dtype=np.int64)


GEN = generator()
