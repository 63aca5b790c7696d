"""Statistical JTOL below the loop bandwidth: the linear-loop answer (Gaussian wander)
against the simulated tracking error (serdes/engines/cdr_track.py), and the
measurements behind the model at 1.67 MHz / 0.083 UI: the BER averaged over the
tracking error of the closed loop and of the phase-domain model, and counted runs.

Run: PYTHONPATH=. python3 benchmarks/jtol_tracking.py [--mode mm|bb] [--counted N]
(--counted: also count N seeds of 4 M symbols at 0.083 UI, 1.67 MHz)."""

import argparse
import time

import numpy as np

from serdes.build import build
from serdes.config import Config
from serdes.engines import cdr_track
from serdes.engines.cdr_stat import response_for
from serdes.jtol import Jtol

FREQS = (599484.25, 1668100.5)  # the 10-point 10 kHz..100 MHz grid's points below 4 MHz
LOW = (1e4, 1e5, 1e6)  # far below the bandwidth: the counted points in cdr_track's notes


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--mode", default="mm")
    ap.add_argument("--counted", type=int, default=0)
    a = ap.parse_args()
    system = build(Config.default().with_overrides([f"cdr.mode={a.mode}"]))
    jt = Jtol(system)
    print("f_MHz   linear_ui  tracking_ui  untracked_ui  wander_ui  cpu_s")
    for f in LOW + FREQS:
        t = time.process_time()
        p = jt.stat_point(f, 1e-6)
        print(f"{f / 1e6:5.2f}   {p.get('linear_sj_ui', p['sj_ui']):.4f}     {p['sj_ui']:.4f}"
              f"       {p['untracked_ui']:.4f}        {p['wander_ui']:.4f}     "
              f"{time.process_time() - t:.1f}  ({p['model']})")
    resp = response_for(system, jt.front)
    tab = cdr_track.OffsetBer(system, jt.taps)
    for amp in (0.083, 0.09, 0.1):
        tr = cdr_track.simulate(jt.front, resp, amp, FREQS[1])
        print(f"model: 1.67 MHz {amp} UI: mean BER over the tracking error "
              f"{tab.mean_ber(tr, 1e-10):.2e}")
    if a.counted:
        from serdes.engines.run import simulate

        errs = bits = 0
        for seed in range(1, a.counted + 1):
            s = build(Config.default().with_overrides(
                [f"cdr.mode={a.mode}", "tx_jitter.sj_ui=0.083", f"tx_jitter.sj_hz={FREQS[1]}",
                 f"link.seed={seed}"]))
            r = simulate(s, symbols=4_000_000, taps=jt.taps)
            errs, bits = errs + r.bit_errors, bits + r.bits
            print(f"counted seed {seed}: {r.bit_errors} errors")
        print(f"counted 1.67 MHz 0.083 UI: BER {errs / bits:.2e} ({errs} errors)")


if __name__ == "__main__":
    np.seterr(all="ignore")
    main()
