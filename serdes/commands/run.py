"""``serdes run``: counted BER of one link with the pulse (or waveform) engine."""

from __future__ import annotations

import contextlib
import json
import math
import signal
import sys
import threading

from serdes.commands.common import (add_cache_option, add_config_options,
                                    add_progress_options, json_safe, load_config)
from serdes.config_unused import unused_settings


def add_parser(sub):
    p = sub.add_parser("run", help="simulate one link and count errors",
                       description="Simulate one link and count bit errors.")
    add_config_options(p)
    p.add_argument("--engine", choices=("pulse", "waveform"), default="pulse",
                   help="pulse (fast, default) or waveform (oversampled)")
    p.add_argument("--json", action="store_true", help="print one JSON object")
    add_progress_options(p)
    p.add_argument("--threads", type=_positive, default=None, metavar="N",
                   help="processes counting this one run: this one and N - 1 workers "
                        "(default: all cores); the symbol stream is split into "
                        "65536-symbol blocks with the counts "
                        "of one thread (fixed-tap FFE + DFE with the pulse engine; other "
                        "receivers run in one thread)")
    p.add_argument("--scheduler", metavar="tcp://HOST:PORT", default=None,
                   help="spread the blocks of this run over the Dask cluster at this "
                        "scheduler (same counts as a local run)")
    p.add_argument("--timeout", type=float, default=None, metavar="S",
                   help="seconds to wait for the Dask scheduler (default 10)")
    add_cache_option(p)
    st = p.add_mutually_exclusive_group()
    st.add_argument("--stat", dest="stat", action="store_true", default=True,
                    help="add the statistical engine's sections: stat BER, eye openings, "
                         "ADC clipping, DFE error propagation (default; the text summary "
                         "computes and prints the stat BER, --json has all)")
    st.add_argument("--no-stat", dest="stat", action="store_false",
                    help="counted results only (no statistical work)")
    return p


def run_link(cfg, engine: str = "pulse", *, stat: bool | str = True, should_stop=None,
             progress=None, threads: int | None = 1, scheduler: str | None = None,
             timeout: float | None = None, cache: bool = False, eye: bool = True,
             stage=None) -> dict:
    """Simulate ``cfg`` and return the report as a plain dict (the --json object): the
    library's :func:`serdes.report.run_report` on the built system, with ``threads``
    (None: all cores) or on the Dask cluster at ``scheduler``; ``cache``: the link build
    may take the CTLE choice from the on-disk cache (:mod:`serdes.buildcache`); ``stat``
    and ``eye`` (and ``stage``) as in :func:`~serdes.report.run_report`."""
    from serdes.build import build
    from serdes.heap import keep_freed_memory
    from serdes.report import run_report

    keep_freed_memory()  # chunks reuse the pages of the one before (serdes/heap.py)
    out = run_report(build(cfg, cache=cache), engine=engine, stat=stat, eye=eye,
                     should_stop=should_stop, progress=progress, threads=threads,
                     scheduler=scheduler, timeout=timeout, stage=stage).to_dict()
    out.setdefault("threads", 1)
    return out


def _positive(text: str) -> int:
    import argparse

    try:
        n = int(text)
    except ValueError:
        n = 0
    if n < 1:
        raise argparse.ArgumentTypeError(f"{text!r}: expected a whole number of threads >= 1")
    return n


def main(args) -> int:
    with _interruptible() as stop:  # from the start: a Ctrl-C during set-up counts too
        from serdes.build import build_run
        from serdes.sweep.progress import RunProgress

        cfg = load_config(args)
        bar = RunProgress(build_run(cfg).symbols, enabled=args.progress)
        # the text summary prints the statistical BER but no eye: it computes no more
        stat = args.stat and (True if args.json else "ber")
        try:
            report = run_link(cfg, args.engine, stat=stat, should_stop=stop.is_set,
                              progress=bar.update, threads=args.threads,
                              scheduler=args.scheduler, timeout=args.timeout,
                              cache=args.cache, eye=args.json, stage=bar.set_stage)
        finally:
            bar.close()
    if args.json:
        report["unused_settings"] = [u.to_dict() for u in unused_settings(cfg)]
        print(json.dumps(json_safe(report), allow_nan=False), flush=True)
    else:
        print(format_summary(report), flush=True)
    short = _short_run(cfg, report)
    if short:
        print(short, file=sys.stderr)
    if report["stopped_by"] == "interrupted":
        print(f"serdes: interrupted after {report['symbols']:,} counted symbols: the result "
              "is partial", file=sys.stderr)
        return 130
    return 0


def _short_run(cfg, report: dict) -> str:
    """The stderr line of :func:`serdes.report.short_run_warning`, or ""."""
    from serdes.report import short_run_warning

    text = short_run_warning(cfg, report)
    return f"serdes: warning: {text}" if text else ""


