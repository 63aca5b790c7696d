"""Validated link configuration: TOML in and out, `--set` overrides, the default link.

A configuration is a two-level mapping ``section -> key -> value``. Every key is
declared once in :data:`SCHEMA` with its type, default, allowed range and meaning;
anything else is refused with one line naming the key and what is allowed. Values
are SI units (Hz, s, V) except where the key name says otherwise (``_db``,
``_ui``, ``_v2_per_ghz``).

>>> cfg = Config.default().with_overrides(["channel.loss_db=30"])
>>> cfg["channel"]["loss_db"]
30.0
"""

from __future__ import annotations

import copy
import math
import os
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Iterable

from serdes.errors import ConfigError, FileFormatError

try:
    import tomllib
except ImportError:  # Python 3.10: the same parser as the tomli package
    import tomli as tomllib

#: Config files larger than this are refused before they are read.
MAX_CONFIG_BYTES = 1 << 20

PATTERNS = ("prbs7", "prbs9", "prbs11", "prbs13", "prbs15", "prbs23", "prbs31",
            "qprbs13", "random")


@dataclass(frozen=True)
class Field:
    """One configuration key: its type, default, allowed range and meaning."""

    kind: type  # float, int, bool, str or list (list of floats)
    default: Any
    doc: str
    lo: float | None = None
    hi: float | None = None
    choices: tuple[str, ...] | None = None
    length: tuple[int, int] | None = None  # allowed list lengths (min, max)

    def allowed(self) -> str:
        if self.choices is not None:
            return "one of " + ", ".join(repr(c) for c in self.choices)
        if self.kind is bool:
            return "true or false"
        if self.kind is list:
            n = self.length or (0, 1 << 30)
            return f"a list of {n[0]}..{n[1]} numbers"
        kind = "an integer" if self.kind is int else "a number"
        lo = "-inf" if self.lo is None else f"{self.lo:g}"
        hi = "inf" if self.hi is None else f"{self.hi:g}"
        return f"{kind} in [{lo}, {hi}]"

    def check(self, name: str, value: Any) -> Any:
        """Return the value converted to the field's type, or raise ConfigError."""
        bad = ConfigError(f"{name} = {value!r} is not allowed: expected {self.allowed()}")
        if self.kind is bool:
            if not isinstance(value, bool):
                raise bad
            return value
        if self.kind is str:
            if not isinstance(value, str) or (self.choices and value not in self.choices):
                raise bad
            return value
        if self.kind is list:
            if not isinstance(value, (list, tuple)):
                raise bad
            out = []
            for v in value:
                if isinstance(v, bool) or not isinstance(v, (int, float)) or not math.isfinite(v):
                    raise bad
                out.append(float(v))
            if self.length and not self.length[0] <= len(out) <= self.length[1]:
                raise bad
            return out
        if isinstance(value, bool) or not isinstance(value, (int, float)):
            raise bad
        if self.kind is int:
            if isinstance(value, float) and not value.is_integer():
                raise bad
            value = int(value)
        else:
            value = float(value)
            if not math.isfinite(value):
                raise bad
        if (self.lo is not None and value < self.lo) or (self.hi is not None and value > self.hi):
            raise bad
        return value


