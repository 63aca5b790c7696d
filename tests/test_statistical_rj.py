"""Random jitter in the statistical engine (serdes.engines.stat.rj).

* the jitter-averaged pulse and the per-sample jitter variance against a direct
  Monte Carlo over the jitter, and the mean slicer variance against the first-order
  closed form ``rj^2 E[a^2] |p'|^2`` (serdes.impairments.rj_variance) for small RJ;
* the variance classes against the full mixture over every sampled pattern;
* agreement with the counted BER of the pulse engine on RJ-limited links from 0.01 to
  0.06 UI rms, FFE only and with a DFE (after the error-propagation model; on the
  links that precode, link.precoding = auto, its precoded BER): the test
  passes when the band [stat / 1.5, 1.5 stat] overlaps the counted BER's 95 % CI, and
  the count is long enough that the CI itself is narrower than a factor 1.5.
"""

import numpy as np
import pytest
from scipy import stats

from conftest import EARLIER_DEFAULT
from serdes.build import build
from serdes.config import Config
from serdes.engines.run import simulate
from serdes.engines.stat import StatisticalEngine, dfe_error_propagation
from serdes.engines.stat.rj import pulse_moments
from serdes.impairments import rj_variance
from serdes.metrics.ber import clopper_pearson

IDEAL = ["adc.bits=0", "adc.enob=0"]


def _system(over):
    return build(Config.default().with_overrides(EARLIER_DEFAULT).with_overrides(IDEAL + over))


def test_pulse_moments_match_monte_carlo():
    link = _system(["channel.loss_db=30", "noise.rj_ui=0.05"]).link
    rj = 0.05
    pbar, dev, wq = pulse_moments(link.pulse, 0.0, rj)
    var = wq @ dev ** 2
    rng = np.random.default_rng(3)
    j = rng.normal(0, rj, 4000)
    h = np.stack([link.pulse.at_offset(x * link.pulse.m) for x in j])
    se_mean = h.std(axis=0) / np.sqrt(j.size)
    assert np.all(np.abs(h.mean(axis=0) - pbar) < 5 * se_mean + 1e-12)
    # the variance of a sample variance: (mu4 - var^2) / n
    c = h - h.mean(axis=0)
    se_var = np.sqrt(np.maximum((c ** 4).mean(axis=0) - c.var(axis=0) ** 2, 0) / j.size)
    assert np.all(np.abs(c.var(axis=0) - var) < 5 * se_var + 1e-14)


def test_mean_variance_matches_first_order_closed_form():
    """One-tap FFE, tiny RJ: the mean jitter variance at the slicer (over the levels)
    is rj^2 E[a^2] |p'|^2 w^2 to first order."""
    system = _system(["channel.loss_db=20", "noise.rj_ui=0.002", "ffe.taps=1", "ffe.pre=0",
                      "dfe.taps=0"])
    eng = StatisticalEngine(system)
    f, jvar = eng.response(0.0)
    _, rj_mean = eng._noise_var_per_level(f, jvar)
    w = float(eng.w[0])
    ref = rj_variance(system.link) * w * w
    assert abs(float(np.mean(rj_mean)) / ref - 1) < 2e-3


def test_variance_classes_match_full_mixture():
    """The BER with the few variance classes against the BER averaged over every
    sampled pattern's own Gaussian (no classes, no skew): the classes cost < 3 %."""
    system = _system(["channel.loss_db=30", "noise.rj_ui=0.04", "dfe.taps=0"])
    eng = StatisticalEngine(system)
    d = eng.distribution(0.0)
    # the engine's distribution is the sum over the ISI bins of the joint model
    # (serdes.engines.stat.rj_joint): its parts' pmfs add up to the whole ISI pmf
    parts = getattr(d, "parts", [d])
    x = np.concatenate([q.x for q in parts])
    pmf = np.concatenate([q.pmf for q in parts]) / len(parts)
    f, jvar = eng.response(0.0)
    _, rj_mean = eng._noise_var_per_level(f, jvar)
    v, _, lv = eng.rj.samples(0.0)
    other = parts[0].sigmas ** 2 - rj_mean
    t = eng.thresholds
    mix = eng.rj.mixture(0.0, rj_mean)
    ber_full = ber_cls = 0.0
    for i in range(eng.m_levels):
        vi = v[lv == i] * rj_mean[i] / v[lv == i].mean()
        sig = np.sqrt(other[i] + vi)
        s_cls = np.sqrt(other[i] + mix.var[i])
        # the adjacent thresholds: above (P(v > t_i)) and below (P(v < t_{i-1}))
        for th, upper in ([(t[i], True)] if i < t.size else []) + \
                         ([(t[i - 1], False)] if i > 0 else []):
            tail = stats.norm.sf if upper else stats.norm.cdf
            ber_full += float(np.mean(tail((th - d.means[i] - x[None, :]) / sig[:, None])
                                      @ pmf))
            ber_cls += float(mix.weights[i] @ (tail((th - d.means[i] - x[None, :])
                                                    / s_cls[:, None]) @ pmf))
    assert ber_full > 1e-7
    assert abs(ber_cls / ber_full - 1) < 0.03


