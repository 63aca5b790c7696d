"""CPU cost of the RJ classes joint with the ISI (serdes.engines.stat.rj_joint) against
the level-only classes in the same run, on the default link: fresh engines, the BER at
16 phase offsets in [-0.25, 0.25] UI, paired and interleaved (joint, level-only, ...).

    PYTHONPATH=. taskset -c 1 python3 benchmarks/rj_joint_cost.py [REPS]

The level-only baseline is the same engine with ``_components`` overridden by itself,
which routes the RJ through :meth:`RandomJitterModel.mixture` (the path the interleaved
ADC's engine takes), main's model before the joint classes.
"""

import sys
import time

import numpy as np

from serdes.build import build
from serdes.config import Config
from serdes.engines.stat import StatisticalEngine


class LevelOnly(StatisticalEngine):
    def _components(self, *args):
        return StatisticalEngine._components(self, *args)


def run(cls, system, taps, offsets):
    t = time.process_time()
    eng = cls(system, taps)
    bers = [eng.ber(o).ber for o in offsets]
    return time.process_time() - t, bers


def main(reps):
    system = build(Config.default())
    taps = StatisticalEngine(system).taps
    offsets = np.linspace(-0.25, 0.25, 16)
    run(StatisticalEngine, system, taps, offsets[:2])   # compile / warm caches
    tj, tl = [], []
    for _ in range(reps):
        a, bj = run(StatisticalEngine, system, taps, offsets)
        b, bl = run(LevelOnly, system, taps, offsets)
        tj.append(a)
        tl.append(b)
    r = np.array(tj) / np.array(tl)
    print(f"CPU per 16 offsets: joint {np.median(tj):.3f} s, level-only {np.median(tl):.3f} s;"
          f" paired ratio median {np.median(r):.2f} (min {r.min():.2f}, max {r.max():.2f})")
    for o, x, y in zip(offsets, bj, bl):
        print(f"offset {o:+.4f}: BER joint {x:.3e}, level-only {y:.3e}, ratio {x / y:.2f}")


if __name__ == "__main__":
    main(int(sys.argv[1]) if len(sys.argv) > 1 else 5)
