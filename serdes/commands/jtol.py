"""``serdes jtol``: jitter tolerance (largest TX SJ amplitude at a BER target per SJ
frequency) of a link with its clock recovery, beside the 802.3 template; optionally the
measured jitter transfer against the loop model."""

from __future__ import annotations

import json
import math

from serdes.commands.common import (ItemProgress, add_cache_option, add_config_options,
                                    add_progress_options, check_executor_options,
                                    check_figure_path, check_writable, json_safe,
                                    load_config)
from serdes.errors import ConfigError
from serdes.jtol_sweep import MAX_SYMBOLS, default_symbols


def add_parser(sub):
    p = sub.add_parser("jtol", help="jitter tolerance curve (SJ amplitude vs frequency)",
                       description="Largest TX sinusoidal jitter amplitude (UI, peak) that "
                                   "keeps the BER at or below the target, on a log grid of "
                                   "SJ frequencies, with the link's [cdr] loop.")
    add_config_options(p)
    p.add_argument("--target-ber", type=float, default=1e-6, help="BER target (default 1e-6)")
    p.add_argument("--method", choices=("stat", "counted", "both"), default="stat",
                   help="stat: statistical engine through the loop's 1 - H (fast, any "
                        "target); counted: counted runs with a stopping rule, bisected "
                        "around the statistical answer; both (default stat)")
    p.add_argument("--fmin", type=float, default=1e4, help="lowest SJ frequency (Hz)")
    p.add_argument("--fmax", type=float, default=1e8, help="highest SJ frequency (Hz)")
    p.add_argument("--points", type=int, default=10, help="frequencies on the log grid")
    p.add_argument("--freqs", default=None, help="comma-separated frequencies (Hz) instead")
    p.add_argument("--symbols", type=int, default=None,
                   help="counted: symbols per run (default 10 / target / bits per symbol, "
                        "at least 1e6 and at most 1e13, a run's limit; no fewer than 1 / "
                        "target / bits per symbol, one allowed error, so a counted run "
                        "reaches BER 5e-14 at best on PAM4, 1e-13 on NRZ)")
    p.add_argument("--workers", type=int, default=None,
                   help="frequencies run in parallel on this many local processes (as "
                        "serdes sweep; default: in this process)")
    p.add_argument("--scheduler", metavar="ADDRESS",
                   help="run the frequencies on a Dask cluster: its scheduler, e.g. "
                        "tcp://10.0.0.5:8786 (as serdes sweep)")
    p.add_argument("--timeout", type=float, metavar="SECONDS",
                   help="with --scheduler: how long to wait for the scheduler to answer")
    p.add_argument("--jtf", action="store_true",
                   help="also measure the jitter transfer at each frequency (small SJ, "
                        "recovered phase) beside the linear loop model")
    add_cache_option(p)
    add_progress_options(p)
    p.add_argument("--json", action="store_true", help="print one JSON object")
    p.add_argument("--csv", default=None, metavar="PATH", help="write the points as CSV")
    p.add_argument("--plot", default=None, metavar="PATH",
                   help="save the curve with the 802.3 template (png, svg, pdf)")
    return p


def _freqs(args, fb: float):
    import numpy as np

    from serdes.jtol import log_grid

    if args.freqs:
        try:
            f = np.array([float(x) for x in args.freqs.split(",") if x.strip()])
        except ValueError:
            raise ConfigError(f"--freqs = {args.freqs!r}: expected comma-separated numbers")
    else:
        if not (0 < args.fmin < args.fmax) or not 1 <= args.points <= 200:
            raise ConfigError(f"--fmin {args.fmin:g} --fmax {args.fmax:g} --points "
                              f"{args.points}: need 0 < fmin < fmax and 1..200 points")
        f = log_grid(args.fmin, args.fmax, args.points)
    if f.size == 0 or not np.all((f > 0) & (f < fb / 4)):
        raise ConfigError(f"SJ frequencies must lie in (0, symbol rate / 4 = {fb / 4:g}) Hz")
    return f


def _count(n) -> str:
    """A symbol count for people: digits grouped, 3 significant digits past 1e15."""
    return f"{int(n):,}" if n < 10**15 else f"{float(n):.3g}"


def _check_symbols(symbols, target: float, bps: int) -> None:
    """A counted run passes with at most target x bits errors: shorter than one allowed
    error it cannot tell the target from a BER 1/bits times higher. ``symbols`` None:
    the default's (one allowed error must fit in a run's MAX_SYMBOLS)."""
    import numpy as np

    need = 1.0 / (target * bps)    # symbols for one allowed bit error (inf below ~1e-308)
    if not need <= MAX_SYMBOLS:
        raise ConfigError(
            f"a counted run at BER {target:g} needs "
            f"{'at least ' + _count(need) if math.isfinite(need) else 'more than 1e308'} "
            f"symbols (one allowed bit error), more than a run's {_count(MAX_SYMBOLS)}; "
            "--method stat answers at any target")
    least = max(1000, math.ceil(need))
    if symbols is None:
        return
    if isinstance(symbols, bool) or not isinstance(symbols, (int, np.integer)) or not (
            least <= symbols <= MAX_SYMBOLS):
        n = default_symbols(target, bps)
        raise ConfigError(
            f"--symbols = {symbols!r}: a counted run at BER {target:g} needs at least "
            f"{_count(least)} symbols (one allowed bit error; the default, {_count(n)}, "
            f"allows {math.floor(n * bps * target + 1e-9)})")


