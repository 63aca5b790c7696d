"""``serdes com``: Channel Operating Margin (IEEE 802.3 Annex 93A / 178A) of a channel set."""

from __future__ import annotations

import json

from serdes.commands.common import (ItemProgress, add_dpi_option, add_progress_options,
                                    check_dpi, check_figure_path, json_safe)


def add_parser(sub):
    from serdes.com.params import preset_names

    p = sub.add_parser("com", help="Channel Operating Margin (IEEE 802.3 Annex 93A / 178A)",
                       description="COM of a thru channel with its crosstalk aggressors: "
                                   "packages, TX FFE x CTLE search, DFE (and the 802.3dj "
                                   "MMSE RX FFE), noise and "
                                   "crosstalk distributions, per package case.")
    p.add_argument("thru", nargs="?",
                   help="thru channel (Touchstone .s4p, ports 1->2 and 3->4)")
    p.add_argument("--fext", action="append", default=[], metavar="FILE",
                   help="far-end crosstalk aggressor (repeatable)")
    p.add_argument("--next", action="append", default=[], metavar="FILE",
                   help="near-end crosstalk aggressor (repeatable)")
    p.add_argument("--preset", default="802.3ck-kr",
                   help="parameter set: " + ", ".join(preset_names()) + " (default 802.3ck-kr)")
    p.add_argument("--set", dest="overrides", action="append", default=[], metavar="KEY=VALUE",
                   help="override one COM parameter, e.g. der0=1e-5 or g_dc=-10,-9,-8 (repeatable)")
    p.add_argument("--erl", action="store_true",
                   help="also the effective return loss (Annex 93A.5) of both ports of THRU")
    p.add_argument("--params", action="store_true",
                   help="print the preset's parameters with the --set overrides (every key "
                        "--set takes) and stop; takes no THRU, aggressors, --erl or -o")
    p.add_argument("--json", action="store_true", help="print the result as one JSON object")
    p.add_argument("-o", "--output", default=None, help="write the report figure (PNG) here")
    add_dpi_option(p)
    add_progress_options(p)
    return p


def summary(res) -> str:
    from serdes.com.eye import vec_text

    p = res.params
    lines = [f"COM {res.com_db:.2f} dB  ({p.name}, DER_0 {p.der0:g}, {len(res.fext)} FEXT, "
             f"{len(res.next)} NEXT, {res.elapsed_s:.1f} s)"]
    verdict = res.eye_window_passes()
    if verdict is not None:
        failed = [str(c.package_case) for c in res.cases
                  if c.eye_window is not None and c.eye_window["passes"] is False]
        lines.append(f"C2M eye over T_s +- {p.eye_t_o_mui:g} mUI: "
                     + ("pass in every package case" if verdict else
                        "FAIL in package case " + ", ".join(failed)))
    if res.thru_inverted:
        lines.append("thru inverted (its pulse peaks negative: P and N crossed); the receiver "
                     "inverts its input")
    for c in res.cases:
        tx = " ".join(f"{t:+.2f}" for t in c.tx_taps)
        dfe = " ".join(f"{t:.3f}" for t in c.dfe_taps[:6]) + (" ..." if len(c.dfe_taps) > 6 else "")
        s = c.sigmas_v
        lines += [
            f"case {c.package_case} (z_p TX/RX {c.lengths['tx'][0]:g}/{c.lengths['rx'][0]:g} mm): "
            f"COM {c.com_db:.2f} dB  A_s {c.a_s_v * 1e3:.2f} mV  A_ni {c.a_ni_v * 1e3:.2f} mV  "
            f"FOM {c.fom_db:.2f} dB",
            f"  unequalized peak {c.unequalized_peak_v * 1e3:.1f} mV; TX [{tx}]; g_DC {c.g_dc_db:g} dB, "
            f"g_DC2 {c.g_dc2_db:g} dB",
            f"  DFE [{dfe}]" + (("; RX FFE [" + " ".join(f"{t:+.3f}" for t in c.rx_ffe_taps) + "]")
                                if c.rx_ffe_taps else ""),
            *(["  RX FFE floating taps (UI after the cursor: tap): " + ", ".join(
                f"{k}: {t:+.4f}" for k, t in zip(c.rx_ffe_float["ui_after_cursor"],
                                                 c.rx_ffe_float["taps"]))]
              if c.rx_ffe_float else []),
            *([f"  MLSD (178A.1.10): COM {c.mlsd['com_db']:.2f} dB, the DFE receiver's "
               f"{c.mlsd['com_dfe_db']:.2f} dB (A_s, A_ni, eye and VEC are its), DER_MLSD "
               f"{c.mlsd['der_mlsd']:.2g}"] if c.mlsd else []),
            "  sigma (mV): " + ", ".join(f"{k} {v * 1e3:.3f}" for k, v in s.items()),
            f"  eye height at DER_0 {c.eye_height_v * 1e3:.2f} mV, VEC {vec_text(c.vec_db)}",
            *([_window_line(c.eye_window, p)] if c.eye_window else []),
        ]
    left_out = res.not_modelled()
    if left_out:
        lines.append("not modelled: " + left_out)
    return "\n".join(lines)


