"""Where the calibrated 64-lane ADC's errors come from (the README's example: default
link, 64 lanes, 0.3 ps rms skew, 20 mV ripple at 10 MHz into the clock at 0.5 ps/mV,
background calibration), counted after settling:

    python3 benchmarks/tiadc_cal_states.py [--symbols 10e6] [--modes run,freeze,freeze_trim,freeze_lms]

Modes: ``run`` (the calibration running all along), ``freeze`` (offsets, gains and skew
trims held at their values at the end of settling), ``freeze_trim`` (skew trims held,
the offset/gain LMS running), ``freeze_lms`` (offset/gain held, the trims running).
Printed per mode: the BER with its interval, errors and slicer SNR; for ``run`` also each
error's chunk and the skew residual's lane mean square in force there over its closed
form (:func:`serdes.tiadc.cal_residual.skew_covariance`), and that ratio's spread over
the chunks after settling.
"""

from __future__ import annotations

import argparse

import numpy as np

from serdes.build import build
from serdes.config import Config
from serdes.dsp.receiver import build_chain
from serdes.dsp.ti_cal import TiCalibration, residuals
from serdes.engines.run import simulate
from serdes.tiadc import cal_residual
from serdes.tiadc.stat import statistical_engine

CASE = ["adc.lanes=64", "adc.skew_rms_s=0.3e-12", "supply.ripple_mv=[20]",
        "supply.ripple_hz=[1e7]", "supply.delay_ps_per_mv=0.5", "adc_cal.enabled=true"]


class _Frozen(TiCalibration):
    """The calibration with its LMS steps and/or skew trims stopped after settling."""

    hold_lms = hold_trim = False

    def __call__(self, x, k0):
        if k0 >= self.settings.settle_symbols:
            if self.hold_lms:
                self._mu = self._mu * 0
                self._mu_fine = self._mu_fine * 0
            if self.hold_trim:
                self._trim = lambda g: None
        return super().__call__(x, k0)


class _Errors:
    def __init__(self):
        self.at = []

    def observe(self, al):
        self.at.extend(int(al.first + i) for i in np.nonzero(al.bit_err)[0])

    __call__ = observe


def one(mode: str, symbols: int) -> None:
    system = build(Config.default().with_overrides(CASE))
    eng = statistical_engine(system)
    chain = build_chain(system.link, eng.taps, system.receiver, seed=system.run.seed)
    cal = chain.find(TiCalibration)
    cal.__class__ = _Frozen
    cal.hold_lms = mode in ("freeze", "freeze_lms")
    cal.hold_trim = mode in ("freeze", "freeze_trim")
    s = system.link.adc.calibration
    errs = _Errors()
    res = simulate(system, symbols=s.settle_symbols + symbols, target_errors=10 ** 9,
                   receiver=chain, taps=eng.taps, observers=[errs])
    lo, hi = res.ber_ci
    print(f"{mode}: BER {res.ber:.2e} [{lo:.2e}, {hi:.2e}] ({res.bit_errors} errors), "
          f"slicer SNR {res.snr_db:.2f} dB", flush=True)
    if mode != "run":
        return
    link = system.link
    r = residuals(link.adc, cal.history)
    c0 = cal_residual.skew_covariance(link, s, system.run.chunk_symbols)[0] * link.ui_s ** 2
    ratio = r["skew_rms_s"] ** 2 / c0
    for k in errs.at:
        j = int(np.searchsorted(r["samples"], k))   # the trims set after chunk j - 1
        print(f"  error at decision {k} (chunk {k // system.run.chunk_symbols}, lane "
              f"{k % link.adc.lanes}): skew residual in force {ratio[j - 1]:.2f}x the "
              "closed form")
    q = ratio[r["samples"] > s.settle_symbols]
    print("  skew residual over the chunks after settling: mean %.2f, quantiles "
          "10/50/90/100 %% %s" % (q.mean(), np.round(np.quantile(q, [0.1, 0.5, 0.9, 1]), 2)))


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--symbols", type=float, default=10e6)
    ap.add_argument("--modes", default="run,freeze,freeze_trim,freeze_lms")
    args = ap.parse_args(argv)
    for mode in args.modes.split(","):
        one(mode, int(args.symbols))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
