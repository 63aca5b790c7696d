"""Clock recovery with crosstalk aggressors: cost and slicer SNR against baselines in the
same run.

Run: taskset -c 1 python3 benchmarks/cdr_xtalk.py [--symbols N] [--pairs P]
Printed: CPU time (time.process_time) per run, best of P interleaved rounds, of the
default link with one -20 dB copy aggressor (and a 200 ppm TX offset) under the MM loop,
against the same link without the aggressor (the loop's own cost) and against the
fixed-phase engine with the aggressor (no ppm: it cannot track one); then the slicer SNR
with and without the aggressor on the same taps, seed and data, against the noise
budget's prediction (the error power without it plus the aggressor's power through the
FFE).
"""

import argparse
import time

import numpy as np

from serdes.build import build
from serdes.config import Config
from serdes.engines.run import design_equalizer, simulate
from serdes.impairments import slicer_powers

AGG = [dict(model="copy", coupling_db=-20)]


def _cpu(fn):
    t = time.process_time()
    r = fn()
    return time.process_time() - t, r


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--symbols", type=int, default=1_000_000)
    ap.add_argument("--pairs", type=int, default=3)
    o = ap.parse_args()
    base = ["link.target_errors=0"]
    cdr = base + ["cdr.mode=mm", "tx_jitter.ppm=200"]
    systems = {
        "cdr+aggressor": build(Config.default().with_overrides(cdr).with_aggressors(AGG)),
        "cdr": build(Config.default().with_overrides(cdr)),
        "fixed+aggressor": build(Config.default().with_overrides(base).with_aggressors(AGG)),
    }
    taps = design_equalizer(systems["cdr+aggressor"])
    for s in systems.values():
        simulate(s, symbols=200_000, taps=taps)   # compile and warm the caches
    best = {k: float("inf") for k in systems}
    res = {}
    for _ in range(o.pairs):   # interleaved, so all see the same machine load
        for k, s in systems.items():
            t, res[k] = _cpu(lambda: simulate(s, symbols=o.symbols, taps=taps))
            best[k] = min(best[k], t)
    for k in systems:
        print(f"{k:16s} {best[k]:7.2f} s CPU  {o.symbols / best[k] / 1e6:5.2f} M sym/s  "
              f"ratio to cdr {best[k] / best['cdr']:.2f}  BER {res[k].ber:.2e}  "
              f"SNR {res[k].snr_db:.2f} dB")
    p = slicer_powers(systems["cdr+aggressor"].link, taps.ffe, taps.residual())["crosstalk"]
    lv = systems["cdr"].link.levels
    sig = float(np.mean(lv ** 2))
    e0 = sig / 10 ** (res["cdr"].snr_db / 10)
    pred = 10 * np.log10(sig / (e0 + p))
    print(f"slicer SNR with the aggressor: measured {res['cdr+aggressor'].snr_db:.2f} dB, "
          f"budget {pred:.2f} dB (without it {res['cdr'].snr_db:.2f} dB; aggressor power "
          f"{p:.3e} at the slicer); tracked ppm {res['cdr+aggressor'].cdr['tracked_ppm']:.1f}, "
          f"lock {res['cdr+aggressor'].cdr['lock_symbols']} symbols")


if __name__ == "__main__":
    main()
