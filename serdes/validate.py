"""Argument checks shared by the design functions: one-line ConfigErrors."""

from __future__ import annotations

import math

import numpy as np

from serdes.errors import ConfigError


def freq_array(f_hz) -> np.ndarray:
    """f_hz as a float64 array; every value finite and >= 0."""
    arr = np.asarray(f_hz)
    if np.iscomplexobj(arr):
        raise ConfigError("f_hz is complex; allowed real frequencies >= 0 Hz")
    try:
        arr = arr.astype(np.float64, copy=False)
    except (TypeError, ValueError):
        raise ConfigError(f"f_hz of dtype {arr.dtype} is not numeric; allowed real "
                          "frequencies >= 0 Hz") from None
    if arr.size:
        bad = ~np.isfinite(arr) | (arr < 0.0)
        if bad.any():
            raise ConfigError(f"f_hz contains {float(arr[bad].flat[0])!r}; allowed finite "
                              "frequencies >= 0 Hz")
    return arr


def finite_float(name: str, value, allowed: str) -> float:
    """value as a finite float, or a ConfigError naming it and what is allowed."""
    try:
        x = float(value)
    except (TypeError, ValueError):
        raise ConfigError(f"{name}={value!r} is not a number; allowed {allowed}") from None
    if not math.isfinite(x):
        raise ConfigError(f"{name}={x!r} is not finite; allowed {allowed}")
    return x


def float_in(name: str, value, allowed: str, *, above: float | None = None,
             at_least: float | None = None) -> float:
    """value as a finite float that is > ``above`` or >= ``at_least``, else one
    ConfigError naming it and what is ``allowed``."""
    x = finite_float(name, value, allowed)
    if (above is not None and not x > above) or (at_least is not None and not x >= at_least):
        raise ConfigError(f"{name}={x!r} is out of range; allowed {allowed}")
    return x


def whole_number(name: str, v, lo: int, hi: int) -> int:
    """A count given to the library (symbols, errors, chunk, seed, threads, taps): an
    integer, or a float with a whole value (1e6), in lo..hi; else a one-line ConfigError
    (int() had truncated 2.5, turned 0 or -1 into an empty run and NaN into a
    ValueError)."""
    ok = not isinstance(v, (bool, np.bool_)) and (
        isinstance(v, (int, np.integer))
        or (isinstance(v, (float, np.floating)) and np.isfinite(v) and float(v).is_integer()))
    if not ok or not lo <= int(v) <= hi:
        raise ConfigError(f"{name} = {v!r}: expected a whole number in [{lo:,}, {hi:,}]")
    return int(v)
