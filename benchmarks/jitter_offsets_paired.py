"""The default link's RJ path with the compiled offsets against the former NumPy form,
and against the same link without jitter, interleaved in one process (the same memory
and machine load for all three; whole-process pairs on a loaded 2-core machine move by
10 % or more and do not resolve a few-per-cent change).

    taskset -c 1 python3 benchmarks/jitter_offsets_paired.py [SYMBOLS] [ROUNDS]

Each round times one counted run of SYMBOLS (default 2e6) in CPU time with the compiled
offsets (``Jitter.offsets_fine``), with the NumPy form (``offsets_ui(k0, n) * m``, the
same values) and without jitter, in rotating order; printed: the medians and the
medians of the per-round ratios.
"""

import statistics
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

import serdes.engines.pulse as pe  # noqa: E402
from serdes.build import build  # noqa: E402
from serdes.config import Config  # noqa: E402
from serdes.engines.run import simulate  # noqa: E402


def main() -> int:
    n = int(float(sys.argv[1])) if len(sys.argv) > 1 else 2_000_000
    rounds = int(sys.argv[2]) if len(sys.argv) > 2 else 15
    jit = build(Config.default().with_overrides(["link.target_errors=0"]))
    flat = build(Config.default().with_overrides(["link.target_errors=0", "noise.rj_ui=0"]))
    compiled = pe.Jitter.offsets_fine

    def numpy_form(self, k0, n_, m):
        return self.offsets_ui(k0, n_) * m

    def run(system, offsets):
        pe.Jitter.offsets_fine = offsets
        t = time.process_time()
        simulate(system, symbols=n)
        return time.process_time() - t

    for s in (jit, flat):
        run(s, compiled)
    t = {"compiled": [], "numpy": [], "no jitter": []}
    cases = [("compiled", jit, compiled), ("numpy", jit, numpy_form),
             ("no jitter", flat, compiled)]
    for r in range(rounds):
        for name, s, f in cases[r % 3:] + cases[:r % 3]:
            t[name].append(run(s, f))
    pe.Jitter.offsets_fine = compiled
    med = {k: statistics.median(v) for k, v in t.items()}
    print(f"{n:.0e} symbols, {rounds} interleaved rounds, CPU s medians: "
          + ", ".join(f"{k} {v:.3f}" for k, v in med.items()))

    def ratio(a, b):
        return statistics.median(x / y for x, y in zip(t[a], t[b]))

    print(f"RJ / no jitter: compiled offsets {ratio('compiled', 'no jitter'):.3f}, NumPy "
          f"offsets {ratio('numpy', 'no jitter'):.3f}; NumPy / compiled (RJ run) "
          f"{ratio('numpy', 'compiled'):.3f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
