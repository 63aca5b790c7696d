"""The link model against closed forms: PAM4 in AWGN, an RC pole, the TX edge, noise."""

import numpy as np
import pytest
from scipy import optimize

from conftest import ideal_config
from serdes.engines.run import simulate
from serdes.build import build, build_link
from serdes.metrics.ber import clopper_pearson, pam4_gray_ber_awgn, pam_ser_awgn


def _sigma_for_ber(target):
    return optimize.brentq(lambda s: pam4_gray_ber_awgn(s) - target, 1e-3, 2.0)


@pytest.mark.parametrize("target, symbols", [(1e-2, 100_000), (1e-3, 400_000),
                                             (1e-4, 2_000_000), (1e-5, 8_000_000)])
def test_pam4_awgn_ber_matches_closed_form(target, symbols):
    """Counted BER on the ideal channel lies in its 99% Clopper-Pearson interval around
    the exact Gray-coded PAM4 BER for the noise the link model says it has."""
    sigma = _sigma_for_ber(target)  # in units of the outer level
    probe_sys = build(ideal_config(noise={"eta0_v2_per_ghz": 1e-9}))
    probe = probe_sys.link
    h0 = probe.pulse.taps[probe.pulse.cursor]
    isi = np.delete(probe.pulse.taps, probe.pulse.cursor)
    assert np.max(np.abs(isi)) < 1e-9 * h0  # the link really is ISI-free
    # noise variance scales with eta0: pick eta0 so that sigma_v / h0 = sigma
    eta0 = 1e-9 * (sigma * h0) ** 2 / probe.noise.variance
    system = build(ideal_config(noise={"eta0_v2_per_ghz": eta0}))
    link = system.link
    res = simulate(system, symbols=symbols, target_errors=0, seed=7)
    expected = pam4_gray_ber_awgn(np.sqrt(link.noise.variance) / link.pulse.taps[link.pulse.cursor])
    assert expected == pytest.approx(target, rel=1e-6)
    lo, hi = clopper_pearson(res.bit_errors, res.bits, 0.99)
    assert lo <= expected <= hi, (res.bit_errors, res.bits, expected)
    lo, hi = clopper_pearson(res.symbol_errors, res.symbols, 0.99)
    h0 = link.pulse.taps[link.pulse.cursor]
    assert lo <= pam_ser_awgn(4, np.sqrt(link.noise.variance) / h0) <= hi


def test_pam4_gray_ber_formula_against_monte_carlo_free_enumeration():
    """The closed form against a direct numerical integration over the noise density."""
    from scipy import integrate, stats

    sigma = 0.2
    lv = np.array([-1, -1 / 3, 1 / 3, 1])
    th = np.array([-2 / 3, 0, 2 / 3])
    gray = [0b00, 0b01, 0b11, 0b10]
    total = 0.0
    for i, a in enumerate(lv):
        edges = np.concatenate([[-np.inf], th, [np.inf]])
        for j in range(4):
            p = stats.norm.cdf(edges[j + 1], a, sigma) - stats.norm.cdf(edges[j], a, sigma)
            total += p * bin(gray[i] ^ gray[j]).count("1")
    assert pam4_gray_ber_awgn(sigma) == pytest.approx(total / 8, rel=1e-12)
    assert integrate is not None


def test_single_pole_pulse_response_matches_analytic():
    """A rectangular UI through one RC pole: A(1-exp(-t/tau)) then an exponential decay.

    The FFT model band-limits the rectangle to fs/2; the resulting deviation from the
    continuous closed form is bounded by 2/pi x f3dB/(fs/2) of the amplitude (the
    spectrum A/(pi f) x f3dB/f beyond fs/2), 0.4 % at 256 samples/UI - tested at 1 %.
    """
    f3 = 40e9
    cfg = ideal_config(link={"samples_per_ui": 256, "window_ui": 128, "pulse_ui": 32},
                       afe={"bandwidth_hz": f3}, tx={"swing_v": 0.5})
    system = build(cfg)
    link = system.link
    t, p = link.pulse_full()
    tau = 1 / (2 * np.pi * f3)
    T = link.ui_s
    A = 0.5
    # the sampled rectangle spans [0, T] (half-height samples at the two jumps): no shift
    ref = np.where(t < T, A * (1 - np.exp(-t / tau)),
                   A * (1 - np.exp(-T / tau)) * np.exp(-(t - T) / tau))
    bound = 2 / np.pi * f3 / (link.m / (2 * T))
    sel = t < 20 * T
    assert np.max(np.abs(p[sel] - ref[sel])) < 2.5 * bound * A
    # and the symbol-spaced samples at the peak phase see the same cursor
    assert link._pulse_unscaled.taps.max() == pytest.approx(A * (1 - np.exp(-T / tau)), rel=1e-2)


