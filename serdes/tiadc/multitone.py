"""Quadrature of the sampling offsets of several sinusoidal jitter tones at once (the
supply's ripple tones through the clock, plus the link's ``noise.sj_ui``), for the
statistical engine (:class:`serdes.engines.stat.jitter.Jitter` rows).

Tones of unrelated frequencies have independent, uniformly distributed phases, so the
BER is an average over the torus of phases. One tone: the engine's own quadrature
(:func:`serdes.engines.stat.jitter.jitter_quadrature`, unchanged). Several: a rank-1
(Korobov) lattice rule over the phases, the rule of choice for smooth periodic
integrands; the sample seen by FFE tap i was taken i UI before the output sample, so it
sees each tone's phase i omega_t earlier. When every tone is quasi-static over the
equalizer and pulse span (as the engine decides for one), each lattice point is one
common offset: the sum's distribution is then binned into at most ``COMMON_BINS``
points (each at its bin's weighted mean), so a fine lattice costs no more BER
evaluations. Dual-Dirac jitter (+-A_DD) is crossed with every point.
"""

from __future__ import annotations

import numpy as np

from serdes.engines.stat.jitter import Jitter, jitter_quadrature

LATTICE_PER_TONE = 4      # lattice points: this many times ``points`` (non-quasi-static)
COMMON_LATTICE = 1024     # lattice points when every tone is quasi-static
COMMON_BINS = 64


def korobov(m: int, dims: int) -> np.ndarray:
    """Generator (1, a, a^2, ...) mod m of the rank-1 lattice of m points in ``dims``
    dimensions minimising the P_2 criterion (the worst-case error for periodic
    integrands of square-integrable second derivatives)."""
    j = np.arange(m)
    best, best_z = np.inf, None
    for a in range(1, m):
        z = np.array([pow(a, t, m) for t in range(dims)], dtype=np.int64)
        x = (np.outer(j, z) % m) / m
        p2 = float(np.mean(np.prod(1 + 2 * np.pi ** 2 * (x * x - x + 1 / 6), axis=1))) - 1
        if p2 < best:
            best, best_z = p2, z
    return best_z


def multitone_quadrature(n_taps: int, pulse_n_ui: int, *, amps_ui, rad_per_ui,
                         dd_ui: float, points: int) -> Jitter:
    """The quadrature for tones of amplitudes ``amps_ui`` (UI) and angular frequencies
    ``rad_per_ui`` (rad per UI), an FFE of ``n_taps`` taps and a pulse of
    ``pulse_n_ui`` UI."""
    amps = np.asarray(amps_ui, dtype=np.float64).reshape(-1)
    rads = np.asarray(rad_per_ui, dtype=np.float64).reshape(-1)
    keep = amps > 0
    amps, rads = amps[keep], rads[keep]
    if amps.shape[0] <= 1:
        a = float(amps[0]) if amps.size else 0.0
        r = float(rads[0]) if rads.size else 0.0
        return jitter_quadrature(n_taps, pulse_n_ui, sj_ui=a, sj_rad_per_ui=r, dd_ui=dd_ui,
                                 points=points)
    n = n_taps
    span = (n + pulse_n_ui) * rads
    quasi = bool(np.all(span * amps < 1e-3))
    m = COMMON_LATTICE if quasi else LATTICE_PER_TONE * max(points, 4)
    z = korobov(m, amps.shape[0])
    theta = 2 * np.pi * ((np.outer(np.arange(m), z) % m) + 0.5) / m     # (m, tones)
    dd = np.array([-dd_ui, dd_ui]) if dd_ui > 0 else np.zeros(1)
    if quasi:
        common = np.sin(theta) @ amps
        common = (common[:, None] + dd[None, :]).reshape(-1)
        lo, hi = float(common.min()), float(common.max())
        edges = np.linspace(lo, hi, COMMON_BINS + 1)
        idx = np.clip(np.searchsorted(edges, common, side="right") - 1, 0, COMMON_BINS - 1)
        cnt = np.bincount(idx, minlength=COMMON_BINS).astype(np.float64)
        s = np.bincount(idx, weights=common, minlength=COMMON_BINS)
        ok = cnt > 0
        offs = np.repeat((s[ok] / cnt[ok])[:, None], n, axis=1)
        return Jitter(offsets=offs, weights=cnt[ok] / cnt.sum(), quasi_static=True)
    i = np.arange(n)
    sj = np.einsum("t,mti->mi", amps,
                   np.sin(theta[:, :, None] - rads[None, :, None] * i[None, None, :]))
    offs = (sj[:, None, :] + dd[None, :, None]).reshape(-1, n)
    return Jitter(offsets=offs, weights=np.full(offs.shape[0], 1.0 / offs.shape[0]),
                  quasi_static=False)
