"""Shared by the subcommands: config options (a file, --set overrides, --seed) and strict
JSON output."""

from __future__ import annotations

import argparse
import math
import sys

from serdes.config import Config
from serdes.config_unused import unused_settings
from serdes.errors import ConfigError
from serdes.sweep.progress import Progress, _clock

DPI_RANGE = (10, 1200)


def add_config_options(p: argparse.ArgumentParser) -> None:
    p.add_argument("config", nargs="?", help="link configuration (TOML); default: built-in link")
    p.add_argument("--set", dest="overrides", action="append", default=[],
                   metavar="SECTION.KEY=VALUE", help="override one config key (repeatable)")
    p.add_argument("--seed", type=int, help="seed of every random stream (link.seed)")
    add_aggressor_options(p)


def add_cache_option(p: argparse.ArgumentParser) -> None:
    """--no-cache: the link build searches the CTLE gains (ctle.auto) again instead of
    taking this link's earlier choice from the on-disk cache (:mod:`serdes.buildcache`),
    which every command that builds a link shares."""
    p.add_argument("--no-cache", dest="cache", action="store_false", default=True,
                   help="search the CTLE gains (ctle.auto) again instead of taking this "
                        "link's earlier choice from the on-disk cache (SERDES_CACHE_DIR; "
                        "'off' turns it off)")


def add_aggressor_options(p: argparse.ArgumentParser) -> None:
    """--fext FILE / --next FILE (repeatable): crosstalk aggressors added to the config's
    [[aggressor]] tables, with the [crosstalk] and [tx] defaults."""
    p.add_argument("--fext", action="append", default=[], metavar="FILE",
                   help="a far-end crosstalk aggressor's Touchstone file, in the thru's port "
                        "layout (repeatable; swing crosstalk.a_fe_v)")
    p.add_argument("--next", action="append", default=[], metavar="FILE",
                   help="a near-end crosstalk aggressor's Touchstone file (repeatable; "
                        "swing crosstalk.a_ne_v)")


def apply_aggressor_options(cfg: Config, args: argparse.Namespace) -> Config:
    """The config with the --fext/--next files of ``args`` as [[aggressor]] tables (paths
    relative to the current directory)."""
    import os

    tables = [{"kind": kind, "file": os.path.abspath(f)}
              for kind in ("fext", "next") for f in (getattr(args, kind, None) or [])]
    return cfg.with_aggressors(tables) if tables else cfg


def load_config(args: argparse.Namespace, *, warn: bool = True) -> Config:
    """The config of ``args`` (--config, --set, --seed, --fext/--next); ``warn``: print a
    warning for each setting the link does not use (:mod:`serdes.config_unused`)."""
    cfg = Config.from_toml(args.config) if args.config else Config.default()
    overrides = list(args.overrides)
    if args.seed is not None:
        overrides.append(f"link.seed={args.seed}")
    cfg = cfg.with_overrides(overrides) if overrides else cfg
    cfg = apply_aggressor_options(cfg, args)
    if warn:
        warn_unused(unused_settings(cfg))
    return cfg


def warn_unused(unused) -> None:
    """One stderr line per :class:`~serdes.config_unused.Unused` setting."""
    for u in unused:
        print(f"serdes: warning: {u.text()}", file=sys.stderr)


def json_safe(obj):
    """The report with numpy scalars as Python numbers and non-finite floats (a quantity
    that does not apply, e.g. a ratio with no errors) as null, so it is strict JSON."""
    if isinstance(obj, dict):
        return {str(k): json_safe(v) for k, v in obj.items()}
    if isinstance(obj, (list, tuple)):
        return [json_safe(v) for v in obj]
    if hasattr(obj, "tolist"):  # numpy arrays and scalars
        return json_safe(obj.tolist())
    if isinstance(obj, float) and not math.isfinite(obj):
        return None
    return obj


def add_dpi_option(p: argparse.ArgumentParser, default: int = 120) -> None:
    lo, hi = DPI_RANGE
    p.add_argument("--dpi", type=int, default=default,
                   help=f"resolution of the image in dots per inch, {lo} to {hi} "
                        f"(default {default})")


def check_dpi(dpi: int) -> int:
    """--dpi of every image-writing command: the same range everywhere (a huge value
    would try to allocate gigabytes for the canvas)."""
    lo, hi = DPI_RANGE
    if not lo <= dpi <= hi:
        raise ConfigError(f"--dpi = {dpi}: expected an integer in [{lo}, {hi}]")
    return dpi


def check_writable(path) -> None:
    """An output file's path, checked before any work: its folder exists and is
    writable, and it is not a folder. Otherwise one line (a long run would end in an
    error only when it writes)."""
    import os
    from pathlib import Path

    p = Path(path)
    folder = p.parent if str(p.parent) else Path(".")
    if not folder.is_dir():
        raise ConfigError(f"cannot write {path}: folder {folder} does not exist")
    if not os.access(folder, os.W_OK):
        raise ConfigError(f"cannot write {path}: folder {folder} is not writable")
    if p.is_dir():
        raise ConfigError(f"cannot write {path}: it is a folder")


