"""The ``serdes`` command.

Each subcommand lives in ``serdes/commands/<name>.py`` with ``add_parser(subparsers)``
and ``main(args) -> int``. Errors meant for people (:class:`serdes.errors.SerdesError`)
print one line to stderr and exit with code 2.
"""

from __future__ import annotations

import argparse
import gc
import importlib
import os
import sys

# BLAS threads (numpy's OpenBLAS or MKL), set before numpy loads it: every matrix here is
# small (MMSE and CTLE solves, the waveform noise's 9 x 16 products per block, COM's
# tables), so extra BLAS threads only spin beside the work, and beside our own worker
# processes (split runs, sweeps) they take the cores those need. Measured on 2 cores: a
# waveform-engine run split over 2 processes took 5.8-12.5 s against 3.9-4.2 s in one
# (2.0 s with one BLAS thread each); COM of DPO_12in with 2 aggressors 15.5-18.0 s wall,
# 25-29 s CPU against 13.0-13.2 s, 11.3-11.5 s. A value the user set is kept.
for _name in ("OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ.setdefault(_name, "1")

from serdes.errors import SerdesError, interrupted  # noqa: E402 - after the BLAS setting

COMMANDS = ("run", "eye", "bathtub", "sweep", "plot", "config", "com", "jtol", "adc",
            "precompile")
# Allocations between two young-generation collections while a command runs (Python's
# default: 700). A command's start-up creates about 120k long-lived objects (numba's
# type registries at its first kernel, our modules): with the default the collector
# walked them about 260 times, 0.12-0.19 s CPU of a 1.1-1.3 s short `serdes run`; with
# this threshold it does not run in a short run. Cyclic garbage is still collected.
GC_YOUNG_THRESHOLD = 200_000


class _Parser(argparse.ArgumentParser):
    argv: tuple = ()   # the top parser's command line (set by _main), for the hint below

    def error(self, message):  # argparse's own errors: one line, exit 2
        hint = _one_file_per_flag(self.argv, message)
        self.exit(2, f"serdes: error: {message}{hint}\n")


AGGRESSOR_FLAGS = ("--fext", "--next")


def _one_file_per_flag(argv, message: str) -> str:
    """The hint for files given after one --fext / --next flag (``--fext A B``: the flag
    takes one file, so B is left over), when every left-over word is such a file."""
    head = "unrecognized arguments: "
    if not message.startswith(head):
        return ""
    extra = set(message[len(head):].split())
    trailing, flag = set(), None
    for i, word in enumerate(argv):
        if word in AGGRESSOR_FLAGS:
            flag = i
        elif word.startswith("-"):
            flag = None
        elif flag is not None and i > flag + 1:
            trailing.add(word)
    if not extra or not extra <= trailing:
        return ""
    return " (--fext and --next take one file each: --fext A --fext B)"


def build_parser(only: str | None = None) -> argparse.ArgumentParser:
    """The parser of every command, or of the command ``only`` alone (what :func:`main`
    builds when the first argument names a command: the other commands' modules, and
    what they import for their help texts, stay unloaded)."""
    parser = _Parser(prog="serdes", description="112G PAM4 SerDes link simulator")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND", parser_class=_Parser)
    sub.required = True
    for name in COMMANDS if only is None else (only,):
        try:
            mod = importlib.import_module(f"serdes.commands.{name}")
        except ModuleNotFoundError as exc:
            if exc.name == f"serdes.commands.{name}":
                continue
            raise
        p = mod.add_parser(sub)
        p.set_defaults(_main=mod.main)
    return parser


def _show_warning(message, category, filename, lineno, file=None, line=None):
    """A warning on the command line: one line, ``serdes: warning: ...`` (Python's own
    form names our source file and line and repeats the code that warned)."""
    print(f"serdes: warning: {message}", file=sys.stderr if file is None else file)


def main(argv: list[str] | None = None) -> int:
    import warnings

    previous = gc.get_threshold()
    gc.set_threshold(GC_YOUNG_THRESHOLD, *previous[1:])
    shown = warnings.showwarning
    warnings.showwarning = _show_warning
    try:
        return _main(sys.argv[1:] if argv is None else list(argv))
    finally:  # a caller in this process (a test, a notebook) keeps its own settings
        gc.set_threshold(*previous)
        warnings.showwarning = shown


def _main(argv: list[str]) -> int:
    parser = build_parser(argv[0] if argv and argv[0] in COMMANDS else None)
    parser.argv = tuple(argv)   # "unrecognized arguments" is the top parser's error
    args = parser.parse_args(argv)
    try:
        return int(args._main(args) or 0)
    except SerdesError as exc:
        print(f"serdes: error: {exc}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        print("serdes: interrupted", file=sys.stderr)
        return 130
    except SystemError as exc:   # a Ctrl-C inside a compiled kernel's Python callback
        if not interrupted(exc):
            raise
        print("serdes: interrupted", file=sys.stderr)
        return 130
    except BrokenPipeError:  # the reader went away (serdes config --keys | head)
        import os

        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        return 0


# Commands whose every output is written and closed when main returns (stdout and
# stderr aside): their process may end without the interpreter's teardown.
QUICK_EXIT = ("run",)


def console() -> None:
    """The ``serdes`` command line (the installed script, ``python -m serdes.cli``):
    :func:`main`, then, for the commands in :data:`QUICK_EXIT`, the process ends at once
    with the flushed output instead of through the interpreter's teardown (freeing
    numba's compiled libraries, its registries and our modules, about 120k objects: 0.55-0.75
    s CPU after a 1.8 s short ``serdes run``, a third of it). Other commands, and a
    command that raised, exit as usual."""
    rc = main()
    if sys.argv[1:2] and sys.argv[1] in QUICK_EXIT:
        import os

        for stream in (sys.stdout, sys.stderr):
            try:
                stream.flush()
            except BrokenPipeError:  # the reader went away (as main handles it)
                pass
            except (OSError, ValueError):  # output lost: fail as Python's exit would
                rc = rc or 120
        os._exit(rc)
    sys.exit(rc)


if __name__ == "__main__":  # pragma: no cover
    console()
