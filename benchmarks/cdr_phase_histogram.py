"""Where the statistical BER of an MM-loop link goes wrong: the count against the
engine's fixed-offset BER at each tracking error the run's own loop took.

One ``serdes run``-like count of a link with ``cdr.mode=mm`` keeps the recovered
sampling phase of every symbol (the loop's ``trace``) beside its decision. The tracking
error c (recovered phase minus the TX's trackable jitter minus the lock point) takes
the phase interpolator's steps; for each step the line gives the symbols there, their
counted SER and the statistical engine's SER at that fixed offset from the lock point
(no wander). The last line compares the counted SER with the engine's SER averaged
over the run's own histogram of c, and with the report's (Gaussian wander about the
static offset).

Run: python benchmarks/cdr_phase_histogram.py SYMBOLS [--set key=value ...]
     (the default link with cdr.mode=mm plus the settings; e.g. the first link of
     docs/cdr.md's last section: 2e7 --set channel.loss_db=35.84 --set ffe.taps=16
     --set adc.bits=8 --set adc.enob=6.82 --set noise.rj_ui=0 --set link.seed=898002
     --set dfe.taps=0)
"""

from __future__ import annotations

import copy
import dataclasses
import sys

import numpy as np

from serdes.build import build
from serdes.config import Config
from serdes.engines import cdr as ecdr
from serdes.engines.cdr import LOOKAHEAD
from serdes.engines.cdr_stat_model import stat_system
from serdes.engines.run import design_equalizer, simulate
from serdes.engines.stat import StatisticalEngine
from symbols_and_sets import symbols_and_sets


class _Decisions:
    """Each chunk's first decision index, delay and symbol errors."""

    def __init__(self):
        self.chunks = []

    def observe(self, rec):
        self.chunks.append((rec.first, rec.delay, rec.sym_err.copy()))


def main(argv: list[str]) -> int:
    symbols, sets = symbols_and_sets(argv, 20_000_000)
    system = build(Config.default().with_overrides(["cdr.mode=mm", *sets]))
    taps = design_equalizer(system)
    made = []
    init = ecdr.CdrFrontEnd.__init__

    def tracing(self, *a, **kw):   # every loop made keeps its sampling phases
        init(self, *a, **kw)
        self.trace = []
        made.append(self)

    ecdr.CdrFrontEnd.__init__ = tracing
    dec = _Decisions()
    try:
        res = simulate(system, symbols=symbols, taps=taps, target_errors=0, observers=[dec])
    finally:
        ecdr.CdrFrontEnd.__init__ = init
    fe = [f for f in made if f.trace][-1]
    ph = np.concatenate(fe.trace)
    m = ph.shape[0] - LOOKAHEAD
    c = ph[LOOKAHEAD:] - fe.tx_source.slow(0, m) - fe.cal.lock_ui
    tx, err = [], []
    for first, delay, e in dec.chunks:   # decision index -> the index of the symbol sent
        tx.append(first - delay + np.arange(e.shape[0]))
        err.append(e)
    tx, err = np.concatenate(tx), np.concatenate(err)
    ok = (tx >= 0) & (tx < m)
    cc, err = c[tx[ok]], err[ok]
    ssys, _ = stat_system(system, taps)
    report_ser = StatisticalEngine(ssys, taps).ber(0.0).ser
    imp = ssys.link.impairments
    link = copy.copy(ssys.link)   # the statistical link, its wander taken out
    link.impairments = dataclasses.replace(imp, offset_ui=fe.cal.lock_ui, wander_ui=0.0)
    eng = StatisticalEngine(dataclasses.replace(ssys, link=link), taps)
    print(f"link: cdr.mode=mm {' '.join(sets)}; {err.shape[0]} symbols counted, "
          f"{int(err.sum())} symbol errors, BER {res.ber:.3e}")
    print(f"tracking error: mean {cc.mean():+.4f} UI, rms {cc.std():.4f} UI, "
          f"{cc.min():+.3f} .. {cc.max():+.3f}; the report's model: static offset "
          f"{imp.offset_ui - fe.cal.lock_ui:+.4f} UI, Gaussian wander {imp.wander_ui:.4f} UI")
    vals, inv, counts = np.unique(np.round(cc, 9), return_inverse=True, return_counts=True)
    errs = np.bincount(inv, err.astype(np.float64), vals.shape[0])
    print("c (UI)      symbols     share   counted SER (errors)  engine SER at c")
    averaged = 0.0
    for v, n, ne in zip(vals, counts, errs):
        ser = eng.ber(float(v)).ser
        averaged += n / cc.shape[0] * ser
        if ne > 0 or n > 1e-3 * cc.shape[0]:
            print(f"{v:+.4f} {n:11d} {n / cc.shape[0]:.3e} {ne / n:.3e} ({int(ne):4d})   "
                  f"{ser:.3e}")
    print(f"SER: counted {err.mean():.3e}; the engine over the run's own histogram of c "
          f"{averaged:.3e}; the report's (Gaussian wander) {report_ser:.3e}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
