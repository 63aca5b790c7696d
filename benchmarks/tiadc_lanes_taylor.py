"""The 64-lane ADC with aperture jitter alone: the lanes' Taylor-2 path against the exact
per-lane rows it replaced, both against the ideal ADC, in one process.

Run: taskset -c 1 python3 benchmarks/tiadc_lanes_taylor.py [--pairs 7] [--symbols 2e6]
Each round runs the ideal ADC, the lanes' Taylor-2 path and the exact rows (forced) on
the default link (RJ 0) with bench_tiadc.py's 64-lane mismatch and 50 fs aperture
jitter, in a rotating order; printed: the median over rounds of each path's CPU time
(time.process_time) over the ideal ADC's in the same round, and the kernels alone
(ns per sample, median of 9 calls on one 65536-symbol chunk).
"""

import argparse
import time

import numpy as np

from serdes.build import build
from serdes.config import Config
from serdes.engines.pulse import PulseFrontEnd
from serdes.engines.run import simulate
from serdes.kernels.adc_ti import lane_pulse_sum_rows, lane_pulse_sum_taylor
from serdes.tiadc import lanes as lanes_mod

TI64 = ["adc.lanes=64", "adc.offset_rms_v=2e-3", "adc.gain_rms=0.01",
        "adc.skew_rms_s=0.3e-12", "adc.bw_hz=60e9", "adc.bw_rms_rel=0.05",
        "adc.aperture_jitter_s=50e-15"]
BASE = ["link.target_errors=0", "noise.rj_ui=0", "adc.bw_hz=60e9"]


def _cpu(fn):
    t0 = time.process_time()
    fn()
    return time.process_time() - t0


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--pairs", type=int, default=7)
    ap.add_argument("--symbols", type=float, default=2e6)
    o = ap.parse_args()
    n = int(o.symbols)
    ideal = build(Config.default().with_overrides(BASE))
    ti = build(Config.default().with_overrides(BASE + TI64))
    plan = lanes_mod.LanePulses._plan_taylor

    def run(kind):
        if kind == "ideal":
            return simulate(ideal, symbols=n)
        if kind == "exact":
            lanes_mod.LanePulses._plan_taylor = lambda self, link, lp: False
        try:
            return simulate(ti, symbols=n)
        finally:
            lanes_mod.LanePulses._plan_taylor = plan

    kinds = ["ideal", "taylor", "exact"]
    for k in kinds:
        run(k if k != "ideal" else "ideal")
    times = {k: [] for k in kinds}
    for r in range(o.pairs):
        order = kinds[r % 3:] + kinds[:r % 3]
        for k in order:
            times[k].append(_cpu(lambda: run(k)))
    t_i = np.array(times["ideal"])
    for k in ("taylor", "exact"):
        ratio = np.array(times[k]) / t_i
        print(f"64 lanes, aperture 50 fs, {k:6s}: {n / np.median(times[k]) / 1e6:.2f} M sym/s, "
              f"ratio to the ideal ADC {np.median(ratio):.2f} (median of {o.pairs}; "
              f"{ratio.min():.2f}-{ratio.max():.2f})")
    print(f"ideal ADC: {n / np.median(t_i) / 1e6:.2f} M sym/s")
    # the kernels alone on one chunk
    fe = PulseFrontEnd(ti.link, 0)
    lp = fe.lanes
    lanes_mod.LanePulses._plan_taylor = lambda self, link, lp: False
    ex = PulseFrontEnd(ti.link, 0).lanes
    lanes_mod.LanePulses._plan_taylor = plan
    m = 1 << 16
    a = np.random.default_rng(1).choice(ti.link.levels, m + ti.link.pulse.n_ui - 1)
    off, dl = ex.offsets(0, m), lp.deltas(0, m)
    calls = {"taylor": lambda: lane_pulse_sum_taylor(a, lp._taps, dl, 0),
             "exact": lambda: lane_pulse_sum_rows(a, ex._rows, ex._first, ex.phase, off, 0)}
    for k, f in calls.items():
        f()
        ns = np.median([_cpu(f) for _ in range(9)]) / m * 1e9
        print(f"kernel {k:6s}: {ns:.1f} ns per sample")


if __name__ == "__main__":
    main()
