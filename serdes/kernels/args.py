"""Argument checks shared by the public kernel wrappers (plain Python, no numba).

Every public wrapper in serdes.kernels converts its inputs with these helpers before
calling the private @njit kernel, so that each kernel sees one array type only
(contiguous, writeable, float64 / int64 / uint8) and compiles one specialization, and
a wrong input is a one-line :class:`serdes.errors.ConfigError` naming the argument
instead of a numba typing error or a silently wrong number.

Inputs are copied only when they are not already of the right kind. State arrays (that
a kernel updates in place) are never copied: :func:`state` refuses them instead.
"""

from __future__ import annotations

import numpy as np

from serdes.errors import ConfigError


def array(name: str, x, dtype=np.float64, ndim: int = 1, finite: bool = False,
          min_len: int = 0) -> np.ndarray:
    """x as a C-contiguous, writeable array of ``dtype`` with ``ndim`` dimensions."""
    if type(x) is np.ndarray and x.dtype == dtype and x.flags.c_contiguous \
            and x.flags.writeable:
        a = x
    else:
        try:
            a = np.array(x, dtype=dtype, order="C", copy=True)
        except (TypeError, ValueError, OverflowError):
            raise ConfigError(f"{name}: expected numbers convertible to "
                              f"{np.dtype(dtype).name}, got {_what(x)}") from None
    if a.ndim != ndim:
        raise ConfigError(f"{name}: expected a {ndim}-D array, got shape {a.shape}")
    if ndim == 1 and a.shape[0] < min_len:
        raise ConfigError(f"{name}: needs at least {min_len} values, got {a.shape[0]}")
    if finite and a.dtype.kind == "f" and not np.isfinite(a).all():
        raise ConfigError(f"{name}: values must be finite")
    return a


def state(name: str, x, dtype=np.float64, size: int | None = None) -> np.ndarray:
    """A state array the kernel updates in place: must already be a 1-D, C-contiguous,
    writeable array of ``dtype`` (of ``size`` elements when given); never copied."""
    if not isinstance(x, np.ndarray) or x.dtype != dtype or x.ndim != 1 \
            or not x.flags.c_contiguous or not x.flags.writeable:
        raise ConfigError(f"{name}: state must be a writeable contiguous 1-D "
                          f"{np.dtype(dtype).name} array, got {_what(x)}")
    if size is not None and x.shape[0] != size:
        raise ConfigError(f"{name}: state needs {size} values, got {x.shape[0]}")
    return x


def integer(name: str, v, lo: int | None = None, hi: int | None = None) -> int:
    """v as a Python int in lo..hi."""
    if isinstance(v, (bool, np.bool_)) or not isinstance(v, (int, np.integer)):
        raise ConfigError(f"{name}: expected an integer, got {v!r}")
    v = int(v)
    if (lo is not None and v < lo) or (hi is not None and v > hi):
        raise ConfigError(f"{name}: must be in {lo if lo is not None else '-inf'}.."
                          f"{hi if hi is not None else 'inf'}, got {v}")
    return v


def real(name: str, v, positive: bool = False, nonneg: bool = False) -> float:
    """v as a finite Python float (> 0 with ``positive``, >= 0 with ``nonneg``)."""
    try:
        f = float(v)
    except (TypeError, ValueError):
        raise ConfigError(f"{name}: expected a number, got {v!r}") from None
    if not np.isfinite(f):
        raise ConfigError(f"{name}: must be finite, got {v!r}")
    if positive and not f > 0.0:
        raise ConfigError(f"{name}: must be > 0, got {v!r}")
    if nonneg and not f >= 0.0:
        raise ConfigError(f"{name}: must be >= 0, got {v!r}")
    return f


def _what(x) -> str:
    if isinstance(x, np.ndarray):
        flags = "" if x.flags.writeable else " read-only"
        flags += "" if x.flags.c_contiguous else " strided"
        return f"{x.dtype} array of shape {x.shape}{flags}"
    return type(x).__name__
