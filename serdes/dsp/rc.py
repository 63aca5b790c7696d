"""Reflection canceller: sparse, floating decision-feedback taps at echo delays far
outside the FFE span.

An impedance discontinuity sends a copy of the pulse back and forth: at the receiver it
arrives as an echo tens to hundreds of UI after the main cursor. A dense FFE or DFE that
long would cost hundreds of taps; the echo occupies a few UI, so a handful of taps
placed there suffices. They act like DFE taps: ``v_k -= sum_i c_i a^_{k - lag_i}``.

Placement:

* ``mode = "pulse"``: from the equalized pulse response, by the joint design of
  :func:`serdes.dsp.design.design_receiver` (the ``taps`` largest post-cursors of the
  combined response in the RC range); values from the design, then LMS (``rc.mu``) if
  the equalizer adapts (``eq.mode = "lms"``).
* ``mode = "adaptive"``: at run time, by correlating the slicer error with past
  decisions over lags first..span_ui for ``search_symbols`` decisions, starting after
  the equalizer's training (and once the decision history is full); the K lags of
  largest |correlation| get the taps, with the correlation estimate as initial value;
  then decision-directed LMS with the normalised step ``rc.mu``.

The tap budget is ``rc.taps``; lags are in first..span_ui where first follows the DFE
taps (:attr:`serdes.dsp.spec.ReceiverSpec.rc_first_lag`).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from serdes.kernels.fir import fir_valid
from serdes.kernels.slicer import Adapt, EqState, Slicer, ffe_dfe_rc, rc_state

_ONE = np.ones(1)


@dataclass(frozen=True)
class RcSettings:
    """The [rc] section: tap budget, reach, placement mode and adaptation."""

    taps: int = 0
    span_ui: int = 200
    mode: str = "pulse"
    mu: float = 2e-3
    search_symbols: int = 16384


def ring_size(span: int) -> int:
    """Smallest power of two holding decisions span UI back."""
    return 1 << int(np.ceil(np.log2(span + 1)))


class ReflectionCanceller:
    """RC state for the DFE path: taps, lags, decision ring, placement search
    (a :class:`serdes.kernels.slicer.RcState`).

    ``run`` processes ADC samples through FFE, DFE and RC with one kernel call; all
    state lives here and in the arrays passed in, so chunked runs equal one piece.
    """

    def __init__(self, settings: RcSettings, *, lags, taps, first_lag: int, level_power: float,
                 search_start: int = 0):
        self.settings = settings
        k = settings.taps
        self.first_lag = int(first_lag)
        self.level_power = float(level_power)
        searching = settings.mode == "adaptive"
        if searching:  # c = 0 at the first lags until the search places them
            lags, taps = np.arange(self.first_lag, self.first_lag + k), np.zeros(k)
        span = settings.span_ui
        self.rc = rc_state(taps, lags, ring_size(span), span, searching)
        self.search_start = int(search_start) + self.rc.ring.shape[0]
        self.mu = settings.mu / (max(k, 1) * level_power)

    @property
    def taps(self) -> np.ndarray:
        return self.rc.c

    @property
    def lags(self) -> np.ndarray:
        return self.rc.lags

    @property
    def warmup_symbols(self) -> int:
        """Decisions before the taps are placed (adaptive mode), else 0."""
        if self.settings.mode != "adaptive":
            return 0
        return self.search_start + self.settings.search_symbols

    @property
    def placed(self) -> bool:
        return self.rc.st[1] == 0

    def run(self, x_ext, w, b, hist, levels, thresholds, ref, n_train, mu_w, mu_b, b_limit,
            adapt_eq: bool):
        """FFE taps w, DFE taps b and DFE history hist (state, updated in place)."""
        if ref is None:
            n_train = 0
        mu_c = self.mu if (adapt_eq or self.settings.mode == "adaptive") else 0.0
        if not adapt_eq:  # fixed FFE: filter the block first (same sums, vectorizable)
            x_ext, w = fir_valid(x_ext, w), _ONE
        p = Adapt(int(n_train), float(mu_w), float(mu_b), float(mu_c), float(b_limit),
                  bool(adapt_eq), self.first_lag, self.search_start,
                  self.settings.search_symbols, self.level_power)
        return ffe_dfe_rc(x_ext, ref, EqState(w, b, hist), self.rc, Slicer(levels, thresholds),
                          p)
