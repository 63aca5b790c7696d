"""The skew detector's chunk noise with the channel, PRBS31 against random data: the
detector y_{k-1} (y_k - y_{k-2}) on the noise-free ADC input (the transmitted PAM4
levels through the link's symbol-spaced pulse; no RX noise, ADC or supply), averaged
per lane over each chunk, solved over the lanes as the calibration does (mode q divided
by R'(T) (2 cos theta_q - 2), the closed form's R'(T) estimate) and passed through the
trim loop's filter (gain g per chunk):

    python3 benchmarks/tiadc_cal_pattern_channel.py [--pattern prbs31|random]
        [--starts 0,6592,13184] [--chunks 300] [--set key=value ...]

Printed: the detector's per-chunk lane mean square over its closed form for this input
(mean with a batch-means interval), the same for the lowest mode pair, and the loop
filter's lane mean square over its closed form: mean and 50/90/99/100 % quantiles. The
closed form (:mod:`serdes.tiadc.cal_residual` without the RX noise) assumes independent
symbols; a PRBS's higher-order structure can change the detector's 4th-order noise.
"""

from __future__ import annotations

import argparse

import numpy as np
from scipy import stats

from serdes.build import build
from serdes.config import Config
from serdes.signal.source import SymbolSource
from serdes.tiadc import cal_residual as cr

CASE = ["adc.lanes=64", "adc.skew_rms_s=0.3e-12", "supply.ripple_mv=[20]",
        "supply.ripple_hz=[1e7]", "supply.delay_ps_per_mv=0.5", "adc_cal.enabled=true"]


class _Quiet:
    """The link without RX noise (the closed form's noise terms for the levels alone)."""

    def __init__(self, link):
        self._link = link
        self.noise = type("N", (), {"autocorr": np.zeros(1)})()
        self.adc = type("A", (), {"noise_v2": 0.0, "lanes": link.adc.lanes})()

    def __getattr__(self, k):
        return getattr(self._link, k)


def run(link, settings, pattern: str, start_chunk: int, chunks: int, chunk: int):
    n = int(link.adc.lanes)
    p = link.pulse.taps
    lv = np.asarray(link.levels)
    src = SymbolSource(pattern=pattern, m=4, precoding=False, seed=1)
    src.seek(max(start_chunk * chunk - p.shape[0] - 1, 0))
    q = np.arange(n)
    lap = 2 * np.cos(2 * np.pi * q / n) - 2
    quiet = _Quiet(link)
    a_, b_, r = cr.loop_slopes(quiet, settings)
    g = settings.skew_gain * settings.fine_ratio
    lane = (np.arange(chunk) - 1) % n          # lane of sample k - 1 (k = chunk start + i)
    w = np.zeros(n, complex)
    det, low, loop = [], [], []
    sym = lv[src.next(p.shape[0] + 1)[1]]
    for _ in range(chunks):
        sym = np.concatenate([sym[-(p.shape[0] + 1):], lv[src.next(chunk)[1]]])
        y = np.convolve(sym, p, mode="valid")          # the last chunk + 2 samples
        e = y[1:-1] * (y[2:] - y[:-2])
        em = np.bincount(lane[:e.shape[0]], e, n) / (chunk / n)
        x = np.zeros(n, complex)
        x[1:] = np.fft.fft(em)[1:] / (r * lap[1:])
        eps = np.fft.ifft(x).real
        det.append(np.mean(eps ** 2))
        low.append((abs(x[1]) ** 2 + abs(x[n - 1]) ** 2) / n ** 2)
        w = (1 - g) * w + g * x
        loop.append(np.mean(np.fft.ifft(w).real ** 2))
    # closed forms for the same noise-free input: one chunk's solution, and the loop's
    theta = 2 * np.pi * np.arange(1, n) / n
    nu = cr._product_spectrum(quiet, theta) / (chunk * r * r * (2 - 2 * np.cos(theta)))
    v = cr.skew_mode_variance(quiet, settings, chunk)
    return np.array(det) / nu.sum(), np.array(low) / (nu[0] + nu[-1]), np.array(loop) / v.sum()


def mean_ci(x, batches=10):
    b = np.array([v.mean() for v in np.array_split(np.asarray(x), batches)])
    return b.mean(), stats.t.ppf(0.975, batches - 1) * b.std(ddof=1) / np.sqrt(batches)


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--pattern", default="prbs31")
    ap.add_argument("--starts", default="0,6592,13184")
    ap.add_argument("--chunks", type=int, default=300)
    ap.add_argument("--set", action="append", default=[])
    args = ap.parse_args(argv)
    system = build(Config.default().with_overrides(CASE + args.set))
    link = system.link
    s = link.adc.calibration
    d, lo, lp = [], [], []
    for st in [int(x) for x in args.starts.split(",")]:
        a, b, c = run(link, s, args.pattern, st, args.chunks, system.run.chunk_symbols)
        d.append(a), lo.append(b), lp.append(c[40:])          # the loop filter settled
    d, lo, lp = np.concatenate(d), np.concatenate(lo), np.concatenate(lp)
    print(f"{args.pattern}, {d.shape[0]} chunks from {args.starts}:")
    print("  detector per chunk / closed form: %.3f +- %.3f; lowest mode pair %.3f +- %.3f"
          % (*mean_ci(d), *mean_ci(lo)))
    print("  loop filter lane mean square / closed form: %.3f +- %.3f, quantiles "
          "50/90/99/100 %% %s" % (*mean_ci(lp), np.round(np.quantile(lp, [0.5, 0.9, 0.99, 1]), 2)))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
