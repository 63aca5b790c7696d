"""The building blocks a notebook constructs directly (TxEdge, TxFfe, Adc, ReceiverSpec,
RunSpec, ZpkCtle, Segment, Stub, Reflections, CdrSettings): a bad value is one ConfigError
naming it, at construction. Before, each was
taken as given and failed later, far from its cause (a ZeroDivisionError for an all-zero
TX FFE, "cannot convert float NaN to integer" for a NaN rise time or symbol count, a
LinAlgError for a zero ADC full scale, "negative dimensions" for -1 DFE taps), or ran
with a wrong value (a TX FFE main tap outside the taps, 2000.5 symbols)."""

from __future__ import annotations

import math

import numpy as np
import pytest

from serdes.adc import Adc
from serdes.analog.ctle import ZpkCtle
from serdes.cdr import CdrSettings
from serdes.channel.reflections import Reflections, Segment, Stub
from serdes.dsp.spec import ReceiverSpec
from serdes.errors import ConfigError
from serdes.system import RunSpec
from serdes.tx import TxEdge, TxFfe

FB = 53.125e9
NAN = float("nan")

BAD = {
    "edge NaN": (lambda: TxEdge(rise_time_s=NAN), "rise_time_s=nan"),
    "edge < 0": (lambda: TxEdge(rise_time_s=-1e-12), "rise_time_s=-1e-12"),
    "FFE empty": (lambda: TxFfe(taps=[], main=0, symbol_rate_hz=FB), "TX FFE taps = []"),
    "FFE zero": (lambda: TxFfe(taps=[0, 0], main=1, symbol_rate_hz=FB), "TX FFE taps ="),
    "FFE NaN tap": (lambda: TxFfe(taps=[NAN, 1], main=1, symbol_rate_hz=FB), "TX FFE tap=nan"),
    "FFE main past": (lambda: TxFfe(taps=[0.1, 0.9], main=5, symbol_rate_hz=FB),
                      "TX FFE main = 5"),
    "FFE main < 0": (lambda: TxFfe(taps=[0.1, 0.9], main=-1, symbol_rate_hz=FB),
                     "TX FFE main = -1"),
    "FFE rate 0": (lambda: TxFfe(taps=[1.0], main=0, symbol_rate_hz=0),
                   "TX FFE symbol_rate_hz=0.0"),
    "ADC bits -1": (lambda: Adc(bits=-1, fullscale_v=0.5), "adc bits = -1"),
    "ADC bits 6.5": (lambda: Adc(bits=6.5, fullscale_v=0.5), "adc bits = 6.5"),
    "ADC full scale 0": (lambda: Adc(bits=7, fullscale_v=0.0), "adc fullscale_v=0.0"),
    "ADC ENOB NaN": (lambda: Adc(bits=7, fullscale_v=0.5, enob=NAN), "adc enob=nan"),
    "ADC ENOB < 0": (lambda: Adc(bits=7, fullscale_v=0.5, enob=-1), "adc enob=-1"),
    "DFE -1": (lambda: ReceiverSpec(dfe_taps=-1), "dfe_taps = -1"),
    "FFE 2.5": (lambda: ReceiverSpec(ffe_taps=2.5), "ffe_taps = 2.5"),
    "DFE limit NaN": (lambda: ReceiverSpec(dfe_limit=NAN), "dfe_limit = nan"),
    "LMS step 0": (lambda: ReceiverSpec(mode="lms", mu=0.0), "mu = 0"),
    "symbols NaN": (lambda: RunSpec(symbols=NAN), "symbols = nan"),
    "symbols 2000.5": (lambda: RunSpec(symbols=2000.5), "symbols = 2000.5"),
    "seed -1": (lambda: RunSpec(seed=-1), "seed = -1"),
    "chunk 0": (lambda: RunSpec(chunk_symbols=0), "chunk_symbols = 0"),
    # more zeros than poles: a gain rising without bound, the result set by the grid's
    # top frequency (samples_per_ui); before, BER 0.45 without a word
    "CTLE improper": (lambda: ZpkCtle(zeros_hz=[-1e9, -2e9], poles_hz=[-1e10]),
                      "zeros_hz has 2 zeros and poles_hz 1 poles"),
    "CTLE gain 0": (lambda: ZpkCtle(zeros_hz=[-1e9], poles_hz=[-1e10], gain=0.0),
                    "gain = 0.0"),
    "CTLE RHP pole": (lambda: ZpkCtle(zeros_hz=[], poles_hz=[1e9]), "poles_hz contains"),
    # a negative length ran as a line; Z0 = 0 or a NaN eps_r ended in "response is not
    # finite" after NumPy's divide-by-zero warnings
    "segment < 0 mm": (lambda: Segment(length_mm=-5, z0_ohm=50), "segment length_mm=-5"),
    "segment Z0 0": (lambda: Segment(length_mm=5, z0_ohm=0), "segment z0_ohm=0"),
    "segment eps NaN": (lambda: Segment(length_mm=5, z0_ohm=50, eps_r=NAN),
                        "segment eps_r=nan"),
    "stub position 1.5": (lambda: Stub(position=1.5, length_mm=2), "stub position = 1.5"),
    "Zref 0": (lambda: Reflections(z_ref_ohm=0), "z_ref_ohm=0"),
    # damping 0 counted BER 0.39 without a word; a NaN bandwidth was named "kp"
    "CDR damping 0": (lambda: CdrSettings(mode="mm", damping=0.0), "cdr.damping = 0"),
    "CDR bandwidth NaN": (lambda: CdrSettings(mode="mm", bandwidth_hz=NAN),
                          "cdr.bandwidth_hz = nan"),
    "CDR latency 2.5": (lambda: CdrSettings(mode="mm", latency_ui=2.5), "cdr.latency_ui = 2.5"),
    "CDR PI steps 1": (lambda: CdrSettings(mode="mm", pi_steps=1), "cdr.pi_steps = 1"),
}


