"""Numbers of the statistical engine pinned from before it was split into modules and
before its noise terms were taken from :mod:`serdes.impairments`: the split and the
shared budget change no result (1e-12 relative; the values are deterministic, so any
larger difference is a change of model, not noise). Re-pinned once for such a change:
the transmitted UI's fine-grid rectangle centred at T/2 instead of half a fine sample
early (default stat BER 5.94e-6 -> 6.39e-6, SNDR 19.677 -> 19.645 dB). The two eye-map
sums were re-pinned when the map became periodic (neighbouring symbols' eyes shown
beyond half a UI): only the map changed, no BER.

The cases cover every code path that feeds a number: the default link (BER, SER, per-eye
BER, SNDR, per-level sigma with RJ, residual ISI, eye openings from both bathtubs, ADC
clip probability at two phases, DFE error propagation), Gaussian quantization with
dual-Dirac jitter, the statistical eye, and sinusoidal jitter both faster than the
equalizer span (per-tap offsets) and quasi-static (interpolated phase grid).
"""

import numpy as np
import pytest

from serdes.build import build
from serdes.config import Config
from serdes.engines.stat import StatisticalEngine, dfe_error_propagation

PINNED = {
    'default_ber': [
        6.392442536368889e-06, 1.2784885072737778e-05, 2.131962769095764e-06,
        2.128516998177361e-06, 2.131962769095764e-06, 19.645254724176688, 0.07417064349009446,
        0.07415723642455506, 0.07415723642455506, 0.07417064349009446, 0.014490372919372057
    ],
    'default_clip': [
        2.753573161833995e-28, 7.580646872912532e-28
    ],
    'default_opening': [
        0.2927244150899865, 0.29275528167076054, 0.2927244150899865, 0.176992413040725,
        0.1770329671934319, 0.17699241304072494, 0.23598712968567395, 0.24341918196455242,
        0.23598712968567395, 0.15157201400689244, 0.15542747422352682, 0.15157201400689244
    ],
    'default_prop': [
        1.0836555306559219e-05, 1.6952135658484506
    ],
    'eye': [
        -1128.522284104049, 0.0062081189726925275, 0.08016264906658079
    ],
    'gauss_dd_ber': [
        1.7041209923900618e-05, 0.00022907628382546518
    ],
    'sj_fast': [
        2.564437785139965e-05, 0.24282361198762448, 0.1271753198986772, 0.017691681668957834,
        2.564437785139965e-05, 0.026273324298462672, 0.15156977017815693
    ],
    'sj_slow': [
        2.7091796433733178e-05, 0.24212654660184815, 0.12455845873222236, 0.01602357583661386,
        3.8955068077726754e-05, 0.02368039942967007, 0.1492543873332952, -1099.0907351165497
    ],
}


@pytest.fixture(scope="module")
def computed():
    out = {}
    s = build()
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
    e2 = StatisticalEngine(build(Config.default().with_overrides(
        ["noise.sj_ui=0.05", "noise.sj_hz=3.1e9"])))
    assert not e2.jitter.quasi_static
    out["sj_fast"] = [e2.ber(0.0).ber, *e2.bathtub_horizontal(n_phases=6).ber.tolist()]
    e3 = StatisticalEngine(build(Config.default().with_overrides(
        ["noise.sj_ui=0.05", "noise.sj_hz=1e6"])))
    assert e3.jitter.quasi_static
    out["sj_slow"] = [e3.ber(0.0).ber, *e3.bathtub_horizontal(n_phases=6).ber.tolist(),
                      float(np.log(e3.eye(n_phases=8, n_bins=32).ber).sum())]
    return out


@pytest.mark.parametrize("case", sorted(PINNED))
def test_statistical_numbers_unchanged(computed, case):
    got = np.asarray(computed[case], dtype=np.float64)
    want = np.asarray(PINNED[case], dtype=np.float64)
    assert got.shape == want.shape
    np.testing.assert_allclose(got, want, rtol=1e-12, atol=0.0, err_msg=case)


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
