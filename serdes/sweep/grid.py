"""Parameter grids: ``--grid`` / ``--zip`` parsing, points, their ids and seeds.

A grid is a list of axes. An axis is one config key with its values
(``--grid channel.loss_db=10:30:5``) or several keys zipped value by value
(``--zip ffe.taps=8,16,24 --zip ffe.pre=2,3,4``: all ``--zip`` options form one axis).
The points are the Cartesian product of the axes, the last axis varying fastest.

Value specs (each item of a comma-separated list is a value or a range)::

    10:30:5          10, 15, 20, 25, 30 (STOP is included when the steps reach it)
    30:10:-10        30, 20, 10
    4e-9,8e-9,16e-9  a list; values in TOML syntax, bare words are text
    10:20:5,25,40    ranges and values mixed
    [0.1, 0.8],[0.0, 0.9]   list-valued keys (tx.ffe) in brackets

Every value is checked against the key's declared range when the grid is parsed, so a
bad grid fails before any point runs, with one line naming the option and the value.

A point's identity is the canonical text of its sorted ``key=value`` pairs; its id is a
hash of that text and its seed is drawn with :class:`numpy.random.SeedSequence` from
the config seed and the same hash. Neither depends on the order the points run in, on
the number of workers, or on the other points of the grid.
"""

from __future__ import annotations

import hashlib
import itertools
import json
import math
from dataclasses import dataclass
from typing import Any, Iterable, Iterator, Sequence

import numpy as np

from serdes.config import SCHEMA, Field, parse_value
from serdes.errors import ConfigError, SerdesError

MAX_AXIS = 100_000       # values of one axis
MAX_POINTS = 10_000_000  # points of a grid


class SweepError(SerdesError):
    """A sweep that cannot run: result file of another sweep, unreachable scheduler..."""


@dataclass(frozen=True)
class Axis:
    """One grid axis: ``keys`` swept together, ``values[i]`` holds one value per key."""

    keys: tuple[str, ...]
    values: tuple[tuple[Any, ...], ...]

    def __len__(self) -> int:
        return len(self.values)


class Grid:
    """The Cartesian product of axes; iterating gives points ``{key: value}``."""

    def __init__(self, axes: Sequence[Axis]):
        self.axes = tuple(axes)
        seen: set[str] = set()
        for ax in self.axes:
            for key in ax.keys:
                if key in seen:
                    raise ConfigError(f"{key} is swept twice: give each key in one --grid "
                                      "or --zip only")
                seen.add(key)
        if not self.axes:
            raise ConfigError("an empty grid: give at least one --grid or --zip")
        if len(self) > MAX_POINTS:
            raise ConfigError(f"the grid has {len(self):,} points; at most {MAX_POINTS:,} "
                              "are allowed in one sweep")

    @classmethod
    def parse(cls, grids: Iterable[str] = (), zips: Iterable[str] = ()) -> "Grid":
        """A grid from ``--grid`` strings and ``--zip`` strings (one zipped axis, placed
        after the ``--grid`` axes). :func:`parse_specs` keeps the command-line order."""
        specs = [("grid", g) for g in grids] + [("zip", z) for z in zips]
        return parse_specs(specs)

    @property
    def keys(self) -> tuple[str, ...]:
        return tuple(k for ax in self.axes for k in ax.keys)

    def __len__(self) -> int:
        return math.prod(len(ax) for ax in self.axes)

    def __iter__(self) -> Iterator[dict[str, Any]]:
        for combo in itertools.product(*(ax.values for ax in self.axes)):
            point: dict[str, Any] = {}
            for ax, vals in zip(self.axes, combo):
                point.update(zip(ax.keys, vals))
            yield point

    def __repr__(self) -> str:
        return (f"Grid({len(self)} points: "
                + " x ".join(f"{'+'.join(ax.keys)}[{len(ax)}]" for ax in self.axes) + ")")


