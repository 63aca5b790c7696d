"""A shared statistical check of the FEC tests: a counted errors-per-codeword histogram
against the binomial of its own RS symbol error ratio."""

from __future__ import annotations

import numpy as np
from scipy import stats

from serdes.fec import model
from serdes.fec.gf import N
from serdes.metrics.ber import clopper_pearson


def assert_binomial_histogram(r: dict, codewords: int) -> None:
    """Chi-square of the histogram against the binomial (bins pooled to >= 5 expected),
    and the counted FLR's 99.9 % interval holds the binomial and the burst model."""
    hist = np.zeros(N + 1)
    for k, v in r["errors_per_codeword"].items():
        hist[int(k)] = v
    p = model.binomial(r["symbol_error_ratio"], N) * codewords
    obs, exp, o, e = [], [], 0.0, 0.0
    for k in range(N + 1):
        o, e = o + hist[k], e + p[k]
        if e >= 5 and p[k + 1:].sum() >= 5:
            obs.append(o), exp.append(e)
            o = e = 0.0
    obs[-1] += o
    exp[-1] += e
    chi2 = float(np.sum((np.array(obs) - exp) ** 2 / np.array(exp)))
    assert stats.chi2.sf(chi2, len(obs) - 2) > 1e-3
    lo, hi = clopper_pearson(r["uncorrectable"], codewords, 0.999)
    assert lo <= r["flr_binomial"] <= hi and lo <= r["flr_model"] <= hi
