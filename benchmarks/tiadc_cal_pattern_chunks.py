"""Is the skew detector's chunk noise independent from chunk to chunk with PRBS31? The
detector y_{k-1} (y_k - y_{k-2}) on the noise-free ADC input (the PAM4 levels through
the link's symbol-spaced pulse), averaged per lane over each 65536-symbol chunk and
solved over the lanes as the calibration does (tiadc_cal_pattern_channel.py's ``run``,
lane errors kept), then:

    python3 benchmarks/tiadc_cal_pattern_chunks.py [--lanes 64] [--pattern prbs31|random]
        [--starts 2000,5000,8000,11000] [--chunks 150]
    python3 benchmarks/tiadc_cal_pattern_chunks.py --identities

Printed: the lane errors' correlation between chunks 1..12 apart (mean over the starts,
and its standard error), and the trim loop's filter (gain g per chunk) over what it would
keep from the same chunk noise if it were independent. The closed-form residual assumes
independent chunks. ``--identities`` looks for exact identities between the Gray-coded
PRBS31 symbols' bit sequences (MSB M, LSB L) and their adjacent-symbol products (what the
detector sums) at lags up to 2^20 symbols: PRBS31's MSBs are the PRBS31 sequence itself
(decimating an m-sequence by 2 gives it back, shifted), and an m-sequence times itself
shifted is itself shifted again, so such products repeat the data 2^17 - 2^18 symbols
(2 - 6 chunks) away.
"""

from __future__ import annotations

import argparse

import numpy as np

from serdes.build import build
from serdes.config import Config
from serdes.signal.prbs import prbs_bits
from serdes.signal.source import SymbolSource
from serdes.tiadc import cal_residual as cr

CASE = ["adc.lanes=64", "adc.skew_rms_s=0.3e-12", "supply.ripple_mv=[20]",
        "supply.ripple_hz=[1e7]", "supply.delay_ps_per_mv=0.5", "adc_cal.enabled=true"]


def lane_errors(link, settings, pattern: str, start_chunk: int, chunks: int,
                chunk: int) -> np.ndarray:
    """(chunks, N): each chunk's lane skew errors (UI) solved from the detector's means."""
    n = int(link.adc.lanes)
    p = link.pulse.taps
    lv = np.asarray(link.levels)
    src = SymbolSource(pattern=pattern, m=4, precoding=False, seed=1)
    src.seek(max(start_chunk * chunk - p.shape[0] - 1, 0))
    lap = 2 * np.cos(2 * np.pi * np.arange(n) / n) - 2
    r = cr.loop_slopes(link, settings)[2]
    lane = (np.arange(chunk) - 1) % n
    sym = lv[src.next(p.shape[0] + 1)[1]]
    out = np.empty((chunks, n))
    for c in range(chunks):
        sym = np.concatenate([sym[-(p.shape[0] + 1):], lv[src.next(chunk)[1]]])
        y = np.convolve(sym, p, mode="valid")
        e = y[1:-1] * (y[2:] - y[:-2])
        em = np.bincount(lane[:e.shape[0]], e, n) / np.bincount(lane[:e.shape[0]], None, n)
        x = np.zeros(n, complex)
        x[1:] = np.fft.fft(em)[1:] / (r * lap[1:])
        out[c] = np.fft.ifft(x).real
    return out


def chunk_stats(e: np.ndarray, g: float, lags=range(1, 13)):
    """Correlation of the lane errors between chunks ``lags`` apart, and the loop
    filter's lane mean square over g / (2 - g) times the chunk noise's."""
    ec = e - e.mean(axis=0)
    var = float(np.mean(ec * ec))
    acf = np.array([np.mean(ec[k:] * ec[:-k]) / var for k in lags])
    w, ms = np.zeros(e.shape[1]), []
    for x in ec:
        w = (1 - g) * w + g * x
        ms.append(np.mean(w * w))
    return acf, float(np.mean(ms[40:])) / (g / (2 - g) * var)


def identities(n: int = 1 << 22, max_lag: int = 1 << 20):
    """(a, b, lag): +-1 sequences a[k + lag] = b[k] exactly (correlation > 0.99)."""
    bits = prbs_bits("prbs31", 2 * n + 2)
    m, lsb = bits[0::2].astype(np.int8), bits[1::2].astype(np.int8)
    m0, l0, m1, l1 = m[:-1], lsb[:-1], m[1:], lsb[1:]
    seqs = {"M": m0, "L": l0, "ML": m0 ^ l0, "MM'": m0 ^ m1, "LL'": l0 ^ l1,
            "MM'L'": m0 ^ m1 ^ l1, "MLM'": m0 ^ l0 ^ m1, "MLM'L'": m0 ^ l0 ^ m1 ^ l1}
    size = 1 << int(np.ceil(np.log2(2 * n)))
    f = {k: np.fft.rfft(1.0 - 2.0 * v, size) for k, v in seqs.items()}
    lags = np.r_[np.arange(0, max_lag), np.arange(-max_lag, 0)]
    found = []
    keys = list(seqs)
    for i, a in enumerate(keys):
        for b in keys[i:]:
            x = np.fft.irfft(f[a] * np.conj(f[b]), size)[lags] / (n - 1 - np.abs(lags))
            for j in np.nonzero(x > 0.99)[0]:
                if a != b or lags[j] != 0:
                    found.append((a, b, int(lags[j])))
    return found


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--lanes", type=int, default=64)
    ap.add_argument("--pattern", default="prbs31")
    ap.add_argument("--starts", default="2000,5000,8000,11000")
    ap.add_argument("--chunks", type=int, default=150)
    ap.add_argument("--identities", action="store_true")
    args = ap.parse_args(argv)
    if args.identities:
        for a, b, lag in identities():
            print(f"{a}[k + {lag}] = {b}[k]  ({lag / 65536:+.2f} chunks)")
        return 0
    system = build(Config.default().with_overrides(CASE + [f"adc.lanes={args.lanes}"]))
    link, s = system.link, system.link.adc.calibration
    g = s.skew_gain * s.fine_ratio
    acfs, loops = [], []
    for st in [int(x) for x in args.starts.split(",")]:
        a, lp = chunk_stats(lane_errors(link, s, args.pattern, st, args.chunks,
                                        system.run.chunk_symbols), g)
        acfs.append(a), loops.append(lp)
    acfs = np.array(acfs)
    se = acfs.std(axis=0, ddof=1) / np.sqrt(acfs.shape[0])
    print(f"{args.pattern}, {args.lanes} lanes, {args.chunks} chunks from {args.starts}:")
    print("  chunk-lag correlation 1..12: " + " ".join(f"{v:+.3f}" for v in acfs.mean(0)))
    print("  its standard error:          " + " ".join(f"{v:.3f}" for v in se))
    print(f"  loop filter / independent chunks: {np.mean(loops):.3f} (per start "
          f"{np.round(loops, 2).tolist()})")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
