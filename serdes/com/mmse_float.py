"""Floating RX FFE taps of the 802.3dj (Annex 178A.1.8.1) reference receiver: besides
the N_fix fixed taps, ``rx_ffe_n_wg`` groups of ``rx_ffe_n_wf`` contiguous taps anywhere
among the positions N_fix .. ``rx_ffe_n_max`` - 1 of the FFE span (tap ``rx_ffe_pre``
the cursor), each tap within +-``rx_ffe_float_max`` of the cursor tap (D3.3 as
PyChOpMarg 3.4 transcribes Table 178-15: 2 groups of 4 within +-0.05, span 87).

The groups are placed as the IEEE COM code (``FOM_rxffe_floating_taps``, called by its
``MMSE`` at every sampling time) places them: one group at a time, every start location
still valid tried in ascending order together with the groups already placed (a full
MMSE solve, limits and clipping included, each), the first best FOM kept; then the
entries of the list of valid starts from the chosen one on (N_wf of them, by position
in the list) and the starts N_wf - 1 .. 1 before it are removed. The FOM is that of the
last placement. This module is the NumPy form (used at the chosen candidate, and as the
reference of the numba kernel ``serdes/kernels/com_mmse_search.py::_float_solve``).
"""

from __future__ import annotations

import numpy as np

from serdes.com import mmse as _m

__all__ = ["span", "limits", "place"]


def span(p) -> int:
    """Taps of the RX FFE span the search's tables cover (N_fix without floating taps)."""
    return int(p.rx_ffe_n_max) if p.rx_ffe_n_wg else len(p.rx_ffe_max)


def limits(p) -> tuple[np.ndarray, np.ndarray]:
    """Tap limits (relative to the cursor tap) over the span: the fixed taps', then
    +-rx_ffe_float_max."""
    n = span(p) - len(p.rx_ffe_max)
    g = float(p.rx_ffe_float_max)
    return (np.concatenate((np.asarray(p.rx_ffe_min, float), np.full(n, -g))),
            np.concatenate((np.asarray(p.rx_ffe_max, float), np.full(n, g))))


def _solve_sets(av, rn, hr, sets, p, wmin, wmax):
    L = p.levels
    var_x = (L ** 2 - 1) / (3.0 * (L - 1) ** 2)
    idx = np.abs(sets[:, :, None] - sets[:, None, :])
    R = av[idx] + rn[idx] / var_x
    rows = np.swapaxes(hr[:, sets], 0, 1)                  # (B, N_b + 1, n)
    return _m.solve_r_batch(R, rows, p, wmin[sets], wmax[sets])


def place(av, rn, hr, p):
    """Placement and MMSE solution at one sampling time: ``av`` (lags 0 .. span - 1) the
    autocorrelation of the UI samples, ``rn`` the noise's (V^2), ``hr`` (N_b + 1 x span)
    the cursor and DFE rows of the convolution matrix. Returns (FFE tap positions, FOM
    dB, w over the span with 0 where no tap is, b)."""
    nfix, nmax = len(p.rx_ffe_max), span(p)
    nwg, nwf = int(p.rx_ffe_n_wg), int(p.rx_ffe_n_wf)
    wmin, wmax = limits(p)
    fixed = list(range(nfix))
    chosen: list[int] = []
    valid = list(range(max(nmax - nfix - nwf + 1, 0)))
    for _ in range(nwg):
        if not valid:
            break
        sets = np.array([fixed + sorted(chosen + list(range(nfix + s, nfix + s + nwf)))
                         for s in valid])
        f, _, _ = _solve_sets(av, rn, hr, sets, p, wmin, wmax)
        k = int(np.argmax(f))          # the first of equal values
        s = valid[k]
        chosen += list(range(nfix + s, nfix + s + nwf))
        del valid[k:k + nwf]
        valid = [v for v in valid if not s - nwf + 1 <= v <= s - 1]
    cols = np.array(fixed + sorted(chosen))
    f, w, b = _solve_sets(av, rn, hr, cols[None], p, wmin, wmax)
    wf = np.zeros(nmax)
    wf[cols] = w[0]
    return cols, float(f[0]), wf, b[0]
