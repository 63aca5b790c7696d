"""The calibrated 64-lane example at one HELD skew-trim state: the statistical model's BER
against the count, per output phase, with each impairment switchable by ``--set``:

    python3 benchmarks/tiadc_held_state.py --scale 3 --seed 1 [--symbols 4e6]
        [--set link.pattern=random --set adc_cal.mu_offset=0 ...] [--model-only]

The trims are held as in ``tiadc_cal_segments.py --frozen SCALE,SEED`` (the true skews
less SCALE times one seeded draw of the closed-form residual; the offset and gain LMS
run unless their steps are set to 0). The count (from chunk 0, after the calibration's
settling) keeps per decision phase (decision index mod lanes) the bit errors, the
decisions and the slicer's mean square error (slicer input less the level sent); the
model gives, per output phase, its BER and its slicer mean square (the SNDR's
denominator: ISI, noise, jitter). The count's phases are matched to the model's by the
cyclic shift that best matches the two mean-square profiles (they vary with the lanes'
skews). Printed: the totals with the count's 95 % interval (Poisson on the errors
per phase, errors counted as independent; the interval's width is stated) and the
phases that carry most of the errors. ``--genie`` counts with the DFE fed the symbols
sent (the model's correct feedback; the real DFE's error propagation adds ~1.1x here).

Measured (seed 1, random data; the count's 95 % Poisson interval): with the level-only
RJ classes the model read 1.35x [1.13, 1.61] below the genie count at --scale 2.5
(1.185e-5 against 1.60e-5, 4 M decisions) and 2.03x [1.65, 2.47] at --scale 2 (1.22e-6
against 2.48e-6, 20 M), while every phase's slicer mean square agreed within 3 %;
without RJ (``--set noise.rj_ui=0``) 0.96x [0.81, 1.12] (8 M). With the RJ classes joint
with the ISI: 0.94x [0.78, 1.12] and 1.10x [0.89, 1.34].
"""

from __future__ import annotations

import argparse
import os
import sys
import time

import numpy as np
from scipy import stats

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import tiadc_cal_segments as seg  # noqa: E402
import tiadc_cal_tails as tails  # noqa: E402

from serdes.build import build  # noqa: E402
from serdes.config import Config  # noqa: E402
from serdes.dsp.blocks import GenieDfe  # noqa: E402
from serdes.dsp.receiver import build_chain  # noqa: E402
from serdes.dsp.ti_cal import TiCalibration  # noqa: E402
from serdes.engines.run import pipeline  # noqa: E402
from serdes.engines.stat.engine import StatisticalEngine  # noqa: E402
from serdes.pipeline import Bursts  # noqa: E402


class _PerPhase:
    """Bit errors, decisions and the slicer's squared error per decision phase."""

    def __init__(self, lanes: int, levels):
        self.lanes = lanes
        self.levels = np.asarray(levels, dtype=np.float64)
        self.errors = np.zeros(lanes)
        self.n = np.zeros(lanes)
        self.sq = np.zeros(lanes)

    def observe(self, al):
        ph = (al.first + np.arange(al.bit_err.shape[0])) % self.lanes
        e = np.asarray(al.soft) - self.levels[np.asarray(al.tx_line)]
        self.errors += np.bincount(ph, weights=np.asarray(al.bit_err, dtype=np.float64),
                                   minlength=self.lanes)
        self.n += np.bincount(ph, minlength=self.lanes)
        self.sq += np.bincount(ph, weights=e * e, minlength=self.lanes)


def system_of(overrides):
    return build(Config.default().with_overrides(seg.CASE + list(overrides)))


def count(overrides, scale: float, seed: int, symbols: int, genie: bool = False):
    """(per-phase counter, bursts, CPU s) of ``symbols`` decisions after settling, trims
    held; ``genie``: the DFE fed with the symbols sent (no error propagation, as the
    model's correct feedback)."""
    t0 = time.process_time()
    system = system_of(overrides)
    eng = tails.statistical_engine(system)
    chain = build_chain(system.link, eng.taps, system.receiver, seed=system.run.seed)
    cal = chain.find(TiCalibration)
    cal.__class__ = seg._Frozen
    cal.origin = 0
    cal.fixed = seg.frozen_trims(system.link, system.run.chunk_symbols, scale, seed)
    if genie:
        chain.blocks[-1] = GenieDfe(eng.taps.dfe, system.link.levels)
    chunk = system.run.chunk_symbols
    settle = system.link.adc.calibration.settle_symbols
    pipe = pipeline(system, eng.taps, seed=system.run.seed, receiver=chain)
    obs = _PerPhase(system.link.adc.lanes, system.link.levels)
    bursts = Bursts()
    pipe.run(settle + symbols, chunk=chunk, observers=[obs, bursts], start=0, skip=settle,
             count_from=settle)
    return obs, bursts.close(), time.process_time() - t0


