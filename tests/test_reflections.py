"""Reflections in the channel against closed forms.

* Echo delay and amplitude of impedance steps, read from the time response of the
  ABCD cascade: S11 of a step Z1 -> Z2 is Gamma = (Z2 - Z1)/(Z2 + Z1) at the round trip
  2 l sqrt(eps_r)/c; S21 of a Z2 segment between Zr lines has an echo Gamma^2 times the
  main pulse, 2 l sqrt(eps_r)/c after it.
* Stub notch at c / (4 L sqrt(eps_r)).
* The link's sampled pulse with the simple echo form is p[k] + a p[k - D] exactly.
* Config: echo through --set; bad keys and short pulses give one line and exit code 2.
"""

import numpy as np
import pytest

from serdes.channel.reflections import (C0_M_PER_S, Reflections, Segment, Stub,
                                        propagation_constant, quarter_wave_hz,
                                        reflection_coefficient, s_parameters)
from serdes.cli import main
from serdes.config import Config
from serdes.errors import ConfigError
from serdes.build import build, build_link, build_reflections

# time responses: a Gaussian pulse of sigma_f = 60 GHz (sigma_t = 2.65 ps) on a grid with
# df = 50 MHz (20 ns window) up to 640 GHz, where the Gaussian is exp(-57) small
DF = 50e6
F = np.arange(0, 12801) * DF
SIGMA_F = 60e9
WIN = np.exp(-0.5 * (F / SIGMA_F) ** 2)
DT = 1.0 / (2 * (F.shape[0] - 1) * DF)


def _impulse(h):
    return np.fft.irfft(h * WIN)


def _peak(y, lo_s, hi_s):
    """Time and height of the largest |peak| of y in [lo_s, hi_s): log-parabolic
    interpolation, exact for a sampled Gaussian."""
    i0, i1 = int(lo_s / DT), int(hi_s / DT)
    i = i0 + int(np.argmax(np.abs(y[i0:i1])))
    sign = np.sign(y[i])
    a, b, c = np.log(sign * y[i - 1:i + 2])
    off = 0.5 * (a - c) / (a - 2 * b + c)
    height = sign * np.exp(b - 0.25 * (a - c) * off)
    return (i + off) * DT, height


G0 = _impulse(np.ones_like(F))[0]  # the pulse height of H = 1 (centred on sample 0)


def _delay_s(length_mm, eps_r):
    return length_mm * 1e-3 * np.sqrt(eps_r) / C0_M_PER_S


@pytest.mark.parametrize("z1,z2,eps_r", [(50.0, 40.0, 4.0), (50.0, 65.0, 3.2), (85.0, 100.0, 3.7)])
def test_step_reflection_delay_and_amplitude(z1, z2, eps_r):
    """S11 of a Z1 line (40 mm) into a long Z2 line: Gamma at the round trip."""
    gamma = reflection_coefficient(z1, z2)
    s11, _ = s_parameters(F, [Segment(40.0, z1, eps_r), Segment(400.0, z2, eps_r)],
                          z_ref_ohm=z1)
    y = _impulse(s11)
    t_exp = 2 * _delay_s(40.0, eps_r)
    t, height = _peak(y, t_exp - 50e-12, t_exp + 50e-12)
    assert abs(t - t_exp) < 1e-15
    assert height / G0 == pytest.approx(gamma, rel=1e-9)
    assert np.max(np.abs(y[: int((t_exp - 50e-12) / DT)])) < 1e-9  # nothing earlier


@pytest.mark.parametrize("z2,length_mm", [(40.0, 30.0), (62.0, 55.0)])
def test_segment_echo_in_s21(z2, length_mm):
    """A Z2 segment between 50 ohm: main (1 - G^2), echo G^2 x main, 2 l sqrt(eps)/c later."""
    eps_r = 4.0
    gamma = reflection_coefficient(50.0, z2)
    _, s21 = s_parameters(F, [Segment(length_mm, z2, eps_r)], z_ref_ohm=50.0)
    y = _impulse(s21)
    td = _delay_s(length_mm, eps_r)
    t1, h1 = _peak(y, td - 30e-12, td + 30e-12)
    t2, h2 = _peak(y, 3 * td - 30e-12, 3 * td + 30e-12)
    assert abs(t1 - td) < 1e-15 and abs(t2 - t1 - 2 * td) < 1e-15
    assert h1 / G0 == pytest.approx(1 - gamma ** 2, rel=1e-9)
    assert h2 / h1 == pytest.approx(gamma ** 2, rel=1e-9)