@pytest.mark.parametrize("case", list(BAD))
def test_a_bad_value_is_refused_where_it_is_given(case):
    make, named = BAD[case]
    with pytest.raises(ConfigError) as info:
        make()
    msg = str(info.value)
    assert msg.startswith(named) and "\n" not in msg, msg


def test_good_values_are_kept_as_numbers():
    """Whole floats are counts (1e6 symbols), integers stay integers, and the checks do
    not change a valid value."""
    run = RunSpec(symbols=1e6, target_errors=0, seed=3)
    assert run.symbols == 1_000_000 and isinstance(run.symbols, int)
    spec = ReceiverSpec(ffe_taps=24.0, ffe_pre=4, dfe_taps=0)
    assert spec.ffe_taps == 24 and isinstance(spec.ffe_taps, int)
    ffe = TxFfe(taps=[-0.05, 0.9, -0.05], main=1, symbol_rate_hz=FB)
    assert ffe.taps == [-0.05, 0.9, -0.05] and ffe.main == 1
    assert math.isclose(ffe.ui_s, 1 / FB)
    adc = Adc(bits=0, fullscale_v=0.5, enob=6.0)          # no quantizer, ENOB noise only
    assert adc.bits == 0 and adc.lsb_v == 0.0 and adc.enob_noise_sigma_v > 0
    assert TxEdge(rise_time_s=0).rise_time_s == 0.0


def test_an_improper_zpk_ctle_is_refused_by_the_config(capsys):
    from serdes.cli import main

    rc = main(["run", "--no-stat", "--set", "ctle.model=zpk", "--set",
               "ctle.zeros_hz=[-1e9,-2e9,-3e9]", "--set", "ctle.poles_hz=[-1e10]"])
    err = capsys.readouterr().err.strip()
    assert rc == 2 and len(err.splitlines()) == 1
    assert "ctle.zeros_hz has 3 zeros and ctle.poles_hz 1 poles" in err, err


def test_a_link_that_passes_nothing_is_one_error():
    """A stage of zero gain: one ConfigError (a ZeroDivisionError in the window check
    before)."""
    from serdes.link import Link

    class Open:
        def response(self, f_hz):
            return np.zeros(np.shape(f_hz), dtype=np.complex128)

    with pytest.raises(ConfigError, match="^the link's pulse response is zero"):
        Link(channel=[Open()]).pulse


def test_a_network_below_nyquist_is_refused_by_the_link():
    """An in-memory network whose data end at 10 GHz, in a link at 53.125 GBd (Nyquist
    26.56 GHz): the link names the data's end and what it needs, as the config path does
    for a file (it ran into "link.window_ui = 1024: the pulse response still holds 0.029
    of its peak after 16384 UI" from the extrapolated response)."""
    skrf = pytest.importorskip("skrf")
    from serdes.channel.touchstone import NetworkChannel
    from serdes.grid import Grid
    from serdes.link import Link

    f = skrf.Frequency(0, 10, 101, "GHz")
    s = np.tile(np.array([[0, 0.9], [0.9, 0]], dtype=complex), (101, 1, 1))
    chan = NetworkChannel(skrf.Network(frequency=f, s=s, z0=50))
    with pytest.raises(ConfigError, match="data end at 10 GHz, below the 26.5625 GHz"):
        Link(Grid(FB), channel=[chan])
    Link(Grid(FB / 4), channel=[chan]).pulse    # 6.6 GHz: covered, it runs


@pytest.mark.parametrize("kw, named", [
    (dict(swing_v=NAN), "swing_v=nan"),          # was "the link's pulse response is not finite"
    (dict(swing_v=-0.4), "swing_v=-0.4"),
    (dict(clip_sigma=0.0), "clip_sigma=0.0"),    # was an infinite VGA gain
    (dict(pulse_ui=2.5), "pulse_ui = 2.5"),
])
def test_link_arguments_are_checked(kw, named):
    from serdes.grid import Grid
    from serdes.link import Link

    with pytest.raises(ConfigError) as info:
        Link(Grid(FB), **kw)
    assert str(info.value).startswith(named)
