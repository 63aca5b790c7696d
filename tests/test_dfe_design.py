"""DFE design and references: the FFE re-optimised around a clipped DFE tap (against a
brute-force check of its optimality and the counted BER), and the genie-fed DFE (against
the Gaussian closed form)."""

import numpy as np
import pytest

from conftest import EARLIER_DEFAULT
from serdes.build import build
from serdes.config import Config
from serdes.dsp.blocks import Chain, GenieDfe
from serdes.dsp.mmse import convolution_matrix, mmse_ffe_dfe, mmse_ffe_fixed, mmse_ffe_free
from serdes.dsp.receiver import build_chain
from serdes.engines.run import design_equalizer, simulate
from serdes.metrics.ber import clopper_pearson, pam4_gray_ber_awgn

LEVELS = np.array([-1.0, -1 / 3, 1 / 3, 1.0])


def _system(*extra, precoding="false"):
    return build(Config.default().with_overrides(EARLIER_DEFAULT).with_overrides(["noise.rj_ui=0", "link.target_errors=0",
                                                  f"link.precoding={precoding}", *extra]))


def _design(system, reoptimise):
    L = system.link
    spec = system.receiver
    return mmse_ffe_dfe(L.pulse.taps, L.pulse.cursor, L.sampled_noise_autocorr(spec.ffe_taps),
                        n_taps=spec.ffe_taps, n_pre=spec.ffe_pre, n_dfe=spec.dfe_taps,
                        level_power=L.level_power, dfe_limit=spec.dfe_limit,
                        reoptimise=reoptimise)


def _error_power(w, h, d, rn, s2, b):
    """Slow reference: s2 |f - delta_d - b at lags 1..|^2 + w^T R_n w, f = w * h."""
    f = np.convolve(w, h)
    e = f.copy()
    e[d] -= 1.0
    e[d + 1:d + 1 + len(b)] -= b
    n = len(w)
    Rn = np.array([[rn[abs(i - j)] if abs(i - j) < len(rn) else 0.0 for j in range(n)]
                   for i in range(n)])
    return s2 * float(e @ e) + float(w @ Rn @ w)


def test_fixed_design_without_fixed_lags_is_the_unbiased_mmse_design():
    L = _system("channel.loss_db=30").link
    rn = L.sampled_noise_autocorr(24)
    w0, f0, _ = mmse_ffe_free(L.pulse.taps, L.pulse.cursor, rn, n_taps=24, n_pre=4,
                              free_lags=[1, 2], level_power=L.level_power)
    w1, f1, _, _ = mmse_ffe_fixed(L.pulse.taps, L.pulse.cursor, rn, n_taps=24, n_pre=4,
                                  free_lags=[1, 2], fixed={}, level_power=L.level_power)
    np.testing.assert_allclose(w1, w0, rtol=1e-7, atol=1e-9 * np.abs(w0).max())


@pytest.mark.parametrize("loss", [35, 38])
def test_clipped_tap_reoptimised_design_is_optimal_and_better(loss):
    system = _system(f"channel.loss_db={loss}", "dfe.taps=2")
    L = system.link
    h, s2 = L.pulse.taps, L.level_power
    rn = L.sampled_noise_autocorr(24)
    old, new = _design(system, False), _design(system, True)
    assert old.dfe[0] == 1.0 and new.dfe[0] == 1.0       # the first tap is at the limit
    assert new.predicted_snr_db >= old.predicted_snr_db
    d = new.delay
    e_new = _error_power(new.ffe, h, d, rn, s2, new.dfe)
    e_old = _error_power(old.ffe, h, d, rn, s2, old.dfe)
    # the predicted SNRs are the slow reference's error powers
    assert 10 * np.log10(s2 / e_new) == pytest.approx(new.predicted_snr_db, abs=1e-6)
    assert 10 * np.log10(s2 / e_old) == pytest.approx(old.predicted_snr_db, abs=1e-6)
    # optimality: no feasible step (f_d = 1 kept, tap 1 fixed, tap 2 following f) helps
    H = convolution_matrix(h, 24)
    rng = np.random.default_rng(loss)
    for _ in range(50):
        v = rng.normal(size=24)
        v -= H[:, d] * (v @ H[:, d]) / (H[:, d] @ H[:, d])     # keeps f_d
        for eps in (1e-3, -1e-3):
            w = new.ffe + eps * v * np.abs(new.ffe).max()
            b = np.array([1.0, np.clip((w @ H)[d + 2], -1, 1)])
            assert _error_power(w, h, d, rn, s2, b) >= e_new * (1 - 1e-9)


