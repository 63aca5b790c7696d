"""Counted against statistical BER with an aggressor's own TX jitter, per jitter kind.

    python3 benchmarks/xtalk_txjitter_stat_vs_counted.py [--symbols 200000]

A NEXT thru copy at -14 dB (phase 0.5 UI) on the default link at 30 dB loss, FFE only,
the victim's TX jitter off: the aggressor without TX jitter, with RJ 0.1 UI, with DCD
0.2 UI and with both. Printed: the statistical BER, the counted BER with its 95 %
interval, and counted / statistical (the engines are held to 1.5x with aggressors).
"""

import argparse

from serdes.build import build
from serdes.config import Config
from serdes.engines.run import simulate
from serdes.engines.stat import StatisticalEngine


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--symbols", type=int, default=200_000)
    args = ap.parse_args(argv)
    base = ["link.target_errors=0", f"link.symbols={args.symbols}", "channel.loss_db=30",
            "dfe.taps=0"]
    for jit in ({}, dict(tx_rj_ui=0.1), dict(tx_dcd_ui=0.2), dict(tx_rj_ui=0.1, tx_dcd_ui=0.2)):
        agg = dict(kind="next", model="copy", coupling_db=-14, phase_ui=0.5, **jit)
        system = build(Config.default().with_overrides(base).with_aggressors([agg]))
        s = StatisticalEngine(system).ber().ber
        r = simulate(system)
        print(f"{str(jit) if jit else 'no TX jitter':40s} stat {s:.3e}  counted {r.ber:.3e} "
              f"[{r.ber_ci[0]:.3e}, {r.ber_ci[1]:.3e}]  counted/stat {r.ber / s:.2f}",
              flush=True)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
