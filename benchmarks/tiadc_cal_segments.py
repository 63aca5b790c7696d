"""Counted BER of the calibrated 64-lane ADC example over independent segments, each
started at its own place in the data with a fresh calibration that settles first:

    python3 benchmarks/tiadc_cal_segments.py --first 0 --segments 4 \
        [--symbols 100e6] [--batch 5e6] [--set link.pattern=random ...] [--out f.json]

Segment s starts at chunk ``(first + s) * stride`` (``--stride`` chunks, default enough
to hold the segment), settles for the calibration's settle time and counts ``--symbols``
decisions in batches of ``--batch``. Segments are independent realisations of the
calibration loop (the trims' wander, the data), so the batch means of several runs,
even run as separate processes, make one interval (``--merge f1.json f2.json ...``).
The example is benchmarks/tiadc_cal_batches.py's ``default`` case (64 lanes, 0.3 ps rms
skew, 20 mV at 10 MHz into the clock at 0.5 ps/mV, calibrated); ``--set`` adds overrides
(e.g. ``link.pattern=random`` for data without a PRBS's local structure).

``--frozen SCALE,SEED`` holds the skew trims at the true skews less a fixed draw of
SCALE times the closed-form residual (seeded, the same for every pattern; the offset and
gain LMS still run): the data's effect on the errors at one sampling state, without the
loop. ``--residual`` prints the running loop's skew residual (lane mean square over the
closed form, per chunk after settling: mean, 99 % quantile).
"""

from __future__ import annotations

import argparse
import json
import time

import numpy as np
from scipy import stats

from serdes.build import build
from serdes.config import Config
from serdes.dsp.receiver import build_chain
from serdes.dsp.ti_cal import TiCalibration
from serdes.engines.run import pipeline
from serdes.tiadc import cal_residual
from serdes.tiadc.stat import statistical_engine

CASE = ["adc.lanes=64", "adc.skew_rms_s=0.3e-12", "supply.ripple_mv=[20]",
        "supply.ripple_hz=[1e7]", "supply.delay_ps_per_mv=0.5", "adc_cal.enabled=true"]


class _Shifted(TiCalibration):
    """The calibration block run from symbol ``origin`` as if the run started there (its
    settling and gear shift count from ``origin``; a multiple of the lanes)."""

    origin = 0

    def __call__(self, x, k0):
        return super().__call__(x, k0 - self.origin)


class _Frozen(_Shifted):
    """Trims held at ``fixed`` (s) after the first chunk (see the module)."""

    fixed = None

    def _trim(self, g):
        self.adc.skew_trim_s[:] = self.fixed
        self._esum[:] = 0.0
        self._ecount[:] = 0.0


def frozen_trims(link, chunk: int, scale: float, seed: int) -> np.ndarray:
    """The true skews (centred) less ``scale`` times one draw of the closed-form
    residual (circulant covariance over the lanes)."""
    c = cal_residual.skew_covariance(link, link.adc.calibration, chunk)
    n = c.shape[0]
    k = c[np.subtract.outer(np.arange(n), np.arange(n)) % n] * link.ui_s ** 2
    w, v = np.linalg.eigh(k)
    r = v @ (np.sqrt(np.clip(w, 0.0, None)) * np.random.default_rng(seed).standard_normal(n))
    sk = link.adc.skews_s - link.adc.skews_s.mean()
    return sk - scale * (r - r.mean())