@pytest.mark.parametrize("length_mm,eps_r", [(1.0, 4.0), (0.6, 3.5), (2.5, 4.2)])
def test_stub_notch_at_quarter_wave(length_mm, eps_r):
    f0 = quarter_wave_hz(length_mm, eps_r)
    f = np.linspace(0.5 * f0, 1.5 * f0, 20001)
    segs = [Segment(20.0, 50.0, 4.0), Segment(20.0, 50.0, 4.0)]
    _, s21 = s_parameters(f, segs, [Stub(1, length_mm, 50.0, eps_r)])
    i = int(np.argmin(np.abs(s21)))
    assert abs(f[i] - f0) <= f[1] - f[0]
    _, at_f0 = s_parameters(np.array([f0]), segs, [Stub(1, length_mm, 50.0, eps_r)])
    assert abs(at_f0[0]) < 1e-9
    # a lossy stub: the notch stays near c/(4 L sqrt(eps_r)) and is still deep
    _, lossy = s_parameters(f, segs, [Stub(1, length_mm, 50.0, eps_r, loss_db_per_mm=0.1)])
    j = int(np.argmin(np.abs(lossy)))
    assert abs(f[j] / f0 - 1) < 0.02 and 20 * np.log10(abs(lossy[j])) < -15


def test_matched_lossy_line_is_its_loss_and_delay():
    f = np.array([0.0, 10e9, 26.5625e9])
    _, s21 = s_parameters(f, [Segment(100.0, 50.0, 4.0, loss_db_per_mm=0.05)],
                          loss_ref_hz=26.5625e9)
    assert -20 * np.log10(abs(s21[2])) == pytest.approx(5.0, rel=1e-12)
    assert s21[0] == pytest.approx(1.0)
    # long and lossy up to the top of a fine FFT grid: finite, tiny, no overflow
    _, top = s_parameters(np.array([850e9]), [Segment(2000.0, 40.0, 4.0, 0.5)] * 3)
    assert np.isfinite(top[0]) and abs(top[0]) < 1e-100


def test_link_pulse_carries_the_echo():
    base = Config.default().with_overrides(["link.pulse_ui=128", "noise.rj_ui=0",
                                            "ctle.auto=false"])  # the same CTLE in both
    for db, pol in ((-20.0, "positive"), (-14.0, "negative")):
        cfg = base.with_overrides(["reflections.echo_delay_ui=60", f"reflections.echo_db={db}",
                                   f"reflections.echo_polarity={pol}"])
        p0, p1 = build_link(base), build_link(cfg)
        a = 10 ** (db / 20) * (1 if pol == "positive" else -1)
        h0 = p0.pulse.taps / p0.vga_gain
        h1 = p1.pulse.taps / p1.vga_gain
        c0, c1 = p0.pulse.cursor, p1.pulse.cursor
        n = min(h0.shape[0] - c0, h1.shape[0] - c1)
        k = np.arange(-min(c0, c1), n)
        expect = h0[c0 + k] + a * np.where(c0 + k >= 60, h0[np.clip(c0 + k - 60, 0, None)], 0.0)
        np.testing.assert_allclose(h1[c1 + k], expect, atol=2e-4 * h0[c0])
        assert h1[c1 + 60] / h1[c1] == pytest.approx(a, abs=0.01)


def test_cascade_config_and_touchstone(channels_dir):
    path = channels_dir / "ieee8023ck_KR_ortho_tracy_3ck_02_0119" / "DPO_4in_Meg7_THRU.s4p"
    cfg = Config.default().with_overrides([
        "channel.model=touchstone", f"channel.file='{path}'",
        "reflections.segment_lengths_mm=[20, 8, 20]", "reflections.segment_z0_ohm=[50, 40, 50]",
        "reflections.segment_loss_db_per_mm=[0.02]", "reflections.stub_positions=[3]",
        "reflections.stub_lengths_mm=[1.2]"])
    system = build(cfg)
    link = system.link
    refl = build_reflections(cfg)
    assert len(refl.segments) == 3 and refl.segments[1].loss_db_per_mm == 0.02
    np.testing.assert_allclose(link.h_channel,
                               link.channel_stages[0].response(link.f_hz) * refl.response(link.f_hz))
    assert np.all(np.isfinite(link.pulse.taps))


