"""802.3dj-kr COM search speed: the numba kernel (serdes.com.mmse_grid) against the NumPy
stacked search it replaced (serdes.com.mmse.search_grid_fast), paired and interleaved in
one process, CPU time (time.process_time), on the channel sets with all their aggressors.

Part 1 (paired): both searches on the same TX sub-grid at one CTLE setting; the FOMs must
agree to 1e-8 dB. Part 2 (numba only, --full): the preset's whole TX grid at one CTLE
setting (D3.3: 1,308 settings; the full grid, 21 x 7 CTLE settings, and both package
cases: benchmarks/com_dj_full.py).

Run pinned to one core for the per-candidate CPU time:
  NUMBA_NUM_THREADS=1 OPENBLAS_NUM_THREADS=1 PYTHONPATH=. taskset -c 1 \
      python3 benchmarks/com_dj_grid.py [dpo12|ca] [--full]
"""

from __future__ import annotations

import sys
import time

import numpy as np

from serdes.com import mmse, mmse_grid
from serdes.com.params import apply_overrides, preset
from serdes.com.pulse import ComGrid, channel_vtf, read_channel, xsinc

from com_dj_full import SETS  # the same two channel sets

#: TX sub-grid of part 1 (2,568 settings, all four moving taps of the preset)
SUB = {"tx_min": "-0.06,0,-0.3,-0.2,0,0", "tx_max": "0,0.12,0,0,0,0",
       "tx_step": "0.02,0.04,0.02,0.02,0,0"}


def setup(key, overrides):
    thru, fext, nxt = SETS[key]
    p = apply_overrides(preset("802.3dj-kr"), overrides)
    g = ComGrid.of(p)
    chans = [read_channel(thru, "thru")] + [read_channel(f, "fext") for f in fext] \
        + [read_channel(f, "next") for f in nxt]
    v = [channel_vtf(p, g, c, p.cases[0]) for c in chans]
    pk0 = int(np.argmax(np.fft.irfft(xsinc(g) * v[0])))
    if pk0 < 20 * g.m or pk0 > g.n_t // 2:          # as core.compute_com
        sh = np.exp(-2j * np.pi * g.f * ((20 * g.m - pk0) % g.n_t) * g.ui / g.m)
        v = [x * sh for x in v]
    return p, g, v, [c.kind for c in chans[1:]]


def cpu(fn, *a):
    t = time.process_time()
    r = fn(*a)
    return r, time.process_time() - t


def main(key, full):
    ctle = {"g_dc": "-6", "g_dc2": "0"}
    p, g, v, kinds = setup(key, {**ctle, **SUB})
    p1 = apply_overrides(p, {"tx_min": "0,0,0,0,0,0", "tx_max": "0,0,0,0,0,0"})
    mmse_grid.search_grid_numba(p1, g, v, kinds)         # compile / load the kernel cache
    n = len(p.tx_grid)
    print(f"{key}: {len(kinds)} aggressors, TX sub-grid {n} settings at g_DC -6, g_DC2 0; "
          "per candidate = (time of the sub-grid - time of 1 setting) / (n - 1)")
    per = {"numpy": [], "numba": []}
    for rep in range(3):                                 # interleaved pairs
        a, t1 = cpu(mmse.search_grid_fast, p, g, v, kinds)
        b, t2 = cpu(mmse_grid.search_grid_numba, p, g, v, kinds)
        assert np.abs(a.tx_fom_at_best - b.tx_fom_at_best).max() < 1e-8
        _, s1 = cpu(mmse.search_grid_fast, p1, g, v, kinds)
        _, s2 = cpu(mmse_grid.search_grid_numba, p1, g, v, kinds)
        per["numpy"].append((t1 - s1) / (n - 1))
        per["numba"].append((t2 - s2) / (n - 1))
        print(f"  pair {rep}: numpy {t1:.2f} s (1 setting {s1:.2f} s), numba {t2:.2f} s "
              f"(1 setting {s2:.2f} s) CPU; per candidate numpy {1e6 * per['numpy'][-1]:.0f} us, "
              f"numba {1e6 * per['numba'][-1]:.0f} us")
    a, b = np.median(per["numpy"]), np.median(per["numba"])
    print(f"  median per candidate: numpy {1e6 * a:.0f} us, numba {1e6 * b:.0f} us, "
          f"ratio {a / b:.1f}; per CTLE setting set-up {s2:.2f} s")
    if full:
        p, g, v, kinds = setup(key, ctle)
        n = len(p.tx_grid)
        w = time.perf_counter()
        b, t = cpu(mmse_grid.search_grid_numba, p, g, v, kinds)
        w = time.perf_counter() - w
        print(f"  full TX grid, {n} settings at one CTLE setting: {t:.1f} s CPU, {w:.1f} s wall "
              f"({1e6 * t / n:.0f} us per candidate); best FOM {b.fom_db:.4f} dB at TX {np.round(b.tx_taps, 3).tolist()}")


if __name__ == "__main__":
    args = sys.argv[1:]
    for k in [a for a in args if not a.startswith("--")] or ["dpo12", "ca"]:
        main(k, "--full" in args)
