"""Errors meant for people: one line naming the thing and what is allowed."""


class SerdesError(Exception):
    """Base class of errors the CLI reports as one line with exit code 2."""


class ConfigError(SerdesError, ValueError):
    """A bad configuration key or value (names the key and the allowed range)."""


class FileFormatError(SerdesError, ValueError):
    """A missing or malformed input file (names the file and what is wrong)."""
