"""Where the waveform engine's CPU time goes on the default link (noise on, 0.01 UI RJ).

    python3 benchmarks/waveform_breakdown.py [--symbols 200000]

Times (process CPU time, best of 3 runs after a warm-up) the whole run and, inside it,
the noise blocks (forward FFT, white normals, pruned inverse FFT) and the sampling
kernel, by wrapping those calls; the rest is the transmitter, the receiver chain and
the error count, which the pulse engine shares.
"""

from __future__ import annotations

import argparse
import sys
import time

import numpy as np


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--symbols", type=int, default=200_000)
    args = ap.parse_args(argv)
    import serdes.engines.wave_noise as wn
    import serdes.engines.waveform as wf
    from serdes import rng
    from serdes.build import build
    from serdes.config import Config
    from serdes.engines.run import simulate

    acc: dict[str, float] = {}

    def wrap(owner, name, key):
        f = getattr(owner, name)

        def timed(*a, **k):
            t = time.process_time()
            try:
                return f(*a, **k)
            finally:
                acc[key] = acc.get(key, 0.0) + time.process_time() - t
        setattr(owner, name, timed)

    wrap(wn.SampledNoise, "_form", "noise blocks (all)")
    wrap(np.fft, "rfft", "  forward FFTs (and the filter's, once)")
    wrap(rng.BlockRNG, "normal", "  normal draws (and the RJ offsets')")
    wrap(np.fft, "irfft", "  pruned inverse FFTs")
    wrap(wf, "sample_waveform", "sampling kernel (signal + noise interpolation)")
    s = build(Config.default().with_overrides(["link.target_errors=0"]))
    simulate(s, engine="waveform", symbols=20_000)
    runs = []
    for _ in range(3):
        acc.clear()
        t = time.process_time()
        simulate(s, engine="waveform", symbols=args.symbols)
        runs.append((time.process_time() - t, dict(acc)))
    total, parts = min(runs, key=lambda r: r[0])
    print(f"waveform engine, {args.symbols} symbols: {total:.3f} s CPU "
          f"({args.symbols / total / 1e6:.3f} M symbols/s)")
    for k, v in parts.items():
        print(f"  {k:48s} {v:6.3f} s {100 * v / total:5.1f} %")
    rest = total - parts.get("noise blocks (all)", 0) - parts.get(
        "sampling kernel (signal + noise interpolation)", 0)
    print(f"  {'rest (transmitter, receiver chain, counting)':48s} {rest:6.3f} s "
          f"{100 * rest / total:5.1f} %")
    return 0


if __name__ == "__main__":
    sys.exit(main())
