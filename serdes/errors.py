"""Errors meant for people: one line naming the thing and what is allowed."""


class SerdesError(Exception):
    """Base class of errors the CLI reports as one line with exit code 2."""


class ConfigError(SerdesError, ValueError):
    """A bad configuration key or value (names the key and the allowed range)."""


class FileFormatError(SerdesError, ValueError):
    """A missing or malformed input file (names the file and what is wrong)."""


class SchedulerError(SerdesError):
    """A Dask scheduler that cannot be used (no Dask installed, a bad address, no
    answer), for a sweep's or a split run's ``--scheduler``."""


def interrupted(exc: BaseException) -> bool:
    """A Ctrl-C: a KeyboardInterrupt, or the error a compiled caller raises when one
    arrives inside a Python callback it made (numba: ``SystemError: ... returned a result
    with an exception set``, the KeyboardInterrupt its cause)."""
    seen = set()
    while exc is not None and id(exc) not in seen:
        if isinstance(exc, KeyboardInterrupt):
            return True
        seen.add(id(exc))
        exc = exc.__cause__ or exc.__context__
    return False


def require_nonnegative(obj, names, prefix: str = "") -> None:
    """ConfigError naming ``prefix + name`` unless each attribute is finite and >= 0."""
    import math

    for name in names:
        v = getattr(obj, name)
        if not (math.isfinite(v) and v >= 0):
            raise ConfigError(f"{prefix}{name} = {v!r}: must be a finite number >= 0")
