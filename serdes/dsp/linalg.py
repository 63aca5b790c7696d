"""The few dense linear-algebra steps the equalizer design and the noise budget need, in
NumPy only.

``scipy.linalg`` costs 0.1-0.35 s of import (most of scipy's shared start-up) for a
Toeplitz matrix and a symmetric solve, so a short ``serdes run`` does not import it.
``solve_pos`` is a Cholesky solve like ``scipy.linalg.solve(A, b, assume_a="pos")``
(LAPACK's ``?potrf`` through ``numpy.linalg.cholesky``, then the two triangular solves
through ``numpy.linalg.solve``); it refuses a matrix that is not positive definite, as
scipy does. ``tests/test_linalg.py`` checks all three against scipy on the designs the
link makes.
"""

from __future__ import annotations

import numpy as np


def toeplitz(r: np.ndarray) -> np.ndarray:
    """The symmetric Toeplitz matrix T[i, j] = r[|i - j|] (``scipy.linalg.toeplitz(r)``
    for a real ``r``)."""
    r = np.asarray(r, dtype=np.float64).reshape(-1)
    n = r.shape[0]
    idx = np.arange(n)
    return r[np.abs(idx[:, None] - idx[None, :])]


def solve_pos(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """x with a x = b for a symmetric positive-definite ``a`` (Cholesky; raises
    ``numpy.linalg.LinAlgError`` when ``a`` is not positive definite)."""
    low = np.linalg.cholesky(np.asarray(a, dtype=np.float64))
    y = _lower_solve(low, np.asarray(b, dtype=np.float64))
    return _lower_solve(low.T[::-1, ::-1], y[::-1])[::-1]


def _lower_solve(low: np.ndarray, b: np.ndarray) -> np.ndarray:
    """Forward substitution for a lower-triangular ``low`` (row by row: the matrices here
    have at most a few hundred rows, and a general LU solve of a triangular matrix
    could pivot)."""
    n = low.shape[0]
    x = np.empty(n)
    for i in range(n):
        x[i] = (b[i] - low[i, :i] @ x[:i]) / low[i, i]
    return x


def solve_toeplitz(r: np.ndarray, b: np.ndarray) -> np.ndarray:
    """x with toeplitz(r) x = b (``scipy.linalg.solve_toeplitz((r, r), b)`` for a real
    symmetric system)."""
    return np.linalg.solve(toeplitz(r), np.asarray(b, dtype=np.float64))
