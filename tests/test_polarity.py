"""A link that inverts the signal (P and N crossed in a channel file, or any stage with a
negative gain) gives the results of the same link not inverted: the receiver inverts its
input, as every SerDes RX can. Before, the main cursor was taken at the pulse's largest
positive sample, a side lobe of the inverted main lobe: the crossed IEEE C2C thru got
another CTLE (-14 instead of -9 dB), 0.7 dB less SNR and a statistical BER of 5e-18
instead of 1.3e-23, and `serdes com` called its eye closed (-44.6 mV, against COM 8.1 dB)."""

from __future__ import annotations

import dataclasses

import numpy as np
import pytest

from conftest import earlier_default
from serdes.build import build
from serdes.engines.run import design_equalizer, simulate
from serdes.engines.stat import StatisticalEngine
from serdes.link import Link

C2C = "ieee8023ck_C2C_gore_3ck_02_0519/C2C_PCB_SYSVIA_12dB_thru.s4p"


class Invert:
    """A stage of gain -1 (a crossed differential pair)."""

    def response(self, f_hz):
        return -np.ones(np.shape(f_hz), dtype=np.complex128)

    def describe(self) -> str:
        return "crossed pair"


def _inverted(system):
    link = system.link
    inv = Link(link.grid, tx=link.tx_stages, channel=[*link.channel_stages, Invert()],
               rx=link.rx_stages, levels=link.levels, swing_v=link.swing_v,
               impairments=link.impairments, adc=link.adc, clip_sigma=link.clip_sigma,
               pulse_ui=link.pulse_ui)
    return dataclasses.replace(system, link=inv)


def test_an_inverted_link_counts_what_the_link_counts():
    """Same pulse, equalizer, counted errors (same seed) and statistical BER; the
    summary says the receiver inverts. The link is made to count errors (BER ~1e-3)."""
    system = build(earlier_default("channel.loss_db=34", "noise.eta0_v2_per_ghz=1e-7"))
    inv = _inverted(system)
    assert system.link.rx_polarity == 1 and inv.link.rx_polarity == -1
    assert "polarity inverted" in inv.link.summary()["rx"]
    assert "polarity inverted" not in system.link.summary()["rx"]
    a, b = system.link.pulse, inv.link.pulse
    assert a.cursor == b.cursor and a.n_ui == b.n_ui
    np.testing.assert_allclose(b.taps, a.taps, rtol=0, atol=1e-12 * np.max(a.taps))
    ta, tb = design_equalizer(system), design_equalizer(inv)
    assert ta.latency == tb.latency
    np.testing.assert_allclose(tb.ffe, ta.ffe, rtol=1e-9, atol=1e-12)
    ra, rb = (simulate(s, symbols=100_000, target_errors=0, seed=5) for s in (system, inv))
    assert ra.bit_errors > 50
    assert rb.bit_errors == ra.bit_errors and rb.symbol_errors == ra.symbol_errors
    assert rb.snr_db == pytest.approx(ra.snr_db, abs=1e-9)
    sa, sb = (StatisticalEngine(s).ber().ber for s in (system, inv))
    assert sb == pytest.approx(sa, rel=1e-6)


def test_a_crossed_channel_file_runs_as_the_file(channels_dir, tmp_path):
    """The IEEE C2C thru with ports 2 and 4 swapped (SDD21 negated, exactly): the same
    CTLE choice, SNR and counted errors through the config path (CTLE search, VGA)."""
    skrf = pytest.importorskip("skrf")
    net = skrf.Network(str(channels_dir / C2C))
    net.renumber([0, 1, 2, 3], [0, 3, 2, 1])
    crossed = tmp_path / "crossed.s4p"
    net.write_touchstone(str(crossed))
    sets = ["channel.model=touchstone", "noise.eta0_v2_per_ghz=1e-5"]
    systems = [build(earlier_default(*sets, f"channel.file={f}", "ctle.auto=true"))
               for f in (channels_dir / C2C, crossed)]
    assert [s.link.rx_polarity for s in systems] == [1, -1]
    gains = [(c.g_dc_db, c.g_dc2_db) for s in systems for c in s.link.rx_stages
             if hasattr(c, "g_dc2_db")]
    assert gains[0] == gains[1]
    ra, rb = (simulate(s, symbols=60_000, target_errors=0, seed=2) for s in systems)
    assert ra.bit_errors > 20 and rb.bit_errors == ra.bit_errors
    assert rb.snr_db == pytest.approx(ra.snr_db, abs=1e-6)


def test_com_of_a_crossed_thru_is_the_com_of_the_thru(channels_dir):
    """COM inverts a thru whose pulse peaks negative and says so (thru_inverted); one
    package case and a short search keep it fast."""
    from serdes.com.core import compute_com
    from serdes.com.params import preset
    from serdes.com.pulse import Channel, read_channel

    p = preset("802.3ck-c2c")
    p = dataclasses.replace(p, cases=p.cases[:1], g_dc=(-8.0, -6.0), g_dc2=(-1.0,))
    thru = read_channel(channels_dir / C2C, "thru")
    sdd = thru.sdd.copy()
    sdd[:, 1, 0] *= -1          # the output pair crossed: SDD21 and SDD12 change sign
    sdd[:, 0, 1] *= -1
    crossed = Channel("crossed", "thru", thru.f_hz, sdd)
    a, b = compute_com(thru, preset=p), compute_com(crossed, preset=p)
    assert not a.thru_inverted and b.thru_inverted
    assert b.com_db == pytest.approx(a.com_db, abs=1e-9)
    assert b.cases[0].unequalized_peak_v == pytest.approx(a.cases[0].unequalized_peak_v)
    assert b.as_dict()["thru_inverted"] is True
