"""Cost of clock recovery with a 64-lane interleaved ADC against the CDR with the ideal
converter, in the same run.

Run: taskset -c 1 python3 benchmarks/cdr_lanes_cost.py [--symbols N] [--rounds R] [--aperture S]
Whole-run CPU time (time.process_time) of ``simulate`` on the default link with the MM
loop (CTLE fixed at the search's choice without lanes), single converter against 64
lanes with offset, gain, skew and T/H bandwidth mismatch and aperture jitter (the
mismatch of benchmarks/bench_tiadc.py), in alternating pairs so both see the same load;
prints each pair's ratio and the median, and the two runs' BER.
"""

import argparse
import statistics
import time

from serdes.build import build
from serdes.config import Config
from serdes.engines.run import simulate

BASE = ["cdr.mode=mm", "ctle.auto=false", "ctle.g_dc_db=-18", "ctle.g_dc2_db=-1",
        "link.target_errors=0", "adc.bw_hz=60e9"]
TI64 = ["adc.lanes=64", "adc.offset_rms_v=2e-3", "adc.gain_rms=0.01",
        "adc.skew_rms_s=0.3e-12", "adc.bw_rms_rel=0.05", "adc.aperture_jitter_s=50e-15"]


def cpu(system, n):
    t = time.process_time()
    r = simulate(system, symbols=n)
    return time.process_time() - t, r


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--symbols", type=int, default=2_000_000)
    ap.add_argument("--rounds", type=int, default=5)
    ap.add_argument("--aperture", type=float, default=50e-15,
                    help="the lanes' aperture jitter (s; 0: none, no random draw per sample)")
    a = ap.parse_args()
    single = build(Config.default().with_overrides(BASE))
    lanes = build(Config.default().with_overrides(
        BASE + TI64 + [f"adc.aperture_jitter_s={a.aperture}"]))
    for s in (single, lanes):   # compile and fill the caches
        simulate(s, symbols=20_000)
    ratios = []
    for i in range(a.rounds):
        t1, r1 = cpu(single, a.symbols)
        t2, r2 = cpu(lanes, a.symbols)
        ratios.append(t2 / t1)
        print(f"round {i}: CDR alone {t1:.2f} s ({a.symbols / t1 / 1e6:.2f} M sym/s), "
              f"CDR + 64 lanes {t2:.2f} s ({a.symbols / t2 / 1e6:.2f} M sym/s), "
              f"ratio {t2 / t1:.3f}", flush=True)
    print(f"median ratio {statistics.median(ratios):.3f} (min {min(ratios):.3f}, "
          f"max {max(ratios):.3f}); BER alone {r1.ber:.3e} ({r1.bit_errors} errors), "
          f"64 lanes {r2.ber:.3e} ({r2.bit_errors} errors)")


if __name__ == "__main__":
    main()