@pytest.mark.parametrize("rise_ps", [6.0, 3.0])
def test_pulse_through_gaussian_edge_matches_closed_form_and_is_centred(rise_ps):
    """Ideal channel behind a Gaussian edge (impulse response N(0, sigma^2), sigma = t_r /
    1.683): p(t) = A [Phi((t - d)/sigma) - Phi((t - d - T)/sigma)], d the bulk delay, is
    symmetric about d + T/2. The fine-grid rectangle (m + 1 samples, half height at the
    jumps) is the continuous one convolved with a unit triangle of half-width dt, so the
    deviation is p'' dt^2/12 to leading order (max |p''| = A phi(1)/sigma^2); the pulse is
    symmetric about d + T/2 to rounding, so its centroid and peak land there."""
    from scipy.stats import norm

    from serdes.tx import RISE_20_80

    tr = rise_ps * 1e-12
    A = 0.4
    cfg = ideal_config(link={"window_ui": 64, "pulse_ui": 16}, tx={"rise_time_s": tr, "swing_v": A})
    link = build(cfg).link
    m, dt, T = link.m, link.dt_s, link.ui_s
    sigma = tr / RISE_20_80
    full = link._pulse_window
    t = np.arange(full.shape[0]) * dt
    d = link.bulk_delay_ui * T
    ref = A * (norm.cdf((t - d) / sigma) - norm.cdf((t - d - T) / sigma))
    bound = A * norm.pdf(1.0) / sigma ** 2 * dt ** 2 / 12
    err = np.max(np.abs(full - ref))
    assert err <= 1.01 * bound
    assert err >= 0.9 * bound  # the leading term is what is left: no other error source
    c = link.bulk_delay_ui * m + m // 2  # fine index of d + T/2 (m even)
    k = np.arange(1, 4 * m)
    np.testing.assert_allclose(full[c + k], full[c - k], rtol=0, atol=1e-12 * A)
    centroid = float(full @ t) / float(full.sum())
    assert abs(centroid - (d + T / 2)) < 1e-6 * dt
    assert int(np.argmax(full)) == c
    # the trimmed pulse samples the main cursor at that instant
    p = link._pulse_unscaled
    assert p.fine[p.phase + p.cursor * m] == pytest.approx(full[c], rel=1e-12)


@pytest.mark.parametrize("rise_ps", [150.0, 400.0])
def test_a_slow_edge_starts_inside_the_window(rise_ps):
    """The zero-phase Gaussian edge reaches 5 sigma before t = 0: with an edge of 8-21 UI
    sigma (more than the fixed 8 UI delay covers) the link delays every response by
    enough that the pulse is the closed form, none of it wrapped to the window's end."""
    from scipy.stats import norm

    from serdes.tx import RISE_20_80

    tr, A = rise_ps * 1e-12, 0.4
    pulse_ui = 512 if rise_ps > 200 else 128
    cfg = ideal_config(link={"window_ui": 1024, "pulse_ui": pulse_ui},
                       tx={"rise_time_s": tr, "swing_v": A})
    link = build_link(cfg)
    sigma = tr / RISE_20_80
    assert link.bulk_delay_ui * link.ui_s >= 5 * sigma
    full = link._pulse_window
    t = np.arange(full.shape[0]) * link.dt_s
    d = link.bulk_delay_ui * link.ui_s
    ref = A * (norm.cdf((t - d) / sigma) - norm.cdf((t - d - link.ui_s) / sigma))
    # what is left: the fine-grid rectangle's p'' dt^2 / 12 and the tail beyond 5 sigma
    assert np.max(np.abs(full - ref)) < 1e-5 * np.max(ref)


def test_a_far_pre_cursor_tx_tap_lands_before_the_cursor():
    """A TX FFE tap 14 UI before its main tap (allowed: tx.main <= 15) is a pre-cursor
    14 UI early in the pulse, not a response wrapped around the window (which was
    refused as 'the channel response does not decay')."""
    taps = [0.01] + [0.0] * 12 + [-0.1, 0.8, -0.05]
    cfg = ideal_config(link={"pulse_ui": 64}, tx={"ffe": taps, "main": 14})
    link = build_link(cfg)
    h = link.pulse.taps / link.pulse.taps[link.pulse.cursor]
    c = link.pulse.cursor
    assert c >= 14
    np.testing.assert_allclose(h[c - 14: c + 2], np.array(taps) / 0.8, atol=1e-9)
    assert np.max(np.abs(np.delete(h, np.arange(c - 14, c + 2)))) < 1e-9