# symbols per second of a counted run with clock recovery on one core (the default link
# with cdr.mode = "mm" and TX RJ + SJ: 3.3 M/s measured on the development machine)
CDR_RUN_RATE = 3e6
LONG_RUN_S = 3600.0


def _warn_long_runs(n: int, target: float, bps: int) -> None:
    """One warning line when a passing counted run (all ``n`` symbols) takes hours."""
    import warnings

    t = n / CDR_RUN_RATE
    if t < LONG_RUN_S:
        return
    span = f"{t / 86400:.3g} days" if t >= 86400 else f"{t / 3600:.3g} hours"
    warnings.warn(f"each passing counted run simulates {n:.3g} symbols, about {span} at "
                  f"{CDR_RUN_RATE / 1e6:g} M symbols/s (a run with clock recovery on one "
                  f"core), several runs per frequency; --symbols gives fewer (at least "
                  f"{math.ceil(1 / target / bps):.3g} at BER {target:g}) or --method stat "
                  "answers at once", stacklevel=2)


def jtol_report(cfg, *, target: float, method: str, freqs, symbols: int | None = None,
                workers: int | None = None, jtf: bool = False, scheduler: str | None = None,
                timeout: float | None = None, cache: bool = False, progress=None) -> dict:
    """The jtol result as a plain dict (the --json object); ``cache``: the link build
    (here and in the workers) may take the CTLE choice from the on-disk cache;
    ``progress(done, total)``: called as each frequency ends."""
    import time

    import numpy as np

    from serdes.build import build
    from serdes.jtol import Jtol, template_ui

    if not 0 < target < 0.5:
        raise ConfigError(f"--target-ber = {target:g}: expected a number in (0, 0.5)")
    check_executor_options(workers, scheduler, timeout, what="frequencies")
    t0 = time.perf_counter()
    system = build(cfg, cache=cache)
    if system.receiver.detector != "dfe" or system.receiver.mode != "mmse":
        raise ConfigError("serdes jtol: the receiver must be an MMSE FFE + DFE "
                          "(eq.mode = 'mmse', eq.detector = 'dfe')")
    if system.tx_jitter.ppm and not system.cdr.active:
        # the statistical engine leaves the offset out (cdr_stat.stat_note): it answered
        # the tolerance of the link without it, and a counted run fails at any SJ
        raise ConfigError(f"serdes jtol: tx_jitter.ppm = {system.tx_jitter.ppm:g} without "
                          "clock recovery (cdr.mode = 'off') walks the sampling phase "
                          "through every UI, so the link fails with any SJ; set cdr.mode "
                          "(mm, ssmm or bb) to track the offset")
    bps = 2 if system.link.modulation_order == 4 else 1
    if method in ("counted", "both"):
        _check_symbols(symbols, target, bps)
    if method in ("counted", "both"):
        _warn_long_runs(symbols or default_symbols(target, bps), target, bps)
    jt = Jtol(system)  # the loop model and the jitter transfer, here
    fb = 1.0 / system.link.ui_s
    tmpl = template_ui(freqs, fb)
    from serdes.jtol_sweep import run_jtol

    rows = run_jtol(cfg, freqs, target=target, method=method, symbols=symbols,
                    workers=workers or 0, scheduler=scheduler, timeout=timeout, jtol=jt,
                    cache=cache, progress=progress)
    bad = [r for r in rows if r["status"] != "ok"]
    if bad:
        raise ConfigError(f"serdes jtol: {bad[0]['sj_hz']:g} Hz failed: {bad[0]['message']}")
    points = []
    for r, tp in zip(rows, tmpl):
        p = {"sj_hz": r["sj_hz"], "sj_ui": r["sj_ui"], "method": "stat",
             "stat_sj_ui": r["stat_sj_ui"], "untracked_ui": r["untracked_ui"],
             "one_minus_h": r["one_minus_h"],
             "template_ui": None if not np.isfinite(tp) else float(tp)}
        p.update({k: r[k] for k in ("model", "ber", "main_point_sj_ui", "lock_points",
                                    "lock_warning") if k in r})
        if method in ("counted", "both"):
            p.update({k: r[k] for k in ("counted_sj_ui", "counted_fail_ui", "counted_runs",
                                        "symbols_per_run")})
            if method == "counted":
                p.update(sj_ui=r["counted_sj_ui"], method="counted")
        points.append(p)
    out = {"target_ber": float(target), "method": method, "points": points,
           "cdr": None if not system.cdr.active else {
               "mode": system.cdr.mode, "latency_ui": system.cdr.latency_ui,
               "pi_steps": system.cdr.pi_steps, **jt.model()},
           "template": "JTOL mask (peak = half the peak-to-peak: 5 fb / (664000 f) UI pp "
                       "from fb/664000 to fb/6640, 0.05 UI pp to 10 fb/6640; source: Intel "
                       "AN 835 4.4.4, CEI-56G-MR-PAM4)",
           "f_floor_hz": jt.f_floor}
    if jtf and system.cdr.active:
        out["jtf"] = [{"sj_hz": float(f), "measured_db": 20 * math.log10(abs(h)),
                       "model_db": 20 * math.log10(abs(complex(jt.model_jtf(f))))}
                      for f in freqs if f * system.link.ui_s < 0.01
                      for h in [jt.measure_jtf(float(f))]]
    out["elapsed_s"] = time.perf_counter() - t0
    return out


