"""Clock recovery: its cost against the fixed sampling phase, its BER penalty, and the
time of a jitter tolerance curve, each against its baseline in the same run.

Run: taskset -c 1 pytest benchmarks/bench_cdr.py --benchmark-only -s
Printed: M symbols/s of the default link (RJ 0.01 UI) with the fixed phase and with the
MM loop (goal: the loop costs < 2x; each CDR run includes building its front end: pulse
tables, the detector's S-curve calibration and the loop model); the BER and slicer SNR of both on the same seed
(the loop's penalty, with the equivalent SNR); the time of a 10-point statistical JTOL
curve and of one counted JTOL point at BER 1e-6.
"""

import time

from conftest import best_time
from serdes.build import build
from serdes.config import Config
from serdes.engines.run import simulate

N = 2_000_000
PAIRS = 3


def test_cdr_vs_fixed_phase_speed(benchmark):
    base = ["link.target_errors=0"]
    fixed = build(Config.default().with_overrides(base))
    cdr = build(Config.default().with_overrides(base + ["cdr.mode=mm"]))
    for s in (fixed, cdr):
        simulate(s, symbols=200_000)
    t_fix, t_cdr = float("inf"), float("inf")
    for _ in range(PAIRS):  # alternate, so both see the same machine load
        t_fix = min(t_fix, best_time(lambda: simulate(fixed, symbols=N), repeat=1))
        t_cdr = min(t_cdr, best_time(lambda: simulate(cdr, symbols=N), repeat=1))
    benchmark.pedantic(lambda: simulate(cdr, symbols=N), rounds=1, iterations=1)
    ratio = t_cdr / t_fix
    benchmark.extra_info.update(ratio=ratio, cdr_msym_s=N / t_cdr / 1e6,
                                fixed_msym_s=N / t_fix / 1e6)
    print(f"\nfixed phase {N / t_fix / 1e6:.2f} M sym/s, MM loop {N / t_cdr / 1e6:.2f} "
          f"M sym/s, ratio {ratio:.2f} (goal < 2)")


def test_cdr_penalty(benchmark):
    """Same seed, same symbols: fixed phase at the pulse peak (where the equalizer is
    designed) against the MM loop locked there ('peak') and at the MM zero ('mm')."""
    n = 20_000_000
    lines = []

    def run():
        lines.clear()
        for label, extra in (("fixed peak", []), ("MM, lock peak", ["cdr.mode=mm"]),
                             ("MM, lock mm", ["cdr.mode=mm", "cdr.lock=mm"])):
            s = build(Config.default().with_overrides(["link.target_errors=0",
                                                       f"link.symbols={n}", *extra]))
            r = simulate(s)
            c = r.cdr or {}
            lines.append(f"{label:14s} BER {r.ber:.3e} [{r.ber_ci[0]:.2e}, {r.ber_ci[1]:.2e}]"
                         f" ({r.bit_errors} errors in {r.bits:.3g} bits), slicer SNR "
                         f"{r.snr_db:.3f} dB" + (f", phase {c['phase_mean_ui']:+.4f} UI, "
                                                 f"wander {c['phase_rms_ui']:.4f} UI rms"
                                                 if c else ""))

    benchmark.pedantic(run, rounds=1, iterations=1)
    print("\n" + "\n".join(lines))


def test_jtol_curve_time(benchmark):
    from serdes.commands.jtol import jtol_report
    from serdes.jtol import log_grid

    cfg = Config.default().with_overrides(["cdr.mode=mm"])
    out = {}

    def run():
        t0 = time.perf_counter()
        out["stat"] = jtol_report(cfg, target=1e-6, method="stat", freqs=log_grid(1e4, 1e8, 10))
        out["t_stat"] = time.perf_counter() - t0
        t0 = time.perf_counter()
        out["counted"] = jtol_report(cfg, target=1e-6, method="counted", freqs=[1e7],
                                     workers=1)
        out["t_counted"] = time.perf_counter() - t0

    benchmark.pedantic(run, rounds=1, iterations=1)
    pts = out["stat"]["points"]
    print(f"\nstatistical JTOL, 10 frequencies: {out['t_stat']:.1f} s")
    for p in pts:
        print(f"  {p['sj_hz']:10.3g} Hz  {p['sj_ui']:10.4g} UI  template "
              f"{p['template_ui'] if p['template_ui'] is not None else float('nan'):.4g}")
    c = out["counted"]["points"][0]
    print(f"counted JTOL point at 10 MHz, BER 1e-6: {c['sj_ui']:.4g} UI (fails at "
          f"{c['counted_fail_ui']:.4g}; statistical {c['stat_sj_ui']:.4g}) in "
          f"{out['t_counted']:.1f} s, {len(c['counted_runs'])} runs of "
          f"{c['symbols_per_run']:,} symbols")
