"""What the crosstalk tests (tests/test_crosstalk.py, tests/test_xtalk_txjitter.py)
share: the aggressors' variance at the FFE output as the counted engine sums it."""

import numpy as np

from serdes.engines import crosstalk as engine_xt
from serdes.engines.pulse import Jitter
from serdes.engines.stat import StatisticalEngine


def counted_ffe_variance(system, n=400_000, batches=40, seed=11):
    """(FFE taps w, variance, its standard error): the aggressors alone through the
    counted engine's crosstalk front end over n UI, through the statistical engine's FFE,
    as the mean of ``batches`` batch variances and its standard error."""
    link = system.link
    w = StatisticalEngine(system).w
    x = engine_xt.CrosstalkFrontEnd(link, Jitter(link, seed))(0, n)
    y = np.convolve(x, w)[len(w):n]
    y = y[: (y.shape[0] // batches) * batches].reshape(batches, -1)
    bvar = np.var(y, axis=1)
    return w, float(bvar.mean()), float(bvar.std(ddof=1) / np.sqrt(batches))
