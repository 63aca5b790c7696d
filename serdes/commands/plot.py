"""``serdes plot``: curves of a sweep's result file (BER waterfalls on a log axis)."""

from __future__ import annotations

from pathlib import Path

from serdes.commands.common import add_dpi_option, check_dpi, check_figure_path
from serdes.errors import SerdesError


def add_parser(sub):
    p = sub.add_parser(
        "plot", help="draw curves of a sweep result file (BER waterfalls)",
        description="Draw one curve of a result column against a swept key per value of "
                    "another key: BER on a log axis with 95% confidence intervals as error "
                    "bars and the KP4 FEC limit (2.4e-4) marked.",
        epilog="example: serdes plot results.csv --x channel.loss_db --y ber "
               "--hue ffe.taps -o ber.png")
    p.add_argument("results", help="result file of serdes sweep (.csv or .parquet)")
    p.add_argument("--x", help="column of the x axis (default: the only swept key that "
                               "varies apart from --hue and the keys zipped with it)")
    p.add_argument("--y", default="ber",
                   help="column(s) to draw, comma separated (default ber; e.g. ber,stat_ber "
                        "or snr_db)")
    p.add_argument("--hue", help="one curve per value of this column, e.g. ffe.taps")
    p.add_argument("--where", action="append", default=[], metavar="COLUMN=VALUE",
                   help="keep only the rows with this value (repeatable)")
    p.add_argument("--no-threshold", action="store_true", help="do not mark the KP4 limit")
    p.add_argument("--title", help="title of the plot")
    p.add_argument("-o", "--output", help="image file (default: RESULTS with .png)")
    add_dpi_option(p)
    return p


def main(args) -> int:
    from serdes.plot import new_axes, save_figure
    from serdes.plot.sweep import KP4_BER, curves, load_rows, parse_where

    ys = [c.strip() for c in args.y.split(",") if c.strip()]
    if not ys:
        raise SerdesError("--y: give at least one column")
    check_dpi(args.dpi)
    out = Path(args.output) if args.output else Path(args.results).with_suffix(".png")
    check_figure_path(out)
    rows = load_rows(args.results, parse_where(args.where))
    ax = new_axes(figsize=(7.0, 4.5), file_backend=True)
    curves(rows, x=args.x, y=ys, hue=args.hue, ax=ax,
           threshold=None if args.no_threshold else KP4_BER, title=args.title)
    save_figure(ax.figure, out, dpi=args.dpi, close=True)
    print(f"wrote {out}")
    return 0
