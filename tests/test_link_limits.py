"""Limits of the linear model and the receiver that must give a right result or one clear
refusal: the ADC without a quantizer, the kept pulse length, the FFT window, sinusoidal
jitter near the symbol rate, and the reflection canceller with the Viterbi detector."""

import json

import numpy as np
import pytest

from serdes.adc import Adc
from serdes.cli import main
from serdes.config import Config
from serdes.link import Link


# -- adc.bits = 0: no quantizer, ENOB noise still applied ---------------------------------
def test_unquantized_adc_keeps_its_enob_noise():
    fs = 0.5
    adc = Adc(bits=0, fullscale_v=fs, enob=5.0)
    assert adc.noise_v2 == pytest.approx((fs / 2 ** 5) ** 2 / 12, rel=1e-12)
    assert Adc(bits=0, fullscale_v=fs, enob=0.0).noise_v2 == 0.0
    # the noise the equalizer design and the engines see
    base = Config.default().with_overrides(["adc.bits=0", "adc.enob=0"])
    r0 = Link(base).sampled_noise_autocorr(4)
    r5 = Link(base.with_overrides(["adc.enob=5"])).sampled_noise_autocorr(4)
    assert r5[0] - r0[0] == pytest.approx((fs / 32) ** 2 / 12, rel=1e-9)
    np.testing.assert_allclose(r5[1:], r0[1:])


def test_summary_says_what_the_adc_models(capsys):
    assert main(["run", "--set", "link.symbols=20000", "--set", "adc.bits=0"]) == 0
    line = next(s for s in capsys.readouterr().out.splitlines() if s.startswith("rx"))
    assert "ADC unquantized (ENOB 5)" in line and "0 b" not in line
    assert main(["run", "--set", "link.symbols=20000", "--set", "adc.bits=0",
                 "--set", "adc.enob=0"]) == 0
    line = next(s for s in capsys.readouterr().out.splitlines() if s.startswith("rx"))
    assert "ADC unquantized (no ENOB noise)" in line
