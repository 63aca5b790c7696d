"""COM against counted errors of `serdes run` with the COM reference receiver's equalizer,
on a synthetic line over its loss (no crosstalk) and on the real thru channels.

For each channel: COM with the full 802.3ck-kr grid (both package cases); then, for each
package case, the link with the same channel, the same package lengths and the
equalization COM chose (TX FFE taps, IEEE CTLE g_DC / g_DC2), the COM reference filter
(4th-order Butterworth at 0.75 f_b), a 12-tap DFE (no RX FFE), the COM noise
(eta_0, SNR_TX, RJ, dual-Dirac), A_v and RLM, no precoding: the counted symbol error
ratio (SER, with its 95 % Clopper-Pearson interval; the run stops at 300 errors).
COM's DER_0 (1e-4) is a symbol error ratio at the detector: COM = 0 dB <=> DER = DER_0,
the 3 dB pass line leaves 3 dB of margin.

What differs from COM's reference receiver (stated in docs/com.md): the link's DFE taps
are MMSE taps with one limit (0.85 for every tap; COM: 0.85 then 0.3) and decide on its
own decisions (error propagation; COM assumes correct decisions) and are adapted by LMS
at COM's sampling phase (held there by a clock loop of negligible gain; phase steps of
1/64 UI, COM 1/32); its dual-Dirac jitter holds its sign
for 4096 UI; the TX noise is added at the TX output.

Run: OPENBLAS_NUM_THREADS=1 PYTHONPATH=. python3 benchmarks/com_vs_ber.py \
        [--symbols N] [--loss 12,16,...] [--files F.s4p ...] [--com-set KEY=VALUE ...]
``--com-set dfe_n_bg=0`` gives COM with the 12 fixed DFE taps only, the equalizer the link
has (the preset's floating DFE taps have no counterpart in the link).
``--crossings FILE.jsonl``: where the counted SER crosses DER_0 and where COM crosses
0 and 3 dB on the line (log-linear / linear interpolation between the points of FILE).
Prints one JSON line per (channel, package case), with COM's own predicted SER
(`com_ser`: 2 (L-1)/L times the lower tail of its noise + interference distribution at
-A_s; `--symbols 0` prints only that).
"""

from __future__ import annotations

import argparse
import json
import os
import time

import numpy as np
from scipy import stats

from serdes.build import build, build_com_channels
from serdes.com.core import compute_com
from serdes.config import Config
from serdes.report import run_report

PRESET = "802.3ck-kr"


def link_config(channel: list[str], case, p, symbols: int) -> Config:
    taps = list(case.tx_taps)            # c(-3), c(-2), c(-1), c(0), c(1)
    phase_ui = (case.cursor_ix - int(np.argmax(case.pulse_eq))) / p.samples_per_ui
    lengths = case.lengths
    sets = channel + [
        f"tx.ffe=[{', '.join(f'{t:.6g}' for t in taps)}]", f"tx.main={p.tx_n_pre}",
        f"tx.swing_v={p.a_v}", f"tx.rlm={p.rlm}", f"tx.snr_db={p.snr_tx_db}",
        f"tx.rise_time_s={p.t_r_ns * 1e-9}", f"link.symbol_rate_hz={p.fb_gbd * 1e9}",
        "package.preset=802.3ck-kr", f"package.z_p_tx_mm={lengths['tx'][0]}",
        f"package.z_p_rx_mm={lengths['rx'][0]}",
        "afe.model=butterworth", f"afe.f_r={p.f_r}",
        "ctle.model=ieee", "ctle.auto=false", f"ctle.g_dc_db={case.g_dc_db}",
        f"ctle.g_dc2_db={case.g_dc2_db}",
        "ffe.taps=1", "ffe.pre=0", f"dfe.taps={len(p.dfe_max)}", f"dfe.limit={p.dfe_max[0]}",
        "link.precoding=false", f"noise.eta0_v2_per_ghz={p.eta0}",
        f"noise.rj_ui={p.sigma_rj}", f"noise.dd_ui={p.a_dd}",
        # COM's sampling point (its Mueller-Mueller cursor, before the pulse peak): held
        # by a clock loop of negligible gain started there; the DFE taps adapted (LMS,
        # not counted) at that phase
        "cdr.mode=mm", "cdr.kp=1e-9", "cdr.ki=0", "cdr.acquire_gear=1",
        f"cdr.initial_phase_ui={phase_ui}", "cdr.warmup_symbols=1000",
        "eq.mode=lms", "eq.train_symbols=50000",
        f"link.symbols={symbols}", "link.target_errors=300"]
    return Config.default().with_overrides(sets)


def ser_ci(k: int, n: int) -> tuple[float, float]:
    lo = stats.beta.ppf(0.025, k, n - k + 1) if k > 0 else 0.0
    hi = stats.beta.ppf(0.975, k + 1, n - k) if k < n else 1.0
    return float(lo), float(hi)


