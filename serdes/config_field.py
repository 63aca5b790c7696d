"""One configuration key's declaration (:class:`Field`): type, default, allowed range,
meaning, and the check that converts a given value or raises a one-line ConfigError."""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

from serdes.errors import ConfigError


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
        if self.choices is not None and self.kind is not bool:
            return "one of " + ", ".join(repr(c) for c in self.choices)
        if self.kind is bool:
            extra = "".join(f", or {c!r}" for c in self.choices or ())
            return "true or false" + extra
        if self.kind is str:
            return "a string (a file path)" if "path" in self.doc else "a string"
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
        if self.kind is bool:  # choices: words allowed besides true/false ("auto")
            if not (isinstance(value, bool) or (self.choices and value in self.choices)):
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