def model(overrides, scale: float, seed: int):
    """(BER per phase, slicer mean square per phase, CPU s) of the statistical model at
    the held state: lanes static at the held residual, the offset and gain LMS's
    closed-form terms kept (zero when their steps are 0)."""
    t0 = time.process_time()
    system = system_of(overrides)
    link = system.link
    eng, fixed = tails.fixed_engine(system)
    fixed.cal_var = eng.cal_var
    trims = seg.frozen_trims(link, system.run.chunk_symbols, scale, seed)
    skew = (link.adc.skews_s - trims) / link.ui_s
    ones, zeros = np.ones_like(skew), np.zeros_like(skew)
    ber, ms = [], []
    for lane in range(skew.shape[0]):
        tails.state_ber(fixed, skew, ones, zeros, lane)   # sets the phase's lanes
        b = StatisticalEngine.ber(fixed)
        ber.append(b.ber)
        ms.append(fixed.es * 10 ** (-b.sndr_db / 10))
    return np.array(ber), np.array(ms), time.process_time() - t0


def align(ms_count, ms_model) -> int:
    """The cyclic shift s with model phase (k + s) mod N for count phase k that best
    matches the mean-square profiles (least squares on their logs, centred)."""
    a = np.log(ms_count) - np.log(ms_count).mean()
    b = np.log(ms_model) - np.log(ms_model).mean()
    n = a.shape[0]
    cost = [float(np.sum((a - np.roll(b, -s)) ** 2)) for s in range(n)]
    return int(np.argmin(cost))


def poisson_ci(k: float, confidence: float = 0.95):
    lo = stats.chi2.ppf((1 - confidence) / 2, 2 * k) / 2 if k > 0 else 0.0
    hi = stats.chi2.ppf((1 + confidence) / 2, 2 * k + 2) / 2
    return lo, hi


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--scale", type=float, default=3.0)
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--symbols", type=float, default=4e6)
    ap.add_argument("--set", action="append", default=[])
    ap.add_argument("--model-only", action="store_true")
    ap.add_argument("--genie", action="store_true",
                    help="count with the DFE fed the symbols sent (no error propagation)")
    ap.add_argument("--top", type=int, default=8, help="phases listed")
    args = ap.parse_args(argv)
    ber, ms_m, t_m = model(args.set, args.scale, args.seed)
    print(f"held {args.scale}x residual draw, seed {args.seed}, set {args.set}"
          + (", genie DFE" if args.genie else ""))
    print(f"  model {ber.mean():.3e} (phases' max {ber.max():.2e}; {t_m:.0f} s CPU)")
    if args.model_only:
        return 0
    obs, bursts, t_c = count(args.set, args.scale, args.seed, int(args.symbols),
                              args.genie)
    s = align(obs.sq / obs.n, ms_m)
    bm, mm = np.roll(ber, -s), np.roll(ms_m, -s)   # model value at count phase k
    k = float(obs.errors.sum())
    bits = 2.0 * obs.n.sum()
    lo, hi = poisson_ci(k)
    c = k / bits
    print(f"  count {c:.3e} [{lo / bits:.2e}, {hi / bits:.2e}] ({k:.0f} errors, "
          f"{obs.n.sum() / 1e6:.1f} M decisions; {t_c:.0f} s CPU): count / model "
          f"{c / ber.mean():.2f} [{lo / bits / ber.mean():.2f}, {hi / bits / ber.mean():.2f}]")
    nb = sum(bursts.values())
    mean_burst = sum(L * v for L, v in bursts.items()) / nb if nb else float("nan")
    print(f"  symbol-error bursts {nb}, mean length {mean_burst:.3f}")
    ms_c = obs.sq / obs.n
    print(f"  slicer mean square count / model: mean {np.mean(ms_c / mm):.4f}, range "
          f"{np.min(ms_c / mm):.4f} - {np.max(ms_c / mm):.4f} (shift {s})")
    order = np.argsort(bm)[::-1][:args.top]
    print("  phase  model BER  count BER [95 %]          count/model  ms count/model")
    for p in order:
        b_lo, b_hi = poisson_ci(obs.errors[p])
        nbit = 2.0 * obs.n[p]
        print(f"  {p:5d}  {bm[p]:.3e}  {obs.errors[p] / nbit:.3e} [{b_lo / nbit:.1e}, "
              f"{b_hi / nbit:.1e}]  {obs.errors[p] / nbit / bm[p]:6.2f}      "
              f"{ms_c[p] / mm[p]:.4f}")
    share = bm[order].sum() / bm.sum()
    print(f"  these phases: {share:.0%} of the model's BER, "
          f"{obs.errors[order].sum() / max(k, 1):.0%} of the count's errors")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
