"""The calibrated interleaved ADC in the statistical engine: the mismatch the background
calibration keeps after settling (closed forms of serdes.tiadc.cal_residual) against
the residual measured on a 64-lane run, and the statistical BER against the counted one
on that run (within 1.5x of the counted 95 % interval)."""

import numpy as np
import pytest
from scipy import stats

from serdes.build import build
from serdes.config import Config
from serdes.dsp.receiver import build_chain
from serdes.dsp.ti_cal import TiCalibration, residuals
from serdes.engines.run import simulate
from serdes.tiadc import cal_residual
from serdes.tiadc.stat import InterleavedStatistics, statistical_engine

# a noisy link (BER ~1e-3), no link RJ, fixed CTLE, as tests/test_tiadc_ber.py
BASE = ["noise.rj_ui=0", "channel.loss_db=30", "tx.snr_db=21", "ctle.auto=false",
        "ctle.g_dc_db=-19", "ctle.g_dc2_db=-2"]
# 64 lanes with drawn mismatch and a 20 mV supply tone, calibrated with the default
# settings (settling 75,000 symbols per lane)
LANES64 = ["adc.lanes=64", "adc.offset_rms_v=3e-3", "adc.gain_rms=0.03",
           "adc.skew_rms_s=0.3e-12", "adc_cal.enabled=true", "supply.ripple_hz=[1e8]",
           "supply.ripple_mv=[20]", "supply.delay_ps_per_mv=1", "supply.psrr_db=40",
           "supply.psrr_pole_hz=1e7"]
COUNT = 600_000


def _quantiles(eig, q, draws=50_000):
    """Quantiles of mean_k(eig_k z_k^2) (z unit normals): the rms^2 over the lanes of
    Gaussian residuals whose covariance has the eigenvalues ``eig`` (chi-square when
    they are equal)."""
    pos = eig[eig > 0]
    if np.all(pos == pos[0]):
        return pos[0] * stats.chi2.ppf(q, pos.shape[0]) / eig.shape[0]
    z = np.random.default_rng(7).standard_normal((draws, eig.shape[0]))
    return np.quantile((z ** 2) @ eig / eig.shape[0], q)


@pytest.fixture(scope="module")
def run64():
    system = build(Config.default().with_overrides(BASE + LANES64))
    eng = statistical_engine(system)
    assert isinstance(eng, InterleavedStatistics)
    chain = build_chain(system.link, eng.taps, system.receiver, seed=system.run.seed)
    settle = system.link.adc.calibration.settle_symbols
    res = simulate(system, symbols=settle + COUNT, target_errors=10 ** 9, receiver=chain,
                   taps=eng.taps)
    return system, eng, chain, res


def test_64_lane_calibration_converges_to_its_closed_form_residual(run64):
    system, _, chain, _ = run64
    link, adc = system.link, system.link.adc
    cal = chain.find(TiCalibration)
    r = residuals(adc, cal.history)
    s = cal.settings
    n = adc.lanes
    # the records after settling: the mean of their rms^2 has (time averaging, correlated
    # records) a distribution no wider than one record's, whose quantiles bound it
    after = r["samples"] > s.settle_symbols
    assert after.sum() >= 5

    def ms(key):
        return float(np.mean(r[key][after] ** 2))

    lo, hi = 0.001, 0.999
    # offsets: independent per lane; gains: relative to their mean (N - 1 dof)
    so2 = cal_residual.offset_variance(link, s)
    assert _quantiles(np.full(n, so2), lo) < ms("offset_rms_v") < _quantiles(np.full(n, so2), hi)
    sg2 = cal_residual.gain_variance(link, s)
    eg = np.r_[np.full(n - 1, sg2), 0.0]
    assert _quantiles(eg, lo) < ms("gain_rms") < _quantiles(eg, hi)
    # skew: circulant covariance over the lanes (its eigenvalues), in s^2
    c = cal_residual.skew_covariance(link, s, system.run.chunk_symbols) * link.ui_s ** 2
    cmat = c[np.subtract.outer(np.arange(n), np.arange(n)) % n]
    es = np.clip(np.linalg.eigvalsh(cmat), 0, None)
    assert _quantiles(es, lo) < ms("skew_rms_s") < _quantiles(es, hi)
    # and the mismatch it started from is gone: gain 3 %, offset 3 mV rms
    assert r["gain_rms"][-1] < 0.03 / 3 and r["offset_rms_v"][-1] < 3e-3 / 3


