"""The DFE error propagation chain (serdes.engines.stat.error_propagation) where its
assumptions hold exactly: a slicer input of i.i.d. symbols, white Gaussian noise and
post-cursors that the DFE cancels, nothing else. A decision-fed DFE on that input is
counted here in NumPy (many independent streams stepped together) and the chain over the
last K errors must predict the count within the count's own interval; the chain of the
first tap alone (what the model was before) must not, where the later taps matter.

The count's interval: bursts (runs of symbol errors) are nearly independent events, the
bits of one burst are not, so the total is treated as a compound Poisson sum, variance
the sum of the squared bit errors per burst (99 %: 2.576 standard deviations).
"""

import numpy as np
import pytest

from serdes.engines.stat import dfe_error_propagation
from serdes.engines.stat.distribution import SlicerDistribution, gray_bit_errors
from serdes.engines.stat.error_propagation import (MAX_STATES, modelled_taps,
                                                   shifted_decision_matrices)
from serdes.engines.stat.txjitter import replace_means

Z99 = 2.576


class _Slicer:
    """What the propagation model reads of an engine: levels, bit errors, DFE taps and
    one row, the slicer distribution of a level plus white Gaussian noise."""

    def __init__(self, b, sigma, m):
        self.m_levels = m
        self.levels = (np.array([-1.0, -1 / 3, 1 / 3, 1.0]) if m == 4
                       else np.array([-1.0, 1.0]))
        self.thresholds = (self.levels[1:] + self.levels[:-1]) / 2
        self.bit_errors = gray_bit_errors(m)
        self.b = np.asarray(b, dtype=np.float64)
        self.dist = SlicerDistribution(
            pmf=np.array([1.0]), k0=0, delta=sigma / 8, means=self.levels.copy(),
            sigmas=np.full(m, sigma), levels=self.levels, thresholds=self.thresholds,
            bit_errors=self.bit_errors, isi_var=0.0, noise_var=np.full(m, sigma ** 2))

    def weighted_rows(self, offset_ui=0.0):
        yield 1.0, self.dist


def _count(slicer, sigma, streams, length, seed):
    """Decision-fed DFE over ``streams`` independent streams of ``length`` symbols:
    (bit errors, symbols, bit errors of every burst)."""
    rng = np.random.default_rng(seed)
    lv, thr, b = slicer.levels, slicer.thresholds, slicer.b
    K = b.shape[0]
    sent = rng.integers(0, slicer.m_levels, (length, streams))
    noise = rng.normal(0.0, sigma, (length, streams))
    dec = np.zeros((length, streams), dtype=np.int64)
    for t in range(length):
        y = lv[sent[t]] + noise[t]
        for k in range(1, min(K, t) + 1):   # the DFE's wrong feedback
            y += b[k - 1] * (lv[sent[t - k]] - lv[dec[t - k]])
        dec[t] = np.searchsorted(thr, y)
    bits = slicer.bit_errors[sent, dec]            # (length, streams)
    wrong = np.vstack([np.zeros((1, streams), bool), sent != dec,
                       np.zeros((1, streams), bool)]).T.ravel()
    edges = np.diff(wrong.astype(np.int8))
    starts, ends = np.flatnonzero(edges == 1), np.flatnonzero(edges == -1)
    per_stream = np.vstack([np.zeros((1, streams)), bits, np.zeros((1, streams))]).T.ravel()
    csum = np.concatenate([[0.0], np.cumsum(per_stream)])
    burst_bits = csum[ends + 1] - csum[starts + 1]
    return int(bits.sum()), length * streams, burst_bits


@pytest.mark.parametrize("b, sigma, m", [
    ([0.6, 0.3], 0.12, 4),
    ([0.5, -0.3, 0.2], 0.11, 4),
    ([0.7, 0.4, -0.2, 0.15], 0.3, 2),
])
def test_the_chain_over_the_last_errors_predicts_a_dfe_whose_inputs_are_independent(
        b, sigma, m):
    slicer = _Slicer(b, sigma, m)
    assert modelled_taps(slicer.b, slicer.levels) == len(b)
    prop = dfe_error_propagation(slicer)
    errors, symbols, burst_bits = _count(slicer, sigma, streams=1000, length=2000, seed=7)
    bps = 2 if m == 4 else 1
    ber = errors / (symbols * bps)
    half = Z99 * np.sqrt(np.sum(burst_bits ** 2)) / (symbols * bps)
    model = prop["ber_with_propagation"]
    print(f"\nb {b}: counted {ber:.4e} +- {half:.2e} ({errors} bit errors, "
          f"{burst_bits.shape[0]} bursts), model {model:.4e}, correct feedback "
          f"{prop['ber_correct_feedback']:.4e}, mean burst {prop['mean_burst_length']:.3f}")
    assert ber - half <= model <= ber + half
    assert ber > prop["ber_correct_feedback"] + half     # propagation is there to see
    one_tap = _Slicer(b[:1], sigma, m)
    first_only = dfe_error_propagation(one_tap)["ber_with_propagation"]
    # the chain of the first tap alone (the model before), on the same slicer: outside
    # the interval in every case
    assert not ber - half <= first_only <= ber + half


def test_the_chain_follows_as_many_taps_as_its_state_budget_allows():
    pam4 = np.array([-1.0, -1 / 3, 1 / 3, 1.0])
    assert 7 ** 3 <= MAX_STATES < 7 ** 4
    assert modelled_taps(np.array([0.5, 0.2, 0.1, 0.05, 0.02]), pam4) == 3
    assert modelled_taps(np.array([0.5, 0.2, 0.0]), pam4) == 2      # trailing zero tap
    assert modelled_taps(np.array([0.5]), pam4) == 1
    nrz = np.array([-1.0, 1.0])
    assert modelled_taps(np.full(8, 0.1), nrz) == 5                  # 3 ** 5 = 243
    mismatched = np.array([-1.0, -0.3, 0.3, 1.0])                    # 9 error values
    assert modelled_taps(np.full(3, 0.1), mismatched) == 2


@pytest.mark.parametrize("sets", [
    [],                                             # RJ joint with the ISI: ISI bins
    ["noise.rj_ui=0"],                              # one slicer distribution
    ["tx_jitter.dcd_ui=0.03"],                      # the two DCD parities
])
def test_shifted_decision_matrices_are_the_shifted_distributions_to_the_bit(sets):
    from serdes.build import build
    from serdes.config import Config
    from serdes.engines.stat import StatisticalEngine

    eng = StatisticalEngine(build(Config.default().with_overrides(
        ["channel.loss_db=34", "dfe.taps=2", *sets])))
    dist = eng.distribution(0.0)
    shifts = np.array([-0.21, -0.05, 0.0, 1e-9, 0.07, 0.3]) * float(dist.levels[-1])
    got = shifted_decision_matrices(dist, shifts)
    for k, s in enumerate(shifts):
        want = replace_means(dist, dist.means + s).decision_matrix()
        assert np.array_equal(got[k], want), (s, got[k] - want)
