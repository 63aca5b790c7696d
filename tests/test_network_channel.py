"""Channel stages from an in-memory scikit-rf Network; mixed mode; describe() and il_db().

* scikit-rf's mixed-mode SDD21 (se2gmm after renumbering) equals our explicit formula
  on a real IEEE file.
* A matched lossy 50 ohm line made with skrf.media has the loss and delay of its
  length, and the same response whether it comes as a Network or as a Touchstone file.
* Every channel stage a config can build labels itself and reports its insertion loss.
"""

from __future__ import annotations

import numpy as np
import pytest

from serdes.build import build_link
from serdes.channel.resample import impulse_response
from serdes.channel.touchstone import NetworkChannel, TouchstoneChannel, skrf_sdd21
from serdes.channel.touchstone_io import load_touchstone, parse_ports, thru_response
from serdes.config import Config
from serdes.errors import ConfigError

skrf = pytest.importorskip("skrf")
from skrf.media import DefinedGammaZ0  # noqa: E402

C0 = 299_792_458.0
F_NYQ = 26.5625e9
DF = 10e6
F_GRID = np.arange(int(round(16 * 53.125e9 / DF)) + 1) * DF  # 0 .. 850 GHz, the link's top
# a data grid without 0 Hz, like a VNA measurement: 10 MHz .. 50 GHz
F_DATA = np.arange(1, 5001) * DF
LENGTH_M = 0.1
EPS_R = 4.0
TAU = LENGTH_M * np.sqrt(EPS_R) / C0  # 667 ps


def _line(loss_db_at_nyq, *, shape="flat", z0=50.0, z0_port=None, f=F_DATA, name="line"):
    """A matched (or z0_port-embedded) line of LENGTH_M with a loss of ``loss_db_at_nyq``
    at 26.5625 GHz, flat or growing as sqrt(f)."""
    alpha_nyq = loss_db_at_nyq / (20 * np.log10(np.e)) / LENGTH_M  # Np/m
    alpha = alpha_nyq * (np.ones_like(f) if shape == "flat" else np.sqrt(f / F_NYQ))
    gamma = alpha + 1j * 2 * np.pi * f * np.sqrt(EPS_R) / C0
    freq = skrf.Frequency.from_f(f, unit="hz")
    m = DefinedGammaZ0(frequency=freq, z0_port=z0_port, z0=z0, gamma=gamma)
    net = m.line(LENGTH_M, "m")
    net.name = name
    return net


def _four_port(net2):
    """Two uncoupled copies of a 2-port as the thrus 1->2 and 3->4 of a 4-port."""
    s = np.zeros((net2.f.size, 4, 4), dtype=complex)
    s[:, :2, :2] = net2.s
    s[:, 2:, 2:] = net2.s
    return skrf.Network(frequency=net2.frequency, s=s, z0=50.0, name="pair")


# ----------------------------------------------------------------- mixed mode


@pytest.mark.parametrize("ports, order", [("12,34", [0, 1, 2, 3]), ("13,24", [0, 2, 1, 3]),
                                          ("21,43", [1, 0, 3, 2])])
def test_skrf_mixed_mode_equals_explicit_formula_on_a_real_file(channels_dir, ports, order):
    """se2gmm(p=2) after renumbering gives our (S[b,a] - S[b,c] - S[d,a] + S[d,c]) / 2 to
    1e-12 on a real IEEE file, for the file's own port order and renumbered ones."""
    path = channels_dir / "ieee8023ck_KR_ortho_tracy_3ck_02_0119" / "DPO_4in_Meg7_THRU.s4p"
    _, f, s = load_touchstone(path)
    ref = thru_response(s, parse_ports("12,34"))
    net = skrf.Network(frequency=skrf.Frequency.from_f(f, unit="hz"), s=s, z0=50.0)
    net = net.renumbered(list(range(4)), order)  # file port i becomes port order[i]
    ours = thru_response(net.s, parse_ports(ports))
    theirs = skrf_sdd21(net, ports)
    np.testing.assert_allclose(ours, ref, rtol=0, atol=1e-15)
    np.testing.assert_allclose(theirs, ours, rtol=0, atol=1e-12)
    assert np.max(np.abs(ours)) > 0.5  # a real thru, not two tiny numbers agreeing


# ----------------------------------------------------------- a line from skrf.media


def test_matched_lossy_line_has_its_loss_and_delay():
    """A matched 50 ohm line of 100 mm in eps_r 4 with a flat 3 dB loss: SDD21 is
    10^(-3/20) exp(-j 2 pi f tau) with tau = 0.1 m * 2 / c = 667 ps, so the impulse
    response on the link grid is one peak of height-sum 10^(-3/20) at tau."""
    ch = NetworkChannel(_line(3.0))
    assert ch.il_db(F_NYQ) == pytest.approx(3.0, abs=1e-9)
    assert ch.il_db(1e9) == pytest.approx(3.0, abs=1e-9)
    H = ch.response(F_GRID)
    t, h = impulse_response(F_GRID, H)
    dt = t[1]
    assert np.sum(h) == pytest.approx(10 ** (-3 / 20), rel=1e-9)  # = H(0)
    k = int(np.argmax(h))
    # the peak sample lies within one sample of tau (dt = 0.59 ps)
    assert abs(k * dt - TAU) <= dt
    # the bulk (arrival) delay errs on the early side, as documented: the -120 dB
    # floor and the roll-off above 50 GHz add minimum-phase delay (19 ps here)
    assert TAU - 30e-12 < ch.bulk_delay_s <= TAU