class _Batches:
    """Bit errors per batch of ``size`` decisions counted from ``first``."""

    def __init__(self, first: int, size: int):
        self.first, self.size = first, size
        self.errors: dict[int, int] = {}

    def observe(self, al):
        err = np.asarray(al.bit_err)
        nz = np.nonzero(err)[0]
        for i in nz:
            b = int((al.first + i - self.first) // self.size)
            self.errors[b] = self.errors.get(b, 0) + int(err[i])


def segment(overrides, start_chunk: int, symbols: int, batch: int, frozen=None,
            residual: bool = False):
    """Errors per batch of one segment (a list), counting ``symbols`` decisions; with
    ``residual`` also the skew residual's lane mean square over its closed form per chunk
    after settling."""
    system = build(Config.default().with_overrides(CASE + list(overrides)))
    eng = statistical_engine(system)
    chain = build_chain(system.link, eng.taps, system.receiver, seed=system.run.seed)
    cal = chain.find(TiCalibration)
    cal.__class__ = _Shifted
    if frozen is not None:
        cal.__class__ = _Frozen
        cal.fixed = frozen_trims(system.link, system.run.chunk_symbols, *frozen)
    chunk = system.run.chunk_symbols
    cal.origin = start = start_chunk * chunk
    settle = system.link.adc.calibration.settle_symbols
    pipe = pipeline(system, eng.taps, seed=system.run.seed, receiver=chain)
    pipe.transmitter.seek(start)
    obs = _Batches(start + settle, batch)
    pipe.run(start + settle + symbols, chunk=chunk, observers=[obs], start=start,
             skip=start + settle, count_from=start + settle)
    errors = [obs.errors.get(b, 0) for b in range(symbols // batch)]
    if not residual:
        return errors, eng
    link = system.link
    c0 = cal_residual.skew_covariance(link, link.adc.calibration, chunk)[0] * link.ui_s ** 2
    h = cal.history
    e = link.adc.skews_s[None, :] - np.array(h["skews_s"])
    e -= e.mean(axis=1, keepdims=True)
    keep = np.array(h["samples"]) > settle   # counted from the segment's start
    return errors, eng, np.mean(e[keep] ** 2, axis=1) / c0


def interval(batch_errors, batch: int, confidence: float = 0.95):
    b = np.asarray(batch_errors, dtype=np.float64) / (2 * batch)
    k = b.shape[0]
    m = float(b.mean())
    h = float(stats.t.ppf(0.5 + confidence / 2, k - 1) * b.std(ddof=1) / np.sqrt(k))
    return m, max(m - h, 0.0), m + h, k


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--first", type=int, default=0)
    ap.add_argument("--segments", type=int, default=1)
    ap.add_argument("--symbols", type=float, default=100e6)
    ap.add_argument("--batch", type=float, default=5e6)
    ap.add_argument("--stride", type=int, default=0, help="chunks between segment starts")
    ap.add_argument("--set", action="append", default=[])
    ap.add_argument("--out")
    ap.add_argument("--stat", action="store_true", help="print the statistical BER too")
    ap.add_argument("--merge", nargs="*")
    ap.add_argument("--frozen", help="SCALE,SEED: trims held (see the module)")
    ap.add_argument("--residual", action="store_true")
    args = ap.parse_args(argv)
    if args.merge:
        rows = [json.load(open(f)) for f in args.merge]
        batch = rows[0]["batch"]
        errs = [e for r in rows for seg in r["segments"] for e in seg["errors"]]
        m, lo, hi, k = interval(errs, batch)
        print(f"{len(errs)} batches of {batch:.0e} symbols, {sum(errs)} errors: batch "
              f"means {m:.3e} [{lo:.2e}, {hi:.2e}]")
        return 0
    symbols, batch = int(args.symbols), int(args.batch)
    stride = args.stride or (symbols + 8_000_000) // 65536 + 1
    segs = []
    eng = None
    for s in range(args.first, args.first + args.segments):
        t0 = time.process_time()
        frozen = None
        if args.frozen:
            sc, sd = args.frozen.split(",")
            frozen = (float(sc), int(sd))
        errors, eng, *res = segment(args.set, s * stride, symbols, batch, frozen,
                                    args.residual)
        if res:
            print(f"skew residual / closed form per chunk: mean {res[0].mean():.3f}, "
                  f"99 % {np.quantile(res[0], 0.99):.2f} ({res[0].shape[0]} chunks)")
        segs.append({"start_chunk": s * stride, "errors": errors})
        print(f"segment at chunk {s * stride}: {sum(errors)} errors, per batch {errors} "
              f"({time.process_time() - t0:.0f} s CPU)", flush=True)
    errs = [e for seg in segs for e in seg["errors"]]
    if len(errs) > 1:
        m, lo, hi, k = interval(errs, batch)
        print(f"batch means {m:.3e} [{lo:.2e}, {hi:.2e}] over {k} batches")
    if args.out:
        with open(args.out, "w") as f:
            json.dump({"set": args.set, "batch": batch, "segments": segs}, f)
    if args.stat:
        print(f"statistical {eng.ber().ber:.3e}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
