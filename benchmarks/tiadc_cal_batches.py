"""Counted BER of a calibrated interleaved ADC with an interval from batch means, beside
the statistical BER (the calibration's residual averaged over its states,
:mod:`serdes.tiadc.cal_states`):

    python3 benchmarks/tiadc_cal_batches.py [--case default|quiet] [--symbols 200e6]
        [--batch 5e6] [--no-stat] [--set key=value ...]

The skew trims' residual wanders slowly (10 M symbols hold ~19 independent trim states),
so errors cluster in time and the binomial interval of a count is too narrow. The count
is cut into batches (each many correlation times long); the batches' BERs are nearly
independent, and the t interval of their mean is the count's interval.
``default``: the README's example (default link, 64 lanes, 0.3 ps rms skew, 20 mV ripple
at 10 MHz into the clock at 0.5 ps/mV, calibrated); ``quiet``: 64 lanes, 0.3 ps skew,
trimmed every 16 k symbols, TX SNR 27 dB.
"""

from __future__ import annotations

import argparse
import time

import numpy as np
from scipy import stats

from serdes.build import build
from serdes.config import Config
from serdes.dsp.receiver import build_chain
from serdes.engines.run import simulate
from serdes.tiadc.stat import statistical_engine

CASES = {
    "default": ["adc.lanes=64", "adc.skew_rms_s=0.3e-12", "supply.ripple_mv=[20]",
                "supply.ripple_hz=[1e7]", "supply.delay_ps_per_mv=0.5",
                "adc_cal.enabled=true"],
    "quiet": ["adc.lanes=64", "adc.skew_rms_s=0.3e-12", "adc_cal.enabled=true",
              "link.chunk_symbols=16384", "tx.snr_db=27"],
}


class Batches:
    """Bit errors and bits per batch of ``size`` counted symbols (pipeline observer)."""

    def __init__(self, size: int, bits_per_symbol: int = 2):
        self.size, self.bps = int(size), bits_per_symbol
        self.errors: list[int] = []
        self.symbols: list[int] = []
        self._n = 0

    def observe(self, al):
        err = np.asarray(al.bit_err)
        i = 0
        while i < err.shape[0]:
            if not self.symbols or self.symbols[-1] >= self.size:
                self.errors.append(0)
                self.symbols.append(0)
            take = min(self.size - self.symbols[-1], err.shape[0] - i)
            self.errors[-1] += int(err[i:i + take].sum())
            self.symbols[-1] += take
            i += take

    __call__ = observe

    def interval(self, confidence: float = 0.95):
        """(BER, lo, hi, batches): the mean over the full batches and its t interval."""
        full = [e / (s * self.bps) for e, s in zip(self.errors, self.symbols)
                if s == self.size]
        b = np.asarray(full)
        k = b.shape[0]
        m = float(b.mean())
        h = float(stats.t.ppf(0.5 + confidence / 2, k - 1) * b.std(ddof=1) / np.sqrt(k))
        return m, max(m - h, 0.0), m + h, k


def count(case: str, symbols: int, batch: int, extra=()):
    system = build(Config.default().with_overrides(CASES[case] + list(extra)))
    eng = statistical_engine(system)
    chain = build_chain(system.link, eng.taps, system.receiver, seed=system.run.seed)
    obs = Batches(batch)
    s = system.link.adc.calibration
    res = simulate(system, symbols=s.settle_symbols + symbols, target_errors=10 ** 9,
                   receiver=chain, taps=eng.taps, observers=[obs])
    return system, eng, res, obs


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--case", choices=sorted(CASES), default="default")
    ap.add_argument("--symbols", type=float, default=200e6)
    ap.add_argument("--batch", type=float, default=5e6)
    ap.add_argument("--no-stat", action="store_true")
    ap.add_argument("--set", action="append", default=[], metavar="KEY=VALUE",
                    help="further overrides, e.g. link.pattern=random")
    args = ap.parse_args(argv)
    t0 = time.process_time()
    system, eng, res, obs = count(args.case, int(args.symbols), int(args.batch), args.set)
    lo, hi = res.ber_ci
    m, blo, bhi, k = obs.interval()
    print(f"{args.case}: counted {res.ber:.3e} ({res.bit_errors} errors in {res.bits} bits; "
          f"binomial [{lo:.2e}, {hi:.2e}]); batch means over {k} batches of "
          f"{args.batch:.0e} symbols: {m:.3e} [{blo:.2e}, {bhi:.2e}] "
          f"(errors per batch {obs.errors}; {time.process_time() - t0:.0f} s CPU)", flush=True)
    if not args.no_stat:
        t0 = time.process_time()
        print(f"statistical {eng.ber().ber:.3e} ({time.process_time() - t0:.0f} s CPU)")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
