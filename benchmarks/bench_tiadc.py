"""The time-interleaved ADC at full speed, against the ideal converter in the same run.

Run: SERDES_BENCH_CLOCK=cpu taskset -c 1 pytest benchmarks/bench_tiadc.py --benchmark-only -s
Printed: whole-run time per symbol of the default link with a 64-lane ADC carrying
offset, gain, skew and T/H bandwidth mismatch and aperture jitter, over the same link
with the ideal ADC (goal < 1.5; the median of the paired ratios), with the link's RJ on
(the ideal ADC takes the Taylor path, the lanes the exact per-lane rows), off (plain FIR
vs per-lane FIR), and with aperture jitter alone (plain FIR vs the lanes' Taylor-2); and the
BER of the mismatch-free, mismatched and calibrated 8-lane ADC on a noisy link.
"""

import numpy as np
import pytest

from conftest import best_time
from serdes.build import build
from serdes.config import Config
from serdes.engines.pulse import PulseFrontEnd
from serdes.engines.run import simulate

N = 2_000_000
PAIRS = 5
TI64 = ["adc.lanes=64", "adc.offset_rms_v=2e-3", "adc.gain_rms=0.01",
        "adc.skew_rms_s=0.3e-12", "adc.bw_hz=60e9", "adc.bw_rms_rel=0.05",
        "adc.aperture_jitter_s=50e-15"]


@pytest.mark.parametrize("rj, aperture", [("0.01", "50e-15"), ("0", "0"), ("0", "50e-15")])
def test_64_lane_adc_vs_ideal_per_symbol(benchmark, rj, aperture):
    """The default link (RJ 0.01 UI), and without jitter: lanes without aperture jitter
    are per-lane FIRs; with it, the exact per-lane rows against the ideal ADC's plain FIR
    (there the ideal ADC is spared a jitter the lanes carry)."""
    base = ["link.target_errors=0", f"noise.rj_ui={rj}", "adc.bw_hz=60e9"]
    ideal = build(Config.default().with_overrides(base))
    ti = build(Config.default().with_overrides(base + TI64
                                               + [f"adc.aperture_jitter_s={aperture}"]))
    paths = PulseFrontEnd(ideal.link, 0).path, PulseFrontEnd(ti.link, 0).path
    for s in (ideal, ti):
        simulate(s, symbols=20_000)
    ideal_t, ti_t = [], []
    for _ in range(PAIRS):   # alternate the two so both see the same machine load
        ideal_t.append(best_time(lambda: simulate(ideal, symbols=N), repeat=1))
        ti_t.append(best_time(lambda: simulate(ti, symbols=N), repeat=1))
    benchmark.pedantic(lambda: simulate(ti, symbols=N), rounds=1, iterations=1)
    pair = np.array(ti_t) / np.array(ideal_t)
    ratio = float(np.median(pair))      # the median of the paired ratios
    t_ideal, t_ti = float(np.median(ideal_t)), float(np.median(ti_t))
    benchmark.extra_info.update(ratio=ratio, pair_ratios=pair.tolist(), paths=list(paths),
                                ideal_msym_s=N / t_ideal / 1e6, ti_msym_s=N / t_ti / 1e6)
    print(f"\nRJ {rj} UI, aperture {aperture} s: ideal ADC ({paths[0]}) "
          f"{N / t_ideal / 1e6:.2f} M sym/s, 64-lane ({paths[1]}) {N / t_ti / 1e6:.2f} "
          f"M sym/s, ratio {ratio:.2f} (median of {PAIRS} pairs; "
          f"{pair.min():.2f}-{pair.max():.2f})")


def test_calibration_ber_before_after(benchmark):
    base = ["noise.rj_ui=0", "channel.loss_db=30", "tx.snr_db=21", "ctle.auto=false",
            "ctle.g_dc_db=-19", "ctle.g_dc2_db=-2", "adc.lanes=8", "link.target_errors=0"]
    mis = ["adc.offset_rms_v=3e-3", "adc.gain_rms=0.03", "adc.skew_rms_s=2e-12"]
    n = 4_000_000
    rows = []
    for name, over, symbols in (("mismatch-free", [], n), ("mismatched", mis, n),
                                ("calibrated", mis + ["adc_cal.enabled=true"], n + 600_000)):
        r = simulate(build(Config.default().with_overrides(base + over)), symbols=symbols)
        rows.append((name, r))
        benchmark.extra_info[name] = {"ber": r.ber, "ci": list(r.ber_ci), "snr_db": r.snr_db,
                                      "bit_errors": r.bit_errors}
    benchmark.pedantic(lambda: None, rounds=1, iterations=1)
    for name, r in rows:
        print(f"\n{name:14s} BER {r.ber:.3e} [{r.ber_ci[0]:.3e}, {r.ber_ci[1]:.3e}] "
              f"({r.bit_errors} errors), slicer SNR {r.snr_db:.2f} dB")