def _window_line(ew: dict, p) -> str:
    """The eye over the C2M timing window T_s +- T_O (com/eye.py), with its verdict against
    the preset's limits where it has them."""
    from serdes.com.eye import vec_text

    out = (f"  over T_s +- {ew['t_o_mui']:g} mUI ({ew['window']} window, {ew['offsets']} "
           f"offsets): eye height {ew['eye_height_v'] * 1e3:.2f} mV, VEC {vec_text(ew['vec_db'])}")
    if ew["passes"] is not None:
        lim = ([f"eye height >= {p.eye_eh_min_mv:g} mV"] if p.eye_eh_min_mv > 0 else []) \
            + ([f"VEC <= {p.eye_vec_max_db:g} dB"] if p.eye_vec_max_db > 0 else [])
        out += f": {'pass' if ew['passes'] else 'FAIL'} ({', '.join(lim)})"
    if ew.get("com_db") is not None:
        out += (f"\n    COM over the window (the IEEE code's with T_O), 20 log10(2 A_s / "
                f"(2 A_s - EH)): {ew['com_db']:.2f} dB; at T_s {ew['com_t_s_db']:.2f} dB (A_s, "
                f"A_ni and the eye at T_s are its)")
    cs = ew.get("c2m_search")
    if cs is not None and cs.get("no_candidate"):
        out += ("\n    the IEEE code's C2M-mode search found no candidate with an open window "
                "eye (the code then reports no equalization): these are the largest FOM's")
    elif cs is not None:
        out += (f"\n    chosen by the IEEE code's C2M-mode search (Min_VEO_Test "
                f"{cs['min_veo_test_mv']:g} mV): window COM without crosstalk "
                f"{cs['com_no_xt_db']:.2f} dB, the largest of {cs['candidates_first_test']} "
                f"candidates past its first test ({cs['candidates_eye']} window eyes formed)")
    return out


def erl_pass(erl) -> bool | None:
    """True when every rated port passes its limit, None when none is judged."""
    judged = [e.passed for e in erl if e.passed is not None]
    return all(judged) if judged else None


def erl_line(erl) -> str:
    def one(e):
        s = f"port {e.port} {e.erl_db:.2f} dB"
        if not e.judged:
            return s + " (not rated by the preset)"
        return s + (" (no limit set)" if e.passed is None else
                    f" {'pass' if e.passed else 'FAIL'} (limit {e.limit_db:g} dB)")
    return "ERL (Annex 93A.5, IEEE COM code's TDR): " + ", ".join(one(e) for e in erl)


def show_params(args) -> int:
    """``--params``: the effective parameter set, as ``key = value`` lines or JSON."""
    from serdes.com.params import apply_overrides, preset

    p = apply_overrides(preset(args.preset), args.overrides)
    settings = p.settings()
    if args.json:
        print(json.dumps(json_safe({"preset": p.name, "source": p.source, "params": settings})))
        return 0
    print(f"# {p.describe()}")
    if p.source:
        print(f"# source: {p.source}")
    for k, v in settings.items():
        text = ",".join(f"{x:g}" for x in v) if isinstance(v, list) else (
            str(v).lower() if isinstance(v, bool) else f"{v:g}" if isinstance(v, float) else str(v))
        print(f"{k} = {text}")
    return 0


def main(args) -> int:
    from serdes.com.core import compute_com
    from serdes.com.warm import first_run_note
    from serdes.errors import ConfigError

    if args.params:
        given = [name for name, on in (("THRU", args.thru), ("--fext", args.fext),
                                       ("--next", args.next), ("--erl", args.erl),
                                       ("-o", args.output)) if on]
        if given:
            raise ConfigError("com: --params prints the parameter set and stops; it takes no "
                              "THRU, --fext, --next, --erl or -o (given: "
                              + ", ".join(given) + ")")
        return show_params(args)
    if not args.thru:
        raise ConfigError("com: a THRU channel file is required (or --params)")

    if args.output:
        check_dpi(args.dpi)
        check_figure_path(args.output)
    bar = ItemProgress(None, "package cases", label=f"com {args.preset}",
                       enabled=args.progress)
    # where the progress line is drawn, a first run's compile is explained once the
    # files and values have passed their checks (compute_com's first progress call)
    note = first_run_note(args.preset) if bar.enabled else None

    def progress(done, total=None):
        nonlocal note
        if note:
            bar.note(note)
            note = None
        bar.stage = ""          # a case begins or ends: its search's stage is not yet known
        bar(done, total)

    def stage(text):            # within a case: the RX FFE search's bound and exact passes
        bar.stage = text

    bar.start_ticker()      # a case's search can take a minute: the time moves meanwhile
    try:
        res = compute_com(args.thru, args.fext, args.next, args.preset, args.overrides,
                          progress=progress, stage=stage if bar.enabled else None)
    finally:
        bar.close()
    erl = None
    if args.erl:
        from serdes.com.erl import compute_erl

        erl = compute_erl(args.thru, res.params)
    if args.output:
        from serdes.plot.com import report_figure

        report_figure(res, args.output, dpi=args.dpi)
    if args.json:
        d = res.as_dict()
        if erl is not None:
            d["erl"] = [e.as_dict() for e in erl]
            d["erl_pass"] = erl_pass(erl)
        print(json.dumps(json_safe(d)))
    else:
        print(summary(res))
        if erl is not None:
            print(erl_line(erl))
        if args.output:
            print(f"figure: {args.output}")
    return 0