def test_64_lane_calibrated_stat_agrees_with_counted(run64):
    _, eng, _, res = run64
    stat = eng.ber().ber
    lo, hi = res.ber_ci
    assert res.bit_errors >= 30, "too few errors to compare"
    assert lo <= 1.5 * stat and hi >= stat / 1.5, (res.ber, (lo, hi), stat)


def test_calibrated_lanes_are_alike_and_cost_what_the_residual_says():
    """Calibrated lanes: one output phase stands for all; the residual terms vanish with
    the calibration's steps (mu = 0, skew gain 0 keep the raw lanes)."""
    system = build(Config.default().with_overrides(BASE + ["adc.lanes=16",
                                                           "adc.skew_rms_s=1e-12",
                                                           "adc_cal.enabled=true"]))
    eng = statistical_engine(system)
    assert eng.phases.tolist() == [0] and eng.cal_skew is not None
    assert eng.cal_skew.common_var > 0 and eng.cal_var["offset"] > 0
    still = build(Config.default().with_overrides(BASE + [
        "adc.lanes=16", "adc.skew_rms_s=1e-12", "adc_cal.enabled=true", "adc_cal.mu_offset=0",
        "adc_cal.mu_gain=0", "adc_cal.skew_gain=0"]))
    raw = statistical_engine(build(Config.default().with_overrides(
        BASE + ["adc.lanes=16", "adc.skew_rms_s=1e-12"])))
    e2 = statistical_engine(still, raw.taps)
    assert e2.cal_skew is None and e2.cal_var == {"offset": 0.0, "gain": 0.0}
    assert e2.ber().ber == pytest.approx(raw.ber().ber, rel=1e-12)


def test_lane_average_is_exact_up_to_64_lanes_and_its_sample_error_bounded_beyond():
    """64 lanes: every output phase, the mean of the per-phase BERs computed one by one.
    128 lanes: a systematic sample of 64 phases, within 4 standard errors (its own
    estimate) of the mean over all 128."""
    import serdes.tiadc.stat as st

    mism = ["adc.skew_rms_s=2e-12", "adc.offset_rms_v=3e-3", "adc.gain_rms=0.03"]
    for lanes in (64, 128):
        system = build(Config.default().with_overrides(BASE + mism + [f"adc.lanes={lanes}"]))
        eng = statistical_engine(system)
        got = eng.ber().ber
        per = []
        for l in range(lanes):
            eng._set_phase(l)
            per.append(st.StatisticalEngine.ber(eng).ber)
        exact = float(np.mean(per))
        if lanes == 64:
            assert eng.phases.shape[0] == 64 and eng.sampling_rel_error == 0.0
            assert got == pytest.approx(exact, rel=1e-12)
        else:
            assert eng.phases.shape[0] == 64 and eng.sampling_rel_error > 0
            assert abs(got - exact) <= 4 * eng.sampling_rel_error * got


# the default (quiet) link, 64 lanes with 0.3 ps skew, calibrated, the skew trimmed every
# 16 k symbols: the trims' noise leaves a skew residual that dominates the errors
# (BER ~2e-6), where the lanes' residual is quasi-static against the data
QUIET64 = ["adc.lanes=64", "adc.skew_rms_s=0.3e-12", "adc_cal.enabled=true",
           "link.chunk_symbols=16384"]


def test_skew_rest_mode_splits_the_gaussian_term_without_losing_variance():
    """The rest's costliest direction (quadrature) plus what stays Gaussian is the whole
    first-order cost E[a^2] w'(K o G)w at the pulse peak."""
    system = build(Config.default().with_overrides(QUIET64))
    eng = statistical_engine(system)
    sk = eng.cal_skew
    slope = system.link.pulse.slope(0.0)
    n, L = eng.w.shape[0], slope.shape[0]
    m = np.zeros((n, n + L - 1))
    for i in range(n):
        m[i, i:i + L] = slope
    g = m @ m.T
    mode_cost = sk._ea * float((eng.w * sk.mode) @ g @ (eng.w * sk.mode))
    whole = sk._ea * float(np.sum((sk._wcw + np.outer(eng.w * sk.mode, eng.w * sk.mode)) * g))
    assert sk.variance() + mode_cost == pytest.approx(whole, rel=1e-9)
    assert mode_cost > sk.variance()      # one direction carries most of the cost


