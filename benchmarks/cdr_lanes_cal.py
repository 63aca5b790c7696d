"""The interleaved ADC's background calibration inside the clock-recovery loop: counted
BER of the 64-lane example with the MM loop, mismatch-free / mismatched / mismatched and
calibrated, and the CPU cost of the calibration against the same loop without it.

Run:
  python3 benchmarks/cdr_lanes_cal.py ber [--symbols N] [--ctle auto|fixed] [--mode mm|ssmm|bb]
  taskset -c 1 python3 benchmarks/cdr_lanes_cal.py cost [--symbols N] [--rounds R]

``ber``: the default link (``--ctle fixed``: the IEEE CTLE at -18/-1 dB, the search's
choice without lanes, as tests/test_cdr_lanes.py; ``auto``: the search's choice with the
lanes) with ``adc.lanes=64 adc.skew_rms_s=1e-12 adc.offset_rms_v=3e-3
adc.gain_rms=0.03`` and ``cdr.mode=mm`` (or ``--mode``); each run counts N symbols after its skip (the
calibrated one after the calibration's automatic settling, 4.8 M symbols). Printed: BER
with its 95 % interval, the equivalent SNR (the Gray PAM4 slicer's SNR in Gaussian noise
at that BER; at the interval's ends too), the loop's phase wander and lock, and the
calibration's residual mismatch.

``cost``: whole-run CPU time (time.process_time) of ``simulate`` with the loop and 64
mismatched lanes, with and without the calibration, in pairs whose order alternates so
a drift of the shared machine's load favours neither; each pair's ratio and the median.
"""

import argparse
import statistics
import sys
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))

from mlse_fair import equivalent_snr_db  # noqa: E402
from serdes.build import build  # noqa: E402
from serdes.config import Config  # noqa: E402
from serdes.dsp.receiver import build_chain  # noqa: E402
from serdes.dsp.ti_cal import TiCalibration, residuals  # noqa: E402
from serdes.engines.run import design_equalizer, simulate  # noqa: E402

FIXED = ["ctle.auto=false", "ctle.g_dc_db=-18", "ctle.g_dc2_db=-1"]
MISMATCH = ["adc.skew_rms_s=1e-12", "adc.offset_rms_v=3e-3", "adc.gain_rms=0.03"]
BASE = ["adc.lanes=64", "link.target_errors=0"]


def system(ctle, *over, mode="mm"):
    return build(Config.default().with_overrides(BASE + [f"cdr.mode={mode}"]
                                                 + (FIXED if ctle == "fixed" else [])
                                                 + list(over)))


def ber(args):
    cases = [("mismatch-free", [m.split("=")[0] + "=0" for m in MISMATCH]),
             ("mismatched", MISMATCH),
             ("mismatched, calibrated", MISMATCH + ["adc_cal.enabled=true"])]
    for name, over in cases:
        s = system(args.ctle, *over, mode=args.mode)
        settle = s.link.adc.calibration.settle_symbols if s.link.adc.calibration else 0
        taps = design_equalizer(s)
        chain = build_chain(s.link, taps, s.receiver, seed=s.run.seed)
        t = time.process_time()
        r = simulate(s, symbols=settle + args.symbols, taps=taps, receiver=chain)
        cpu = time.process_time() - t
        lo, hi = r.ber_ci
        eq = [equivalent_snr_db(v) for v in (r.ber, hi, lo)]
        c = r.cdr
        print(f"{name}: BER {r.ber:.3e} [{lo:.3e}, {hi:.3e}] ({r.bit_errors} errors in "
              f"{r.bits} bits), equivalent SNR {eq[0]:.2f} dB [{eq[1]:.2f}, {eq[2]:.2f}], "
              f"slicer SNR {r.snr_db:.2f} dB; loop locked after {c['lock_symbols']} UI, "
              f"phase mean {c['phase_mean_ui']}, wander {c['phase_rms_ui']} UI rms, "
              f"outside {c['outside_window_symbols']}; {cpu:.1f} s CPU", flush=True)
        cal = chain.find(TiCalibration)
        if cal is not None:
            res = residuals(s.link.adc, cal.history)
            adc = s.link.adc
            print(f"  residual after {res['samples'][-1]} samples: offset "
                  f"{res['offset_rms_v'][-1] * 1e3:.3f} mV (from "
                  f"{np.sqrt(np.mean(adc.offsets_v ** 2)) * 1e3:.3f}), gain "
                  f"{res['gain_rms'][-1]:.4f} (from {np.std(adc.gains):.4f}), skew "
                  f"{res['skew_rms_s'][-1] * 1e15:.1f} fs (from "
                  f"{np.std(adc.skews_s) * 1e15:.1f}); trims' mean "
                  f"{np.mean(adc.skew_trim_s):.2e} s", flush=True)


def cost(args):
    plain = system("fixed", *MISMATCH)
    # the calibration's settling equal to the loop's warm-up: both runs count the same
    # decisions (the counting is part of the cost)
    cal = system("fixed", *MISMATCH, "adc_cal.enabled=true",
                 f"adc_cal.settle_symbols={plain.cdr.warmup_symbols}")
    for s in (plain, cal):   # compile and fill the caches
        simulate(s, symbols=20_000)
    ratios = []
    for i in range(args.rounds):
        order = (plain, cal) if i % 2 == 0 else (cal, plain)
        t = {}
        for s in order:
            t0 = time.process_time()
            r = simulate(s, symbols=args.symbols)
            t[id(s)] = time.process_time() - t0
            assert r.symbols > args.symbols - 200_000, r.symbols   # both count alike
        t1, t2 = t[id(plain)], t[id(cal)]
        ratios.append(t2 / t1)
        print(f"round {i}: loop + 64 lanes {t1:.2f} s ({args.symbols / t1 / 1e6:.2f} M sym/s), "
              f"with calibration {t2:.2f} s ({args.symbols / t2 / 1e6:.2f} M sym/s), "
              f"ratio {t2 / t1:.3f}", flush=True)
    print(f"median ratio {statistics.median(ratios):.3f} (min {min(ratios):.3f}, "
          f"max {max(ratios):.3f})")


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("what", choices=["ber", "cost"])
    ap.add_argument("--symbols", type=int, default=None)
    ap.add_argument("--rounds", type=int, default=5)
    ap.add_argument("--ctle", choices=["fixed", "auto"], default="fixed")
    ap.add_argument("--mode", choices=["mm", "ssmm", "bb"], default="mm")
    a = ap.parse_args()
    if a.what == "ber":
        a.symbols = a.symbols or 10_000_000
        ber(a)
    else:
        a.symbols = a.symbols or 2_000_000
        cost(a)


if __name__ == "__main__":
    main()