def parse_specs(specs: Iterable[tuple[str, str]]) -> Grid:
    """A grid from ``(kind, "section.key=values")`` pairs, kind ``"grid"`` or ``"zip"``.
    The zipped axis takes the place of the first ``--zip``."""
    axes: list[Axis | None] = []
    zipped: list[tuple[str, list[Any]]] = []
    zip_at = None
    for kind, spec in specs:
        key, values = parse_axis(spec, option=f"--{kind}")
        if kind == "zip":
            if zip_at is None:
                zip_at = len(axes)
                axes.append(None)
            zipped.append((key, values))
        else:
            axes.append(Axis((key,), tuple((v,) for v in values)))
    if zipped:
        lengths = {len(v) for _, v in zipped}
        if len(lengths) > 1:
            desc = ", ".join(f"{k} has {len(v)}" for k, v in zipped)
            raise ConfigError(f"--zip lists must have the same length: {desc}")
        keys = tuple(k for k, _ in zipped)
        rows = tuple(zip(*(v for _, v in zipped)))
        if len({canonical(dict(zip(keys, r))) for r in rows}) < len(rows):
            raise ConfigError("--zip: the zipped lists repeat a combination of values")
        axes[zip_at] = Axis(keys, rows)
    return Grid([ax for ax in axes if ax is not None])


def parse_axis(spec: str, option: str = "--grid") -> tuple[str, list[Any]]:
    """``"section.key=values"`` -> (key, checked values); raises ConfigError."""
    if "=" not in spec:
        raise ConfigError(f"{option} {spec!r}: expected section.key=VALUES "
                          "(START:STOP:STEP or v1,v2,...)")
    name, text = (s.strip() for s in spec.split("=", 1))
    fld = lookup(name, option)
    if not text:
        raise ConfigError(f"{option} {name}: no values given")
    values: list[Any] = []
    for item in split_items(text, f"{option} {name}"):
        raw = _expand(name, item, fld, option) if _is_range(item, fld) else [parse_value(item)]
        for v in raw:
            try:
                values.append(fld.check(name, v))
            except ConfigError as exc:
                raise ConfigError(f"{option} {name}={text}: {exc}") from None
        if len(values) > MAX_AXIS:
            raise ConfigError(f"{option} {name}={text}: more than {MAX_AXIS:,} values")
    seen: set[str] = set()
    for v in values:
        c = canonical_value(v)
        if c in seen:
            raise ConfigError(f"{option} {name}={text}: the value {c} is repeated")
        seen.add(c)
    return name, values


def lookup(name: str, option: str = "--grid") -> Field:
    """The schema field of ``section.key``, or a one-line ConfigError."""
    if name.count(".") != 1:
        raise ConfigError(f"{option} {name!r}: expected section.key, e.g. channel.loss_db")
    section, key = name.split(".")
    if section not in SCHEMA:
        raise ConfigError(f"{option}: unknown config section [{section}]: allowed sections "
                          "are " + ", ".join(SCHEMA))
    if key not in SCHEMA[section]:
        raise ConfigError(f"{option}: unknown config key {name}: [{section}] allows "
                          + ", ".join(SCHEMA[section]))
    return SCHEMA[section][key]


def split_items(text: str, what: str) -> list[str]:
    """Split at commas outside brackets and quotes."""
    items, depth, quote, cur = [], 0, "", []
    for ch in text:
        if quote:
            if ch == quote:
                quote = ""
        elif ch in "\"'":
            quote = ch
        elif ch == "[":
            depth += 1
        elif ch == "]":
            depth -= 1
            if depth < 0:
                raise ConfigError(f"{what}: unbalanced ']' in {text!r}")
        elif ch == "," and depth == 0:
            items.append("".join(cur).strip())
            cur = []
            continue
        cur.append(ch)
    if depth or quote:
        raise ConfigError(f"{what}: unbalanced brackets or quotes in {text!r}")
    items.append("".join(cur).strip())
    if any(not it for it in items):
        raise ConfigError(f"{what}: empty value in {text!r}")
    return items


def _is_range(item: str, fld: Field) -> bool:
    return fld.kind in (int, float) and ":" in item