F = Field
SCHEMA: dict[str, dict[str, Field]] = {
    "link": {
        "symbol_rate_hz": F(float, 53.125e9, "symbol rate (Bd)", 1e8, 500e9),
        "modulation": F(str, "pam4", "line code", choices=("pam4", "nrz")),
        "pattern": F(str, "prbs31", "transmitted data pattern", choices=PATTERNS),
        "precoding": F(bool, False, "1/(1+D) mod M precoding at the TX, decoded at the RX"),
        "symbols": F(int, 4_000_000, "symbols to simulate at most", 1_000, 10**13),
        "target_errors": F(int, 1000, "stop once this many bit errors are counted (0: never)",
                           0, 10**12),
        "seed": F(int, 1, "seed of every random stream", 0, 2**63 - 1),
        "samples_per_ui": F(int, 32, "oversampling of the fine time grid", 8, 256),
        "pulse_ui": F(int, 64, "pulse response kept (UI); longer where a reflection "
                     "reaches past it (up to window_ui / 2)", 8, 4096),
        "window_ui": F(int, 1024, "FFT window of the linear model (UI); doubled while the "
                      "response reaches past it (up to 16384)", 64, 16384),
        "chunk_symbols": F(int, 1 << 16, "symbols per streamed chunk", 256, 1 << 24),
    },
    "tx": {
        "ffe": F(list, [0.0, 0.0, -0.05, 0.9, -0.05],
                 "TX FFE taps c(-3), c(-2), c(-1), c(0), c(1); sum of |c| at most 1",
                 length=(1, 16)),
        "main": F(int, 3, "index of the main tap c(0) in tx.ffe", 0, 15),
        "swing_v": F(float, 0.4, "peak differential amplitude: outer PAM levels at +-swing_v",
                     1e-3, 5.0),
        "rise_time_s": F(float, 6e-12, "20-80% rise time of the driver (Gaussian edge)",
                         0.0, 1e-9),
        "snr_db": F(float, 33.0, "TX signal-to-noise ratio SNR_TX", 0.0, 200.0),
        "rlm": F(float, 1.0, "PAM4 ratio of level mismatch (inner levels at +-rlm/3)", 0.5, 1.0),
    },
    "channel": {
        "model": F(str, "loss", "channel model", choices=("ideal", "loss", "touchstone")),
        "loss_db": F(float, 25.0, "loss model: insertion loss at Nyquist (dB)", 0.0, 60.0),
        "file": F(str, "", "touchstone model: path of a .s4p or .s2p file"),
        "ports": F(str, "12,34", "touchstone port convention: thru pairs",
                   choices=("12,34", "13,24")),
    },
    "ctle": {
        "model": F(str, "ieee", "CTLE form", choices=("ieee", "zpk", "none")),
        "g_dc_db": F(float, -8.0, "IEEE CTLE DC gain g_DC (dB)", -20.0, 0.0),
        "g_dc2_db": F(float, 0.0, "IEEE CTLE low-frequency gain g_DC2 (dB)", -6.0, 0.0),
        "f_z_hz": F(float, 0.0, "zero (0: f_b/2.5)", 0.0, 1e12),
        "f_p1_hz": F(float, 0.0, "first pole (0: f_b/2.5)", 0.0, 1e12),
        "f_p2_hz": F(float, 0.0, "second pole (0: f_b)", 0.0, 1e12),
        "f_lf_hz": F(float, 0.0, "low-frequency pole/zero (0: f_b/80)", 0.0, 1e12),
        "zeros_hz": F(list, [], "zpk model: zeros (Hz, s/2pi; real, <= 0)", length=(0, 16)),
        "poles_hz": F(list, [], "zpk model: poles (Hz, s/2pi; real, negative)", length=(0, 16)),
        "gain": F(float, 1.0, "zpk model: gain", 1e-6, 1e6),
    },
    "afe": {
        "peaking_m": F(float, 2.0, "shunt-peaking factor m = R^2 C / L (0: no inductor)",
                       0.0, 10.0),
        "bandwidth_hz": F(float, 40e9, "-3 dB bandwidth of the peaked AFE stage (0: no limit)",
                          0.0, 1e12),
    },
    "noise": {
        "eta0_v2_per_ghz": F(float, 8.2e-9, "RX input one-sided noise PSD (V^2/GHz)", 0.0, 1e-3),
        "rj_ui": F(float, 0.01, "random sampling jitter (rms UI)", 0.0, 0.2),
        "sj_ui": F(float, 0.0, "sinusoidal sampling jitter amplitude (UI); applied "
                   "untracked: the sampling phase is fixed (no CDR yet), so even slow SJ "
                   "moves every sample (0.1 UI at 1 MHz raises the default link's BER "
                   "about 60x)", 0.0, 2.0),
        "sj_hz": F(float, 1e6, "sinusoidal jitter frequency (not tracked: no CDR yet, see "
                   "noise.sj_ui); below link.symbol_rate_hz / 2 and not a fraction p/q "
                   "(q < 32) of the symbol rate (it would alias)", 0.0, 1e11),
        "dd_ui": F(float, 0.0, "dual-Dirac jitter: sampling instants moved by +-dd_ui UI, "
                   "equiprobable, the sign held for 4096 UI", 0.0, 0.5),
    },
    "adc": {
        "bits": F(int, 7, "ADC resolution (0: no quantizer; adc.enob noise still applies)", 0, 16),
        "fullscale_v": F(float, 0.5, "ADC full-scale range, peak to peak (V)", 1e-3, 10.0),
        "enob": F(float, 5.0, "effective bits; extra noise reaches it (0: no ENOB noise)", 0.0, 16.0),
        "clip_sigma": F(float, 4.0, "VGA target: ADC full scale = +-clip_sigma x rms input",
                        1.0, 20.0),
    },
    "ffe": {
        "taps": F(int, 24, "RX FFE taps", 1, 256),
        "pre": F(int, 4, "RX FFE pre-cursor taps", 0, 255),
    },
    "dfe": {
        "taps": F(int, 1, "DFE taps", 0, 64),
        "limit": F(float, 1.0, "largest |DFE tap| relative to the cursor", 0.0, 10.0),
    },
    "eq": {
        "mode": F(str, "mmse", "tap computation", choices=("mmse", "lms")),
        "mu": F(float, 1e-2, "normalised LMS step size", 1e-7, 0.5),
        "train_symbols": F(int, 200_000, "LMS training symbols (known data, not counted)",
                           0, 10**9),
        "detector": F(str, "dfe", "after the FFE (and RC): DFE + slicer, or noise "
                      "whitening + MLSE (Viterbi)", choices=("dfe", "mlse")),
    },
    "reflections": {
        # a T-line cascade in series with the channel model (serdes.channel.reflections)
        "segment_lengths_mm": F(list, [], "cascaded line segments: lengths (mm)",
                                length=(0, 32)),
        "segment_z0_ohm": F(list, [], "segments: characteristic impedances (ohm)",
                            length=(0, 32)),
        "segment_eps_r": F(list, [4.0], "segments: effective permittivity (one value: all)",
                           length=(1, 32)),
        "segment_loss_db_per_mm": F(list, [0.0], "segments: loss at loss_ref_hz (dB/mm; "
                                    "one value: all)", length=(1, 32)),
        "stub_positions": F(list, [], "open stubs (vias): junction of each, 0 = before the "
                            "first segment, n = after segment n", length=(0, 16)),
        "stub_lengths_mm": F(list, [], "stubs: lengths (mm)", length=(0, 16)),
        "stub_z0_ohm": F(list, [50.0], "stubs: characteristic impedances (ohm; one value: all)",
                         length=(1, 16)),
        "stub_eps_r": F(list, [4.0], "stubs: effective permittivity (one value: all)",
                        length=(1, 16)),
        "stub_loss_db_per_mm": F(list, [0.0], "stubs: loss at loss_ref_hz (dB/mm; one value: "
                                 "all)", length=(1, 16)),
        "z_ref_ohm": F(float, 50.0, "source and load impedance of the cascade", 1.0, 1000.0),
        "loss_ref_hz": F(float, 26.5625e9, "frequency of the segment/stub dB/mm values",
                         1e6, 1e12),
        "echo_delay_ui": F(float, 0.0, "simple echo: delay after the main pulse (UI; 0: none)",
                           0.0, 2000.0),
        "echo_db": F(float, -20.0, "simple echo: amplitude relative to the main pulse (dB)",
                     -100.0, -0.1),
        "echo_polarity": F(str, "positive", "simple echo: sign",
                           choices=("positive", "negative")),
    },
    "rc": {
        "taps": F(int, 0, "reflection canceller: floating taps (0: off)", 0, 64),
        "span_ui": F(int, 200, "latest echo the canceller reaches (UI after the cursor)",
                     2, 4096),
        "mode": F(str, "pulse", "tap placement: from the equalized pulse response (pulse) "
                  "or by error/decision correlation, then LMS (adaptive)",
                  choices=("pulse", "adaptive")),
        "mu": F(float, 2e-3, "normalised LMS step of the canceller taps (0: frozen)", 0.0, 0.5),
        "search_symbols": F(int, 16384, "adaptive mode: symbols of error/decision "
                            "correlation before the taps are placed", 256, 10**8),
    },
    "mlse": {
        "memory": F(int, 1, "channel memory L of the Viterbi target (4**L PAM4 states)", 1, 3),
        "whitening": F(str, "target", "noise whitening: an MMSE FFE for the best monic "
                       "1 + g1 D + .. target (target), or a linear MMSE FFE followed by the "
                       "order-L linear noise predictor (predictor)",
                       choices=("target", "predictor")),
        "traceback": F(int, 24, "decision delay of the Viterbi detector (symbols)", 1, 32),
    },
}


