"""``serdes eye``: write an eye diagram (analog, statistical or equalized) as an image."""

from __future__ import annotations

from serdes.commands.common import (ItemProgress, add_cache_option, add_config_options,
                                    add_dpi_option, add_progress_options, check_dpi,
                                    check_figure_path, count_distributions, load_config,
                                    refuse_mlse)
from serdes.errors import ConfigError


def add_parser(sub):
    p = sub.add_parser("eye", help="draw an eye diagram",
                       description="Draw the analog eye (waveform engine, CTLE/AFE output), "
                                   "the statistical eye (BER contours at the slicer) or the "
                                   "equalized eye (slicer input per level).")
    add_config_options(p)
    p.add_argument("--kind", choices=("analog", "statistical", "equalized"),
                   default="statistical", help="which eye (default: statistical)")
    p.add_argument("-o", "--output", default="eye.png", help="image file (default eye.png)")
    p.add_argument("--symbols", type=int, default=None,
                   help="symbols for the analog (20000) or equalized (131072) eye")
    p.add_argument("--phases", type=int, default=64, help="statistical eye: phases per UI")
    p.add_argument("--bins", type=int, default=256, help="statistical eye: voltage bins")
    p.add_argument("--contours", default="1e-3,1e-6,1e-9,1e-12,1e-15",
                   help="statistical eye: BER contour levels, comma separated")
    p.add_argument("--dd-ui", type=float, default=None,
                   help="dual-Dirac jitter A_DD (UI) for the statistical engine (default: noise.dd_ui)")
    add_dpi_option(p)
    add_progress_options(p)
    add_cache_option(p)
    return p


def parse_bers(text: str, what: str) -> tuple[float, ...]:
    try:
        vals = tuple(float(x) for x in text.split(",") if x.strip())
    except ValueError:
        vals = ()
    if not vals or any(not 0 < v < 1 for v in vals):
        raise ConfigError(f"{what} = {text!r}: expected comma-separated BERs in (0, 1)")
    return vals


def _check_positive(name: str, value, lo: int = 1, hi: int = 1 << 24):
    if value is not None and not lo <= value <= hi:
        raise ConfigError(f"{name} = {value}: expected an integer in [{lo}, {hi}]")


def main(args) -> int:
    from serdes.build import build, build_receiver

    cfg = load_config(args)
    check_dpi(args.dpi)
    check_figure_path(args.output)
    if args.kind != "analog":
        refuse_mlse(build_receiver(cfg), f"the {args.kind} eye")
    _check_positive("--phases", args.phases, 4, 4096)
    _check_positive("--bins", args.bins, 16, 8192)
    _check_positive("--symbols", args.symbols, 1000, 10**8)
    if args.dd_ui is not None and not 0 <= args.dd_ui <= 0.5:
        raise ConfigError(f"--dd-ui = {args.dd_ui}: expected a number in [0, 0.5]")
    contours = parse_bers(args.contours, "--contours")
    system = build(cfg, cache=args.cache)
    taps = note = None
    if args.kind != "analog":
        from serdes.metrics.eye import receiver_taps

        taps, note = receiver_taps(system)
    from serdes.plot import new_axes
    from serdes.plot import eye as peye

    ax = new_axes(figsize=(7.5, 4.8), file_backend=True)
    bar = ItemProgress(None, "distributions", label=f"{args.kind} eye",
                        enabled=args.progress)
    try:
        what = _draw(args, system, taps, contours, ax, bar)
    finally:
        bar.close()
    peye.save_figure(ax.figure, args.output, dpi=args.dpi, close=True)
    print(f"wrote {args.output} ({what}" + (f"; {note})" if note else ")"))
    return 0


def _draw(args, system, taps, contours, ax, bar) -> str:
    from serdes.plot import eye as peye

    if args.kind == "analog":
        from serdes.metrics.eye import analog_eye

        bar.unit = "symbols"
        ae = analog_eye(system, symbols=args.symbols or 20_000, progress=bar)
        peye.analog_eye(ae, ax=ax)
        what = f"analog eye, {int(ae.density.sum()):,} points"
    elif args.kind == "statistical":
        from serdes.metrics.eye import stat_view
        from serdes.tiadc.stat import statistical_engine   # an interleaved ADC: all lanes

        eng = statistical_engine(stat_view(system, taps), taps, dd_ui=args.dd_ui)
        count_distributions(eng, bar)
        from serdes.forked import helpers

        with helpers(None):   # a costly phase (an interleaved ADC's rows): all cores
            se = eng.eye(n_phases=args.phases, n_bins=args.bins)
            op = eng.eye_opening(targets=contours)
        peye.statistical_eye(se, ax=ax, contours=contours, opening=op)
        what = f"statistical eye, {args.phases} phases x {args.bins} bins in {se.elapsed_s:.2f} s"
    else:
        from serdes.engines.stat import StatisticalEngine
        from serdes.metrics.eye import slicer_samples, stat_density, stat_view

        eng = StatisticalEngine(stat_view(system, taps), taps, dd_ui=args.dd_ui)
        count_distributions(eng, bar)
        s = slicer_samples(system, taps, symbols=args.symbols or (1 << 17))
        peye.equalized_eye(s, stat_density(eng), ax=ax)
        what = f"equalized eye, {s.v.shape[0]:,} symbols"
    return what
