"""Quadrature of the sampling-offset distribution of sinusoidal (SJ) and dual-Dirac (DD)
jitter.

DD moves every sampling instant by +-A_DD (probability 1/2 each). SJ of amplitude
``sj_ui`` is sampled at ``points`` equally spaced phases of its period; the sample seen
by FFE tap i was taken i UI before the output sample, so it sees its own phase of the
sine. When the sine hardly moves over the equalizer and pulse span the jitter is
quasi-static: one common offset per quadrature point (equal offsets merged).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

WANDER_POINTS = 5  # Gauss-Hermite points of a slow Gaussian wander


@dataclass
class Jitter:
    """Quadrature points: the offset (UI) of the sample seen by each FFE tap, weights."""

    offsets: np.ndarray       # (Q, n_taps) offset (UI) of the sample seen by each FFE tap
    weights: np.ndarray       # (Q,)
    quasi_static: bool        # every row is constant

    @property
    def common(self) -> np.ndarray:
        return self.offsets[:, 0]

    @property
    def span_ui(self) -> float:
        return float(np.max(np.abs(self.offsets))) if self.offsets.size else 0.0

    def rows(self):
        """(weight, per-tap offsets) of every quadrature point."""
        for q in range(self.weights.shape[0]):
            yield self.weights[q], self.offsets[q]


def jitter_quadrature(n_taps: int, pulse_n_ui: int, *, sj_ui: float, sj_rad_per_ui: float,
                      dd_ui: float, points: int, offset_ui: float = 0.0,
                      wander_ui: float = 0.0) -> Jitter:
    """The quadrature for an FFE of ``n_taps`` taps and a pulse of ``pulse_n_ui`` UI.
    ``offset_ui``: a static offset of every point; ``wander_ui``: a slow Gaussian
    wander (rms) on a WANDER_POINTS Gauss-Hermite rule, common to all taps, combined
    with the dual-Dirac points."""
    n = n_taps
    dd = np.array([-dd_ui, dd_ui]) if dd_ui > 0 else np.zeros(1)
    dd_w = np.full(dd.shape[0], 1.0 / dd.shape[0])
    if wander_ui > 0:
        x, w = np.polynomial.hermite_e.hermegauss(WANDER_POINTS)
        dd = (dd[:, None] + wander_ui * x[None, :]).ravel()
        dd_w = (dd_w[:, None] * (w / w.sum())[None, :]).ravel()
    dd = dd + offset_ui
    if sj_ui > 0:
        K = max(points, 4)
        theta = 2 * np.pi * (np.arange(K) + 0.5) / K
        # the sample seen by FFE tap i was taken i UI before the output sample
        span = (n + pulse_n_ui) * sj_rad_per_ui
        quasi = span * sj_ui < 1e-3
        i = np.arange(n)
        if quasi:
            sj = sj_ui * np.sin(theta)[:, None] * np.ones(n)[None, :]
        else:
            sj = sj_ui * np.sin(theta[:, None] - sj_rad_per_ui * i[None, :])
    else:
        sj = np.zeros((1, n))
        quasi = True
    offs = (sj[:, None, :] + dd[None, :, None]).reshape(-1, n)
    wts = (np.full(sj.shape[0], 1.0 / sj.shape[0])[:, None] * dd_w[None, :]).ravel()
    if quasi:  # merge equal offsets (sin is symmetric)
        key = np.round(offs[:, 0], 12)
        uniq, inv = np.unique(key, return_inverse=True)
        wts = np.bincount(inv, weights=wts)
        offs = np.repeat(uniq[:, None], n, axis=1)
    return Jitter(offsets=offs, weights=wts, quasi_static=quasi)