def _expand(name: str, item: str, fld: Field, option: str) -> list[float]:
    parts = item.split(":")
    where = f"{option} {name}={item}"
    if len(parts) != 3:
        raise ConfigError(f"{where}: a range is START:STOP:STEP (three numbers)")
    nums = []
    for label, p in zip(("START", "STOP", "STEP"), parts):
        try:
            x = float(p)
        except ValueError:
            raise ConfigError(f"{where}: {label} {p.strip()!r} is not a number") from None
        if not math.isfinite(x):
            raise ConfigError(f"{where}: {label} must be finite")
        nums.append(x)
    start, stop, step = nums
    if step == 0:
        raise ConfigError(f"{where}: STEP must not be 0")
    span = (stop - start) / step
    if span < -1e-9:
        raise ConfigError(f"{where}: empty range (STOP is on the wrong side of START for "
                          "this STEP)")
    n = int(math.floor(span + 1e-9)) + 1
    if n > MAX_AXIS:
        raise ConfigError(f"{where}: {n:,} values; at most {MAX_AXIS:,} in one axis")
    # rounded to 12 significant digits so that 0.1 steps give 0.3, not 0.30000000000000004
    vals = [float(f"{start + i * step:.12g}") for i in range(n)]
    if fld.kind is int:
        return [int(v) if v.is_integer() else v for v in vals]
    return vals


# -- identity and seeds ---------------------------------------------------------------
def canonical_value(v: Any) -> str:
    """A stable text for a checked config value (float 20 and 20.0 give the same text)."""
    if isinstance(v, bool):
        return "true" if v else "false"
    if isinstance(v, int):
        return str(v)
    if isinstance(v, float):
        return repr(v)
    if isinstance(v, str):
        return json.dumps(v)
    if isinstance(v, (list, tuple)):
        return "[" + ", ".join(canonical_value(x) for x in v) + "]"
    raise TypeError(f"unsupported config value {v!r}")


def canonical(point: dict[str, Any]) -> str:
    """The canonical text of a point: its sorted ``key=value`` pairs, each value in its
    key's declared type (so ``20`` and ``20.0`` of a float key are the same point)."""
    return ";".join(f"{k}={canonical_value(_typed(k, point[k]))}" for k in sorted(point))


def _typed(name: str, value: Any) -> Any:
    section, _, key = name.partition(".")
    fld = SCHEMA.get(section, {}).get(key)
    if fld is None:
        return value
    try:
        return fld.check(name, value)
    except ConfigError:
        return value


def _digest(point: dict[str, Any]) -> bytes:
    return hashlib.sha256(canonical(point).encode()).digest()


def point_id(point: dict[str, Any]) -> str:
    """A short stable id of a point (16 hex digits of the hash of its canonical text)."""
    return _digest(point).hex()[:16]


def point_seed(config_seed: int, point: dict[str, Any]) -> int:
    """The seed of a point: ``SeedSequence`` of the config seed and the point's hash,
    as a non-negative 63-bit integer (a valid ``link.seed``)."""
    h = _digest(point)
    words = [int.from_bytes(h[i:i + 4], "little") for i in range(0, 32, 4)]
    ss = np.random.SeedSequence([int(config_seed)] + words)
    return int(ss.generate_state(1, dtype=np.uint64)[0] >> np.uint64(1))


def sweep_id(base: dict[str, dict[str, Any]], keys: Iterable[str], engine: str,
             stat: bool, com: tuple | None = None) -> str:
    """Identity of a sweep: the base config less the swept keys, the swept keys, the
    engine and --stat. A result file holds the rows of one sweep."""
    keys = sorted(keys)
    data = {s: ({k: canonical_value(v) for k, v in vals.items() if f"{s}.{k}" not in keys}
                if isinstance(vals, dict) else vals)   # [[aggressor]] tables: a list
            for s, vals in base.items()}
    ident = {"config": data, "keys": keys, "engine": engine, "stat": bool(stat)}
    if com is not None:   # COM columns (preset, overrides): another sweep
        ident["com"] = [com[0], list(com[1])]
    text = json.dumps(ident, sort_keys=True)
    return hashlib.sha256(text.encode()).hexdigest()[:12]
