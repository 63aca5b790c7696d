"""The slicer-input distribution of each PAM level and what it gives: decision
probabilities, BER/SER, the eye map (probability of landing on the wrong side of a
voltage) and densities.

Slicer input of level i: ``means[i] + X + N_i``, X the ISI (+ uniform quantization) on a
grid of spacing ``delta`` (exact convolution, :func:`serdes.kernels.stat.isi_pmf`), N_i
Gaussian, or a mixture of Gaussians (``mix_sigmas``, ``mix_weights``: the data-dependent
random-jitter noise, :mod:`serdes.engines.stat.rj`). The variance the grid's linear split
adds is taken off the Gaussian, so the first two moments are exact.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field

import numpy as np

from serdes.kernels.stat import isi_pmf, tail_grid
from serdes.kernels.stat_tails import MixtureTails

EYE_NAMES_PAM4 = ("lower", "middle", "upper")

def gray_bit_errors(m: int) -> np.ndarray:
    """bits[i, j]: bit errors when level i is decided as level j (IEEE Gray code)."""
    if m == 2:
        return 1 - np.eye(2, dtype=np.int64)
    gray = np.array([0, 1, 3, 2])
    x = gray[:, None] ^ gray[None, :]
    return np.array([[bin(int(v)).count("1") for v in row] for row in x], dtype=np.int64)


def eye_names(m: int) -> tuple[str, ...]:
    return EYE_NAMES_PAM4 if m == 4 else ("eye",)


@dataclass
class SlicerDistribution:
    """Slicer input of level i: means[i] + X + N_i, X ~ pmf on the grid, N_i Gaussian."""

    pmf: np.ndarray
    k0: int
    delta: float
    means: np.ndarray        # f_d * a_i
    sigmas: np.ndarray       # Gaussian std per level (after the grid correction)
    levels: np.ndarray       # nominal levels a_i
    thresholds: np.ndarray
    bit_errors: np.ndarray
    isi_var: float           # exact variance of the ISI (+ uniform quantization) term
    noise_var: np.ndarray    # Gaussian variance per level before the grid correction
    approximate: bool = False  # the grid correction could not be applied in full
    mix_sigmas: np.ndarray | None = None   # (m, K) Gaussian mixture per level, if any
    mix_weights: np.ndarray | None = None  # (m, K), rows sum to 1
    mix_betas: np.ndarray | None = None    # (m, K) skew of each component (0: Gaussian)
    _mix: tuple | None = field(default=None, init=False, repr=False, compare=False)
    _at_thresholds: dict | None = field(default=None, init=False, repr=False,
                                        compare=False)
    _tails_of: MixtureTails | None = field(default=None, init=False, repr=False,
                                           compare=False)
    # the tails at the thresholds came from a batched kernel (serdes.engines.stat.rows),
    # not from this distribution's own sums
    _tails_given: bool = field(default=False, init=False, repr=False, compare=False)

    def gaussians(self, i: int):
        """(weight, std, beta) of the noise components of level i: component noise
        sigma (U + beta (U^2 - 1)), U ~ N(0, 1) (:mod:`serdes.kernels.stat`)."""
        if self.mix_sigmas is None:
            return [(1.0, float(self.sigmas[i]), 0.0)]
        betas = (self.mix_betas[i] if self.mix_betas is not None
                 else np.zeros_like(self.mix_sigmas[i]))
        return [(float(w), float(s), float(b)) for w, s, b in
                zip(self.mix_weights[i], self.mix_sigmas[i], betas) if w > 0]

    def _mixture(self):
        """(sigmas, betas, weights), each (m, K): every level's noise components (one
        Gaussian per level without a mixture)."""
        if self._mix is None:
            if self.mix_sigmas is None:
                sig = np.ascontiguousarray(self.sigmas, dtype=np.float64).reshape(-1, 1)
                self._mix = (sig, np.zeros_like(sig), np.ones_like(sig))
            else:
                betas = (self.mix_betas if self.mix_betas is not None
                         else np.zeros_like(self.mix_sigmas))
                self._mix = (self.mix_sigmas, betas, self.mix_weights)
        return self._mix

    @property
    def thresholds_given(self) -> bool:
        """The tails at the thresholds were given by a batched kernel
        (serdes.engines.stat.rows), whose sums may differ in the last bits from
        :meth:`checked_tails`'; tails this distribution computed itself are its own sums
        (the packed rows' kernel repeats them bit for bit)."""
        return self._tails_given

    def checked_tails(self) -> MixtureTails:
        """The tail sums' kernel arguments (pmf, grid and mixture), checked once."""
        if self._tails_of is None:
            self._tails_of = MixtureTails(self.pmf, self.k0, self.delta, *self._mixture())
        return self._tails_of

    def _tails(self, y_rel, upper, level) -> np.ndarray:
        """Tails of the levels ``level`` at ``y_rel`` (relative to each level's mean),
        upper or lower per point, all in one kernel call."""
        return self.checked_tails()(y_rel, upper, level)

    def _tail(self, i: int, y, upper: bool) -> np.ndarray:
        y = np.atleast_1d(np.asarray(y, dtype=np.float64)) - self.means[i]
        n = y.shape[0]
        return self._tails(y, np.full(n, upper, dtype=np.uint8),
                           np.full(n, i, dtype=np.int64))

    def _threshold_tails(self) -> dict:
        """{(i, e, upper): P(v_i > t_e) or P(v_i < t_e)} for every pair the decision
        matrix and the per-eye error rates use, in one kernel call (cached)."""
        if self._at_thresholds is None:
            keys = []
            for i in range(self.m):
                for e, t in enumerate(self.thresholds):
                    want = {e >= i, bool(t > self.means[i])}  # decisions; wrong_side
                    keys += [(i, e, u) for u in sorted(want)]
            y = np.array([self.thresholds[e] - self.means[i] for i, e, _ in keys])
            vals = self._tails(y, np.array([u for _, _, u in keys], dtype=np.uint8),
                               np.array([i for i, _, _ in keys], dtype=np.int64))
            self._at_thresholds = dict(zip(keys, vals.tolist()))
        return self._at_thresholds

    @property
    def m(self) -> int:
        return self.levels.shape[0]

    @property
    def bits_per_symbol(self) -> int:
        return 1 if self.m == 2 else 2

    @property
    def x(self) -> np.ndarray:
        return (self.k0 + np.arange(self.pmf.shape[0])) * self.delta

    def upper(self, i: int, y) -> np.ndarray:
        """P(v_i > y)."""
        return self._tail(i, y, True)

    def lower(self, i: int, y) -> np.ndarray:
        """P(v_i < y)."""
        return self._tail(i, y, False)

    def decision_matrix(self) -> np.ndarray:
        """P[i, j]: probability that level i is decided as level j (off-diagonal)."""
        m = self.m
        tt = self._threshold_tails()
        P = np.zeros((m, m))
        for i in range(m):
            if i < m - 1:   # P(v > t_e), e = i..m-2
                up = np.array([tt[i, e, True] for e in range(i, m - 1)] + [0.0])
                P[i, i + 1:] = up[:-1] - up[1:]
            if i > 0:       # P(v < t_e), e = 0..i-1
                lo = np.array([0.0] + [tt[i, e, False] for e in range(i)])
                P[i, :i] = lo[1:] - lo[:-1]
        return np.maximum(P, 0.0)

    def ser(self) -> float:
        return float(self.decision_matrix().sum() / self.m)

    def ber(self) -> float:
        P = self.decision_matrix()
        return float((P * self.bit_errors).sum() / (self.m * self.bits_per_symbol))

    def wrong_side(self, y) -> np.ndarray:
        """The eye map at voltages y: (1/(M bits)) sum_i P(v_i beyond y, away from
        its mean)."""
        y = np.atleast_1d(np.asarray(y, dtype=np.float64))
        n = y.shape[0]
        y_rel = (y[None, :] - self.means[:, None]).ravel()
        above = (y[None, :] > self.means[:, None]).ravel().astype(np.uint8)
        level = np.repeat(np.arange(self.m, dtype=np.int64), n)
        vals = self._tails(y_rel, above, level).reshape(self.m, n)
        out = np.zeros(n)
        for i in range(self.m):   # the levels added in order
            out += vals[i]
        return out / (self.m * self.bits_per_symbol)

    def ber_per_eye(self) -> np.ndarray:
        tt = self._threshold_tails()
        out = np.zeros(self.m - 1)
        for i in range(self.m):
            out += [tt[i, e, bool(t > self.means[i])] for e, t in enumerate(self.thresholds)]
        return out / (self.m * self.bits_per_symbol)

    def wrong_side_grid(self, y_start: float, stride: int, n: int) -> np.ndarray:
        """wrong_side at y_v = y_start + v * stride * delta (fast: tabulated Q)."""
        out = np.zeros(n)
        ys = y_start + np.arange(n) * stride * self.delta
        for i in range(self.m):
            u = (y_start - self.means[i]) / self.delta
            s0 = math.floor(u)
            frac = u - s0
            # first v with y_v > mean_i
            v_split = int(np.searchsorted(ys, self.means[i], side="right"))
            v_split = min(max(v_split, 0), n)
            for w, sig, b in self.gaussians(i):
                if v_split > 0:
                    out[:v_split] += w * tail_grid(self.pmf, self.k0, self.delta, s0, stride,
                                                   v_split, frac, sig, False, b)
                if v_split < n:
                    out[v_split:] += w * tail_grid(self.pmf, self.k0, self.delta,
                                                   s0 + v_split * stride, stride, n - v_split,
                                                   frac, sig, True, b)
        return out / (self.m * self.bits_per_symbol)

    def pdf(self, i: int, y) -> np.ndarray:
        """Probability density of v_i at y (for plots: the PMF is regrouped to a quarter
        of the Gaussian std, which the density cannot resolve anyway)."""
        y = np.asarray(y, dtype=np.float64)
        # (densities for plots: the components' skew is left out)
        return sum(w * self._pdf(i, y, s) for w, s, _ in self.gaussians(i))

    def _pdf(self, i: int, y: np.ndarray, s: float) -> np.ndarray:
        g = max(1, int(s / (4 * self.delta)))
        n = -(-self.pmf.shape[0] // g) * g
        p = np.pad(self.pmf, (0, n - self.pmf.shape[0])).reshape(-1, g)
        x = (self.k0 + np.arange(n)).reshape(-1, g) * self.delta
        w = p.sum(axis=1)
        keep = w > 1e-300
        xc = (p * x).sum(axis=1)[keep] / w[keep] + self.means[i]
        w = w[keep]
        out = np.zeros(y.size)
        flat = y.ravel()
        for k in range(0, flat.size, 256):
            z = (flat[k:k + 256, None] - xc[None, :]) / s
            out[k:k + 256] = np.exp(-0.5 * z * z) @ w
        return (out / (s * np.sqrt(2 * np.pi))).reshape(y.shape)



def distribution_from_cursors(main: float, cursors, levels, sigma: float, *,
                              resolution: float = 16.0, delta: float | None = None
                              ) -> SlicerDistribution:
    """Slicer distribution for a given main cursor, residual ISI cursors and Gaussian
    noise std (no link needed): the engine's ISI convolution and grid correction."""
    levels = np.asarray(levels, dtype=np.float64)
    m = levels.shape[0]
    cur = np.asarray(cursors, dtype=np.float64)
    cur = cur[cur != 0.0]
    if sigma <= 0:
        raise ValueError(f"sigma = {sigma!r}: expected a number > 0")
    delta = sigma / resolution if delta is None else float(delta)
    vals = np.ascontiguousarray(np.outer(cur, levels)) if cur.size else np.zeros((1, m))
    probs = np.full(vals.shape, 1.0 / m)
    pmf, k0 = isi_pmf(vals, probs, delta)
    es = float(np.mean(levels ** 2))
    var_true = es * float(cur @ cur)
    x = (k0 + np.arange(pmf.shape[0])) * delta
    excess = float(pmf @ (x - pmf @ x) ** 2) - var_true
    gvar = np.full(m, float(sigma) ** 2)
    eff = np.maximum(gvar - excess, 0.25 * gvar)
    return SlicerDistribution(pmf=pmf, k0=int(k0), delta=delta, means=main * levels,
                              sigmas=np.sqrt(eff), levels=levels,
                              thresholds=(levels[1:] + levels[:-1]) / 2,
                              bit_errors=gray_bit_errors(m), isi_var=var_true, noise_var=gvar,
                              approximate=bool(np.any(gvar - excess < 0.25 * gvar)))
