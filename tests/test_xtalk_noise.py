"""The aggressors' TX noise as one Gaussian stream (serdes/engines/xtalk_noise.py).

References: the spectral factor against the autocorrelation it must reproduce (exact
to rounding, and a non-autocorrelation refused); the counted stream's sample
autocorrelation against the summed autocorrelation of the separate aggressors (4
standard errors of batch means at every lag); the front end with the stream against
the statistical engine's variance is tests/test_crosstalk.py
(test_aggressor_tx_noise_and_jitter_variance_counted_vs_statistical); chunk size and
seeds exact; the fallback to separate streams.
"""

import numpy as np

from serdes.build import build_link
from serdes.config import Config
from serdes.engines import crosstalk as engine_xt
from serdes.engines import xtalk_noise as XN
from serdes.engines.pulse import Jitter, PulseFrontEnd

AGGS = [dict(kind="next", model="copy", coupling_db=-20, phase_ui=0.2),
        dict(model="copy", coupling_db=-24, delay_ui=1.5),
        dict(model="copy", coupling_db=-22, delay_ui=4.0, pattern="prbs11"),
        dict(model="copy", coupling_db=-26, ppm=200)]


def _link(*sets):
    return build_link(Config.default().with_overrides(["link.target_errors=0", *sets])
                      .with_aggressors(AGGS))


def test_spectral_factor_reproduces_the_autocorrelation():
    g = np.random.default_rng(4)
    for n_agg, length in ((2, 3), (15, 8), (5, 40)):
        taps = [g.normal(size=length) * np.exp(-np.arange(length) / 5.0) for _ in range(n_agg)]
        r = sum(XN.autocorr(t) for t in taps)
        h = XN.spectral_factor(r)
        assert h is not None and h.shape[0] == length
        np.testing.assert_allclose(XN.autocorr(h), r, rtol=0, atol=1e-12 * r[0])
        assert np.all(np.abs(np.roots(h)) <= 1 + 1e-9)    # minimum phase
    assert XN.spectral_factor(np.array([1.0, 0.9, 0.9])) is None   # not an autocorrelation
    assert XN.spectral_factor(np.array([0.0, 0.0])) is None


def test_stream_has_the_summed_autocorrelation():
    """The combined stream's sample autocovariance at every lag against
    sigma^2 sum_a autocorr(c_a) of the aggressors it replaces (4 standard errors of 39
    batch means of 5000 UI, the start-up batch left out); the walking aggressor keeps
    its own noise."""
    link = _link("tx.snr_db=20")
    fe = engine_xt.CrosstalkFrontEnd(link, Jitter(link, 3))
    assert fe.noise is not None
    calm = [i for i, s in enumerate(fe.sources) if s.sigma == 0]
    assert len(calm) == 3 and fe.sources[3].sigma == link.tx_noise_sigma
    taps = [link.aggressor_pulses[i].taps(link.aggressor_pulses[i].agg.phase_ui) for i in calm]
    r = np.zeros(max(t.shape[0] for t in taps))
    for t in taps:
        r[: t.shape[0]] += link.tx_noise_sigma ** 2 * XN.autocorr(t)
    n, batches = 200_000, 40
    x = np.zeros(n)
    fe.noise.add(x, 0, n)
    x = x[n // batches:].reshape(batches - 1, -1)   # the start-up batch left out
    batches -= 1
    for lag in range(r.shape[0]):
        est = np.mean(x[:, : x.shape[1] - lag] * x[:, lag:], axis=1)
        se = float(np.std(est, ddof=1) / np.sqrt(batches))
        assert abs(float(est.mean()) - r[lag]) < 4 * se + 1e-6 * r[0], (lag, est.mean(), r[lag], se)


def test_chunks_seeds_and_fallback(monkeypatch):
    link = _link()
    a = np.random.default_rng(1).choice(link.levels, 30_000)
    runs = []
    for chunk in (30_000, 4_099, 30_000):
        fe = PulseFrontEnd(link, 3)
        runs.append(np.concatenate([fe(a[k:k + chunk], k) for k in range(0, 30_000, chunk)]))
    assert fe.crosstalk.noise is not None
    assert np.array_equal(runs[0], runs[1]) and np.array_equal(runs[0], runs[2])
    # a failed factor check keeps each aggressor's own noise
    monkeypatch.setattr(XN, "CHECK_TOL", -1.0)
    fe = engine_xt.CrosstalkFrontEnd(link, Jitter(link, 3))
    assert fe.noise is None and all(s.sigma == link.tx_noise_sigma for s in fe.sources)
    monkeypatch.setattr(XN, "CHECK_TOL", 1e-9)
    # with one short fixed-phase aggressor there is nothing to combine
    one = build_link(Config.default().with_aggressors(AGGS[:1] + AGGS[3:]))
    assert engine_xt.CrosstalkFrontEnd(one, Jitter(one, 3)).noise is None