@contextlib.contextmanager
def _interruptible():
    """Ctrl-C (SIGINT) sets an event the counting loop checks between chunks, so the
    run ends with what it has counted; a second Ctrl-C interrupts at once."""
    stop = threading.Event()
    if threading.current_thread() is not threading.main_thread():
        yield stop  # signals are only delivered to the main thread
        return

    def handler(signum, frame):
        if stop.is_set():
            raise KeyboardInterrupt
        stop.set()
        # the statistical sections after the count do not look at the event: say so,
        # or a long statistical eye looks as if the Ctrl-C went unheard
        print("serdes: Ctrl-C: the count stops at its next chunk and the report follows "
              "(its statistical sections can take minutes); Ctrl-C again to stop at once",
              file=sys.stderr, flush=True)

    previous = signal.signal(signal.SIGINT, handler)
    try:
        yield stop
    finally:
        signal.signal(signal.SIGINT, previous)


def format_summary(r: dict) -> str:
    """The text summary of a run report (:meth:`serdes.report.RunReport.to_dict`)."""
    lk, rx = r["link"], r["receiver"]
    lines = [
        f"link      {lk['symbol_rate_hz'] / 1e9:.4g} GBd {lk['modulation'].upper()}, "
        f"channel {lk['channel']}, IL at Nyquist {r['il_nyquist_db']:.2f} dB",
        f"rx        {_front_end(lk['rx'])}, {r['adc']}, VGA {lk['vga_gain_db']:.1f} dB",
        f"eq        {rx['mode'].upper()} FFE {len(r['ffe_taps'])} taps "
        f"({rx['ffe_pre']} pre), " + _detector(r)
        + (", 1/(1+D) precoding" if rx.get("precoding") else ""),
        (f"snr       {r['snr_db']:.2f} dB at the slicer" if r["symbols"] else
         "snr       -- (nothing counted)") + f" (MMSE prediction "
        f"{r['predicted_snr_db']:.2f} dB"
        + (", without the canceller: its taps are placed at run time"
           if rx.get("rc_taps") and rx.get("rc_mode") == "adaptive" else "") + ")",
        f"counted   {r['symbols']:,} symbols, {r['bits']:,} bits, {r['bit_errors']:,} bit errors, "
        f"{r['symbol_errors']:,} symbol errors ("
        + ("interrupted" if r["stopped_by"] == "interrupted" else
           f"stopped by {r['stopped_by']}") + ")",
        (f"BER       {r['ber']:.3e}  95% CI [{r['ber_ci'][0]:.3e}, {r['ber_ci'][1]:.3e}]   "
         f"SER {r['ser']:.3e}" if r["bits"] else "BER       -- (nothing counted)"),
        f"time      {r['elapsed_s']:.2f} s, {r['symbols_per_s'] / 1e6:.2f} M symbols/s "
        f"({r['engine']} engine, seed {r['seed']}"
        + (f", {r['workers']} Dask workers" if r.get("workers") else
           f", {r.get('threads', 1)} threads" if r.get("threads", 1) > 1 else "") + ")"
        + (f"; {r['threads_note']}" if r.get("threads_note") else ""),
    ]
    extra = []
    if r.get("reflections", "none") != "none":
        extra.append(f"refl      {r['reflections']}")
    if r.get("rc_lags"):
        extra.append(f"rc        {len(r['rc_lags'])} taps ({rx['rc_mode']}) at "
                     + ", ".join(str(j) for j in r["rc_lags"]) + " UI: "
                     + _taps(r["rc_taps"]))
    if r.get("detector") == "mlse":
        extra.append(f"whitening {_taps(r['whitening_taps'])} ({rx['mlse_whitening']}), "
                     f"MLSE target {_taps(r['mlse_target'])}")
    if r.get("crosstalk"):
        extra.append(f"xtalk     {len(r['crosstalk'])} aggressors, ICN "
                     f"{r['icn_v'] * 1e3:.3f} mV, at the slicer {r['crosstalk_rms_v'] * 1e3:.3f}"
                     " mV rms (ADC-input referred)")
    lines[3:3] = extra
    if r.get("noise_budget"):
        nb = r["noise_budget"]
        names = {"rx_thermal": "RX thermal", "tx": "TX", "adc": "ADC", "jitter": "jitter",
                 "adc_interleave": "ADC lanes", "adc_clock": "ADC clock", "adc_supply": "supply",
                 "residual_isi": "residual ISI"}
        lines.insert(4 + len(extra), "noise     at the slicer: " + ", ".join(
            f"{names.get(k, k)} {v:.0%}" for k, v in nb.items()))
    if r.get("cdr"):
        lines.append(_cdr_line(r["cdr"]))
    if r.get("stat_ber") is not None:
        how = ("statistical engine, the CDR's tracking-error model"
               if (r.get("cdr") or {}).get("stat_model") == "tracking" else "statistical engine")
        if (r.get("cdr") or {}).get("main_point_ber") is not None:
            how += ", weighted over the CDR's lock points"
        if (r.get("cdr") or {}).get("outside_window_symbols"):
            how += "; a loop that holds its lock point, which this run's loop did not"
        rx = r.get("receiver") or {}
        if rx.get("detector") == "dfe" and rx.get("dfe_taps"):
            how += ("; correct DFE feedback, " + (
                "and precoding counts each error about twice" if rx.get("precoding")
                else "the count adds error propagation")
                + ": --json's stat.dfe_error_propagation")
        lines.append(f"stat BER  {r['stat_ber']:.3e} ({how})")
        over = (r.get("stat") or {}).get("ber_recovered_phase")
        if over is not None:   # serdes.engines.cdr_phase_ber
            lines.append(f"stat BER  {over:.3e} over the phases this run's loop took (its "
                         f"tail as far as the run sampled it: --json's stat.ber_recovered_phase)")
        for key in ("jitter_note", "calibration_note"):   # what the stat BER leaves out
            if (r.get("stat") or {}).get(key):
                lines.append(f"note      {r['stat'][key]}")
    elif r.get("skipped"):
        lines.append(f"skipped   {r['skipped']}")
    if (r.get("cdr") or {}).get("lock_warning"):
        lines.append(f"warning   {r['cdr']['lock_warning']}")
    if r.get("fec"):
        lines += _fec_lines(r["fec"])
    return "\n".join(lines)


