"""The eye and bathtub commands take the statistical engine where the receiver samples,
as ``serdes run`` does (serdes.metrics.eye.stat_view): with clock recovery, at the loop's
lock point with its wander and the SJ it leaves. Before, they took the link at the pulse
peak with every SJ untracked: on a link whose MM zero is 0.13 UI after the peak, with
``cdr.lock = 'mm'``, the equalized eye's statistical density was 3 times wider than the
counted one (rms 0.130 against 0.043 of a level spacing) and the bathtub's best phase
sat 0.13 UI from where the loop samples."""

from __future__ import annotations

import numpy as np

from serdes.build import build
from serdes.commands.run import run_link
from serdes.config import Config
from serdes.engines.stat import StatisticalEngine
from serdes.metrics.eye import receiver_taps, slicer_samples, stat_density, stat_view

OVER = ["tx.ffe=[0,0,-0.2,0.8,0]", "cdr.mode=mm", "cdr.lock=mm"]


def _moments(dens, level):
    x = np.linspace(-2.0, 2.0, 40001)
    p = dens.pdf(level, x)
    p = p / np.trapezoid(p, x)
    mu = np.trapezoid(x * p, x)
    return mu, np.sqrt(np.trapezoid((x - mu) ** 2 * p, x))


def test_the_equalized_eye_density_meets_the_counted_one():
    s = build(Config.default().with_overrides(OVER))
    taps, _ = receiver_taps(s)
    dens = stat_density(StatisticalEngine(stat_view(s, taps), taps))
    smp = slicer_samples(s, taps, symbols=1 << 17)
    for level in range(4):
        v = smp.v[smp.sent == level]         # about 32k each: the rms to 0.4 %
        mu, sd = _moments(dens, level)
        assert abs(mu - v.mean()) < 0.005
        assert abs(sd / v.std() - 1.0) < 0.05
    # without the CDR the density is the engine's one distribution, as before
    q = build(Config.default())
    tq, _ = receiver_taps(q)
    eng = StatisticalEngine(stat_view(q, tq), tq)
    assert stat_view(q, tq) is q and type(stat_density(eng)) is type(eng.distribution())


def test_the_bathtub_centres_on_the_lock_point_and_meets_the_run():
    cfg = Config.default().with_overrides(OVER + ["link.symbols=300000"])
    s = build(cfg)
    taps, _ = receiver_taps(s)
    h = StatisticalEngine(stat_view(s, taps), taps).bathtub_horizontal(64)
    best = float(h.x[int(np.argmin(h.ber))])
    assert abs(best) <= 1.0 / 32
    at0 = float(h.ber[int(np.argmin(np.abs(h.x)))])
    stat = run_link(cfg, stat="ber", eye=False)["stat_ber"]
    assert 0 < stat < 1e-10 and abs(at0 / stat - 1.0) < 0.1   # the loop model's weighting


def test_the_bathtub_sees_the_sj_the_loop_tracks():
    """0.5 UI of SJ at 101 kHz, far inside the 4 MHz loop's bandwidth: the bathtub took it
    untracked and read BER 0.13 at the sampling point; the loop leaves a few mUI."""
    cfg = Config.default().with_overrides(["cdr.mode=mm", "noise.sj_ui=0.5",
                                           "noise.sj_hz=1.01e5", "link.symbols=300000"])
    s = build(cfg)
    taps, _ = receiver_taps(s)
    h = StatisticalEngine(stat_view(s, taps), taps).bathtub_horizontal(32)
    at0 = float(h.ber[int(np.argmin(np.abs(h.x)))])
    stat = run_link(cfg, stat="ber", eye=False)["stat_ber"]
    assert at0 < 1e-10 and abs(at0 / stat - 1.0) < 0.1