def check_figure_path(path) -> None:
    """An image path of the figure-writing commands: :func:`check_writable`, and a
    format matplotlib writes (the suffix; none: PNG)."""
    from pathlib import Path

    check_writable(path)
    ext = Path(path).suffix[1:].lower()
    if ext:
        from matplotlib.backend_bases import FigureCanvasBase

        kinds = FigureCanvasBase.get_supported_filetypes()
        if ext not in kinds:
            raise ConfigError(f"cannot write {path}: format '{ext}' is not supported "
                              f"(supported formats: {', '.join(sorted(kinds))})")


def check_executor_options(workers, scheduler, timeout, what: str = "points",
                           error=ConfigError) -> None:
    """--workers, --scheduler and --timeout of the commands that run on the sweep
    executors (``serdes sweep``, ``serdes jtol``): one line for each wrong combination."""
    if workers is not None and workers < 0:
        raise error(f"--workers {workers}: expected 0 (in this process) or more")
    if scheduler and workers is not None:
        raise error("--workers and --scheduler exclude each other: the cluster's "
                    f"workers run the {what}")
    if timeout is not None:
        if not scheduler:
            raise error("--timeout applies to --scheduler only")
        if not 0 < timeout <= 3600:   # also refuses NaN
            raise error(f"--timeout {timeout:g}: expected seconds in (0, 3600]")


def refuse_mlse(receiver, what: str) -> None:
    """The statistical engine and the slicer eye model an FFE + DFE (+ RC) slicer; with
    the Viterbi detector (``receiver``: a ReceiverSpec) there is no slicer whose input
    they could draw."""
    if receiver.detector == "mlse":
        raise ConfigError(
            f"eq.detector = mlse: {what} models an FFE + DFE slicer, not the Viterbi "
            "detector; use eq.detector=dfe, `serdes eye --kind analog` (the waveform "
            "before the DSP) or `serdes run` (counted BER of the MLSE)")


def add_progress_options(p: argparse.ArgumentParser) -> None:
    bar = p.add_mutually_exclusive_group()
    bar.add_argument("--progress", dest="progress", action="store_true", default=None,
                     help="always draw the progress line on stderr (default: only on a "
                          "terminal)")
    bar.add_argument("--no-progress", dest="progress", action="store_false",
                     help="never draw the progress line")


class ItemProgress(Progress):
    """The sweep's stderr progress line for any count (symbols, distributions, ...):
    ``bar(done)`` or ``bar(done, total)`` redraws it (at most ten times a second, only
    on a terminal unless ``enabled``); ``total=None`` shows the count without a bar.
    ``close()`` erases it."""

    def __init__(self, total: int | None, unit: str, *, label: str = "",
                 enabled: bool | None = None, stream=None):
        super().__init__(total or 0, stream=stream, enabled=enabled)
        self.total = total
        self.unit = unit
        self.label = label
        self._count_only = False     # drawing with no total (see draw)

    def __call__(self, done: int, total: int | None = None) -> None:
        if total is not None:
            self.total = total
        self.done = done
        self.draw()

    def tick(self, n: int = 1) -> None:
        self(self.done + n)

    def draw(self, force: bool = False) -> None:
        if self.total is None:
            # never "finished" (so rate-limited), and drawn as the count alone: the
            # stand-in total is not a bar's end
            self.total, self._count_only = self.done + 1, True
            try:
                super().draw(force)
            finally:
                self.total, self._count_only = None, False
        else:
            super().draw(force)

    def text(self) -> str:
        import time

        elapsed = time.monotonic() - self._t0
        head = f"{self.label}: " if self.label else ""
        stage = f"  {self.stage}" if self.stage else ""    # where a long item is
        if not self.total or self._count_only:
            return f"{head}{self.done:,} {self.unit}{stage}  {_clock(elapsed)} elapsed"
        frac = min(self.done / self.total, 1.0)
        fill = int(round(frac * self.width))
        bar = "#" * fill + "-" * (self.width - fill)
        eta = ("ETA 0:00" if frac >= 1 else
               f"ETA {_clock(elapsed * (1 - frac) / frac)}" if frac > 0 and elapsed > 0
               else "ETA --:--")
        return (f"{head}[{bar}] {self.done:,}/{self.total:,} {self.unit}{stage}  "
                f"{_clock(elapsed)} elapsed  {eta}")


def count_distributions(engine, bar: ItemProgress) -> None:
    """Tick ``bar`` for every slicer distribution the statistical engine computes (the
    unit of work of its eyes and bathtubs)."""
    compute = engine.distribution

    def counted(*args, **kwargs):
        out = compute(*args, **kwargs)
        bar.tick()
        return out

    engine.distribution = counted
