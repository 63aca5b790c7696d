"""Numbers of the statistical engine pinned from before it was split into modules and
before its noise terms were taken from :mod:`serdes.impairments`: the split and the
shared budget change no result (1e-11 relative; the values are deterministic, so any
larger difference is a change of model, not noise).

The cases cover every code path that feeds a number: the default link (BER, SER, per-eye
BER, SNDR, per-level sigma with RJ, residual ISI, eye openings from both bathtubs, ADC
clip probability at two phases, DFE error propagation), Gaussian quantization with
dual-Dirac jitter, the statistical eye, and sinusoidal jitter both faster than the
equalizer span (per-tap offsets) and quasi-static (interpolated phase grid).
The link is the earlier default (conftest.EARLIER_DEFAULT: package-trace loss split, CTLE
at -8 dB, ENOB 5), which the numbers were pinned on.
"""

import numpy as np
import pytest

from serdes.build import build
from serdes.config import Config
from serdes.engines.stat import StatisticalEngine, dfe_error_propagation

from conftest import earlier_default

PINNED = {
    'default_ber': [
        5.941311305575278e-06, 1.1882622611150555e-05, 1.9813786033773394e-06,
        1.9785540988206014e-06, 1.9813786033773377e-06, 19.677459771033774, 0.07389479175970648,
        0.07388309833375208, 0.07388309833375208, 0.07389479175970648, 0.014388651913853284
    ],
    'default_opening': [
        0.294111632382423, 0.29413857040592684, 0.29411163238242294, 0.17881479424572438,
        0.17885015629503304, 0.17881479424572438, 0.24003992711326227, 0.24864334140599495,
        0.24003992711326227, 0.15502845813028365, 0.15952837306366777, 0.1550284581302837
    ],
    'default_clip': [
        1.5119440814955599e-28, 4.262277832518401e-28
    ],
    'default_prop': [
        9.860692178269007e-06, 1.6596827991517318
    ],
    'gauss_dd_ber': [
        1.5566951867604045e-05, 0.00019821896748520518
    ],
    'eye': [
        -1069.7670985612453, 0.006130183956142992, 0.08153197497395068
    ],
    'sj_fast': [
        2.321689255094738e-05, 0.24568613656129767, 0.1286394610683253, 0.01730101606920045,
        2.321689255094738e-05, 0.024220528701923514, 0.14784765163447255
    ],
    'sj_slow': [
        2.4494859668668635e-05, 0.24499195428316523, 0.12588902970680615, 0.015666921850353448,
        3.531750313015241e-05, 0.02185176562863486, 0.1454733056878221, -1043.1544316649968
    ],
}


@pytest.fixture(scope="module")
def computed():
    out = {}
    s = build(earlier_default())
    e = StatisticalEngine(s)
    b = e.ber(0.0)
    out["default_ber"] = [b.ber, b.ser, *b.ber_per_eye.tolist(), b.sndr_db, *b.sigma.tolist(),
                          b.isi_rms]
    op = e.eye_opening(targets=(1e-3, 1e-4))
    out["default_opening"] = op.height.ravel().tolist() + op.width_ui.ravel().tolist()
    out["default_clip"] = [e.clip_probability(0.0), e.clip_probability(0.1)]
    prop = dfe_error_propagation(e)
    out["default_prop"] = [prop["ber_with_propagation"], prop["ratio"]]
    eg = StatisticalEngine(s, e.taps, quantization="gaussian", dd_ui=0.03)
    out["gauss_dd_ber"] = [eg.ber(0.0).ber, eg.ber(0.05).ber]
    ey = e.eye(n_phases=8, n_bins=32)
    out["eye"] = [float(np.log(ey.ber).sum()), float(ey.ber[4, 10]), float(ey.ber[0, 16])]
    e2 = StatisticalEngine(build(earlier_default("noise.sj_ui=0.05", "noise.sj_hz=3.1e9")))
    assert not e2.jitter.quasi_static
    out["sj_fast"] = [e2.ber(0.0).ber, *e2.bathtub_horizontal(n_phases=6).ber.tolist()]
    e3 = StatisticalEngine(build(earlier_default("noise.sj_ui=0.05", "noise.sj_hz=1e6")))
    assert e3.jitter.quasi_static
    out["sj_slow"] = [e3.ber(0.0).ber, *e3.bathtub_horizontal(n_phases=6).ber.tolist(),
                      float(np.log(e3.eye(n_phases=8, n_bins=32).ber).sum())]
    return out


@pytest.mark.parametrize("case", sorted(PINNED))
def test_statistical_numbers_unchanged(computed, case):
    got = np.asarray(computed[case], dtype=np.float64)
    want = np.asarray(PINNED[case], dtype=np.float64)
    assert got.shape == want.shape
    # 1e-11: the loss line's coefficients now come through split_coefficients, one ulp
    # (2.2e-16) off the constants, which the 1e-28 clip tail and the DFE Markov solve
    # amplify to 4e-12; any change of model moves these numbers by far more
    np.testing.assert_allclose(got, want, rtol=1e-11, atol=0.0, err_msg=case)


def test_engine_gaussian_noise_is_the_design_budget_through_the_ffe():
    """At the nominal phase, the engine's Gaussian noise averaged over the levels (with the
    quantization taken as Gaussian) is w^T R w with R the equalizer design's budget
    (serdes.impairments.design_autocorr): one budget, two users."""
    from scipy.linalg import toeplitz

    from serdes.impairments import design_autocorr

    system = build(Config.default().with_overrides(["adc.enob=5.5"]))
    eng = StatisticalEngine(system, quantization="gaussian")
    assert eng.enob_var > 0 and eng.quant_var > 0 and eng.rj_ui > 0 and eng.sigma_tx > 0
    w = eng.w
    want = float(w @ toeplitz(design_autocorr(system.link, w.shape[0])) @ w)
    got = float(np.mean(eng.distribution(0.0).noise_var))
    assert got == pytest.approx(want, rel=1e-12)
