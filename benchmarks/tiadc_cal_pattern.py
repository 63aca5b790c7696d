"""How far the data pattern alone pulls the calibrated ADC's skew trims: the skew
detector y_{k-1} (y_k - y_{k-2}) applied to the transmitted PAM4 levels (no channel,
ADC or supply), averaged per lane over each 65536-symbol chunk, solved over the 64 lanes
as the calibration does (mode q divided by -lambda_q, lambda_q = 2 - 2 cos(2 pi q / N))
and passed through the trim loop's filter (gain 1/8 per chunk):

    python3 benchmarks/tiadc_cal_pattern.py [--pattern prbs31|random] [--chunks 18400]

Printed: the lane mean square of that response over its closed form for i.i.d. PAM4
(g / (2 - g) sigma^4 / C (N^2 - 1) / 12): median, 99 / 99.9 / 100 % quantiles over the
chunks, and the chunks where it is largest. PRBS31 from the all-ones start returns to
all ones at symbol (2^31 - 1) / 2 (chunk 16383).
"""

from __future__ import annotations

import argparse

import numpy as np

from serdes.signal.source import SymbolSource

C, N, G = 65536, 64, 1.0 / 8
LEVELS = np.array([-3.0, -1.0, 1.0, 3.0])


def response(pattern: str, c0: int, c1: int) -> np.ndarray:
    """Chunks c0 .. c1 - 1: the lane mean square over its white-data closed form."""
    src = SymbolSource(pattern=pattern, m=4, precoding=False, seed=1)
    src.seek(max(c0 * C - 2, 0))
    prev = LEVELS[src.next(2)[0]] if c0 > 0 else np.zeros(2)
    lane = np.arange(1, C + 1) % N
    lam = 2 - 2 * np.cos(2 * np.pi * np.arange(1, N) / N)
    mean_sq = G / (2 - G) * np.mean(LEVELS ** 2) ** 2 / C * (N * N - 1) / 12
    w = np.zeros(N, complex)
    out = np.empty(c1 - c0)
    for i in range(c1 - c0):
        a = np.concatenate([prev, LEVELS[src.next(C)[0]]])
        prev = a[-2:]
        e = np.bincount(lane, a[1:-1] * (a[2:] - a[:-2]), N) / (C / N)
        x = np.zeros(N, complex)
        x[1:] = np.fft.fft(e)[1:] / -lam
        w = (1 - G) * w + G * x
        out[i] = np.mean(np.fft.ifft(w).real ** 2) / mean_sq
    return out


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--pattern", default="prbs31")
    ap.add_argument("--first", type=int, default=0)
    ap.add_argument("--chunks", type=int, default=18400)
    args = ap.parse_args(argv)
    r = response(args.pattern, args.first, args.first + args.chunks)
    top = np.argsort(r)[::-1][:10] + args.first
    print(f"{args.pattern}, chunks {args.first}..{args.first + args.chunks - 1}: median "
          f"{np.median(r):.2f}, 99/99.9/100 % {np.round(np.quantile(r, [0.99, 0.999, 1]), 2)}"
          f" (x the white-data mean square); largest at chunks {sorted(top.tolist())}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
