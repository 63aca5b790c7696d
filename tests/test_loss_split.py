"""The skin/dielectric split of the synthetic loss line (channel.skin_fraction): closed
forms at the two ends, the builder mapping, and the default against the IEEE 802.3ck
thru channels (skipped without the data)."""

import numpy as np
import pytest

from serdes.build import build_link
from serdes.channel.loss import SKIN_FRACTION, LossLine
from serdes.config import Config

F_NYQ = 26.5625e9
# the thrus without a via-stub resonance (DPO_4in fits a negative skin share)
THRUS = ["ieee8023ck_C2C_gore_3ck_02_0519/C2C_PCB_SYSVIA_12dB_thru.s4p",
         "ieee8023ck_C2M_mellitz_3ck_01_0518/C2M__Z100_IL14_WC_BOR_H_L_H_THRU.s4p",
         "ieee8023ck_CR_mellitz_3ck_04_1119/CA_19p75dB_thru.s4p",
         "ieee8023ck_CR_mellitz_3ck_04_1119/Tp0_Tp5_28p5db_FQSFP_thru.s4p",
         "ieee8023ck_KR_ortho_tracy_3ck_02_0119/DPO_12in_Meg7_THRU.s4p"]


def _il(line, f):
    return -20.0 * np.log10(np.abs(line.response(np.asarray(f, dtype=float))))


@pytest.mark.parametrize("loss_db", [10.0, 28.25])
def test_closed_forms(loss_db):
    f = np.linspace(0.5e9, 60e9, 50)
    skin = LossLine(loss_db=loss_db, f_ref_hz=F_NYQ, skin_fraction=1.0)
    np.testing.assert_allclose(_il(skin, f), loss_db * np.sqrt(f / F_NYQ), rtol=1e-12)
    diel = LossLine(loss_db=loss_db, f_ref_hz=F_NYQ, skin_fraction=0.0)
    np.testing.assert_allclose(_il(diel, f), loss_db * f / F_NYQ, rtol=1e-12)
    s = 0.3
    mixed = LossLine(loss_db=loss_db, f_ref_hz=F_NYQ, skin_fraction=s)
    np.testing.assert_allclose(_il(mixed, f),
                               loss_db * (s * np.sqrt(f / F_NYQ) + (1 - s) * f / F_NYQ),
                               rtol=1e-12)


def test_config_key_reaches_the_line():
    cfg = Config.default().with_overrides(["channel.skin_fraction=1.0", "channel.loss_db=20"])
    (line,) = build_link(cfg).channel_stages
    assert line.skin_fraction == 1.0
    assert line.il_db(4 * F_NYQ) == pytest.approx(40.0, rel=1e-9)
    (default,) = build_link(Config.default()).channel_stages
    assert default.skin_fraction == SKIN_FRACTION
    with pytest.raises(Exception, match="skin_fraction"):
        Config.default().with_overrides(["channel.skin_fraction=1.5"])


def test_default_split_against_ieee_thrus(channels_dir):
    """Each thru scaled to 28.25 dB at Nyquist: the default line at 40 GHz is below every
    one of them (they lose faster than f above Nyquist, which no sqrt f + f line follows)
    by at most 13 dB, nearer to each than the package-trace split (0.70 skin) is, and its
    rms deviation over the fitted band (0.05..1.5 x Nyquist) is smaller than that
    split's on every thru."""
    from serdes.channel.touchstone_io import read_sdd21

    new = LossLine(loss_db=28.25, f_ref_hz=F_NYQ)
    old = LossLine(loss_db=28.25, f_ref_hz=F_NYQ, skin_fraction=0.70)
    for name in THRUS:
        f, s21 = read_sdd21(channels_dir / name, "12,34")
        il = -20.0 * np.log10(np.abs(s21))
        scaled = il * 28.25 / np.interp(F_NYQ, f, il)
        real40 = float(np.interp(40e9, f, scaled))
        m40 = float(_il(new, [40e9])[0])
        assert real40 - 13.0 <= m40 <= real40, name
        assert abs(m40 - real40) < abs(float(_il(old, [40e9])[0]) - real40), name
        band = (f >= 0.05 * F_NYQ) & (f <= 1.5 * F_NYQ)
        rms_new = np.sqrt(np.mean((_il(new, f[band]) - scaled[band]) ** 2))
        rms_old = np.sqrt(np.mean((_il(old, f[band]) - scaled[band]) ** 2))
        assert rms_new < rms_old, name


def test_default_is_the_fit(channels_dir):
    """The default share is the median of the least-squares fits of
    IL(f) = a sqrt(f/fN) + b f/fN (dB) over 0.05..1.5 x Nyquist, share a / (a + b)."""
    from serdes.channel.touchstone_io import read_sdd21

    shares = []
    for name in THRUS:
        f, s21 = read_sdd21(channels_dir / name, "12,34")
        il = -20.0 * np.log10(np.abs(s21))
        band = (f >= 0.05 * F_NYQ) & (f <= 1.5 * F_NYQ)
        x = f[band] / F_NYQ
        (a, b), *_ = np.linalg.lstsq(np.stack([np.sqrt(x), x], 1), il[band], rcond=None)
        shares.append(a / (a + b))
    assert all(0.1 < s < 0.4 for s in shares)
    assert SKIN_FRACTION == pytest.approx(np.median(shares), abs=0.005)