def main(args) -> int:
    cfg = load_config(args)
    if args.plot:
        check_figure_path(args.plot)
    if args.csv:
        check_writable(args.csv)
    fb = cfg["link"]["symbol_rate_hz"]
    freqs = _freqs(args, fb)
    bar = ItemProgress(len(freqs), "frequencies", label=f"jtol ({args.method})",
                       enabled=args.progress)
    bar.start_ticker()      # a counted frequency takes minutes: the time moves meanwhile
    try:
        out = jtol_report(cfg, target=args.target_ber, method=args.method, freqs=freqs,
                          symbols=args.symbols, workers=args.workers, jtf=args.jtf,
                          scheduler=args.scheduler, timeout=args.timeout, cache=args.cache,
                          progress=bar)
    finally:
        bar.close()
    if args.csv:
        _write_csv(args.csv, out)
    if args.plot:
        from serdes.plot.eye import save_figure
        from serdes.plot.jtol import plot_jtol

        save_figure(plot_jtol(out, fb).figure, args.plot, dpi=120, close=True)
    if args.json:
        print(json.dumps(json_safe(out), allow_nan=False), flush=True)
    else:
        print(format_text(out), flush=True)
    return 0


def _write_csv(path: str, out: dict) -> None:
    import csv

    keys = ["sj_hz", "sj_ui", "method", "stat_sj_ui", "counted_sj_ui", "untracked_ui",
            "one_minus_h", "template_ui"]
    try:
        with open(path, "w", newline="", encoding="utf-8") as fh:
            w = csv.DictWriter(fh, fieldnames=keys, extrasaction="ignore")
            w.writeheader()
            for p in out["points"]:
                w.writerow({k: p.get(k) for k in keys})
    except OSError as e:
        raise ConfigError(f"--csv {path}: cannot write ({e.strerror})") from None


def format_text(out: dict) -> str:
    lines = [f"jitter tolerance at BER {out['target_ber']:.1e} ({out['method']})"]
    c = out.get("cdr")
    if c:
        lines.append(f"loop      {c['mode'].upper()} {c['bandwidth_hz'] / 1e6:.2f} MHz, "
                     f"{c['peaking_db']:.2f} dB peaking, latency {c['latency_ui']} UI, "
                     f"dither {c['dither_rms_ui']:.4f} UI rms")
    else:
        lines.append("loop      none (cdr.mode = off): every SJ reaches the sampler")
    both = out["method"] == "both"
    if both:   # the statistical answer and the counted one (passes; the next fails)
        lines.append(f"{'SJ (Hz)':>10}    {'stat (UI)':>9}   {'counted (UI)':>12}   "
                     f"{'fails at (UI)':>13}   {'template (UI)':>13}")
    else:
        lines.append("   SJ (Hz)    tolerated (UI)   template (UI)")

    def num(v, width=12):
        return f"{v:{width}.4g}" if v is not None else " " * (width - 1) + "-"

    for p in out["points"]:
        t = p.get("template_ui")
        if both:
            lines.append(f"{p['sj_hz']:10.3g}    {num(p['sj_ui'], 9)}   "
                         f"{num(p.get('counted_sj_ui'))}   "
                         f"{num(p.get('counted_fail_ui'), 13)}   {num(t, 13)}")
        else:
            lines.append(f"{p['sj_hz']:10.3g}    {p['sj_ui']:12.4g}   " + num(t))
    for j in out.get("jtf", ()):
        lines.append(f"jtf {j['sj_hz']:10.3g} Hz: measured {j['measured_db']:+.2f} dB, "
                     f"model {j['model_db']:+.2f} dB")
    said = []   # the loop's lock warning (the same at every point: taken without SJ)
    for p in out["points"]:
        w = p.get("lock_warning")
        if w and w not in said:
            said.append(w)
            lines.append(f"warning   {w}")
    if out["points"] and all(p["sj_ui"] == 0 for p in out["points"]):
        lines.append(f"fails     the link misses BER {out['target_ber']:.1e} with (almost) no "
                     "SJ: `serdes run` with the same settings shows its BER and why")
    return "\n".join(lines)

