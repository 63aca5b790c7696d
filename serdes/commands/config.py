"""``serdes config``: the configuration as commented TOML, or the list of keys.

``serdes config > link.toml`` writes the default link (or ``serdes config my.toml --set
...``: a given one with overrides) in a form ``serdes run link.toml`` accepts unchanged;
every key carries its meaning, allowed range and default as a comment. ``serdes config
--keys`` lists every key with its type, default, range and meaning (from
:data:`serdes.config.SCHEMA`).
"""

from __future__ import annotations

from serdes.commands.common import add_config_options, load_config
from serdes.config import AGGRESSOR, SCHEMA, Field, _toml_value

SECTIONS = {
    "link": "symbol rate, line code, data pattern, run length and numerics",
    "tx": "transmitter: FFE, swing, edge, noise, level mismatch",
    "channel": "the channel: ideal, an Annex-93A style loss line, or a Touchstone file",
    "ctle": "continuous-time linear equalizer",
    "afe": "shunt-peaked analog front end",
    "noise": "receiver noise and sampling jitter",
    "adc": "analog-to-digital converter (time-interleaved lanes: serdes.tiadc)",
    "adc_cal": "background calibration of the interleaved ADC's lanes",
    "supply": "supply ripple and noise through the ADC's LDO into clock jitter and gain",
    "ffe": "feed-forward equalizer (after the ADC)",
    "dfe": "decision-feedback equalizer",
    "eq": "how the taps are found and which detector follows the FFE",
    "reflections": "impedance discontinuities: line segments and stubs, or a simple echo",
    "rc": "reflection canceller (sparse taps at echo lags)",
    "mlse": "noise whitening + Viterbi detector (eq.detector = \"mlse\")",
    "crosstalk": "defaults of the [[aggressor]] tables (crosstalk aggressors) and the ICN band",
}


def add_parser(sub):
    p = sub.add_parser(
        "config", help="print the configuration as commented TOML, or list the keys",
        description="Print the default configuration (or CONFIG with the --set overrides) "
                    "as commented TOML that serdes run accepts unchanged, or with --keys "
                    "list every key with its type, default, allowed range and meaning.",
        epilog="example: serdes config > link.toml; serdes run link.toml")
    add_config_options(p)
    p.add_argument("--keys", action="store_true",
                   help="list the keys (section.key, type, default, allowed, meaning)")
    return p


def main(args) -> int:
    if args.keys:
        print(format_keys())
    else:
        print(commented_toml(_absolute_channel_file(load_config(args))), end="")
    return 0


def _absolute_channel_file(cfg):
    """The config with a relative ``channel.file`` (one given with --set, relative to
    the current folder) made absolute, as the --fext/--next files are: a TOML takes its
    relative paths from its own folder, so the printed file would name another path
    when saved anywhere but here."""
    import os

    file = cfg["channel"]["file"]
    if file and not os.path.isabs(file):
        return cfg.replace("channel", file=os.path.abspath(file))
    return cfg


def _kind(f: Field) -> str:
    if f.kind is list:
        return "list"
    return {float: "float", int: "int", bool: "bool", str: "str"}[f.kind]


def commented_toml(cfg) -> str:
    """``cfg`` as TOML with a comment above every key: meaning, allowed, default."""
    lines = ["# serdes link configuration: serdes run THIS_FILE [--set section.key=value]",
             "# Values are SI units (Hz, s, V) unless the key says otherwise (_db, _ui, "
             "_mm, _ohm, _v2_per_ghz).",
             "# Keys left out take their defaults; `serdes config --keys` lists them all.",
             ""]
    for section, fields in SCHEMA.items():
        lines.append(f"[{section}]")
        if section in SECTIONS:
            lines[-1] += f"  # {SECTIONS[section]}"
        for key, f in fields.items():
            value = cfg[section][key]
            note = f"# {f.doc}; {f.allowed()}"
            if value != f.default:
                note += f"; default {_toml_value(f.default)}"
            lines.append(note)
            lines.append(f"{key} = {_toml_value(value)}")
        lines.append("")
    for table in cfg.aggressors:  # crosstalk aggressors: [[aggressor]] tables
        lines.append("[[aggressor]]")
        lines.extend(f"{key} = {_toml_value(value)}" for key, value in table.items())
        lines.append("")
    return "\n".join(lines)


def format_keys() -> str:
    rows = [("key", "type", "default", "allowed", "meaning")]
    for section, fields in SCHEMA.items():
        for key, f in fields.items():
            rows.append((f"{section}.{key}", _kind(f), _toml_value(f.default), f.allowed(),
                         f.doc))
    for key, f in AGGRESSOR.items():  # keys of each [[aggressor]] table
        rows.append((f"[[aggressor]].{key}", _kind(f), _toml_value(f.default), f.allowed(),
                     f.doc))
    w = [max(len(r[i]) for r in rows) for i in range(3)]
    return "\n".join(f"{r[0]:<{w[0]}}  {r[1]:<{w[1]}}  {r[2]:<{w[2]}}  {r[3]}  -- {r[4]}"
                     for r in rows)