# RJ-limited links (ideal ADC, thermal noise far below the jitter noise except where
# noted): counted BER 1e-5 .. 1e-3
RJ_FFE = {   # FFE only; at 0.01 UI the residual ISI gives about half the errors
    "rj0.01-38dB": ["channel.loss_db=38", "noise.rj_ui=0.01", "noise.eta0_v2_per_ghz=1e-9"],
    "rj0.02-37dB": ["channel.loss_db=37", "noise.rj_ui=0.02", "noise.eta0_v2_per_ghz=1e-9"],
    "rj0.03-35dB": ["channel.loss_db=35", "noise.rj_ui=0.03", "noise.eta0_v2_per_ghz=1e-9"],
    "rj0.04-31dB": ["channel.loss_db=31", "noise.rj_ui=0.04", "noise.eta0_v2_per_ghz=1e-9"],
    "rj0.05-28dB": ["channel.loss_db=28", "noise.rj_ui=0.05", "noise.eta0_v2_per_ghz=1e-9"],
    "rj0.06-25dB": ["channel.loss_db=25", "noise.rj_ui=0.06", "noise.eta0_v2_per_ghz=1e-9"],
}
RJ_DFE = {   # 1-tap DFE; at 0.02 UI the thermal noise gives about half the errors
    "rj0.02-32dB": ["channel.loss_db=32", "noise.rj_ui=0.02", "noise.eta0_v2_per_ghz=8e-8"],
    "rj0.03-33dB": ["channel.loss_db=33", "noise.rj_ui=0.03", "noise.eta0_v2_per_ghz=5e-8"],
    "rj0.04-34dB": ["channel.loss_db=34", "noise.rj_ui=0.04", "noise.eta0_v2_per_ghz=2e-8"],
    "rj0.05-31dB": ["channel.loss_db=31", "noise.rj_ui=0.05", "noise.eta0_v2_per_ghz=1e-9"],
    "rj0.06-26dB": ["channel.loss_db=26", "noise.rj_ui=0.06", "noise.eta0_v2_per_ghz=1e-9"],
}


def _agree(name, system, stat_fn):
    eng = StatisticalEngine(system)
    stat = stat_fn(eng)
    res = simulate(system, symbols=30_000_000, target_errors=160, taps=eng.taps)
    lo, hi = clopper_pearson(res.bit_errors, res.bits, 0.95)
    print(f"\n{name}: counted {res.ber:.3e} ({res.bit_errors} errors, 95% CI "
          f"[{lo:.3e}, {hi:.3e}]), statistical {stat:.3e}, counted/stat {res.ber / stat:.3f}")
    assert hi / lo < 1.5, "the count is too short to judge a factor 1.5"
    assert lo <= 1.5 * stat and hi >= stat / 1.5


@pytest.mark.parametrize("name", list(RJ_FFE))
def test_rj_limited_ffe_agrees_with_counted(name):
    _agree(name, _system(["dfe.taps=0"] + RJ_FFE[name]), lambda e: e.ber().ber)


# ``link.precoding = auto`` turns 1/(1+D) precoding on for four of these links (first
# DFE tap 0.62-0.77 >= 0.55): their count is of the decoded symbols, where a burst of
# propagated line errors decodes to two symbol errors at its ends, so the model's
# ``ber_precoded`` is the number to compare, not ``ber_with_propagation`` (the
# unprecoded link's, 1.9x higher here). rj0.03-33dB, 2 M symbols: counted 3.80e-5
# [3.22e-5, 4.46e-5], precoded model 3.55e-5 (unprecoded 6.77e-5: counted/stat 0.56);
# rj0.04-34dB: 1.75e-5 [1.36e-5, 2.21e-5] against 1.84e-5.
@pytest.mark.parametrize("name", list(RJ_DFE))
def test_rj_limited_dfe_agrees_with_counted(name):
    system = _system(["dfe.taps=1"] + RJ_DFE[name])
    key = "ber_precoded" if system.source.precoding else "ber_with_propagation"
    _agree(name, system, lambda e: dfe_error_propagation(e)[key])