# nested TOML tables accepted as another name of a section: [channel.reflections]
ALIASES = {"channel.reflections": "reflections"}


def _unnest(data: dict[str, Any]) -> dict[str, Any]:
    """Lift nested tables named in ALIASES (e.g. [channel.reflections]) to their section."""
    out = {k: (dict(v) if isinstance(v, dict) else v) for k, v in data.items()}
    for dotted, target in ALIASES.items():
        outer, inner = dotted.split(".")
        table = out.get(outer)
        if isinstance(table, dict) and isinstance(table.get(inner), dict):
            out.setdefault(target, {})
            if not isinstance(out[target], dict):
                raise ConfigError(f"[{target}] must be a table of keys")
            out[target] = {**out[target], **table.pop(inner)}
    return out


class Config:
    """A validated configuration; index it as ``cfg[section][key]``."""

    def __init__(self, data: dict[str, dict[str, Any]] | None = None):
        merged = {s: {k: copy.deepcopy(f.default) for k, f in keys.items()}
                  for s, keys in SCHEMA.items()}
        for section, values in _unnest(data or {}).items():
            if section not in SCHEMA:
                raise ConfigError(f"unknown config section [{section}]: allowed sections are "
                                  + ", ".join(SCHEMA))
            if not isinstance(values, dict):
                raise ConfigError(f"[{section}] must be a table of keys")
            for key, value in values.items():
                merged[section][key] = _field(section, key).check(f"{section}.{key}", value)
        self._data = merged
        self._check_consistency()

    # -- construction -----------------------------------------------------------------
    @classmethod
    def default(cls) -> "Config":
        """The built-in 112G PAM4 link (53.125 GBd, 25 dB at Nyquist, 7-bit ADC)."""
        return cls()

    @classmethod
    def from_toml(cls, path: str | Path) -> "Config":
        """Read a TOML config file (UTF-8 text, at most 1 MB).

        A relative ``channel.file`` in the file is taken relative to the file's own
        folder (``--set channel.file=...`` on the command line stays relative to the
        current directory).
        """
        path = Path(path)
        text = _read_config_text(path)
        try:
            data = tomllib.loads(text)
        except tomllib.TOMLDecodeError as exc:
            raise FileFormatError(f"config {path} is not valid TOML: {exc}") from None
        channel = data.get("channel")
        if isinstance(channel, dict):
            file = channel.get("file")
            if isinstance(file, str) and file and not os.path.isabs(file):
                channel["file"] = os.path.abspath(path.parent / file)
        return cls(data)

    def with_overrides(self, assignments: Iterable[str]) -> "Config":
        """Apply ``section.key=value`` strings (value in TOML syntax, bare words as text)."""
        data = self.to_dict()
        for item in assignments:
            if "=" not in item:
                raise ConfigError(f"--set {item!r}: expected section.key=value")
            name, raw = item.split("=", 1)
            name = name.strip()
            for dotted, target in ALIASES.items():
                if name.startswith(dotted + "."):
                    name = target + name[len(dotted):]
            if name.count(".") != 1:
                raise ConfigError(f"--set {item!r}: expected section.key=value")
            section, key = name.split(".")
            if section not in SCHEMA:
                raise ConfigError(f"unknown config section [{section}]: allowed sections are "
                                  + ", ".join(SCHEMA))
            _field(section, key)
            data[section][key] = parse_value(raw)
        return Config(data)

    def replace(self, section: str, **values: Any) -> "Config":
        data = self.to_dict()
        data.setdefault(section, {}).update(values)
        return Config(data)

    # -- access -------------------------------------------------------------------------
    def __getitem__(self, section: str) -> dict[str, Any]:
        return self._data[section]

    def to_dict(self) -> dict[str, dict[str, Any]]:
        return copy.deepcopy(self._data)

    def to_toml(self) -> str:
        lines = []
        for section, values in self._data.items():
            lines.append(f"[{section}]")
            for key, value in values.items():
                lines.append(f"{key} = {_toml_value(value)}")
            lines.append("")
        return "\n".join(lines)

    def __eq__(self, other: object) -> bool:
        return isinstance(other, Config) and self._data == other._data

    # -- cross-key rules ----------------------------------------------------------------
    def _check_consistency(self) -> None:
        d = self._data
        ffe = d["tx"]["ffe"]
        if d["tx"]["main"] >= len(ffe):
            raise ConfigError(f"tx.main = {d['tx']['main']} must index a tap of tx.ffe "
                              f"(0..{len(ffe) - 1})")
        if sum(abs(c) for c in ffe) > 1.0 + 1e-9:
            raise ConfigError(f"tx.ffe = {ffe}: the sum of |taps| must be at most 1 "
                              "(peak-limited driver)")
        if ffe[d["tx"]["main"]] <= 0:
            raise ConfigError("tx.ffe: the main tap c(0) must be positive")
        if d["ffe"]["pre"] >= d["ffe"]["taps"]:
            raise ConfigError(f"ffe.pre = {d['ffe']['pre']} must be below ffe.taps = "
                              f"{d['ffe']['taps']}")
        if d["channel"]["model"] == "touchstone" and not d["channel"]["file"]:
            raise ConfigError("channel.file must name a .s4p or .s2p file when "
                              "channel.model = 'touchstone'")
        if d["adc"]["enob"] > d["adc"]["bits"] and d["adc"]["bits"] > 0:
            raise ConfigError(f"adc.enob = {d['adc']['enob']} cannot exceed adc.bits = "
                              f"{d['adc']['bits']}")
        if d["noise"]["sj_ui"] > 0 and d["noise"]["sj_hz"] <= 0:
            raise ConfigError("noise.sj_hz must be > 0 when noise.sj_ui > 0")
        if d["noise"]["sj_ui"] > 0:
            _check_sj(d)
        if d["ctle"]["model"] == "zpk" and not d["ctle"]["poles_hz"]:
            raise ConfigError("ctle.poles_hz must list at least one pole when ctle.model = 'zpk'")
        if any(z > 0 for z in d["ctle"]["zeros_hz"]):
            raise ConfigError(f"ctle.zeros_hz = {d['ctle']['zeros_hz']}: zeros must be <= 0 "
                              "(left half plane or origin; a right-half-plane zero is not a "
                              "minimum-phase CTLE)")
        if any(p >= 0 for p in d["ctle"]["poles_hz"]):
            raise ConfigError(f"ctle.poles_hz = {d['ctle']['poles_hz']}: poles must be negative "
                              "(left half plane)")
        _check_dsp(d)
        if d["link"]["pulse_ui"] > d["link"]["window_ui"] // 2:
            raise ConfigError(f"link.pulse_ui = {d['link']['pulse_ui']} must be at most half of "
                              f"link.window_ui = {d['link']['window_ui']}")