def test_quiet_link_calibrated_stat_agrees_with_counted_at_low_ber(monkeypatch):
    """The skew residual times the data is a Gaussian scale mixture, not a Gaussian: taken
    as Gaussian noise, stat read 4.2e-7 here against 1.1e-5 counted. The BER model is
    checked given the residual this run reached (its mean square over the records after
    settling against the closed form's, a ratio of ~1.1 here; the closed forms themselves
    are checked against the measured residual above)."""
    cfg = QUIET64 + ["tx.snr_db=27"]
    system = build(Config.default().with_overrides(cfg))
    eng = statistical_engine(system)
    chain = build_chain(system.link, eng.taps, system.receiver, seed=system.run.seed)
    s = system.link.adc.calibration
    res = simulate(system, symbols=s.settle_symbols + 8_000_000, target_errors=10 ** 9,
                   receiver=chain, taps=eng.taps)
    link, n = system.link, system.link.adc.lanes
    r = residuals(link.adc, chain.find(TiCalibration).history)
    after = r["samples"] > s.settle_symbols
    chunk = system.run.chunk_symbols
    ratio = {
        "offset": np.mean(r["offset_rms_v"][after] ** 2) / cal_residual.offset_variance(link, s),
        "gain": np.mean(r["gain_rms"][after] ** 2)
        / (cal_residual.gain_variance(link, s) * (n - 1) / n),
        "skew": np.mean(r["skew_rms_s"][after] ** 2)
        / (cal_residual.skew_covariance(link, s, chunk)[0] * link.ui_s ** 2)}
    assert all(0.7 < v < 1.5 for v in ratio.values()), ratio
    for name, fn in (("offset", "offset_variance"), ("gain", "gain_variance"),
                     ("skew", "skew_covariance")):
        f = getattr(cal_residual, fn)
        monkeypatch.setattr(cal_residual, fn, lambda *a, f=f, k=ratio[name]: k * f(*a))
    stat = statistical_engine(build(Config.default().with_overrides(cfg)), eng.taps).ber().ber
    lo, hi = res.ber_ci
    assert res.bit_errors >= 50, "too few errors to compare"
    assert 1e-6 <= res.ber <= 2e-5
    assert lo <= 1.5 * stat and hi >= stat / 1.5, (res.ber, (lo, hi), stat, ratio)


IS_MODES, KAPPA = 4, 1.6


def test_skew_state_average_agrees_with_monte_carlo_over_whole_lane_states():
    """The calibrated statistical BER averages over the trims' residual state: the lane
    at the main cursor and the rest's costliest direction exactly (Gauss-Hermite), the
    rest Gaussian. Reference: draws of the whole 64-lane residual from its closed-form
    circulant covariance, each draw's BER computed exactly as static lane skews (output
    phase 0 stands for all: the draws are alike under a lane shift), on the same link
    and taps. The per-draw BER is heavy-tailed (a few draws carry most of the mean:
    the count's errors cluster the same way), so the check is against the Monte-Carlo
    mean's own 99 % interval (its standard error from the draws; antithetic pairs, and
    the dominant lane modes importance-sampled so the tail is drawn often)."""
    import serdes.tiadc.stat as st
    from serdes.engines.stat.engine import StatisticalEngine

    system = build(Config.default().with_overrides(QUIET64 + ["tx.snr_db=27"]))
    eng = statistical_engine(system)
    model = eng.ber().ber
    keep = st._with_gaussian_offset
    st._with_gaussian_offset = lambda jitter, var, profile, points: jitter
    try:
        fixed = statistical_engine(system, eng.taps)     # the same link, no state average
    finally:
        st._with_gaussian_offset = keep
    fixed.cal_skew, fixed._skew_var = None, 0.0
    link, s = system.link, system.link.adc.calibration
    n = link.adc.lanes
    c = cal_residual.skew_covariance(link, s, system.run.chunk_symbols)
    ev, u = np.linalg.eigh(c[np.subtract.outer(np.arange(n), np.arange(n)) % n])
    half = u * np.sqrt(np.clip(ev, 0.0, None))
    # importance sampling: the few dominant lane modes (which carry the tail) drawn
    # wider by KAPPA, each draw weighted by its likelihood ratio
    top = np.argsort(ev)[-IS_MODES:]
    rng = np.random.default_rng(11)
    draws = 600
    b = np.empty(draws)
    for m in range(draws):
        z = rng.standard_normal(n)
        z[top] *= KAPPA
        wt = float(np.prod(KAPPA * np.exp(-0.5 * z[top] ** 2 * (1 - 1 / KAPPA ** 2))))
        pair = []
        for sign in (1.0, -1.0):
            fixed.skew_ui = sign * (half @ z)
            fixed._set_phase(0)
            pair.append(StatisticalEngine.ber(fixed).ber)
        b[m] = wt * np.mean(pair)
    mc, se = float(b.mean()), float(b.std(ddof=1) / np.sqrt(draws))
    assert abs(model - mc) <= stats.norm.ppf(0.995) * se, (model, mc, se)