def _cdr_line(c: dict) -> str:
    """CDR results: lock time, recovered phase (from the pulse peak), tracked offset."""
    m = c["model"]
    pd = "BB" if c["mode"] == "bb" else "MM"
    zero = c.get("pd_zero_ui", c["mm_lock_ui"])
    head = (f"cdr       {c['mode'].upper()} loop {m['bandwidth_hz'] / 1e6:.2f} MHz "
            f"({m['peaking_db']:.2f} dB peaking), " + (
                f"{pd} zero {zero:+.3f} UI from the peak"
                if zero is not None and math.isfinite(zero)
                else f"no {pd} zero within +-0.45 UI of the peak"))
    if c.get("outside_window_symbols"):
        head += (f"; loop lost: {c['outside_window_symbols']:,} samples slipped past the "
                 "sampler's slip window (not the signal: the BER is not valid)")
    if c["lock_symbols"] is None:
        return head + "; not locked"
    exc = ""
    if c.get("excursion_windows"):
        exc = (f"; {c['excursion_windows']} windows of {c['lock_window_ui']:,} UI later "
               f"strayed up to {c['max_excursion_ui']:.3f} UI from the mean")
    return (head + f"; locked after {c['lock_symbols']:,} UI, phase "
            f"{c['phase_mean_ui']:+.4f} UI, wander {c['phase_rms_ui']:.4f} UI rms, "
            f"tracking {c['tracked_ppm']:+.1f} ppm" + exc)


def _fec_lines(f: dict) -> list[str]:
    """The post-FEC part of the text summary."""
    if not f["codewords"]:
        return [f"fec       {f['mode'].upper()}: no whole codeword counted"]
    hist = ", ".join(f"{k}:{v}" for k, v in f["errors_per_codeword"].items())
    lo, hi = f["flr_ci"]
    return [
        f"fec       {f['mode'].upper()} RS({f['n']},{f['k']}) t={f['t']}, "
        f"{f['interleave']}-way interleave: {f['codewords']:,} codewords, pre-FEC BER "
        f"{f['pre_fec_ber']:.3e}, RS symbol error ratio {f['symbol_error_ratio']:.3e}",
        f"codeword  symbol errors per codeword {{{hist}}}",
        f"FLR       counted {f['flr']:.3e} [{lo:.3e}, {hi:.3e}] ({f['uncorrectable']} lost: "
        f"{f['detected']} detected, {f['miscorrected']} miscorrected), burst model "
        f"{f['flr_model']:.3e}, binomial {f['flr_binomial']:.3e}",
        f"post-FEC  BER counted {f['post_fec_ber']:.3e}, burst model "
        f"{f['post_fec_ber_model']:.3e}, binomial {f['post_fec_ber_binomial']:.3e} "
        f"({f['error_events']:,} error events, error propagation "
        f"{f['error_propagation']:.3f})",
        f"target    post-FEC BER {f['target_post_fec_ber']:.0e}: "
        + ("margin not known: no error counted for the burst model" if f["meets_target"] is None else
           f"margin {f['margin_decades']:+.1f} decades (burst model), "
           + ("met" if f["meets_target"] else "NOT met")),
    ]


def _front_end(rx: str) -> str:
    """The RX stages' labels, saying "CTLE none" when there is no CTLE stage."""
    return rx if rx.startswith("CTLE") else "CTLE none, " + rx


def _taps(taps) -> str:
    return "[" + ", ".join(f"{t:.3f}" for t in taps) + "]"


def _detector(r: dict) -> str:
    if r.get("detector") == "mlse":
        memory = len(r["mlse_target"]) - 1
        m = 4 if r["link"]["modulation"] == "pam4" else 2
        return (f"MLSE memory {memory} ({m ** memory} states, decision delay "
                f"{r['receiver']['mlse_traceback']} UI)")
    return f"DFE {len(r['dfe_taps'])} taps " + (_taps(r["dfe_taps"]) if r["dfe_taps"] else "")
