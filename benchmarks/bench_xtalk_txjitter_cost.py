"""CPU time of 15 thru-copy aggressors with and without their own TX jitter (RJ 0.01 UI
and DCD 0.01 UI each, the victim's TX jitter off), interleaved in one process.

    taskset -c 1 python3 benchmarks/bench_xtalk_txjitter_cost.py

Printed per pair: M symbols/s of both (CPU time, 1 M symbols) and their ratio. The
jittered aggressors each draw their RJ and their TX noise (not combined into one
stream) and run one more FIR.
"""

import time

from serdes.build import build
from serdes.config import Config
from serdes.engines.run import simulate

N = 1_000_000


def _aggs(jit):
    return [dict(kind="next" if i % 2 else "fext", model="copy", coupling_db=-30 - i,
                 delay_ui=2.5 * i, **jit) for i in range(15)]


def main() -> int:
    cfg = Config.default().with_overrides(["link.target_errors=0"])
    plain = build(cfg.with_aggressors(_aggs({})))
    moved = build(cfg.with_aggressors(_aggs(dict(tx_rj_ui=0.01, tx_dcd_ui=0.01))))
    for s in (plain, moved):
        simulate(s, symbols=20_000)
    for p in range(3):
        r = []
        for s in (plain, moved):
            t = time.process_time()
            simulate(s, symbols=N)
            r.append(N / (time.process_time() - t) / 1e6)
        print(f"pair {p}: no own TX jitter {r[0]:.3f} M sym/s, own TX RJ+DCD {r[1]:.3f} "
              f"M sym/s, ratio {r[1] / r[0]:.3f}", flush=True)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
