"""COM of the 802.3ck KR / CR channel sets with and without the sheets' floating DFE taps,
full official grid, both package cases, every aggressor: COM per case, the chosen
equalization and the CPU time of ``compute_com`` (time.process_time), in paired,
interleaved runs, each in its own process pinned to one core (``taskset -c 1``, one
numba and one BLAS thread), fixed taps (``dfe_n_bg=0``, the baseline) first.

Run: PYTHONPATH=. python3 benchmarks/com_float_dfe.py [dpo] [ca] [--pairs N]
     (one run: PYTHONPATH=. python3 benchmarks/com_float_dfe.py --one dpo [KEY=VALUE ...])
Needs the IEEE channel files in ../shared/channels (skipped with a message when absent).
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from pathlib import Path

CH = Path(__file__).resolve().parents[1].parent / "shared" / "channels"
KR, CR = "ieee8023ck_KR_ortho_tracy_3ck_02_0119", "ieee8023ck_CR_mellitz_3ck_04_1119"
SETS = {
    "dpo": ("802.3ck-kr", f"{KR}/DPO_12in_Meg7_THRU.s4p",
            [f"{KR}/DPO_12in_Meg7_{n}.s4p"
             for n in ("FENG89", "FENG1415", "FENH89", "FENH1112", "FENH1415")],
            [f"{KR}/DPO_12in_Meg7_{n}.s4p" for n in ("NENF89", "NENF1112", "NENF1415")]),
    "ca": ("802.3ck-cr", f"{CR}/CA_19p75dB_thru.s4p",
           [f"{CR}/CA_19p75dB_fext{n}.s4p" for n in range(1, 8)],
           [f"{CR}/CA_19p75dB_next{n}.s4p" for n in range(1, 9)]),
}


def one(name: str, overrides: dict) -> dict:
    from serdes.com.core import compute_com

    pre, thru, fx, nx = SETS[name]
    load = os.getloadavg()[0]
    c0, w0 = time.process_time(), time.perf_counter()
    r = compute_com(CH / thru, [CH / f for f in fx], [CH / f for f in nx], preset=pre,
                    overrides=overrides or None)
    c1, w1 = time.process_time(), time.perf_counter()
    keys = ("com_db", "fom_db", "a_s_v", "a_ni_v", "tx_taps", "g_dc_db", "g_dc2_db", "dfe_taps")
    return {"set": name, "overrides": overrides, "cpu_s": c1 - c0, "wall_s": w1 - w0,
            "load": [load, os.getloadavg()[0]],
            "cases": [{k: c.as_dict()[k] for k in keys} for c in r.cases]}


def main(argv: list[str]) -> int:
    if argv[:1] == ["--one"]:
        print(json.dumps(one(argv[1], dict(a.split("=", 1) for a in argv[2:]))))
        return 0
    pairs = 2
    if "--pairs" in argv:
        i = argv.index("--pairs")
        pairs = int(argv[i + 1])
        argv = argv[:i] + argv[i + 2:]
    env = dict(os.environ, OPENBLAS_NUM_THREADS="1", NUMBA_NUM_THREADS="1")
    for name in argv or ["dpo", "ca"]:
        if not (CH / SETS[name][1]).exists():
            print(f"{name}: channel files not found under {CH}, skipped")
            continue
        runs = {"fixed": [], "float": []}
        for _ in range(pairs):
            for mode, extra in (("fixed", ["dfe_n_bg=0"]), ("float", [])):
                out = subprocess.run(["taskset", "-c", "1", sys.executable, __file__, "--one",
                                      name, *extra], env=env, capture_output=True, text=True,
                                     check=True).stdout
                runs[mode].append(json.loads(out.strip().splitlines()[-1]))
        for mode, rs in runs.items():
            c = rs[-1]["cases"]
            print(f"{name} {mode}: COM " + " / ".join(f"{x['com_db']:.3f}" for x in c)
                  + " dB, FOM " + " / ".join(f"{x['fom_db']:.3f}" for x in c)
                  + " dB, CPU " + ", ".join(f"{r['cpu_s']:.1f}" for r in rs) + " s, load "
                  + ", ".join(f"{r['load'][0]:.1f}-{r['load'][1]:.1f}" for r in rs))
        ratios = sorted(b["cpu_s"] / a["cpu_s"] for a, b in zip(runs["fixed"], runs["float"]))
        print(f"{name}: CPU float / fixed per pair " + ", ".join(f"{r:.2f}" for r in ratios))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
