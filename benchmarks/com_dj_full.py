"""802.3dj-kr (P802.3dj/D3.3) COM on the full official grid: counts the grid's candidates
and times ``compute_com`` (both package cases, every aggressor) on the DPO_12in set
(8 aggressors) and the CA_19p75dB set (15), CPU time (time.process_time, all threads)
and wall time, with the numba threads given by NUMBA_NUM_THREADS.

Run: NUMBA_NUM_THREADS=2 OPENBLAS_NUM_THREADS=1 PYTHONPATH=. python3 benchmarks/com_dj_full.py [dpo12|ca]
A first call on a one-setting grid loads the numba cache (not timed).

``--no-quant``: each set also without the quantization noise (``n_qb=0``), before it.
``--float``: with the floating RX FFE taps (``rx_ffe_n_wg=2``); also reports the CPU time
of the branch and bound's bound pass (kernel qmode 1) and exact pass (qmode 2).
``--paired``: CPU time of compute_com with the per-CTLE tables combined from their parts
(mmse_grid._CtleParts, the default) against forming them directly for every CTLE setting
(mmse_grid._Ctle, the code before), 3 interleaved pairs on the full TX grid x 15 CTLE
settings (g_DC -20..0 step 5 x g_DC2 -6, -3, 0), both package cases; same COM asserted.
Run pinned: NUMBA_NUM_THREADS=1 OPENBLAS_NUM_THREADS=1 PYTHONPATH=. taskset -c 1 python3
benchmarks/com_dj_full.py --paired dpo12
"""

from __future__ import annotations

import json
import os
import sys
import time
from pathlib import Path

from serdes.com.core import compute_com
from serdes.com.params import preset

CH = Path(__file__).resolve().parents[1].parent / "shared" / "channels"
KR = CH / "ieee8023ck_KR_ortho_tracy_3ck_02_0119"
CR = CH / "ieee8023ck_CR_mellitz_3ck_04_1119"
SETS = {
    "dpo12": (KR / "DPO_12in_Meg7_THRU.s4p",
              [KR / f"DPO_12in_Meg7_{n}.s4p" for n in ("FENG89", "FENG1415", "FENH89",
                                                       "FENH1112", "FENH1415")],
              [KR / f"DPO_12in_Meg7_{n}.s4p" for n in ("NENF89", "NENF1112", "NENF1415")]),
    "ca": (CR / "CA_19p75dB_thru.s4p", [CR / f"CA_19p75dB_fext{n}.s4p" for n in range(1, 8)],
           [CR / f"CA_19p75dB_next{n}.s4p" for n in range(1, 9)]),
}


def count(p) -> dict:
    n_tx, n_ctle = len(p.tx_grid), len(p.g_dc) * len(p.g_dc2)
    return {"tx_settings": n_tx, "ctle_settings": n_ctle, "candidates_per_case": n_tx * n_ctle,
            "package_cases": len(p.cases), "candidates": n_tx * n_ctle * len(p.cases),
            "sampling_times_per_candidate": p.samples_per_ui + 1}


def _spy_passes(acc: dict):
    """Wrap quant.mmse_block to add up the CPU time of each pass (by qmode)."""
    from serdes.com import quant

    real = quant.mmse_block

    def spy(*a, **kw):
        c0 = time.process_time()
        out = real(*a, **kw)
        d = acc.setdefault(f"qmode_{kw.get('qmode')}", [0.0, 0])
        d[0] = round(d[0] + time.process_time() - c0, 3)
        d[1] += len(a[0])
        return out

    quant.mmse_block = spy


def run(key: str, ov=None) -> dict:
    thru, fext, nxt = SETS[key]
    passes: dict = {}
    compute_com(thru, fext[:1], nxt[:1], "802.3dj-kr",
                {"g_dc": "-6", "g_dc2": "0", "tx_max": "0,0,0,0,0,0", **(ov or {})})   # numba cache
    if "--float" in sys.argv:
        _spy_passes(passes)
    c0, w0 = time.process_time(), time.perf_counter()
    r = compute_com(thru, fext, nxt, "802.3dj-kr", ov)
    cpu, wall = time.process_time() - c0, time.perf_counter() - w0
    return {"set": key, "overrides": ov, "aggressors": len(fext) + len(nxt), **count(r.params),
            "numba_threads": os.environ.get("NUMBA_NUM_THREADS", "default"),
            "cpu_s": round(cpu, 2), "wall_s": round(wall, 2),
            "load_avg_after": os.getloadavg()[0], "passes_cpu_s_rows": passes,
            "cases": [{k: c.as_dict()[k] for k in ("package_case", "com_db", "a_s_v", "a_ni_v",
                                                    "fom_db", "tx_taps", "g_dc_db", "g_dc2_db",
                                                    "dfe_taps", "fom_evaluations")}
                      | {"quant": c.quant, "mlsd_com_dfe_db": (c.mlsd or {}).get("com_dfe_db")}
                      for c in r.cases]}


class _Direct:
    """The tables formed directly for every CTLE setting (the baseline)."""

    def __init__(self, p, pulses, basis, kinds, hr_f, f, m, offs, iu, mult):
        self.a = (p, pulses, basis, kinds, hr_f, f, m, offs, iu, mult)

    def at(self, wt):
        from serdes.com.mmse_grid import _Ctle

        p, pulses, basis, kinds, hr_f, f, m, offs, iu, mult = self.a
        return _Ctle(p, wt, pulses, basis, kinds, hr_f, f, m, offs, iu, mult)


def paired(key: str, pairs: int = 3) -> dict:
    from serdes.com import mmse_grid

    thru, fext, nxt = SETS[key]
    ov = {"g_dc": "-20,-15,-10,-5,0", "g_dc2": "-6,-3,0"}
    compute_com(thru, fext[:1], nxt[:1], "802.3dj-kr",
                {"g_dc": "-6", "g_dc2": "0", "tx_max": "0,0,0,0,0,0"})   # numba cache
    parts_cls = mmse_grid._CtleParts
    t = {"parts": [], "direct": []}
    for _ in range(pairs):
        res = {}
        for name, cls in (("direct", _Direct), ("parts", parts_cls)):
            mmse_grid._CtleParts = cls
            c0 = time.process_time()
            res[name] = compute_com(thru, fext, nxt, "802.3dj-kr", ov)
            t[name].append(time.process_time() - c0)
        mmse_grid._CtleParts = parts_cls
        for a, b in zip(res["direct"].cases, res["parts"].cases):
            assert abs(a.com_db - b.com_db) < 1e-8 and a.tx_taps == b.tx_taps
    ratio = sorted(d / q for d, q in zip(t["direct"], t["parts"]))[pairs // 2]
    return {"set": key, "paired_cpu_s": t, "median_ratio_direct_over_parts": round(ratio, 3),
            "load_avg_after": os.getloadavg()[0]}


if __name__ == "__main__":
    args = [a for a in sys.argv[1:] if not a.startswith("--")]
    if "--paired" in sys.argv:
        for key in args or ["dpo12"]:
            print(json.dumps(paired(key)), flush=True)
        sys.exit(0)
    print(json.dumps(count(preset("802.3dj-kr"))), flush=True)
    for key in args or list(SETS):
        if "--no-quant" in sys.argv:     # the same set without quantization noise first
            print(json.dumps(run(key, {"n_qb": "0"})), flush=True)
        print(json.dumps(run(key, {"rx_ffe_n_wg": "2"} if "--float" in sys.argv else None)),
              flush=True)
