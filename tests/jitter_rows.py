"""A systematic subset of a statistical engine's jitter quadrature rows, for tests that
need the interleaved ADC's many rows (thousands on 64 lanes with a supply tone) cut to
a few dozen evenly spread ones."""

import numpy as np

from serdes.engines.stat.jitter import Jitter


def keep_rows(eng, rows: int):
    """Keep ``rows`` of ``eng``'s jitter rows, evenly spaced in its quadrature order."""
    J = eng.jitter
    k = np.linspace(0, J.weights.shape[0] - 1, rows).astype(int)
    eng.jitter = Jitter(offsets=J.offsets[k], weights=J.weights[k], quasi_static=False)
    return eng
