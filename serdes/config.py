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
import os
from pathlib import Path
from typing import Any, Iterable

from serdes.config_rules import check_consistency
from serdes.errors import ConfigError, FileFormatError
from serdes.schema import AGGRESSOR, ALIASES, PATTERNS, SCHEMA, Field  # noqa: F401 (re-exported)

try:
    import tomllib
except ImportError:  # Python 3.10: the same parser as the tomli package
    import tomli as tomllib

#: Config files larger than this are refused before they are read.
MAX_CONFIG_BYTES = 1 << 20

__all__ = ["ALIASES", "Config", "Field", "MAX_CONFIG_BYTES", "PATTERNS", "SCHEMA", "parse_value"]

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
        data = dict(data or {})
        aggressors = _aggressors(data.pop("aggressor", []))
        for section, values in _unnest(data).items():
            if section not in SCHEMA:
                raise ConfigError(f"unknown config section [{section}]: allowed sections are "
                                  + ", ".join(SCHEMA))
            if not isinstance(values, dict):
                raise ConfigError(f"[{section}] must be a table of keys")
            for key, value in values.items():
                merged[section][key] = _field(section, key).check(f"{section}.{key}", value)
        self._data = merged
        self._aggressors = aggressors
        check_consistency(self._data)

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
        tables = [channel] + list(data.get("aggressor", [])
                                  if isinstance(data.get("aggressor"), list) else [])
        for table in tables:
            if isinstance(table, dict):
                file = table.get("file")
                if isinstance(file, str) and file and not os.path.isabs(file):
                    table["file"] = os.path.abspath(path.parent / file)
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

    def with_aggressors(self, tables: Iterable[dict[str, Any]]) -> "Config":
        """The config with these [[aggressor]] tables added after its own."""
        data = self.to_dict()
        data["aggressor"] = data.get("aggressor", []) + [dict(t) for t in tables]
        return Config(data)

    @property
    def aggressors(self) -> list[dict[str, Any]]:
        """The [[aggressor]] tables, every key filled in (:data:`AGGRESSOR`)."""
        return copy.deepcopy(self._aggressors)

    def replace(self, section: str, **values: Any) -> "Config":
        data = self.to_dict()
        data.setdefault(section, {}).update(values)
        return Config(data)

    # -- access -------------------------------------------------------------------------
    def __getitem__(self, section: str) -> dict[str, Any]:
        return self._data[section]

    def to_dict(self) -> dict[str, Any]:
        out = copy.deepcopy(self._data)
        if self._aggressors:
            out["aggressor"] = copy.deepcopy(self._aggressors)
        return out

    def to_toml(self) -> str:
        lines = []
        for section, values in self._data.items():
            lines.append(f"[{section}]")
            for key, value in values.items():
                lines.append(f"{key} = {_toml_value(value)}")
            lines.append("")
        for table in self._aggressors:
            lines.append("[[aggressor]]")
            lines.extend(f"{key} = {_toml_value(value)}" for key, value in table.items())
            lines.append("")
        return "\n".join(lines)

    def __eq__(self, other: object) -> bool:
        return (isinstance(other, Config) and self._data == other._data
                and self._aggressors == other._aggressors)


def _aggressors(tables: Any) -> list[dict[str, Any]]:
    """The [[aggressor]] tables validated against :data:`AGGRESSOR`, defaults filled in."""
    if not isinstance(tables, list) or not all(isinstance(t, dict) for t in tables):
        raise ConfigError("aggressor must be an array of tables ([[aggressor]] in TOML)")
    out = []
    for i, table in enumerate(tables):
        full = {k: copy.deepcopy(f.default) for k, f in AGGRESSOR.items()}
        for key, value in table.items():
            if key not in AGGRESSOR:
                raise ConfigError(f"unknown config key aggressor[{i}].{key}: [[aggressor]] "
                                  "allows " + ", ".join(AGGRESSOR))
            full[key] = AGGRESSOR[key].check(f"aggressor[{i}].{key}", value)
        if full["model"] == "file" and not full["file"]:
            raise ConfigError(f"aggressor[{i}].file is empty: a file aggressor needs its "
                              "Touchstone file (or model = \"copy\")")
        out.append(full)
    return out


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