def test_skin_loss_line_il_and_four_port_thru():
    """A sqrt(f) loss of 10 dB at Nyquist: il_db is the loss at each data frequency, and
    the same line as both thrus of a 4-port gives the same channel (SDD21 = S21)."""
    net = _line(10.0, shape="sqrt")
    ch2 = NetworkChannel(net)
    for f0 in (1e9, 10e9, 26.56e9):  # data frequencies: exact
        assert ch2.il_db(f0) == pytest.approx(10.0 * np.sqrt(f0 / F_NYQ), abs=1e-9)
    # between data points |H| is interpolated linearly: 7e-8 dB off over a 10 MHz step
    assert ch2.il_db(F_NYQ) == pytest.approx(10.0, abs=1e-6)
    ch4 = NetworkChannel(_four_port(net), "12,34")
    assert ch4.nports == 4
    np.testing.assert_allclose(ch4.response(F_GRID), ch2.response(F_GRID), rtol=0, atol=1e-14)
    assert 0 < ch2.bulk_delay_s < TAU + 5e-12


def test_network_channel_equals_touchstone_channel_of_the_same_data(tmp_path):
    """Written to a Touchstone file by scikit-rf and read back by our parser, the line
    is the same channel on the link grid (to the rounding of the text)."""
    net = _line(10.0, shape="sqrt", name="sqrtline")
    for n, data in ((2, net), (4, _four_port(net))):
        data.write_touchstone(filename=f"line{n}", dir=str(tmp_path))
        path = tmp_path / f"line{n}.s{n}p"
        a = NetworkChannel(data).response(F_GRID)
        b = TouchstoneChannel(path).response(F_GRID)
        np.testing.assert_allclose(b, a, rtol=0, atol=1e-12)
        assert TouchstoneChannel(path).bulk_delay_s == pytest.approx(
            NetworkChannel(data).bulk_delay_s, abs=1e-15)
    assert TouchstoneChannel.from_network(net).il_db(F_NYQ) == pytest.approx(10.0, abs=1e-6)


def test_reference_impedance_is_renormalized_to_50_ohm():
    """A 60 ohm line whose ports are 60 ohm is matched in its own network, but a 50 ohm
    link sees the mismatch: the channel is the line embedded in 50 ohm ports."""
    own = _line(3.0, z0=60.0)  # z0_port None: ports are 60 ohm
    embedded = _line(3.0, z0=60.0, z0_port=50.0)
    assert np.allclose(own.z0, 60.0)
    ch = NetworkChannel(own)
    np.testing.assert_allclose(ch.sdd21, embedded.s[:, 1, 0], rtol=0, atol=1e-12)
    assert not np.allclose(ch.sdd21, own.s[:, 1, 0], atol=1e-3)
    assert np.allclose(own.z0, 60.0)  # the caller's network is left alone


def test_network_channel_errors_are_one_line():
    net = _line(3.0, name="myline")
    with pytest.raises(ConfigError, match=r"network 'pair': not a thru: .* -6000.0 dB .* "
                       r"check ports") as ei:
        NetworkChannel(_four_port(net), "13,24")
    assert "\n" not in str(ei.value)
    with pytest.raises(ConfigError, match=r"network 'myline': data end at 50 GHz"):
        NetworkChannel(net, f_needed_hz=60e9)
    with pytest.raises(ConfigError, match=r"data end at 50 GHz, below the 60 GHz"):
        NetworkChannel(net, f_needed_hz=60e9)
    three = skrf.Network(frequency=net.frequency, s=np.zeros((F_DATA.size, 3, 3)), z0=50.0)
    with pytest.raises(ConfigError, match=r"2-port or a 4-port network"):
        NetworkChannel(three)
    with pytest.raises(ConfigError, match="not a scikit-rf Network"):
        NetworkChannel(object())
    with pytest.raises(ConfigError, match="ports='12,33'"):
        NetworkChannel(net, "12,33")


# ------------------------------------------------- every channel stage: describe, il_db


def _channel_stages(overrides):
    return build_link(Config.default().with_overrides(overrides)).channel_stages


def test_every_channel_stage_describes_itself_and_reports_il(tmp_path):
    net = _line(10.0, shape="sqrt")
    net.write_touchstone(filename="chan", dir=str(tmp_path))
    cases = [
        (["channel.model=ideal"], ["ideal"], 0.0),
        (["channel.model=loss", "channel.loss_db=20"], ["loss line", "20 dB", "26.5625 GHz"],
         20.0),
        (["channel.model=touchstone", f"channel.file={tmp_path / 'chan.s2p'}"],
         ["touchstone", "chan.s2p", "2-port", "S21", "5000 points"], 10.0),
    ]
    for overrides, words, il in cases:
        (stage,) = _channel_stages(overrides)
        label = stage.describe()
        for w in words:
            assert w in label, (overrides, label)
        assert stage.il_db(F_NYQ) == pytest.approx(il, abs=1e-6)
    stages = _channel_stages(["reflections.segment_lengths_mm=[20, 8, 20]",
                              "reflections.segment_z0_ohm=[50, 40, 50]"])
    refl = stages[-1]
    assert "3 segments" in refl.describe()
    h = refl.response(np.array([0.0, F_NYQ]))[1]
    assert refl.il_db(F_NYQ) == pytest.approx(-20 * np.log10(abs(h)), rel=1e-12)
    # a NetworkChannel labels itself by the network's name
    assert "network 'line'" in NetworkChannel(net).describe()
