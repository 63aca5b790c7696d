"""A real IEEE P802.3ck channel through the whole link."""

import numpy as np
import pytest

from serdes.channel.touchstone import read_sdd21
from serdes.config import Config
from serdes.engines.run import simulate
from serdes.build import build


@pytest.mark.parametrize("name, il", [
    ("ieee8023ck_KR_ortho_tracy_3ck_02_0119/DPO_4in_Meg7_THRU.s4p", 12.0),
    ("ieee8023ck_C2C_gore_3ck_02_0519/C2C_PCB_SYSVIA_12dB_thru.s4p", 12.0),
])
def test_touchstone_link(channels_dir, name, il):
    path = channels_dir / name
    cfg = Config.default().with_overrides(["channel.model=touchstone",
                                           f"channel.file={path}", "noise.rj_ui=0"])
    system = build(cfg)
    link = system.link
    # the reported IL at Nyquist is the file's, within the authors' label rounding
    assert link.il_nyquist_db == pytest.approx(il, abs=0.5)
    # the link's channel response on its grid follows the file between file points
    f, s = read_sdd21(path)
    sel = (f > 1e9) & (f < 40e9)
    h = np.interp(f[sel], link.f_hz, np.abs(link.h_channel))
    np.testing.assert_allclose(h, np.abs(s[sel]), rtol=0.02, atol=1e-3)
    # a causal pulse: nothing of note arrives before the main cursor's pre-cursor span
    p = link.pulse
    assert p.dropped_energy < 1e-3
    res = simulate(system, symbols=100_000)
    assert res.snr_db == pytest.approx(res.predicted_snr_db, abs=0.3)
