"""Each contribution of the impairment budget against its closed form (or a direct
measurement), through the public path: config -> builder -> link -> budget. A wrong
shared input (TX noise 3 dB off, ADC noise or RJ left out) fails here even though the
equalizer design and the statistical engine would still agree with each other."""

import numpy as np
import pytest

from conftest import ideal_config
from serdes import rng
from serdes.build import build, build_link
from serdes.engines.pulse import PulseFrontEnd
from serdes.impairments import budget, design_autocorr
from serdes.signal.source import Transmitter

PAM4_POWER = (1 + 1 / 9) / 2  # E[a^2] of levels +-1, +-1/3


def _var_ci(n: int, z: float = 5.0) -> float:
    """Relative half-width of a z-sigma interval of a Gaussian sample variance."""
    return z * np.sqrt(2.0 / n)


def test_rx_thermal_is_eta0_through_a_single_pole():
    """One-sided eta0 through |H|^2 = 1/(1+(f/B)^2) up to the grid's fs/2 = F:
    eta0 B atan(F/B), times the VGA gain squared."""
    B, eta0 = 20e9, 1e-8
    link = build_link(ideal_config(afe={"bandwidth_hz": B}, noise={"eta0_v2_per_ghz": eta0},
                                   link={"samples_per_ui": 64, "window_ui": 256}))
    F = link.m / link.ui_s / 2
    expected = eta0 * 1e-9 * B * np.arctan(F / B) * link.vga_gain ** 2
    assert budget(link, 4)["rx_thermal"][0] == pytest.approx(expected, rel=2e-3)


def test_tx_noise_is_snr_tx_below_the_level_power():
    snr = 20.0
    system = build(ideal_config(tx={"snr_db": snr}, link={"window_ui": 256, "pulse_ui": 16}))
    link = system.link
    sigma2 = PAM4_POWER * 10 ** (-snr / 10)
    h = link.pulse.taps
    assert budget(link, 4)["tx"][0] == pytest.approx(sigma2 * float(h @ h), rel=1e-12)
    # and the transmitter really sends that much noise
    n = 400_000
    line, _, a = Transmitter(link, system.source, seed=3).next(n)
    measured = float(np.var(a - link.levels[line]))
    assert measured == pytest.approx(sigma2, rel=_var_ci(n))


def test_adc_noise_is_that_of_an_enob_bit_converter():
    bits, enob, fs = 7, 5.0, 0.5
    link = build_link(ideal_config(adc={"bits": bits, "enob": enob, "fullscale_v": fs}))
    expected = (fs / 2 ** enob) ** 2 / 12
    assert budget(link, 4)["adc"][0] == pytest.approx(expected, rel=1e-12)
    assert np.all(budget(link, 4)["adc"][1:] == 0)
    # measured: a busy input through the quantizer with its ENOB noise
    n = 400_000
    x = np.random.default_rng(1).uniform(-0.2, 0.2, n)
    extra = rng.BlockRNG(5, rng.ADC_NOISE).normal(0, n)
    err = link.adc(x, extra) - x
    assert float(np.mean(err ** 2)) == pytest.approx(expected, rel=_var_ci(n))


def test_rj_noise_matches_the_jittered_pulse_engine():
    """First-order RJ noise against the pulse engine's own jittered samples (no other
    noise): at 0.003 UI rms the second-order term is far below the sampling error."""
    rj = 0.003
    cfg = ideal_config(noise={"rj_ui": rj}, afe={"bandwidth_hz": 30e9},
                       channel={"model": "loss", "loss_db": 15.0})
    system = build(cfg)
    link = system.link
    n = 200_000
    _, _, a = Transmitter(link, system.source, seed=2).next(n)
    x_j = PulseFrontEnd(link, 2)(a, 0)
    still = build(cfg.with_overrides(["noise.rj_ui=0"]))
    x_0 = PulseFrontEnd(still.link, 2)(a, 0)
    skip = link.pulse.n_ui
    measured = float(np.var((x_j - x_0)[skip:]))
    assert budget(link, 4)["jitter"][0] == pytest.approx(measured, rel=_var_ci(n - skip))


def test_design_uses_the_sum_of_the_budget():
    link = build().link
    parts = budget(link, 8)
    total = design_autocorr(link, 8)
    np.testing.assert_allclose(total, sum(parts.values()), rtol=1e-15)
    assert set(parts) == {"rx_thermal", "tx", "adc", "jitter"}
    assert all(parts[k][0] > 0 for k in parts)  # the default link has every one of them
