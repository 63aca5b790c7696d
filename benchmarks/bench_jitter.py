"""Jitter at full speed and the Gaussian streams, each against its baseline in the same run.

Run: taskset -c 1 pytest benchmarks/bench_jitter.py --benchmark-only -s
Printed: the jittered / jitter-free time ratio of the default link (goal <= 1.3) and of a
256-UI pulse (goal <= 2), the counted errors of the Taylor path beside the exact kernel
for the same seed, the jittered-sum kernels, and NumPy vs numba normal blocks.
"""

import numpy as np
import pytest

from conftest import best_time
from serdes.build import build
from serdes.config import Config
from serdes.engines import pulse as pulse_engine
from serdes.engines.pulse import PulseFrontEnd
from serdes.engines.run import simulate
from serdes.kernels import gauss
from serdes.kernels import jitter as kj
from serdes.kernels.fir import fir_valid, pulse_sum_jitter

N = 2_000_000
PAIRS = 5  # best of 5 alternating pairs: single short runs on a shared machine vary 30 %


def _ratio(benchmark, extra, label):
    base = ["link.target_errors=0", *extra]
    jit = build(Config.default().with_overrides(base))
    flat = build(Config.default().with_overrides(base + ["noise.rj_ui=0"]))
    path = PulseFrontEnd(jit.link, 0).path
    for s in (jit, flat):
        simulate(s, symbols=20_000)
    # paired: alternate the two so both see the same machine load
    t_jit, t_flat = float("inf"), float("inf")
    for _ in range(PAIRS):
        t_flat = min(t_flat, best_time(lambda: simulate(flat, symbols=N), repeat=1))
        t_jit = min(t_jit, best_time(lambda: simulate(jit, symbols=N), repeat=1))
    benchmark.pedantic(lambda: simulate(jit, symbols=N), rounds=1, iterations=1)
    ratio = t_jit / t_flat
    benchmark.extra_info.update(ratio=ratio, path=path, jitter_msym_s=N / t_jit / 1e6,
                                no_jitter_msym_s=N / t_flat / 1e6)
    print(f"\n{label}: RJ 0.01 UI ({path}) {N / t_jit / 1e6:.2f} M sym/s, no jitter "
          f"{N / t_flat / 1e6:.2f} M sym/s, ratio {ratio:.2f}")
    return ratio


def test_default_link_rj_vs_no_jitter(benchmark):
    _ratio(benchmark, [], "default link (64-UI pulse)")


def test_256ui_pulse_rj_vs_no_jitter(benchmark):
    _ratio(benchmark, ["link.pulse_ui=256"], "256-UI pulse")


@pytest.mark.parametrize("extra", [(), ("noise.sj_ui=0.1", "noise.dd_ui=0.05")])
def test_taylor_vs_exact_counted_errors(benchmark, extra, monkeypatch):
    """The same seed through the Taylor path and the exact kernel: error counts and time."""
    system = build(Config.default().with_overrides(["link.target_errors=0", *extra]))
    n = 4_000_000  # the default link: about 85 errors
    simulate(system, symbols=20_000)
    fast = simulate(system, symbols=n)
    monkeypatch.setattr(pulse_engine, "TAYLOR_TOL", 0.0)
    simulate(system, symbols=20_000)
    exact = simulate(system, symbols=n)
    benchmark.pedantic(lambda: None, rounds=1, iterations=1)
    for name, r in (("taylor", fast), ("exact", exact)):
        benchmark.extra_info[name] = {"bit_errors": r.bit_errors, "ber": r.ber,
                                      "ber_ci": list(r.ber_ci),
                                      "symbols_per_s": r.symbols_per_s}
        print(f"\n{name:6s} {extra}: {r.bit_errors} bit errors, BER {r.ber:.3e} "
              f"[{r.ber_ci[0]:.3e}, {r.ber_ci[1]:.3e}], {r.symbols_per_s / 1e6:.2f} M sym/s")


@pytest.mark.parametrize("n_ui", [64, 256])
def test_jittered_sum_kernels(benchmark, n_ui):
    """Per-sample cost of the old per-tap interpolation, the exact rows kernel, Taylor-2
    and a plain FIR of the same length (the jitter-free engine)."""
    rng = np.random.default_rng(0)
    m, n = 32, 1 << 16
    pad = 4 * m
    p = np.concatenate([np.zeros(pad), rng.normal(size=n_ui * m), np.zeros(pad)])
    phase = pad + 16.0
    a = rng.choice([-1.0, -1 / 3, 1 / 3, 1.0], size=n + n_ui - 1)
    off = np.clip(rng.normal(scale=0.01 * m, size=n), -0.08 * m, 0.08 * m)
    first = int(np.floor(phase - 0.08 * m)) - 1
    rows = kj.pulse_rows(p, m, n_ui, first, int(np.floor(phase + 0.08 * m)) + 3 - first)
    taps = kj.taylor_taps(kj.derivatives(p), phase, m, n_ui, np.zeros(1))
    seg = np.array([0, n])
    fns = {"old": lambda: pulse_sum_jitter(a, p, m, phase, off, n_ui),
           "rows": lambda: kj.pulse_sum_rows(a, rows, first, phase, off),
           "taylor": lambda: kj.pulse_sum_taylor(a, taps, seg, off),
           "fir": lambda: fir_valid(a, p[int(phase)::m][:n_ui].copy())}
    ns = {k: best_time(f) / n * 1e9 for k, f in fns.items()}
    benchmark(fns["taylor"])
    benchmark.extra_info.update({f"{k}_ns_per_sample": v for k, v in ns.items()})
    print(f"\n{n_ui} UI, ns/sample: " + ", ".join(f"{k} {v:.1f}" for k, v in ns.items())
          + f"; taylor / old {ns['taylor'] / ns['old']:.2f}, taylor / fir "
          f"{ns['taylor'] / ns['fir']:.2f}")


def test_normal_blocks_numpy_vs_numba(benchmark):
    """One 65536-sample block of one stream: NumPy Generator vs the numba draw (same
    values); and the four streams of a jittered run per symbol."""
    n = 1 << 16
    g = np.random.Generator(np.random.PCG64(1))
    st = gauss.pcg64_state(np.random.PCG64(1))
    t_np = best_time(lambda: g.standard_normal(n), repeat=9) / n * 1e9
    t_nb = best_time(lambda: gauss.pcg64_normals(st, n), repeat=9) / n * 1e9
    benchmark(lambda: gauss.pcg64_normals(st, n))
    benchmark.extra_info.update(numpy_ns=t_np, numba_ns=t_nb, speedup=t_np / t_nb)
    print(f"\nnormal draws: NumPy {t_np:.2f} ns, numba {t_nb:.2f} ns per sample "
          f"({t_np / t_nb:.2f}x); 4 streams per symbol: {4 * t_np:.1f} -> {4 * t_nb:.1f} ns")
