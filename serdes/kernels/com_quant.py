"""The 802.3dj (Annex 178A.1.7.6) quantization noise: the clipping amplitude V_qc of the
signal at the RX FFE input and a cheap lower bound on it (checking wrappers; the numba
kernels ``_v_qc`` / ``_v_qc_lower`` sit in :mod:`serdes.kernels.com_mmse_search`, whose search
calls them).

V_qc is the amplitude whose lower tail holds P_qc / 2 (178A-30) of the noisy signal
sum_n h_n x_n + G, x_n independent and uniform on the L levels 2l/(L-1) - 1, every UI
sample h_n of the pulse at the sampling phase (the cursor included), G Gaussian of
variance sigma^2. As in PyChOpMarg 3.4 (``NoiseCalc.quant_step``, its optimisation
setting): a centred grid of ``npts`` (odd) points over +-(sum |h_n| + 10 sigma), samples
with |h_n| <= step / 2 dropped, each level's value rounded to the grid (noise.delta_pmf),
the Gaussian sampled on the same grid and normalised, and V_qc = -y at the first grid
point where the CDF reaches P_qc / 2.

Lower bound (used to prune the search, serdes/com/mmse_grid.py): the gridded distribution
is symmetric, so for any m samples P(sum >= sum_{those m} g_n) >= L^-m / 2, g_n >=
|h_n| - step/2 the gridded value at the largest level; when L^-m >= P_qc, V_qc >= the
sum of the m largest (|h_n| - step/2)_+ over any subset of the samples, with any upper
bound on the step.
"""

from __future__ import annotations


import numpy as np
from serdes.kernels import args as _a
# the kernels live beside the COM search that inlines them (no kernel may call an @njit
# helper of another module: numba's cache would keep a stale copy)
from serdes.kernels.com_mmse_search import _v_qc, _v_qc_lower

__all__ = ["v_qc", "v_qc_lower", "n_lower"]


def n_lower(levels: int, p_qc: float) -> int:
    """Largest m with levels^-m >= p_qc (the number of samples in the lower bound)."""
    m = 0
    while float(levels) ** -(m + 1) >= p_qc:
        m += 1
    return m


def v_qc(h, sigma: float, levels: int, p_qc: float, npts: int = 2001) -> float:
    """Clipping amplitude V_qc (V) of sum h_n x_n + N(0, sigma^2) at tail P_qc / 2."""
    h = _a.array("h", h, finite=True)
    npts = _a.integer("npts", npts, lo=3) | 1
    p = _a.real("p_qc", p_qc, positive=True)
    return float(_v_qc(h, _a.real("sigma", sigma, nonneg=True),
                       _a.integer("levels", levels, lo=2), p / 2.0, npts))


def v_qc_lower(h, sigma: float, levels: int, p_qc: float, npts: int = 2001,
               support_max: float | None = None) -> float:
    """Lower bound on :func:`v_qc` from the samples ``h`` (any subset of the pulse's UI
    samples); ``support_max`` an upper bound on sum |h_n| over all samples (default:
    this h's)."""
    h = _a.array("h", h, finite=True)
    npts = _a.integer("npts", npts, lo=3) | 1
    m = n_lower(_a.integer("levels", levels, lo=2), _a.real("p_qc", p_qc, positive=True))
    s = float(np.abs(h).sum()) if support_max is None else float(support_max)
    dy = 2.0 * (s + 10.0 * _a.real("sigma", sigma, nonneg=True)) / (npts - 1)
    if m == 0:
        return 0.0
    return float(_v_qc_lower(h, m, dy / 2.0, np.empty(m)))