def test_rise_time_of_tx_edge():
    """The 20-80 % rise time of the driver step equals tx.rise_time_s."""
    tr = 8e-12
    # 10 GBd: the 100 ps UI lets the edge settle (plateau at 10 sigma from each edge)
    cfg = ideal_config(link={"samples_per_ui": 256, "window_ui": 128, "symbol_rate_hz": 10e9},
                       tx={"rise_time_s": tr})
    system = build(cfg)
    link = system.link
    t, p = link.pulse_full()
    p = np.roll(p, link.m)  # bring the leading edge away from the window wrap
    edge = p[: link.m + link.m // 2] / p[link.m + link.m // 2]
    t_edge = np.arange(edge.shape[0]) * link.dt_s
    rising = slice(0, link.m + link.m // 2)
    t20 = np.interp(0.2, edge[rising], t_edge[rising])
    t80 = np.interp(0.8, edge[rising], t_edge[rising])
    assert t80 - t20 == pytest.approx(tr, rel=0.01)


def test_noise_variance_is_eta0_times_noise_bandwidth():
    """Variance at the ADC = eta0 x integral of |H_rx|^2 (one-sided), here a single pole
    of bandwidth B: eta0 x pi B / 2 (the RC noise bandwidth), before the VGA."""
    B = 20e9
    eta0 = 1e-8
    link = build_link(ideal_config(afe={"bandwidth_hz": B}, noise={"eta0_v2_per_ghz": eta0},
                             link={"samples_per_ui": 256, "window_ui": 256}))
    expected = eta0 * 1e-9 * np.pi * B / 2
    # the fine grid integrates up to fs/2 only: the tail beyond it is B^2/(fs/2) of B pi/2
    fs2 = link.m / link.ui_s / 2
    tail = eta0 * 1e-9 * (B ** 2 / fs2)
    got = link.noise.variance / link.vga_gain ** 2
    assert abs(got - expected) <= 1.5 * tail


def test_noise_fir_reproduces_autocorrelation():
    system = build()
    link = system.link
    g = link.noise.fir
    ac = np.correlate(g, g, mode="full")[g.shape[0] - 1:]
    r = link.noise.autocorr
    n = ac.shape[0]
    assert np.allclose(ac, r[:n], rtol=0, atol=1e-6 * r[0])
    assert np.max(np.abs(r[n:n + 8])) < 1e-6 * r[0]


def test_mmse_predicted_snr_matches_counted_snr():
    """The MMSE design's predicted slicer SNR equals the measured one. Without ADC and
    jitter every impairment is linear and Gaussian, so the only error is the sampling
    error of the variance estimate: for 4e5 samples of a correlated error process
    (correlation spans < 50 symbols) the relative std is below sqrt(2*50/4e5) = 1.6 %,
    0.07 dB; tested at 0.15 dB."""
    from serdes.config import Config

    cfg = Config.default().with_overrides(["adc.bits=0", "noise.rj_ui=0", "dfe.taps=0",
                                           "channel.loss_db=30"])
    res = simulate(build(cfg), symbols=400_000, target_errors=0)
    assert res.snr_db == pytest.approx(res.predicted_snr_db, abs=0.15)


def test_nrz_awgn_ber_matches_q_function():
    """NRZ over the ideal channel: BER = Q(1/sigma), counted inside its 99 % interval."""
    from serdes.metrics.ber import q_function

    probe_sys = build(ideal_config(link={"modulation": "nrz"}, noise={"eta0_v2_per_ghz": 1e-9}))
    probe = probe_sys.link
    h0 = probe.pulse.taps[probe.pulse.cursor]
    sigma = 1 / 3.3  # BER about 5e-4
    eta0 = 1e-9 * (sigma * h0) ** 2 / probe.noise.variance
    system = build(ideal_config(link={"modulation": "nrz"}, noise={"eta0_v2_per_ghz": eta0}))
    link = system.link
    res = simulate(system, symbols=1_000_000, target_errors=0)
    expected = float(q_function(link.pulse.taps[link.pulse.cursor] / np.sqrt(link.noise.variance)))
    lo, hi = clopper_pearson(res.bit_errors, res.bits, 0.99)
    assert res.bits == res.symbols
    assert lo <= expected <= hi, (res.ber, expected)
