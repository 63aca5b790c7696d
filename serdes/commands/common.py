"""Options shared by the subcommands: a config file, --set overrides, --seed."""

from __future__ import annotations

import argparse

from serdes.config import Config


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