SJ_MIN_PHASES = 32  # sampled SJ must visit at least this many phases (statistical quadrature)


def _check_sj(d: dict) -> None:
    """Sinusoidal jitter is sampled once per UI. At or above half the symbol rate it aliases
    (at exactly f_b/2 the instants see +-A sin(phi0), at f_b a fixed offset A sin(phi0), set
    by the starting phase), and at a ratio sj_hz / symbol_rate = p/q with small q the run
    visits only q phases: the counted BER then depends on the random starting phase while
    the statistical engine averages over all phases. Both are refused."""
    fb = d["link"]["symbol_rate_hz"]
    f = d["noise"]["sj_hz"]
    if f >= fb / 2:
        raise ConfigError(f"noise.sj_hz = {f:g} aliases when sampled once per UI: it must be "
                          f"below link.symbol_rate_hz / 2 = {fb / 2:g}")
    r = f / fb
    n = d["link"]["symbols"]
    for q in range(2, SJ_MIN_PHASES):
        p = round(r * q)
        if p >= 1 and abs(r - p / q) * q * n < 1.0:
            raise ConfigError(f"noise.sj_hz = {f:g} is {p}/{q} of link.symbol_rate_hz: sampled "
                              f"once per UI it visits only {q} phases, so the result depends on "
                              f"the starting phase; move noise.sj_hz off rational fractions p/q "
                              f"of the symbol rate with q < {SJ_MIN_PHASES}")


