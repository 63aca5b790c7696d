"""Per-symbol transmitter jitter at the slicer: RJ, DCD (even/odd) and BUJ.

Symbol s leaves the transmitter at sT + eps_s, so its whole pulse is moved: the slicer
sample k sees cursor m (symbol k - m) through ``f_m(eps) = (w * p(. + phi - eps))_m``
(``w`` the FFE, ``phi`` the RX sampling offset): every FFE tap sees the same shift of
that symbol's pulse. To first order this adds ``sum_m a_{k-m} f'_m eps_{k-m}`` (the
channel and the FFE filter the TX jitter); here ``f_m(eps)`` is re-sampled exactly at
the quadrature nodes, so the curvature's mean shift and variance are kept (second
order and beyond).

- DCD: eps_s = +-dcd/2 on even/odd symbols. Given the parity of the slicer's symbol,
  cursor m is moved by ``parity (-1)^m dcd / 2``: a deterministic response per parity,
  the two parities equally likely (:meth:`TxJitterModel.terms` per parity; the engine
  averages the two distributions).
- RJ (Gaussian, rms ``rj_ui``) and BUJ (uniform in +-``buj_ui``), independent per
  symbol: ``r = rj + buj`` on a product rule (Gauss-Hermite x midpoint); per cursor the
  mean ``E_r f_m(o_m + r)`` (replaces f_m) and the variance ``v_m = Var_r f_m``. Given
  the symbols the slicer noise is a sum of independent terms ``a_{k-m} (f_m - E f_m)``:
  the variance ``V = sum_m a_{k-m}^2 v_m`` depends on the data and on the same symbols
  as the ISI. On a real channel a few cursors hold most of it (the two next to the
  main cursor, on the pulse's flanks, ~90 % on the default link): those ``TOP``
  cursors enter the ISI convolution with their exact joint law, values
  ``a (r_m + dev_m(r_q))`` with probabilities ``w_q / M`` (r_m the residual ISI
  cursor), so the dependence on the data, the correlation with the ISI and the skew
  of the curvature are kept. The rest is a Gaussian of variance ``E[a^2] sum v_m``
  (central limit over many small cursors; a bounded BUJ is taken as Gaussian of its
  variance there, pessimistic in the far tail) plus the decided symbol's own
  ``a_i^2 v_d`` per level.

The slow TX jitter (SJ, the frequency offset) is not here: it is tracked by the clock
recovery like an RX SJ (:func:`serdes.engines.cdr_stat.stat_link`).
"""

from __future__ import annotations

import numpy as np

from serdes.engines.stat.rj import hermite_points, resample

BUJ_POINTS = 8   # midpoint nodes of the uniform BUJ
TOP = 4          # cursors convolved exactly (a and the jitter jointly)
TOP_SHARE = 0.02  # ... if they hold at least this share of the jitter variance


