"""RS(544,514) kernels over GF(2^10): systematic encoder and a bounded-distance decoder
(syndromes, Berlekamp-Massey, Chien search, Forney).

Codewords are rows of ``N`` symbols, row[0] the coefficient of x^(N-1) (sent first);
the message is row[:K] and the 2t check symbols row[K:] (the remainder of
m(x) x^(2t) / g(x), :data:`serdes.fec.gf.GEN`). :func:`decode` corrects up to t symbol
errors and reports a codeword it cannot correct (status -1, left as received) instead of
guessing; beyond t errors a received word can still lie within t of another codeword,
which it then "corrects" into that one (a miscorrection, which only a comparison with
what was sent can tell). Every @njit kernel is private and takes int64 arrays; the
field tables travel as arguments.
"""

from __future__ import annotations

import numpy as np
from numba import njit

from serdes.errors import ConfigError
from serdes.fec.gf import EXP, GEN, LOG, N, K, ORDER, T


@njit(cache=True)
def _encode(msg, gen, exp, log, n):
    nc, k = msg.shape
    nr = n - k
    out = np.zeros((nc, n), dtype=np.int64)
    lg = np.empty(nr + 1, dtype=np.int64)
    for j in range(nr + 1):
        lg[j] = log[gen[j]] if gen[j] != 0 else -1
    r = np.zeros(nr, dtype=np.int64)
    for c in range(nc):
        r[:] = 0
        for i in range(k):
            m = msg[c, i]
            out[c, i] = m
            fb = m ^ r[0]
            if fb != 0:
                lf = log[fb]
                for j in range(nr - 1):
                    r[j] = r[j + 1] ^ (exp[lf + lg[j + 1]] if lg[j + 1] >= 0 else 0)
                r[nr - 1] = exp[lf + lg[nr]] if lg[nr] >= 0 else 0
            else:
                for j in range(nr - 1):
                    r[j] = r[j + 1]
                r[nr - 1] = 0
        for j in range(nr):
            out[c, k + j] = r[j]
    return out


@njit(cache=True)
def _gmul(a, b, exp, log):
    if a == 0 or b == 0:
        return 0
    return exp[log[a] + log[b]]


@njit(cache=True)
def _gdiv(a, b, exp, log, order):
    if a == 0:
        return 0
    return exp[(log[a] - log[b]) % order]


@njit(cache=True)
def _decode(words, exp, log, order, t):
    """Decode each row in place; status[c] = symbols corrected, or -1 (not correctable)."""
    nc, n = words.shape
    nr = 2 * t
    status = np.zeros(nc, dtype=np.int64)
    s = np.zeros(nr, dtype=np.int64)
    lam = np.zeros(nr + 1, dtype=np.int64)
    bb = np.zeros(nr + 1, dtype=np.int64)
    tmp = np.zeros(nr + 1, dtype=np.int64)
    omega = np.zeros(nr, dtype=np.int64)
    pos = np.zeros(t, dtype=np.int64)
    xs = np.zeros(t, dtype=np.int64)
    for c in range(nc):
        # syndromes S_j = r(alpha^j), j = 0..2t-1 (Horner over the row)
        s[:] = 0
        for p in range(n):
            v = words[c, p]
            for j in range(nr):
                sj = s[j]
                if sj != 0:
                    sj = exp[log[sj] + j]
                s[j] = sj ^ v
        nz = False
        for j in range(nr):
            if s[j] != 0:
                nz = True
                break
        if not nz:
            continue
        # Berlekamp-Massey: the shortest LFSR Lambda generating the syndromes
        lam[:] = 0
        bb[:] = 0
        lam[0] = 1
        bb[0] = 1
        L = 0
        m = 1
        b = 1
        for i in range(nr):
            d = s[i]
            for q in range(1, L + 1):
                d ^= _gmul(lam[q], s[i - q], exp, log)
            if d == 0:
                m += 1
                continue
            coef = _gdiv(d, b, exp, log, order)
            if 2 * L <= i:
                for q in range(lam.shape[0]):   # element copies: an array assignment
                    tmp[q] = lam[q]                 # compiles numba's shape-error path
                for q in range(nr + 1 - m):
                    lam[q + m] ^= _gmul(coef, bb[q], exp, log)
                L = i + 1 - L
                for q in range(tmp.shape[0]):
                    bb[q] = tmp[q]
                b = d
                m = 1
            else:
                for q in range(nr + 1 - m):
                    lam[q + m] ^= _gmul(coef, bb[q], exp, log)
                m += 1
        if L > t:
            status[c] = -1
            continue
        # Chien search over the N positions of the shortened code: Lambda(alpha^-d) = 0
        found = 0
        for dgr in range(n):
            acc = 1  # lam[0]
            for q in range(1, L + 1):
                if lam[q] != 0:
                    acc ^= exp[(log[lam[q]] + order - (dgr * q) % order) % order]
            if acc == 0:
                if found < t:
                    pos[found] = n - 1 - dgr
                    xs[found] = dgr
                found += 1
        if found != L:
            status[c] = -1
            continue
        # Forney (first root alpha^0): e = X Omega(X^-1) / Lambda'(X^-1),
        # Omega = S Lambda mod x^2t
        for i in range(nr):
            acc = 0
            for q in range(min(i, L) + 1):
                acc ^= _gmul(s[i - q], lam[q], exp, log)
            omega[i] = acc
        ok = True
        for e in range(L):
            dgr = xs[e]
            inv = (order - dgr) % order          # log of X^-1
            num = 0
            for i in range(nr):
                if omega[i] != 0:
                    num ^= exp[(log[omega[i]] + inv * i) % order]
            den = 0
            for q in range(1, L + 1, 2):         # Lambda'(x) = sum over odd q of lam_q x^(q-1)
                if lam[q] != 0:
                    den ^= exp[(log[lam[q]] + inv * (q - 1)) % order]
            if den == 0 or num == 0:
                ok = False
                break
            tmp[e] = exp[(log[num] - log[den] + dgr + 2 * order) % order]
        if not ok:
            status[c] = -1
            continue
        for e in range(L):
            words[c, pos[e]] ^= tmp[e]
        status[c] = L
    return status


def _rows(name: str, x, width: int) -> np.ndarray:
    a = np.asarray(x)
    if a.ndim == 1:
        a = a.reshape(1, -1)
    if a.ndim != 2 or a.shape[1] != width:
        raise ConfigError(f"{name}: expected rows of {width} RS symbols, got shape {a.shape}")
    if a.size and (a.min() < 0 or a.max() > ORDER):
        raise ConfigError(f"{name}: RS symbols must be in 0..{ORDER}")
    return np.ascontiguousarray(a, dtype=np.int64)


def encode(messages) -> np.ndarray:
    """Codewords (rows of N = 544 symbols) of message rows of K = 514 symbols."""
    return _encode(_rows("messages", messages, K), GEN, EXP, LOG, N)


def decode(words) -> tuple[np.ndarray, np.ndarray]:
    """``(decoded, status)`` of received rows of N symbols: status = symbols corrected
    (0..t) or -1 (more errors than the code can correct, detected: the row is returned
    as received)."""
    w = _rows("words", words, N).copy()
    status = _decode(w, EXP, LOG, ORDER, T)
    return w, status