def _check_dsp(d: dict) -> None:
    """Cross-key rules of the reflections, the reflection canceller and the MLSE."""
    r = d["reflections"]
    counts = {"segment_lengths_mm": len(r["segment_lengths_mm"]),
              "stub_positions": len(r["stub_positions"])}
    for key, owner, single_ok in (("segment_z0_ohm", "segment_lengths_mm", False),
                                  ("segment_eps_r", "segment_lengths_mm", True),
                                  ("segment_loss_db_per_mm", "segment_lengths_mm", True),
                                  ("stub_lengths_mm", "stub_positions", False),
                                  ("stub_z0_ohm", "stub_positions", True),
                                  ("stub_eps_r", "stub_positions", True),
                                  ("stub_loss_db_per_mm", "stub_positions", True)):
        n, k = counts[owner], len(r[key])
        if (n or not single_ok) and k != n and not (single_ok and k == 1):
            raise ConfigError(f"reflections.{key} has {k} values: it needs one per entry of "
                              f"reflections.{owner} ({n})"
                              + (" or a single value for all" if single_ok else ""))
    for key, lo, hi, unit in (("segment_lengths_mm", 0.0, 1e4, " mm"),
                              ("segment_z0_ohm", 1.0, 1000.0, " ohm"),
                              ("segment_eps_r", 1.0, 100.0, ""),
                              ("segment_loss_db_per_mm", 0.0, 10.0, " dB/mm"),
                              ("stub_lengths_mm", 0.0, 1e3, " mm"),
                              ("stub_z0_ohm", 1.0, 1000.0, " ohm"),
                              ("stub_eps_r", 1.0, 100.0, ""),
                              ("stub_loss_db_per_mm", 0.0, 10.0, " dB/mm")):
        if any(not lo <= v <= hi for v in r[key]):
            raise ConfigError(f"reflections.{key} = {r[key]}: each value must be in "
                              f"[{lo:g}, {hi:g}]{unit}")
    n_seg = counts["segment_lengths_mm"]
    if any(not float(v).is_integer() or not 0 <= v <= n_seg for v in r["stub_positions"]):
        raise ConfigError(f"reflections.stub_positions = {r['stub_positions']}: each must be "
                          f"a junction number in 0..{n_seg} (0 = before the first segment)")
    delay = r["echo_delay_ui"]
    pulse_ui = d["link"]["pulse_ui"]
    # the trimmed pulse keeps at most pulse_ui - pulse_ui // 4 UI from the cursor on, and
    # the echo brings a tail of its own
    if delay > 0 and pulse_ui - pulse_ui // 4 < delay + 8:
        need = 16 * math.ceil((delay + 8) * 4 / 3 / 16)
        raise ConfigError(f"link.pulse_ui = {pulse_ui} is too short to hold the echo at "
                          f"reflections.echo_delay_ui = {delay:g}: set link.pulse_ui to at "
                          f"least {need}")
    rc, ml, eq = d["rc"], d["mlse"], d["eq"]
    if eq["detector"] == "mlse":
        if eq["mode"] == "lms":
            raise ConfigError("eq.mode = 'lms' is not available with eq.detector = 'mlse': "
                              "use eq.mode = 'mmse'")
        if rc["taps"] and rc["mode"] == "adaptive":
            raise ConfigError("rc.mode = 'adaptive' is not available with eq.detector = "
                              "'mlse': use rc.mode = 'pulse'")
        first = ml["memory"] + 1
    else:
        first = d["dfe"]["taps"] + 1
    if rc["taps"] and rc["span_ui"] < first + rc["taps"] - 1:
        raise ConfigError(f"rc.span_ui = {rc['span_ui']} leaves no room for rc.taps = "
                          f"{rc['taps']}: the canceller reaches lags {first}..span_ui (after "
                          + ("the MLSE target memory mlse.memory)"
                             if eq["detector"] == "mlse" else "the DFE taps)"))


