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


# -- sinusoidal jitter that aliases at the symbol rate ------------------------------------
@pytest.mark.parametrize("sj_hz, words", [
    ("26.5625e9", ["noise.sj_hz", "aliases", "symbol_rate_hz / 2"]),
    ("53.125e9", ["noise.sj_hz", "aliases"]),
    ("13.28125e9", ["noise.sj_hz", "1/4", "phases"]),
    ("17.708333333333332e9", ["noise.sj_hz", "1/3", "phases"]),
])
def test_aliasing_sj_is_refused(sj_hz, words, capsys):
    code = main(["run", "--set", "noise.sj_ui=0.1", "--set", f"noise.sj_hz={sj_hz}"])
    err = capsys.readouterr().err.strip()
    assert code == 2 and len(err.splitlines()) == 1
    assert all(w in err for w in words), err


def test_sj_off_the_degenerate_fractions_is_accepted():
    for f in ("1e6", "13.3e9", "26.5e9"):
        Config.default().with_overrides(["noise.sj_ui=0.1", f"noise.sj_hz={f}"])
