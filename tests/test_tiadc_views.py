"""Bathtubs and the statistical eye of an interleaved ADC overlay every lane's samples
(the mean over the output phases): the bathtub at the nominal phase against the
engine's BER and against the counted BER of the pulse engine (within 1.5x of its 95 %
interval), and the eye map the mean of its lanes' maps."""

import numpy as np

from serdes.build import build
from serdes.config import Config
from serdes.engines.run import simulate
from serdes.engines.stat import StatisticalEngine
from serdes.tiadc.stat import InterleavedStatistics, statistical_engine

BASE = ["noise.rj_ui=0", "channel.loss_db=30", "tx.snr_db=21", "ctle.auto=false",
        "ctle.g_dc_db=-19", "ctle.g_dc2_db=-2"]
LANES = ["adc.lanes=8", "adc.skew_rms_s=3.5e-12", "adc.offset_rms_v=3e-3"]


def test_bathtub_and_eye_cover_every_lane():
    system = build(Config.default().with_overrides(BASE + LANES))
    eng = statistical_engine(system)
    assert isinstance(eng, InterleavedStatistics)
    h = eng.bathtub_horizontal(n_phases=8, span_ui=0.5)
    k0 = int(np.argmin(np.abs(h.x)))
    assert abs(h.x[k0]) < 1e-12
    # no SJ: one jitter row, so the bathtub's total at phase 0 is the engine's BER
    assert abs(h.ber[k0] / eng.ber().ber - 1) < 1e-9
    # and phase 0 alone (what the plain engine showed) is not the ADC's eye
    alone = StatisticalEngine.bathtub_horizontal(eng, n_phases=8, span_ui=0.5)
    assert abs(alone.ber[k0] / h.ber[k0] - 1) > 0.05
    res = simulate(system, symbols=400_000, target_errors=10 ** 9, taps=eng.taps)
    lo, hi = res.ber_ci
    assert res.bit_errors >= 30
    assert lo <= 1.5 * h.ber[k0] and hi >= h.ber[k0] / 1.5, (res.ber, (lo, hi), h.ber[k0])
    v = eng.bathtub_vertical(n_points=41)
    assert v.ber_per_eye.shape == (3, 41)
    e = eng.eye(n_phases=8, n_bins=32)
    per = []
    for l in eng.phases:
        eng._set_phase(l)
        per.append(StatisticalEngine.eye(eng, n_phases=8, n_bins=32).ber)
    eng._set_phase(0)
    np.testing.assert_allclose(e.ber, np.mean(per, axis=0), rtol=1e-12)
