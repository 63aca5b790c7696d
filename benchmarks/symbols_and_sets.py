"""The command line of the counting diagnostics: ``[SYMBOLS] [--set key=value ...]``."""

from __future__ import annotations


def symbols_and_sets(argv: list[str], symbols: int) -> tuple[int, list[str]]:
    """(symbols, settings): a bare number sets the symbols (default ``symbols``), each
    ``--set key=value`` adds a setting."""
    sets, i = [], 0
    while i < len(argv):
        if argv[i] == "--set" and i + 1 < len(argv):
            sets.append(argv[i + 1])
            i += 2
        else:
            symbols = int(float(argv[i]))
            i += 1
    return symbols, sets
