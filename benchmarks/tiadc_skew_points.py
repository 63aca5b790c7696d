"""The calibrated lanes' skew residual on as many Gauss-Hermite points as its size needs
(serdes.tiadc.skew_points) against the former fixed 9 x 9: the statistical sections of
`serdes run` (report._stat_parts: BER, eye openings, clipping, error propagation) of a
few calibrated interleaved links, CPU time (time.process_time) of each, the two modes
interleaved in one process, and what moved: BER, per-eye BER, eye widths and heights.

Run: PYTHONPATH=. python3 benchmarks/tiadc_skew_points.py [ROUNDS]   (default 1 round;
     a few minutes)
"""

from __future__ import annotations

import dataclasses
import json
import os
import sys
import time

import numpy as np

import serdes.tiadc.stat as ts
from serdes.build import build
from serdes.config import Config
from serdes.engines.run import design_equalizer
from serdes.report import _stat_parts

CAL8 = ["adc.lanes=8", "adc.gain_rms=0.02", "adc_cal.enabled=true"]
CASES = {
    "8 lanes, SJ 0.1 UI at 10 MHz": CAL8 + ["noise.sj_ui=0.1", "noise.sj_hz=1e7"],
    "8 lanes, 20 mV supply tone at 10 MHz": CAL8 + [
        "supply.ripple_mv=[20]", "supply.ripple_hz=[1e7]", "supply.delay_ps_per_mv=0.3"],
    "16 lanes": ["adc.lanes=16", "adc.gain_rms=0.02", "adc_cal.enabled=true"],
    "64 lanes (the cap: 9 x 9 both ways)": ["adc.lanes=64", "adc.gain_rms=0.02",
                                            "adc_cal.enabled=true"],
}
RULE = ts.points_for


def one(system, taps, fixed: int | None) -> dict:
    ts.points_for = RULE if fixed is None else (lambda rho: fixed)
    try:
        eng = ts.statistical_engine(system, taps)
        pts, rows = eng.skew_points, int(eng.jitter.weights.shape[0])
        c0 = time.process_time()
        out = _stat_parts(system, taps)
        cpu = time.process_time() - c0
    finally:
        ts.points_for = RULE
    eyes = out["stat_eye"]["eyes"]
    return dict(points=pts, rows=rows, cpu_s=cpu, ber=out["sb"].ber,
                per_eye=[float(v) for v in out["sb"].ber_per_eye],
                width_ui=[e["width_ui"] for e in eyes.values()],
                height=[e["height"] for e in eyes.values()])


def rel(a, b) -> float:
    a, b = np.asarray(a, dtype=float).ravel(), np.asarray(b, dtype=float).ravel()
    ok = b != 0
    return float(np.max(np.abs(a[ok] / b[ok] - 1))) if ok.any() else 0.0


def main(argv) -> None:
    rounds = int(argv[0]) if argv else 1
    for name, ov in CASES.items():
        system = build(Config.default().with_overrides(ov + ["link.symbols=200000"]))
        d = design_equalizer(system)
        taps = dataclasses.replace(d, ffe=np.asarray(d.ffe, dtype=np.float64),
                                   dfe=np.asarray(d.dfe, dtype=np.float64))
        one(system, taps, None)   # warm: kernels and caches of both
        runs = {"rule": [], "fixed 9": []}
        for _ in range(rounds):
            runs["rule"].append(one(system, taps, None))
            runs["fixed 9"].append(one(system, taps, 9))
        new, old = runs["rule"][-1], runs["fixed 9"][-1]
        t_new = float(np.median([r["cpu_s"] for r in runs["rule"]]))
        t_old = float(np.median([r["cpu_s"] for r in runs["fixed 9"]]))
        print(json.dumps({
            "case": name, "points": new["points"], "rows": [new["rows"], old["rows"]],
            "cpu_s": [round(t_new, 2), round(t_old, 2)], "ratio": round(t_old / t_new, 2),
            "ber": [new["ber"], old["ber"]], "ber_rel": rel(new["ber"], old["ber"]),
            "per_eye_rel": rel(new["per_eye"], old["per_eye"]),
            "width_rel": rel(new["width_ui"], old["width_ui"]),
            "height_rel": rel(new["height"], old["height"]),
            "load": round(os.getloadavg()[0], 2)}), flush=True)


if __name__ == "__main__":
    main(sys.argv[1:])
