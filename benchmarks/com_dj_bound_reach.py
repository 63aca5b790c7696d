"""How many 802.3dj-kr candidates the exact pass must visit, per package case: the share of
the grid's candidates (TX setting x CTLE setting) whose bound from the bound pass (the
whole FFE span free, at V_qc's lower bound; serdes/com/quant.py) reaches the best FOM F*.
Every such candidate is visited (each of its sampling times whose bound reaches the
threshold goes through the pair bound), so this share sets the exact pass's work; the
spread of the bounds above F* says how much tighter a bound must be to drop them.

One `compute_com` of each channel set (the CLI's search, two numba threads), with
`quant.search_quant` wrapped to keep its per-candidate bounds.

Run: NUMBA_NUM_THREADS=2 OPENBLAS_NUM_THREADS=1 PYTHONPATH=. python3 \
         benchmarks/com_dj_bound_reach.py THRU [--fext F ...] [--next N ...]
"""

from __future__ import annotations

import argparse
import time

import numpy as np

from serdes.com import quant
from serdes.com.core import compute_com


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("thru")
    ap.add_argument("--fext", nargs="*", default=[])
    ap.add_argument("--next", nargs="*", default=[])
    args = ap.parse_args()

    kept = []
    search = quant.search_quant

    def keep(p, parts, ctles, C, CC, offs, kw):
        out = search(p, parts, ctles, C, CC, offs, kw)
        kept.append((out[0], out[4], out[5]))
        return out

    quant.search_quant = keep
    t = time.perf_counter()
    res = compute_com(args.thru, fext=args.fext, next=args.next, preset="802.3dj-kr")
    wall = time.perf_counter() - t
    print(f"compute_com {wall:.1f} s wall, COM {[round(c.com_db, 3) for c in res.cases]} dB")
    print("case  F* (dB)  candidates  bound >= F*  evaluated exactly  CTLE settings with one"
          "  bound - F* (dB): 10 / 50 / 90 % / max")
    for case, (fom, ub, n_exact) in enumerate(kept, 1):
        d = ub - fom
        reach = d >= 0
        q = np.percentile(d, [10, 50, 90])
        print(f"{case:4d}  {fom:7.3f}  {d.size:10d}  {reach.mean():10.1%}  {n_exact:17d}"
              f"  {int(reach.any(axis=1).sum()):4d} of {len(ub):3d}"
              f"  {q[0]:+.3f} / {q[1]:+.3f} / {q[2]:+.3f} / {d.max():+.3f}")


if __name__ == "__main__":
    main()