def crossings(path: str, der0: float = 1e-4) -> None:
    rows = [json.loads(x) for x in open(path) if x.strip()]
    for case in sorted({r["package_case"] for r in rows}):
        pts = sorted((float(r["channel"].split()[1]), r["com_db"], r.get("ser"))
                     for r in rows if r["channel"].startswith("line") and r["package_case"] == case)

        def cross(vals, level, log=False):
            for (x0, y0), (x1, y1) in zip(vals, vals[1:]):
                if log:
                    if not (y0 and y1):
                        continue
                    y0, y1, lv = np.log10(y0), np.log10(y1), np.log10(level)
                else:
                    lv = level
                if (y0 - lv) * (y1 - lv) <= 0 and y0 != y1:
                    return x0 + (lv - y0) / (y1 - y0) * (x1 - x0)
            return None

        com = [(x, c) for x, c, _ in pts]
        ser = [(x, s) for x, _, s in pts if s is not None]
        x_der = cross(ser, der0, log=True)
        com_at = float(np.interp(x_der, *zip(*com))) if x_der is not None else None
        print(json.dumps({"package_case": case, "loss_ser_eq_der0_db": x_der,
                          "com_db_there": com_at, "loss_com_0db": cross(com, 0.0),
                          "loss_com_3db": cross(com, 3.0)}))


def one(channel: list[str], label: str, symbols: int, com_set: dict | None = None) -> None:
    cfg0 = Config.default().with_overrides(channel)
    thru, fext, nxt = build_com_channels(cfg0)
    t0 = time.process_time()
    res = compute_com(thru, fext, nxt, PRESET, com_set or None)
    t_com = time.process_time() - t0
    for case in res.cases:
        # COM's own error ratio at its signal amplitude: the lower tail of the noise +
        # interference distribution at -A_s (one direction, as DER_0 at -A_ni); a PAM4
        # symbol errs in either direction from the inner levels: SER = 2 (L-1)/L x that
        cdf = np.cumsum(case.pdf) / np.sum(case.pdf)
        der_as = float(cdf[np.searchsorted(case.y, -case.a_s_v)])
        ser_com = 2 * (res.params.levels - 1) / res.params.levels * der_as
        if symbols == 0:
            print(json.dumps({"channel": label, "package_case": case.package_case,
                              "com_db": case.com_db, "com_der_at_a_s": der_as,
                              "com_ser": ser_com}), flush=True)
            continue
        cfg = link_config(channel, case, res.params, symbols)
        t0 = time.process_time()
        r = run_report(build(cfg), stat=False).to_dict()
        lo, hi = ser_ci(int(r["symbol_errors"]), int(r["symbols"]))
        print(json.dumps({
            "channel": label, "package_case": case.package_case, "com_db": case.com_db,
            "com_der_at_a_s": der_as, "com_ser": ser_com,
            "a_s_mv": 1e3 * case.a_s_v, "a_ni_mv": 1e3 * case.a_ni_v,
            "tx_taps": case.tx_taps, "g_dc_db": case.g_dc_db, "g_dc2_db": case.g_dc2_db,
            "ser": r["ser"], "ser_ci": [lo, hi], "symbol_errors": r["symbol_errors"],
            "symbols": r["symbols"], "ber": r["ber"],
            "phase_ui": (case.cursor_ix - int(np.argmax(case.pulse_eq))) / 32,
            "snr_db": r["snr_db"], "dfe_taps": r.get("dfe_taps"),
            "cpu_com_s": t_com, "cpu_run_s": time.process_time() - t0,
            "com_set": com_set or {}, "loadavg": os.getloadavg()[0]}), flush=True)


if __name__ == "__main__":
    ap = argparse.ArgumentParser()
    ap.add_argument("--symbols", type=int, default=1_000_000,
                    help="symbols per link run (0: COM only)")
    ap.add_argument("--loss", default="")
    ap.add_argument("--files", nargs="*", default=[])
    ap.add_argument("--com-set", action="append", default=[], metavar="KEY=VALUE",
                    help="override of the COM preset (e.g. dfe_n_bg=0)")
    ap.add_argument("--crossings", default="", help="JSON lines of an earlier run: crossings")
    a = ap.parse_args()
    if a.crossings:
        crossings(a.crossings)
        raise SystemExit(0)
    cs = dict(kv.split("=", 1) for kv in a.com_set)
    for loss in [float(x) for x in a.loss.split(",") if x]:
        one(["channel.model=loss", f"channel.loss_db={loss}"], f"line {loss:g} dB", a.symbols, cs)
    for f in a.files:
        one(["channel.model=touchstone", f'channel.file="{f}"'], f.rsplit("/", 1)[-1], a.symbols, cs)
