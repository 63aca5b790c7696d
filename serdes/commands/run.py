"""``serdes run``: counted BER of one link with the pulse (or waveform) engine."""

from __future__ import annotations

import json

from serdes.commands.common import add_config_options, json_safe, load_config


def add_parser(sub):
    p = sub.add_parser("run", help="simulate one link and count errors",
                       description="Simulate one link and count bit errors.")
    add_config_options(p)
    p.add_argument("--engine", choices=("pulse", "waveform"), default="pulse",
                   help="pulse (fast, default) or waveform (oversampled)")
    p.add_argument("--json", action="store_true", help="print one JSON object")
    return p


def run_link(cfg, engine: str = "pulse") -> dict:
    """Simulate ``cfg`` and return the report as a plain dict (the --json object)."""
    from serdes.build import build
    from serdes.engines.run import simulate

    system = build(cfg)
    link = system.link
    res = simulate(system, engine=engine)
    out = res.to_dict()
    from serdes.channel.reflections import Reflections

    refl = [s for s in link.channel_stages if isinstance(s, Reflections)]
    out.update(link=link.summary(), il_nyquist_db=link.il_nyquist_db, engine=engine,
               seed=system.run.seed, reflections=refl[0].describe() if refl else "none")
    for extra in _EXTRAS:
        extra(system, res, out)
    return out


# functions (link, result, report) that add sections to the report (eye, stat_ber, ...)
_EXTRAS: list = []
import serdes.report_eye  # noqa: E402,F401  (registers the eye / stat_ber sections)


def main(args) -> int:
    cfg = load_config(args)
    report = run_link(cfg, args.engine)
    if args.json:
        print(json.dumps(json_safe(report), allow_nan=False))
    else:
        print(format_summary(cfg, report))
    return 0


def _adc(c) -> str:
    from serdes.adc import Adc

    a = c["adc"]
    return Adc(bits=a["bits"], fullscale_v=a["fullscale_v"], enob=a["enob"]).describe()


def format_summary(cfg, r: dict) -> str:
    lk = r["link"]
    c = cfg
    lines = [
        f"link      {lk['symbol_rate_hz'] / 1e9:.4g} GBd {lk['modulation'].upper()}, "
        f"channel {lk['channel']}, IL at Nyquist {r['il_nyquist_db']:.2f} dB",
        f"rx        CTLE {c['ctle']['model']} (g_dc {c['ctle']['g_dc_db']:g} dB), "
        f"AFE m={c['afe']['peaking_m']:g} BW {c['afe']['bandwidth_hz'] / 1e9:g} GHz, "
        f"{_adc(c)}, VGA {lk['vga_gain_db']:.1f} dB",
        f"eq        {c['eq']['mode'].upper()} FFE {len(r['ffe_taps'])} taps "
        f"({c['ffe']['pre']} pre), " + _detector(cfg, r),
        f"snr       {r['snr_db']:.2f} dB at the slicer (MMSE prediction "
        f"{r['predicted_snr_db']:.2f} dB)",
        f"counted   {r['symbols']:,} symbols, {r['bits']:,} bits, {r['bit_errors']:,} bit errors, "
        f"{r['symbol_errors']:,} symbol errors (stopped by {r['stopped_by']})",
        f"BER       {r['ber']:.3e}  95% CI [{r['ber_ci'][0]:.3e}, {r['ber_ci'][1]:.3e}]   "
        f"SER {r['ser']:.3e}",
        f"time      {r['elapsed_s']:.2f} s, {r['symbols_per_s'] / 1e6:.2f} M symbols/s "
        f"({r['engine']} engine, seed {r['seed']})",
    ]
    extra = []
    if r.get("reflections", "none") != "none":
        extra.append(f"refl      {r['reflections']}")
    if r.get("rc_lags"):
        extra.append(f"rc        {len(r['rc_lags'])} taps ({c['rc']['mode']}) at "
                     + ", ".join(str(j) for j in r["rc_lags"]) + " UI: "
                     + _taps(r["rc_taps"]))
    if r.get("detector") == "mlse":
        extra.append(f"whitening {_taps(r['whitening_taps'])} ({c['mlse']['whitening']}), "
                     f"MLSE target {_taps(r['mlse_target'])}")
    lines[3:3] = extra
    for key in ("stat_ber",):
        if key in r:
            lines.append(f"stat BER  {r[key]:.3e} (statistical engine)")
    return "\n".join(lines)


def _taps(taps) -> str:
    return "[" + ", ".join(f"{t:.3f}" for t in taps) + "]"


def _detector(cfg, r: dict) -> str:
    if r.get("detector") == "mlse":
        memory = len(r["mlse_target"]) - 1
        m = 4 if cfg["link"]["modulation"] == "pam4" else 2
        return (f"MLSE memory {memory} ({m ** memory} states, decision delay "
                f"{cfg['mlse']['traceback']} UI)")
    return f"DFE {len(r['dfe_taps'])} taps " + (_taps(r["dfe_taps"]) if r["dfe_taps"] else "")
