"""What the interleaved-ADC clock-recovery tests (tests/test_cdr_lanes*.py) share: the
noisy link, the TX jitter, a front end driven in chunks, the skew override, the
detector's measured S-curve and the recovered phase's shift under a skew pattern."""

import numpy as np

from serdes.build import build
from serdes.config import Config
from serdes.engines.cdr import CdrFrontEnd
from serdes.engines.cdr_lanes import TiCdrFrontEnd
from serdes.kernels.fir import fir_valid

UI = 1 / 53.125e9
# the noisy link of tests/test_tiadc_ber.py (BER ~1e-4..1e-3 with mismatch), before the
# loop's cdr.mode
NOISY = ["noise.rj_ui=0", "channel.loss_db=30", "tx.snr_db=21", "ctle.auto=false",
         "ctle.g_dc_db=-19", "ctle.g_dc2_db=-2"]
TXJ = ["tx_jitter.rj_ui=0.01", "tx_jitter.sj_ui=0.1", "tx_jitter.sj_hz=1e6"]


def noisy_system(mode, *over):
    """The noisy link with the ``mode`` loop ("mm", "bb") and the overrides ``over``."""
    return build(Config.default().with_overrides([*NOISY, f"cdr.mode={mode}", *over]))


def skews(values_ui, ui_s=UI):
    """The adc.skews_s override of per-lane skews given in UI."""
    return "adc.skews_s=[" + ",".join(f"{v * ui_s:.9e}" for v in values_ui) + "]"


def drive(fe, n, chunk, seed=3):
    """(samples, sampling phases) of front end ``fe`` over n random symbols (seeded),
    fed in chunks of ``chunk``."""
    g = np.random.default_rng(seed)
    a = fe.levels[g.integers(0, fe.levels.shape[0], n)]
    fe.trace = []
    x = np.concatenate([fe(a[k:k + chunk], k) for k in range(0, n, chunk)])
    return x, np.concatenate(fe.trace)


def s_curve(fe, phases):
    """The detector's mean output (bias removed) at fixed phases, on the calibration's
    data (common random numbers) and the noise of its open loop."""
    g = np.random.default_rng(12345)
    n = (1 << 17) + fe.hist
    a = fe.levels[g.integers(0, 4, n)]
    w = fir_valid(np.concatenate([np.zeros(fe.noise_fir.shape[0] - 1),
                                  g.standard_normal(n - fe.hist)]), fe.noise_fir)
    return np.array([np.mean(fe._open_loop(a, np.zeros(n), w, p)) - fe.cal.bias
                     for p in phases])


def skew_shift(mode, tau):
    """The ``mode`` loop's recovered phase with lanes skewed by ``tau`` (UI) minus the
    phase without skew (same seed: common random numbers), 1 << 20 UI after 1 << 16 of
    settling: (mean difference, its standard error from batch means of 16384 UI, the
    curvature term -(S'' / 2 S') var(tau) of the measured S-curve at +-0.05 UI)."""
    ref_sys = noisy_system(mode)
    sk_sys = noisy_system(mode, f"adc.lanes={len(tau)}", skews(tau, ref_sys.link.ui_s))
    f0 = CdrFrontEnd(ref_sys.link, 1, ref_sys.cdr)
    f1 = TiCdrFrontEnd(sk_sys.link, 1, sk_sys.cdr, calibration=f0.cal)
    n, settle = 1 << 20, 1 << 16
    d = (drive(f1, n, 1 << 16)[1] - drive(f0, n, 1 << 16)[1])[settle:]
    batch = 1 << 14
    bm = d[:d.shape[0] // batch * batch].reshape(-1, batch).mean(axis=1)
    se = bm.std(ddof=1) / np.sqrt(bm.shape[0])
    sm, s0, sp = s_curve(f0, [-0.05, 0.0, 0.05])
    s1, s2 = (sp - sm) / 0.1, (sp - 2 * s0 + sm) / 0.05 ** 2
    return d.mean(), se, -s2 / (2 * s1) * tau.var()
