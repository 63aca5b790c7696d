"""Shared by the subcommands: config options (a file, --set overrides, --seed) and strict
JSON output."""

from __future__ import annotations

import argparse
import math

from serdes.config import Config
from serdes.errors import ConfigError

DPI_RANGE = (10, 1200)


def add_config_options(p: argparse.ArgumentParser) -> None:
    p.add_argument("config", nargs="?", help="link configuration (TOML); default: built-in link")
    p.add_argument("--set", dest="overrides", action="append", default=[],
                   metavar="SECTION.KEY=VALUE", help="override one config key (repeatable)")
    p.add_argument("--seed", type=int, help="seed of every random stream (link.seed)")


def load_config(args: argparse.Namespace) -> Config:
    cfg = Config.from_toml(args.config) if args.config else Config.default()
    overrides = list(args.overrides)
    if args.seed is not None:
        overrides.append(f"link.seed={args.seed}")
    return cfg.with_overrides(overrides) if overrides else cfg


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


def refuse_mlse(cfg, what: str) -> None:
    """The statistical engine and the slicer eye model an FFE + DFE (+ RC) slicer; with
    the Viterbi detector there is no slicer whose input they could draw."""
    if cfg["eq"]["detector"] == "mlse":
        raise ConfigError(
            f"eq.detector = mlse: {what} models an FFE + DFE slicer, not the Viterbi "
            "detector; use eq.detector=dfe, `serdes eye --kind analog` (the waveform "
            "before the DSP) or `serdes run` (counted BER of the MLSE)")
