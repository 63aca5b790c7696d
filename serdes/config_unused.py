"""Settings a config gives that its link does not use.

A key changed from its default can still be dead: ``channel.file`` with
``channel.model = 'loss'`` simulates the loss line, ``ctle.g_dc_db`` with
``ctle.auto = true`` is replaced by the search. Such a run is not wrong, but it is not
the run the user asked for, so :func:`unused_settings` names each such key with the
setting that makes it dead; the CLI prints them as warnings and ``serdes run --json``
lists them. Every rule here is checked by experiment in ``tests/test_config_unused.py``
(the key changed: the report is the same; the other setting changed: it is not).

    >>> from serdes.config import Config
    >>> cfg = Config.default().with_overrides(["channel.file=thru.s4p"])
    >>> [u.key for u in unused_settings(cfg)]
    ['channel.file']
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Callable

from serdes.schema import AGGRESSOR, SCHEMA


@dataclass(frozen=True)
class Unused:
    """``key`` (dotted; ``aggressor[i].key`` for an [[aggressor]] table) holds ``value``,
    which the link does not use because of ``why``."""

    key: str
    value: Any
    why: str

    def text(self) -> str:
        return f"{self.key} = {self.value!r} is not used: {self.why}"

    def to_dict(self) -> dict:
        return {"key": self.key, "value": self.value, "why": self.why}


def _model_is_not(section: str, *models: str, hint: str = ""):
    def rule(cfg):
        m = cfg[section]["model"]
        if m not in models:
            return f"{section}.model = {m!r}" + (f" ({hint})" if hint else "")
        return None
    return rule


def _ports(cfg):
    if cfg["channel"]["model"] == "touchstone":
        return None
    if any(a["model"] == "file" and not a["ports"] for a in cfg.aggressors):
        return None  # the aggressor files take the thru's port convention
    return f"channel.model = {cfg['channel']['model']!r} and no aggressor file takes it"


def _ctle_gains(cfg):
    c = cfg["ctle"]
    if c["model"] != "ieee":
        return f"ctle.model = {c['model']!r}"
    if c["auto"]:
        return "ctle.auto = true chooses g_DC and g_DC2 (set ctle.auto = false to fix them)"
    return None


def _aggressors_of(kind: str):
    def rule(cfg):
        if any(a["kind"] == kind for a in cfg.aggressors):
            return None
        return f"the link has no {kind.upper()} aggressor"
    return rule


def _zero(section: str, key: str):
    def rule(cfg):
        return f"{section}.{key} = 0" if not cfg[section][key] else None
    return rule


def _cdr_off(cfg):
    return "cdr.mode = 'off'" if cfg["cdr"]["mode"] == "off" else None


def _one_lane(cfg):
    if cfg["adc"]["lanes"] == 1:
        return "adc.lanes = 1 (the mismatch is drawn centred over the lanes)"
    return None


def _cal_off(cfg):
    return "adc_cal.enabled = false" if not cfg["adc_cal"]["enabled"] else None


def _supply_reaches_nothing(cfg):
    s = cfg["supply"]
    source = bool(s["ripple_mv"]) or s["noise_uv_per_rthz"] > 0
    sink = s["delay_ps_per_mv"] > 0 or s["gain_pct_per_mv"] > 0
    if source and sink:
        return None
    if not source:
        return ("no supply ripple or noise is given (supply.ripple_mv, "
                "supply.noise_uv_per_rthz)")
    return ("the rail reaches nothing: supply.delay_ps_per_mv and supply.gain_pct_per_mv "
            "are 0")


def _not_lms(cfg):
    return f"eq.mode = {cfg['eq']['mode']!r}" if cfg["eq"]["mode"] != "lms" else None


def _not_mlse(cfg):
    d = cfg["eq"]["detector"]
    return f"eq.detector = {d!r}" if d != "mlse" else None


def _no_segments(cfg):
    return "reflections.segment_lengths_mm is empty" \
        if not cfg["reflections"]["segment_lengths_mm"] else None


def _no_stubs(cfg):
    return "reflections.stub_positions is empty" \
        if not cfg["reflections"]["stub_positions"] else None


def _no_cascade(cfg):
    r = cfg["reflections"]
    if r["segment_lengths_mm"] or r["stub_positions"]:
        return None
    return "the [reflections] cascade has no segment and no stub"


def _rc_off(cfg):
    return "rc.taps = 0" if cfg["rc"]["taps"] == 0 else None


def _rc_mu(cfg):
    if cfg["rc"]["taps"] == 0:
        return "rc.taps = 0"
    if cfg["rc"]["mode"] == "pulse" and cfg["eq"]["mode"] != "lms":
        return "rc.mode = 'pulse' with eq.mode = 'mmse' (the taps are designed, not adapted)"
    return None


def _rc_search(cfg):
    if cfg["rc"]["taps"] == 0:
        return "rc.taps = 0"
    return "rc.mode = 'pulse'" if cfg["rc"]["mode"] == "pulse" else None


def _fec_off(cfg):
    return "fec.mode = 'off'" if cfg["fec"]["mode"] == "off" else None


def _package_none(cfg):
    return "package.preset = 'none'" if cfg["package"]["preset"] == "none" else None


def _dfe_none(cfg):
    if cfg["eq"]["detector"] == "dfe" and cfg["dfe"]["taps"] == 0:
        return "dfe.taps = 0"
    return None


Rule = Callable[[Any], "str | None"]

#: (section, keys, rule): the rule returns why the keys are not used, or None
RULES: list[tuple[str, tuple[str, ...], Rule]] = [
    ("channel", ("file",), _model_is_not("channel", "touchstone",
                                          hint="channel.model = 'touchstone' reads the file")),
    ("channel", ("ports",), _ports),
    ("channel", ("loss_db", "skin_fraction"), _model_is_not("channel", "loss")),
    ("ctle", ("g_dc_db", "g_dc2_db"), _ctle_gains),
    ("ctle", ("f_z_hz", "f_p1_hz", "f_p2_hz", "f_lf_hz"), _model_is_not("ctle", "ieee")),
    ("ctle", ("zeros_hz", "poles_hz", "gain"), _model_is_not("ctle", "zpk")),
    ("afe", ("f_r",), _model_is_not("afe", "butterworth", "both")),
    ("afe", ("peaking_m", "bandwidth_hz"), _model_is_not("afe", "shunt", "both")),
    ("package", tuple(k for k in SCHEMA["package"] if k != "preset"), _package_none),
    ("crosstalk", ("a_fe_v",), _aggressors_of("fext")),
    ("crosstalk", ("a_ne_v",), _aggressors_of("next")),
    ("noise", ("sj_hz",), _zero("noise", "sj_ui")),
    ("tx_jitter", ("sj_hz",), _zero("tx_jitter", "sj_ui")),
    ("cdr", tuple(k for k in SCHEMA["cdr"] if k != "mode"), _cdr_off),
    ("adc", ("offset_rms_v", "gain_rms", "skew_rms_s", "bw_rms_rel", "mismatch_seed"),
     _one_lane),
    ("adc_cal", tuple(k for k in SCHEMA["adc_cal"] if k != "enabled"), _cal_off),
    ("supply", tuple(SCHEMA["supply"]), _supply_reaches_nothing),
    ("dfe", ("limit",), _dfe_none),
    ("eq", ("mu", "train_symbols"), _not_lms),
    ("mlse", tuple(SCHEMA["mlse"]), _not_mlse),
    # (segment_z0_ohm and stub_lengths_mm need one value per segment / stub: refused)
    ("reflections", ("segment_eps_r", "segment_loss_db_per_mm"), _no_segments),
    ("reflections", ("stub_z0_ohm", "stub_eps_r", "stub_loss_db_per_mm"), _no_stubs),
    ("reflections", ("z_ref_ohm", "loss_ref_hz"), _no_cascade),
    ("reflections", ("echo_db", "echo_polarity"), _zero("reflections", "echo_delay_ui")),
    ("rc", ("span_ui", "mode"), _rc_off),
    ("rc", ("mu",), _rc_mu),
    ("rc", ("search_symbols",), _rc_search),
    ("fec", ("interleave", "target_post_fec_ber"), _fec_off),
]

#: [[aggressor]] keys that only one coupling model reads
AGGRESSOR_RULES: dict[str, tuple[str, ...]] = {
    "file": ("coupling_db", "delay_ui"),   # a file aggressor does not read these
    "copy": ("file", "ports"),             # a copy aggressor does not read these
}


def unused_settings(cfg, given=()) -> list[Unused]:
    """The keys of ``cfg`` set away from their defaults, or named in ``given`` (dotted:
    e.g. a sweep's axes), that its link does not use, in schema order, then the
    [[aggressor]] tables'."""
    out = []
    for section, keys, rule in RULES:
        changed = [k for k in keys if cfg[section][k] != SCHEMA[section][k].default
                   or f"{section}.{k}" in given]
        why = rule(cfg) if changed else None
        if why:
            out.extend(Unused(f"{section}.{k}", cfg[section][k], why) for k in changed)
    for i, table in enumerate(cfg.aggressors):
        for key in AGGRESSOR_RULES[table["model"]]:
            if table[key] != AGGRESSOR[key].default:
                out.append(Unused(f"aggressor[{i}].{key}", table[key],
                                  f"aggressor[{i}].model = {table['model']!r}"))
    order = {f"{s}.{k}": n for n, (s, k) in enumerate(
        (s, k) for s, keys in SCHEMA.items() for k in keys)}
    out.sort(key=lambda u: order.get(u.key, len(order)))
    return out


class PointView:
    """A sweep point read the way the rules read a config (``view[section][key]``,
    ``view.aggressors``): the base config's values with the point's over them, not
    validated (a point the config refuses fails in its own row); about 100 times cheaper
    than building the point's :class:`~serdes.config.Config`, for grids of many points."""

    def __init__(self, base: dict, aggressors: list, point: dict):
        self._base, self.aggressors = base, aggressors
        self._over: dict[str, dict] = {}
        for name, value in point.items():
            section, key = name.split(".")
            self._over.setdefault(section, {})[key] = value

    def __getitem__(self, section: str) -> dict:
        over = self._over.get(section)
        return {**self._base[section], **over} if over else self._base[section]


def unused_everywhere(configs, given=()) -> list[Unused]:
    """The settings unused in every config of ``configs`` (e.g. the points of a sweep;
    ``given`` as in :func:`unused_settings`), with the first config's values and reasons;
    stops early once none is left."""
    first, common = None, None
    for cfg in configs:
        found = unused_settings(cfg, given)
        keys = {u.key for u in found}
        if first is None:
            first, common = found, keys
        else:
            common &= keys
        if not common:
            return []
    return [u for u in (first or []) if u.key in common]
