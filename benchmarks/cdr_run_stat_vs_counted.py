"""`serdes run`'s statistical BER with the CDR on against a counted run at one TX SJ point.

    PYTHONPATH=. python3 benchmarks/cdr_run_stat_vs_counted.py SJ_UI SYMBOLS [PERIOD_UI]

The default link with the MM loop, TX SJ of SJ_UI (UI, peak) at symbol rate / PERIOD_UI
(default 32768: 1.62 MHz, below the 4 MHz loop bandwidth), one streamed chunk per SJ
period, no error target. Prints the model the run's statistical BER uses, its BER, the
Gaussian-wander model's BER, and the counted BER with a 95 % interval from batch means
over whole SJ periods (errors cluster at the SJ's extremes: bits are not independent).
"""

import sys
import time

import numpy as np
from scipy.stats import t as student_t

from serdes.build import build
from serdes.config import Config
from serdes.engines.cdr_stat_model import stat_system
from serdes.engines.run import design_equalizer, simulate
from serdes.engines.stat import StatisticalEngine


def main(argv):
    a, n = float(argv[0]), int(argv[1])
    period = int(argv[2]) if len(argv) > 2 else 32768
    ui = build(Config.default()).link.ui_s
    f = 1.0 / (period * ui)
    system = build(Config.default().with_overrides(
        ["cdr.mode=mm", f"tx_jitter.sj_ui={a}", f"tx_jitter.sj_hz={f}",
         f"link.chunk_symbols={period}", f"link.symbols={n}", "link.target_errors=0"]))
    taps = design_equalizer(system)
    t0 = time.process_time()
    sys2, model = stat_system(system, taps)
    sb = StatisticalEngine(sys2, taps).ber(0.0)
    tracked = model.apply(sb)
    t1 = time.process_time()
    seen = []
    r = simulate(system, taps=taps, progress=lambda *x: seen.append((x[3], x[4])))
    t2 = time.process_time()
    e = np.diff([0] + [x[0] for x in seen])
    b = np.diff([0] + [x[1] for x in seen])
    full = b == 2 * period
    rr = e[full] / b[full]
    half = student_t.ppf(0.975, rr.size - 1) * rr.std(ddof=1) / np.sqrt(rr.size)
    print(f"sj {a} UI at {f:.1f} Hz: stat model {model.name} {tracked.ber:.3e} "
          f"(Gaussian wander {sb.ber:.3e}); counted {r.ber:.3e}, batch means 95 % "
          f"[{rr.mean() - half:.3e}, {rr.mean() + half:.3e}] over {rr.size} periods, "
          f"{r.bit_errors} errors; CPU stat {t1 - t0:.1f} s, counted {t2 - t1:.1f} s")


if __name__ == "__main__":
    main(sys.argv[1:])