class TxJitterModel:
    """The TX per-symbol jitter terms for an FFE ``w`` with decision delay ``d``."""

    def __init__(self, pulse, w, d: int, levels, *, rj_ui: float, dcd_ui: float,
                 buj_ui: float):
        self.pulse = pulse
        self.w = np.asarray(w, dtype=np.float64)
        self.d = int(d)
        self.levels = np.asarray(levels, dtype=np.float64)
        self.es = float(np.mean(self.levels ** 2))
        self.dcd_ui = float(dcd_ui)
        xr, wr = hermite_points() if rj_ui > 0 else (np.zeros(1), np.ones(1))
        if buj_ui > 0:
            ub = (np.arange(BUJ_POINTS) + 0.5) / BUJ_POINTS * 2 - 1
            wb = np.full(BUJ_POINTS, 1.0 / BUJ_POINTS)
        else:
            ub, wb = np.zeros(1), np.ones(1)
        self.nodes = (rj_ui * xr[:, None] + buj_ui * ub[None, :]).ravel()
        self.node_w = (wr[:, None] * wb[None, :]).ravel()
        self.random = rj_ui > 0 or buj_ui > 0
        self.parities = (1, -1) if self.dcd_ui > 0 else (0,)
        a2, cnt = np.unique(np.round(self.levels ** 2, 12), return_counts=True)
        self.a2_values, self.a2_probs = a2, cnt / cnt.sum()
        self._cache: dict = {}

    @classmethod
    def of(cls, system, pulse, w, d, levels):
        """The model of ``system.tx_jitter`` (None without per-symbol TX jitter)."""
        t = getattr(system, "tx_jitter", None)
        if t is None or not t.per_symbol:
            return None
        return cls(pulse, w, d, levels, rj_ui=t.rj_ui, dcd_ui=t.dcd_ui, buj_ui=t.buj_ui)

    def _moments(self, phase_ui: float, o: float):
        """Mean over r of f(phase - o - r) (every cursor) and the deviations from it at
        the nodes (Q, cursors)."""
        m = self.pulse.m
        rows = resample(self.pulse, [(phase_ui - o - r) * m for r in self.nodes])
        f = np.array([np.convolve(self.w, h) for h in rows])
        mean = self.node_w @ f
        return mean, f - mean

    def terms(self, phase_ui: float, parity: int):
        """(df, dev): the change of the response f = w * p(phase) that the TX jitter's
        mean brings (per cursor), and the deviations from that mean at the quadrature
        nodes (Q, cursors; weights ``node_w``), for the slicer symbol's parity (+1, -1;
        0 without DCD)."""
        key = (round(float(phase_ui), 12), parity)
        hit = self._cache.get(key)
        if hit is not None:
            return hit
        f0 = np.convolve(self.w, self.pulse.at_offset(phase_ui * self.pulse.m))
        if parity == 0:
            mean, dev = self._moments(phase_ui, 0.0)
        else:
            half = 0.5 * self.dcd_ui
            mp, dp = self._moments(phase_ui, half)
            mn, dn = self._moments(phase_ui, -half)
            plus = (parity * (-1) ** np.arange(f0.shape[0])) > 0
            mean = np.where(plus, mp, mn)
            dev = np.where(plus[None, :], dp, dn)
        if len(self._cache) > 4096:
            self._cache.clear()
        hit = (mean - f0, dev)
        self._cache[key] = hit
        return hit

    def split(self, dev: np.ndarray, top_n: int | None = None):
        """The random part: (Gaussian variance per level (m,), top cursor indices,
        their deviations (K, Q)). The ``TOP`` cursors with the largest variance (other
        than the decided one) go into the ISI convolution with their exact joint law of
        (a, r); the rest are Gaussian: ``E[a^2] sum v_m`` plus ``a_i^2 v_d`` per level."""
        if not self.random:
            return np.zeros(self.levels.shape[0]), np.zeros(0, np.int64), \
                np.zeros((0, self.nodes.shape[0]))
        var = self.node_w @ dev ** 2
        own = float(var[self.d]) if self.d < var.shape[0] else 0.0
        others = var.copy()
        if self.d < var.shape[0]:
            others[self.d] = 0.0
        order = np.argsort(others)[::-1][:TOP if top_n is None else top_n]
        top = np.sort(order[others[order] > TOP_SHARE * max(float(others.sum()), 1e-300)])
        rest = self.es * float(others.sum() - others[top].sum())
        return self.levels ** 2 * own + rest, top, np.ascontiguousarray(dev[:, top].T)

    def rows(self, resid: np.ndarray, dev: np.ndarray):
        """ISI rows of the top cursors: values ``a_l (resid_m + dev_m[q])`` with
        probabilities ``w_q / M`` ((K, M Q) each), and their exact variance."""
        m = self.levels.shape[0]
        base = resid[:, None] + dev                                  # (K, Q)
        vals = (base[:, :, None] * self.levels[None, None, :]).reshape(base.shape[0], -1)
        probs = np.broadcast_to((self.node_w[:, None] / m).repeat(m, axis=1).reshape(1, -1),
                                vals.shape).copy()
        return vals, probs, self.es * float(np.sum((base ** 2) @ self.node_w))

    def spread(self, dev: np.ndarray) -> float:
        """Largest excursion the top rows' jitter adds (for the grid's extent)."""
        return float(np.sum(np.max(np.abs(dev), axis=1))) * float(np.max(np.abs(self.levels)))


class ParityMixture:
    """Average of the slicer distributions of the two DCD parities (weights 1/2), with
    the interface of :class:`~serdes.engines.stat.distribution.SlicerDistribution` that
    the engine and its views use; the parts share one grid step ``delta``. ``means``
    (the parts' mean): a replaced value moves every part by the same shift."""

    def __init__(self, parts, means=None):
        self.parts = list(parts)
        self.wts = np.full(len(self.parts), 1.0 / len(self.parts))
        self._base = sum(w * p.means for w, p in zip(self.wts, self.parts))
        self.means = self._base if means is None else np.asarray(means)
        p0 = self.parts[0]
        self.levels, self.thresholds, self.bit_errors = p0.levels, p0.thresholds, p0.bit_errors
        self.delta = p0.delta
        self.isi_var = float(sum(w * p.isi_var for w, p in zip(self.wts, self.parts)))
        self.noise_var = sum(w * p.noise_var for w, p in zip(self.wts, self.parts))
        self.approximate = any(p.approximate for p in self.parts)

    m = property(lambda self: self.parts[0].m)
    bits_per_symbol = property(lambda self: self.parts[0].bits_per_symbol)

    def _moved(self):
        shift = self.means - self._base
        if not np.any(shift):
            return self.parts
        return [replace_means(p, p.means + shift) for p in self.parts]

    def _avg(self, name, *args):
        return sum(w * getattr(p, name)(*args) for w, p in zip(self.wts, self._moved()))

    def decision_matrix(self):
        return self._avg("decision_matrix")

    def ser(self) -> float:
        return float(self._avg("ser"))

    def ber(self) -> float:
        return float(self._avg("ber"))

    def upper(self, i, y):
        return self._avg("upper", i, y)

    def lower(self, i, y):
        return self._avg("lower", i, y)

    def wrong_side(self, y):
        return self._avg("wrong_side", y)

    def ber_per_eye(self):
        return self._avg("ber_per_eye")

    def wrong_side_grid(self, y_start, stride, n):
        return self._avg("wrong_side_grid", y_start, stride, n)

    def pdf(self, i, y):
        return self._avg("pdf", i, y)


def replace_means(dist, means):
    """``dataclasses.replace(dist, means=means)`` for either kind of distribution."""
    if isinstance(dist, ParityMixture):
        return ParityMixture(dist.parts, means)
    from dataclasses import replace

    return replace(dist, means=means)