def test_clipped_tap_reoptimised_counts_no_worse():
    system = _system("channel.loss_db=38", "dfe.taps=2")
    runs = {}
    for reopt in (False, True):
        t = _design(system, reopt)
        taps = design_equalizer(system).__class__(ffe=t.ffe, dfe=t.dfe, delay=t.delay,
                                                  combined=t.combined,
                                                  predicted_snr_db=t.predicted_snr_db)
        runs[reopt] = simulate(system, symbols=300_000, taps=taps)
    print(f"\n38 dB, 2-tap DFE clipped: counted {runs[False].ber:.3e} {runs[False].ber_ci} "
          f"without re-optimisation, {runs[True].ber:.3e} {runs[True].ber_ci} with")
    assert runs[True].ber_ci[0] <= runs[False].ber_ci[1]


def test_genie_dfe_matches_the_gaussian_closed_form_in_chunks():
    """u = a_k + 0.8 a_{k-1} + white noise, fed back with the true symbols: the slicer sees
    a_k + noise, so the BER is Gray PAM4 in AWGN."""
    rng = np.random.default_rng(7)
    n, sigma = 400_000, 0.14
    idx = rng.integers(0, 4, n + 1)
    a = LEVELS[idx]
    u = a[1:] + 0.8 * a[:-1] + sigma * rng.normal(size=n)
    g = GenieDfe([0.8], LEVELS)
    g._hist[:] = a[0]
    cuts = [0, 1, 777, n // 2, n]
    out = [g(u[p:q], p, ref=a[1 + p:1 + q]) for p, q in zip(cuts[:-1], cuts[1:])]
    dec = np.concatenate([o.decisions for o in out])
    np.testing.assert_allclose(np.concatenate([o.soft for o in out]), u - 0.8 * a[:-1],
                               atol=1e-12)
    gray = np.array([0, 1, 3, 2])
    bits = np.unpackbits((gray[dec] ^ gray[idx[1:]]).astype(np.uint8)[:, None], axis=1).sum()
    lo, hi = clopper_pearson(int(bits), 2 * n, 0.99)
    assert lo <= pam4_gray_ber_awgn(sigma) <= hi


def test_genie_dfe_in_the_pipeline_has_no_error_propagation():
    system = _system("channel.loss_db=35")
    taps = design_equalizer(system)
    chain = build_chain(system.link, taps, system.receiver, seed=system.run.seed)
    chain.blocks[-1] = GenieDfe(taps.dfe, system.link.levels)
    assert isinstance(chain, Chain) and chain.genie
    genie = simulate(system, symbols=300_000, taps=taps, receiver=chain)
    fed = simulate(system, symbols=300_000, taps=taps)
    # slicer SNR of the genie DFE is the design's (error-free feedback), within 0.1 dB
    assert genie.snr_db == pytest.approx(taps.predicted_snr_db, abs=0.1)
    assert genie.ber_ci[1] < fed.ber_ci[0] / 2
    assert max(genie.bursts) <= 3 < max(fed.bursts)


def test_auto_precoding_asks_for_it_where_it_lowers_the_counted_ber():
    from serdes.dsp.design import PRECODING_FIRST_TAP

    default = build(Config.default().with_overrides(EARLIER_DEFAULT))
    assert design_equalizer(default).dfe[0] < PRECODING_FIRST_TAP
    assert not default.source.precoding                     # default link: b1 0.51, off
    assert not _system("channel.loss_db=35", "eq.detector=mlse",
                       precoding="auto").source.precoding
    assert not _system("channel.loss_db=35").source.precoding
    auto = _system("channel.loss_db=30", precoding="auto")
    assert auto.source.precoding and design_equalizer(auto).dfe[0] >= PRECODING_FIRST_TAP
    on = simulate(auto, symbols=1_000_000)
    off = simulate(_system("channel.loss_db=30", "link.precoding=false"), symbols=1_000_000)
    print(f"\n30 dB, DFE 1: precoding on {on.ber:.3e} {on.ber_ci}, off {off.ber:.3e} {off.ber_ci}")
    assert on.ber_ci[1] < off.ber_ci[0]


@pytest.mark.parametrize("loss,symbols", [(30, 2_000_000), (35, 400_000)])
def test_propagation_model_predicts_the_precoded_count(loss, symbols):
    """The Markov model's bursts, two one-bit decoded errors each, against the counted
    BER of the same link with 1/(1+D) precoding (99 % interval)."""
    from serdes.engines.stat import StatisticalEngine, dfe_error_propagation

    system = _system(f"channel.loss_db={loss}", precoding="true")
    taps = design_equalizer(system)
    model = dfe_error_propagation(StatisticalEngine(system, taps))
    res = simulate(system, symbols=symbols, taps=taps)
    lo, hi = clopper_pearson(res.bit_errors, res.bits, 0.99)
    print(f"\n{loss} dB precoded: counted {res.ber:.3e} [{lo:.3e}, {hi:.3e}], model "
          f"{model['ber_precoded']:.3e} (without precoding {model['ber_with_propagation']:.3e})")
    assert lo <= model["ber_precoded"] <= hi
