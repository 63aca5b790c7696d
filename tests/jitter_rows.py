"""A systematic subset of a statistical engine's jitter quadrature rows, for tests that
need the interleaved ADC's many rows (thousands on 64 lanes with a supply tone) cut to
a few dozen evenly spread ones."""

import numpy as np

from serdes.engines.stat import StatisticalEngine
from serdes.engines.stat.jitter import Jitter


def keep_rows(eng, rows: int):
    """Keep ``rows`` of ``eng``'s jitter rows, evenly spaced in its quadrature order."""
    J = eng.jitter
    k = np.linspace(0, J.weights.shape[0] - 1, rows).astype(int)
    eng.jitter = Jitter(offsets=J.offsets[k], weights=J.weights[k], quasi_static=False)
    return eng


def rates(eng, phases):
    """``eng``'s BER and per-eye rates at each of ``phases`` (rows: [ber, eyes...]) and
    its vertical bathtub's per-eye rates at phase 0 (101 points): what the interleaved
    tests compare between two ways of computing the rows."""
    out = [np.concatenate([[b.ber], b.ber_per_eye]) for b in (eng.ber(p) for p in phases)]
    vert = StatisticalEngine.bathtub_vertical(eng, 0.0, n_points=101).ber_per_eye
    return np.array(out), vert