def test_config_errors_are_one_line(capsys):
    assert main(["run", "--set", "reflections.echo_delay_ui=60"]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and "link.pulse_ui" in err[0] and "96" in err[0]
    assert main(["run", "--set", "reflections.echo_delay=60"]) == 2
    assert "unknown config key reflections.echo_delay" in capsys.readouterr().err
    with pytest.raises(ConfigError, match="segment_z0_ohm"):
        Config.default().with_overrides(["reflections.segment_lengths_mm=[10, 20]"])
    with pytest.raises(ConfigError, match="stub_positions"):
        Config.default().with_overrides(["reflections.stub_positions=[1]",
                                         "reflections.stub_lengths_mm=[1]"])


def _skrf_cascade(f, segments, stubs, z_ref_ohm=50.0, loss_ref_hz=26.5625e9):
    """The same cascade written with scikit-rf's media: line, shunt_delay_open, **."""
    skrf = pytest.importorskip("skrf")
    from skrf.media import DefinedGammaZ0

    freq = skrf.Frequency.from_f(f, unit="hz")

    def media(el):
        g = propagation_constant(f, eps_r=el.eps_r, loss_db_per_mm=el.loss_db_per_mm,
                                 loss_ref_hz=loss_ref_hz) * 1e3  # per metre
        return DefinedGammaZ0(frequency=freq, z0_port=z_ref_ohm, z0=el.z0_ohm, gamma=g)

    net = None
    for j in range(len(segments) + 1):
        parts = [media(s).shunt_delay_open(s.length_mm, "mm") for s in stubs if s.position == j]
        if j < len(segments):
            parts.append(media(segments[j]).line(segments[j].length_mm, "mm"))
        for p in parts:
            net = p if net is None else net ** p
    return net.s[:, 0, 0], net.s[:, 1, 0]


@pytest.mark.parametrize("segments, stubs, z_ref", [
    ([Segment(20.0, 50.0, 4.0, 0.02), Segment(8.0, 40.0, 4.0, 0.02),
      Segment(20.0, 50.0, 4.0, 0.02)], [Stub(3, 1.2)], 50.0),
    ([Segment(5.0, 60.0, 3.5), Segment(30.0, 45.0, 4.2, 0.05)],
     [Stub(0, 2.0, 55.0, 3.8, 0.1), Stub(1, 0.7)], 42.5),
])
def test_cascade_equals_scikit_rf_media(segments, stubs, z_ref):
    """Our ABCD cascade is the one scikit-rf's media give (lines, shunt open stubs, **)
    on a link grid up to 850 GHz; at 0 Hz ours is the exact 1 (scikit-rf moves 0 Hz)."""
    f = np.arange(16385) * (850e9 / 16384)
    s11, s21 = s_parameters(f, segments, stubs, z_ref_ohm=z_ref)
    r11, r21 = _skrf_cascade(f, segments, stubs, z_ref_ohm=z_ref)
    np.testing.assert_allclose(s11[1:], r11[1:], rtol=0, atol=1e-9)
    np.testing.assert_allclose(s21[1:], r21[1:], rtol=0, atol=1e-9)
    assert s21[0] == 1.0 and s11[0] == pytest.approx(0.0, abs=1e-15)


def test_reflections_stage_has_il_db_and_describe():
    """The stage reports its own insertion loss (cascade S21 times the echo) and a label."""
    refl = Reflections(segments=[Segment(100.0, 50.0, 4.0, loss_db_per_mm=0.05)],
                       echo_delay_s=1e-9, echo_amplitude=0.1)
    f0 = 26.5625e9
    expect = -20 * np.log10(abs(refl.response(np.array([0.0, f0]))[1]))
    assert refl.il_db(f0) == pytest.approx(expect, rel=1e-12)
    # a matched 100 mm line of 0.05 dB/mm alone: 5 dB
    assert Reflections(segments=refl.segments).il_db(f0) == pytest.approx(5.0, rel=1e-12)
    assert "1 segments" in refl.describe() and "echo -20.0 dB" in refl.describe()
