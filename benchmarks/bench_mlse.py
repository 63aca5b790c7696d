"""Viterbi (MLSE) kernel speed beside a NumPy baseline, and the counted BER of
FFE + whitening + MLSE against FFE + DFE on a 35 dB channel.

Run: pytest benchmarks/bench_mlse.py --benchmark-only -s

PAM4 with channel memory L has 4^L states and 4^(L+1) branches per symbol: memory 1 is
4 states / 16 branches, memory 2 is 16 states / 64 branches, memory 3 is 64 states /
256 branches.
"""

import numpy as np
import pytest

from conftest import LEVELS, best_time, compare_links
from naive import viterbi_numpy as _viterbi_numpy
from serdes.dsp.mlse import MlseDetector


def viterbi_numpy(u, g, delay):
    return _viterbi_numpy(u, g, delay, LEVELS)


TARGETS = {1: [1.0, 0.7], 2: [1.0, 0.9, 0.3], 3: [1.0, 0.8, 0.3, 0.05]}
N = 1_000_000
DELAY = 24


def _signal(g, n, seed=0):
    rng = np.random.default_rng(seed)
    mem = len(g) - 1
    a = LEVELS[rng.integers(0, 4, n + mem)]
    u = sum(g[i] * a[mem - i:mem - i + n] for i in range(mem + 1))
    return u + 0.1 * rng.normal(size=n)


@pytest.mark.parametrize("memory", [1, 2, 3])
def test_viterbi_kernel(benchmark, memory):
    g = TARGETS[memory]
    u = _signal(g, N)
    det = lambda: MlseDetector(LEVELS, target=g, traceback=DELAY)  # noqa: E731
    det().process(u[:1000])  # compile / load the cache
    benchmark.pedantic(lambda: det().process(u), rounds=3, iterations=1)
    t_nb = benchmark.stats.stats.min / N
    n_np = 20_000
    t_np = best_time(lambda: viterbi_numpy(u[:n_np], g, DELAY), repeat=2) / n_np
    same = np.array_equal(viterbi_numpy(u[:5000], g, DELAY), det().process(u[:5000])[0])
    states = 4 ** memory
    benchmark.extra_info.update(states=states, branches=4 * states, symbols_per_s=1 / t_nb,
                                numpy_symbols_per_s=1 / t_np, speedup_vs_numpy=t_np / t_nb,
                                same_decisions=same)
    print(f"\nViterbi memory {memory} ({states} states, {4 * states} branches): numba "
          f"{1 / t_nb / 1e6:.2f} M symbols/s, NumPy {1 / t_np / 1e3:.1f} k symbols/s, "
          f"ratio {t_np / t_nb:.0f}x, same decisions {same}")
    assert same


def test_mlse_vs_dfe_ber_at_35db(benchmark):
    base = ["channel.loss_db=35", "noise.rj_ui=0", "link.target_errors=0", "link.precoding=false"]
    cases = {"FFE + DFE 1 tap": [], "FFE + DFE 2 taps": ["dfe.taps=2"],
             "FFE + MLSE L=1": ["eq.detector=mlse"],
             "FFE + MLSE L=2": ["eq.detector=mlse", "mlse.memory=2"],
             "FFE + predictor + MLSE L=1": ["eq.detector=mlse", "mlse.whitening=predictor"],
             "FFE + predictor + MLSE L=2": ["eq.detector=mlse", "mlse.whitening=predictor",
                                            "mlse.memory=2"]}
    compare_links(benchmark, base, cases, 1_000_000,
                  extra=lambda r: f", {r.symbols_per_s / 1e6:.2f} M symbols/s")
