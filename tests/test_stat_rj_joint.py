"""The RJ noise joint with the ISI (serdes.engines.stat.rj_joint).

* against the same sampled statistics: the model's own symbol sample, each sample's
  error probability with its own ISI value x and its own jitter variance V (Gaussian
  given the data), averaged slowly in NumPy; V shuffled within each level (the
  level-only model's independence) is far off at an offset, so the check can tell;
* against a slow NumPy Monte Carlo of the link itself (tests/naive.py: an independent
  symbol sequence, every ADC sample at its own Gaussian jittered instant, the pulse
  re-sampled there, the FFE, the Gaussian noise) at -+0.125 UI from the peak and at the
  peak of an RJ-limited link;
* the counted BER of the pulse engine with the clock-recovery front end opened at a
  fixed +0.125 UI (no DFE: errors independent, binomial interval) against the engine
  at the same offset (the level-only model was 1.44x low there).

Tolerances: 4 batch-means standard errors plus 5 % for the model's own approximations
(the variance classes cost < 3 %, tests/test_statistical_rj.py; the skew of the
jitter noise, which the Gaussian-given-data references leave out).
"""

import copy
from dataclasses import replace

import numpy as np
import pytest
from scipy import special

import naive
from serdes.build import build
from serdes.config import Config
from serdes.engines.run import design_equalizer, pipeline
from serdes.engines.stat import StatisticalEngine
from serdes.engines.stat.rj import resample
from serdes.metrics.ber import ErrorCounter, clopper_pearson

SMALL = ["dfe.taps=0", "adc.bits=0", "adc.enob=0"]
PEAK = ["noise.rj_ui=0.02", "channel.loss_db=38"]   # BER ~ 4e-6 at the peak
CASES = [(0.125, []), (-0.125, []), (0.0, PEAK)]


def _ber_terms(eng, z, lev, var, batches=32):
    """Mean and batch-means std error of the per-sample BER of slicer inputs z with
    Gaussian noise of variance var."""
    edges = np.concatenate([[-np.inf], eng.thresholds, [np.inf]])
    pj = np.diff(special.ndtr((edges[None, :] - z[:, None]) / np.sqrt(var)[:, None]), axis=1)
    per = (pj * eng.bit_errors[lev]).sum(axis=1) / 2
    b = per[: per.size // batches * batches].reshape(batches, -1).mean(axis=1)
    return float(per.mean()), float(b.std(ddof=1) / np.sqrt(batches))


@pytest.mark.parametrize("c0,over", CASES)
def test_joint_rj_matches_its_sampled_statistics(c0, over):
    eng = StatisticalEngine(build(Config.default().with_overrides(SMALL + over)))
    model = eng.ber(c0).ber
    f, jv = eng.response(c0)
    nv_other, rj_mean = eng._noise_var_per_level(f, jv)
    rj = eng.rj
    v, _, lev = rj.samples(c0)
    k = np.arange(rj.a.shape[0] - v.shape[0], rj.a.shape[0])
    z = f[eng.d] * eng.levels[lev] + np.convolve(rj.a, eng._residual(f))[k]
    rng = np.random.default_rng(1)
    shuffled = v.copy()
    for i in range(eng.m_levels):     # V to the exact mean per level, as the model
        idx = np.nonzero(lev == i)[0]
        v[idx] *= rj_mean[i] / v[idx].mean()
        shuffled[idx] = v[rng.permutation(idx)]
    ref, se = _ber_terms(eng, z, lev, nv_other[lev] + v)
    indep, _ = _ber_terms(eng, z, lev, nv_other[lev] + shuffled)
    print(f"\noffset {c0:+.3f}: model {model:.4e}, joint sample {ref:.4e} +- {se:.1e}, "
          f"V independent of x {indep:.4e}")
    assert se < 0.07 * ref
    assert abs(model - ref) < 4 * se + 0.05 * ref
    if c0 != 0.0:   # at an offset the independence is far off: the check can tell
        assert abs(indep - ref) > 4 * se + 0.3 * ref


@pytest.mark.parametrize("c0,over", CASES)
def test_joint_rj_matches_slow_monte_carlo(c0, over):
    system = build(Config.default().with_overrides(SMALL + over))
    eng = StatisticalEngine(system)
    model = eng.ber(c0).ber
    f, jvar = eng.response(c0)
    nv_other, _ = eng._noise_var_per_level(f, jvar)
    rng = np.random.default_rng(20261202)
    n = 1 << 18
    a = eng.levels[rng.integers(0, eng.m_levels, n)]
    j = rng.normal(0.0, eng.rj_ui, n)
    p = system.link.pulse
    h = resample(p, (c0 + j) * p.m)
    ref, se = naive.rj_slicer_ber(h, a, eng.w, eng.d, eng.levels, eng.thresholds,
                                  eng.bit_errors, np.sqrt(nv_other))
    print(f"\noffset {c0:+.3f}: model {model:.4e}, slow MC {ref:.4e} +- {se:.1e} "
          f"(ratio {model / ref:.3f})")
    assert se < 0.07 * ref, "the Monte Carlo is too short to judge"
    assert abs(model - ref) < 4 * se + 0.05 * ref


def test_joint_rj_agrees_with_counted_at_offset():
    system = build(Config.default().with_overrides(["cdr.mode=mm", "dfe.taps=0"]))
    taps = design_equalizer(system)
    c0 = 0.125
    lk = copy.copy(system.link)
    lk.impairments = replace(lk.impairments, offset_ui=c0)
    stat = StatisticalEngine(replace(system, link=lk), taps).ber(0.0).ber
    pipe = pipeline(system, taps, seed=system.run.seed)
    pipe.front.kp = pipe.front.ki = 0.0            # the loop opened at a fixed phase
    pipe.front.state[0], pipe.front.state[1] = c0, 0.0
    cnt = ErrorCounter(system.link.modulation_order, skip=0)
    pipe.run(1_200_000, chunk=1 << 16, observers=[cnt], target_errors=0)
    lo, hi = clopper_pearson(cnt.bit_errors, cnt.bits, 0.95)
    print(f"\ncounted {cnt.ber:.3e} [{lo:.2e}, {hi:.2e}] ({cnt.bit_errors} errors), "
          f"statistical {stat:.3e}, counted / stat {cnt.ber / stat:.3f}")
    assert hi / lo < 1.2, "the count is too short to judge"
    assert lo <= stat <= hi


def test_rj_rows_where_the_pulse_is_out_of_reach(capsys):
    """TX SJ of 1000 UI (allowed: tx_jitter.sj_ui <= 1000) moves some rows' sampling
    instants past the whole pulse: no sample carries jitter variance there, and the RJ
    classes' support was the empty range past the pulse (a ConfigError from the kernel's
    argument check, 'lo: must be in 0..63', ended the run). Such a row has no RJ term."""
    from serdes.cli import main

    code = main(["run", "--threads", "1", "--set", "link.symbols=5000",
                 "--set", "tx_jitter.sj_ui=1000"])
    out = capsys.readouterr()
    assert code == 0, out.err
    line = next(s for s in out.out.splitlines() if s.startswith("stat BER"))
    assert 0.0 <= float(line.split()[2]) <= 0.5