def _read_config_text(path: Path) -> str:
    """The text of a config file: a regular file of at most MAX_CONFIG_BYTES, UTF-8."""
    try:
        if not path.is_file():
            why = "no such file" if not path.exists() else "not a regular file"
            raise FileFormatError(f"cannot read config {path}: {why}")
        with open(path, "rb") as fh:
            data = fh.read(MAX_CONFIG_BYTES + 1)
    except OSError as exc:
        raise FileFormatError(f"cannot read config {path}: {exc.strerror}") from None
    if len(data) > MAX_CONFIG_BYTES:
        raise FileFormatError(f"config {path} is larger than {MAX_CONFIG_BYTES >> 20} MB: "
                              "not a link configuration")
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise FileFormatError(f"config {path} is not UTF-8 text (byte 0x{data[exc.start]:02x} "
                              f"at offset {exc.start}): a config is a TOML text file") from None


def _field(section: str, key: str) -> Field:
    try:
        return SCHEMA[section][key]
    except KeyError:
        allowed = ", ".join(SCHEMA[section])
        raise ConfigError(f"unknown config key {section}.{key}: [{section}] allows "
                          f"{allowed}") from None


def parse_value(raw: str) -> Any:
    """Parse a --set value as TOML (numbers, booleans, lists, quoted strings); bare words
    that are not TOML are taken as strings."""
    raw = raw.strip()
    try:
        return tomllib.loads(f"v = {raw}")["v"]
    except tomllib.TOMLDecodeError:
        return raw


def _toml_value(value: Any) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, str):
        return '"' + value.replace("\\", "\\\\").replace('"', '\\"') + '"'
    if isinstance(value, list):
        return "[" + ", ".join(_toml_value(v) for v in value) + "]"
    if isinstance(value, float):
        return repr(value)
    return str(value)
