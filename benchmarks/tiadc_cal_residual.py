"""The calibrated ADC's skew-trim loop measured against its closed form
(:func:`serdes.tiadc.cal_residual.skew_covariance`): per lane-mode variance of the
residual after each trim, its autocorrelation from chunk to chunk, and the loop's R'(T)
estimate against the pulse's:

    python3 benchmarks/tiadc_cal_residual.py [--lanes 8] [--chunks 400] [--chunk 8192]
        [--set key=value ...]

The run settles for the calibration's settle time (the trims' gear shift at half of it),
then records ``--chunks`` trims. Printed: the lane mean square of the residual over its
closed form with a batch-means interval, the same per mode pair q / N - q, the lag-1..4
autocorrelation of the lowest mode against the closed form's (the skew loop alone, or with
the gain LMS running the joint loop of both), and the loop's R'(T) estimate
(its running average) against the closed form's.
"""

from __future__ import annotations

import argparse
import time

import numpy as np
from scipy import stats

from serdes.build import build
from serdes.config import Config
from serdes.dsp.receiver import build_chain
from serdes.dsp.ti_cal import TiCalibration
from serdes.engines.run import simulate
from serdes.tiadc import cal_residual
from serdes.tiadc.stat import statistical_engine


def batch_interval(x, batches: int = 10):
    """Mean of ``x`` and a 95 % t interval from ``batches`` batch means."""
    b = np.array([v.mean() for v in np.array_split(np.asarray(x), batches)])
    h = float(stats.t.ppf(0.975, batches - 1) * b.std(ddof=1) / np.sqrt(batches))
    return float(b.mean()), h


class _Recorded(TiCalibration):
    """The calibration block, recording its R'(T) estimate after every chunk."""

    def _record(self, samples):
        super()._record(samples)
        self.history.setdefault("r_est", []).append(float(self._scal[1]))


def mode1_autocorr(link, s, chunk: int, lags: int) -> np.ndarray:
    """The lowest lane mode's autocorrelation at lags 1 .. ``lags`` in closed form: the
    skew loop alone, (1 - g rho_1)^lag, or with the gain LMS running the joint loop's
    (F^lag X)[0, 0] / X[0, 0] (:func:`cal_residual.skew_gain_modes`)."""
    k = np.arange(1, lags + 1)
    if s.mu_gain * s.fine_ratio == 0:
        rho = cal_residual._skew_modes(link, s, chunk)[3][0]
        return np.real((1 - s.skew_gain * s.fine_ratio * rho) ** k)
    f, x = cal_residual.skew_gain_modes(link, s, chunk)
    return np.array([np.real((np.linalg.matrix_power(f[0], i) @ x[0])[0, 0] / x[0, 0, 0])
                     for i in k])


def measure(overrides, chunks: int):
    system = build(Config.default().with_overrides(list(overrides)))
    link, s = system.link, system.link.adc.calibration
    eng = statistical_engine(system)
    chain = build_chain(link, eng.taps, system.receiver, seed=system.run.seed)
    cal = chain.find(TiCalibration)
    cal.__class__ = _Recorded
    chunk = system.run.chunk_symbols
    settle = s.settle_symbols
    simulate(system, symbols=settle + chunks * chunk, target_errors=10 ** 9, receiver=chain,
             taps=eng.taps)
    h = cal.history
    after = np.array(h["samples"]) > settle
    sk = np.array(h["skews_s"])[after]
    e = (link.adc.skews_s[None, :] - sk) / link.ui_s
    e -= e.mean(axis=1, keepdims=True)
    return system, cal, e


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--lanes", type=int, default=8)
    ap.add_argument("--chunks", type=int, default=400)
    ap.add_argument("--chunk", type=int, default=8192)
    ap.add_argument("--skew", type=float, default=1e-12)
    ap.add_argument("--set", action="append", default=[])
    args = ap.parse_args(argv)
    over = [f"adc.lanes={args.lanes}", f"adc.skew_rms_s={args.skew}", "adc_cal.enabled=true",
            f"link.chunk_symbols={args.chunk}"] + args.set
    t0 = time.process_time()
    system, cal, e = measure(over, args.chunks)
    link, s = system.link, cal.settings
    n = link.adc.lanes
    c = cal_residual.skew_covariance(link, s, system.run.chunk_symbols)
    ms = np.mean(e ** 2, axis=1)
    m, hw = batch_interval(ms / c[0])
    print(f"{' '.join(over)}: {e.shape[0]} trims after settling "
          f"({time.process_time() - t0:.0f} s CPU)")
    print(f"lane mean square / closed form: {m:.3f} +- {hw:.3f} (95 %, 10 batch means)")
    eq = np.fft.fft(e, axis=1) / np.sqrt(n)          # per-mode, unit-variance normalised
    cq = np.real(np.fft.fft(c)) if n > 1 else c        # eigenvalues of the circulant
    for k in range(1, n // 2 + 1):
        v = np.abs(eq[:, k]) ** 2 + (np.abs(eq[:, n - k]) ** 2 if k != n - k else 0)
        ref = cq[k] + (cq[n - k] if k != n - k else 0)
        mk, hk = batch_interval(v / ref)
        print(f"  mode {k}: measured / closed form {mk:.3f} +- {hk:.3f}")
    z = eq[:, 1]
    ac = [float(np.real(np.mean(z[l:] * np.conj(z[:z.shape[0] - l])) / np.mean(np.abs(z) ** 2)))
          for l in range(1, 5)]
    print(f"  mode 1 autocorrelation lag 1..4: {np.round(ac, 3)}; closed form "
          f"{np.round(mode1_autocorr(link, s, system.run.chunk_symbols, 4), 3)}")
    a, b, r_est = cal_residual.loop_slopes(link, s)
    r_run = float(np.mean(np.array(cal.history["r_est"])[-e.shape[0]:]))
    print(f"  loop's R'(T) estimate (mean after settling) {r_run:.5g}; closed form {r_est:.5g} (pulse slopes a {a:.5g}, b {b:.5g})")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
