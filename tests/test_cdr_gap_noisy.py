"""The statistical loop model on the noisy MM-loop link of tests/test_cdr_lanes_cal.py
(30 dB, SNR_TX 21 dB, one converter), where the statistical BER was 2.3x under the
count (benchmarks/cdr_gap_noisy.py splits that gap): the model's lock point is where the
closed loop's recovered phase settles (the detector measured with the transmitter's
noise and its S-curve's level from the long record, serdes/engines/cdr_stat.py), and
the run's statistical BER lies in the counted 95 % interval widened by 1.5x on this
link and with the CTLE at -18/-1 dB."""

import numpy as np
import pytest

from serdes.build import build
from serdes.config import Config
from serdes.engines.cdr import LOOKAHEAD, CdrFrontEnd
from serdes.engines.cdr_false_lock import report_model
from serdes.engines.cdr_stat_model import stat_system
from serdes.engines.run import design_equalizer, simulate
from serdes.signal.source import Transmitter

NOISY = ["noise.rj_ui=0", "channel.loss_db=30", "tx.snr_db=21", "ctle.auto=false",
         "ctle.g_dc_db=-19", "ctle.g_dc2_db=-2", "cdr.mode=mm", "link.target_errors=0"]
CTLE_18 = ["ctle.g_dc_db=-18", "ctle.g_dc2_db=-1"]
BAND = 1.5      # the stat-vs-counted band the project promises


def _system(*over):
    return build(Config.default().with_overrides([*NOISY, *over]))


def test_model_lock_point_is_the_closed_loops_mean_phase():
    """The closed loop (the run's own PRBS31 data, its RX and TX noise; 8 M UI after
    the warm-up) against the model's static phase: within 3 combined standard errors
    (the loop's mean from batch means of 2^16 UI; the model's level from the long
    record of NOISE_SYMBOLS symbols: sqrt(V_lr / N) / Kpd). Without the TX noise in the
    detector's measurement and with the short record's level the model put the loop at
    -0.0005 UI, the closed loop sits near -0.006."""
    from serdes.engines import cdr_stat

    system = _system()
    front = CdrFrontEnd(system.link, system.run.seed, system.cdr, system.tx_jitter)
    taps = design_equalizer(system)
    model_ui = stat_system(system, taps, front)[0].link.impairments.offset_ui
    resp = cdr_stat.response_for(system, front)
    se_model = np.sqrt(resp.noise_lr / cdr_stat.NOISE_SYMBOLS) / front.cal.kpd

    fe = CdrFrontEnd(system.link, system.run.seed, system.cdr, system.tx_jitter,
                     calibration=front.cal)
    tx = Transmitter(system.link, system.source, system.run.seed)
    fe.trace = []
    chunk, n = 1 << 16, (1 << 23) + (1 << 18)
    for k in range(0, n, chunk):
        fe(tx.next(chunk)[2], k)
    ph = np.concatenate(fe.trace)[LOOKAHEAD + (1 << 18):]
    assert fe.outside == 0
    batches = ph[:ph.shape[0] // chunk * chunk].reshape(-1, chunk).mean(axis=1)
    se_loop = batches.std(ddof=1) / np.sqrt(batches.shape[0])
    tol = 3.0 * np.hypot(se_model, se_loop)
    assert abs(model_ui - ph.mean()) < tol, (model_ui, ph.mean(), tol)
    assert tol < 0.004  # resolves the 0.0055 UI the old model was off by


@pytest.mark.parametrize("over,symbols", [((), 1_200_000), (CTLE_18, 1_600_000)],
                         ids=["ctle-19-2", "ctle-18-1"])
def test_stat_ber_within_the_counted_interval(over, symbols):
    """Seeded counted run (default seed, the default skip after the loop's warm-up)
    against the run's statistical BER (serdes run's path: the loop model, its lock
    points): the statistical BER lies in [lo / 1.5, hi x 1.5] of the count's 95 %
    Clopper-Pearson interval, which holds at least 40 errors."""
    system = _system(*over)
    taps = design_equalizer(system)
    res = simulate(system, symbols=symbols, taps=taps)
    stat = report_model(system, taps)["ber"]
    lo, hi = res.ber_ci
    assert res.bit_errors >= 40
    assert lo / BAND <= stat <= hi * BAND, (res.ber, (lo, hi), stat)
