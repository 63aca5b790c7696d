"""``serdes bathtub``: horizontal and vertical bathtubs of the statistical engine."""

from __future__ import annotations

import json

from serdes.commands.common import (ItemProgress, add_cache_option, add_config_options,
                                    add_dpi_option, add_progress_options, check_dpi,
                                    check_figure_path, count_distributions, json_safe,
                                    load_config, refuse_mlse)
from serdes.errors import ConfigError


def add_parser(sub):
    p = sub.add_parser("bathtub", help="draw the horizontal and vertical bathtubs",
                       description="Statistical BER vs sampling phase (horizontal) and vs "
                                   "slicer threshold (vertical), per PAM4 eye.")
    add_config_options(p)
    p.add_argument("-o", "--output", default="bathtub.png",
                   help="image file (default bathtub.png)")
    p.add_argument("--phases", type=int, default=64, help="phases per UI")
    p.add_argument("--points", type=int, default=401, help="threshold offsets")
    p.add_argument("--dd-ui", type=float, default=None,
                   help="dual-Dirac jitter A_DD (UI) (default: noise.dd_ui)")
    p.add_argument("--json", action="store_true", help="also print the curves as JSON")
    add_dpi_option(p)
    add_progress_options(p)
    add_cache_option(p)
    return p


def main(args) -> int:
    from serdes.build import build, build_receiver

    cfg = load_config(args)
    check_dpi(args.dpi)
    check_figure_path(args.output)
    refuse_mlse(build_receiver(cfg), "the bathtub (statistical engine)")
    if not 4 <= args.phases <= 4096:
        raise ConfigError(f"--phases = {args.phases}: expected an integer in [4, 4096]")
    if not 16 <= args.points <= 100_000:
        raise ConfigError(f"--points = {args.points}: expected an integer in [16, 100000]")
    if args.dd_ui is not None and not 0 <= args.dd_ui <= 0.5:
        raise ConfigError(f"--dd-ui = {args.dd_ui}: expected a number in [0, 0.5]")
    from serdes.metrics.eye import receiver_taps, stat_view

    system = build(cfg, cache=args.cache)
    taps, note = receiver_taps(system)
    from serdes.tiadc.stat import statistical_engine   # an interleaved ADC: all lanes

    # phases from where the receiver samples (its CDR's lock point; else the peak)
    eng = statistical_engine(stat_view(system, taps), taps, dd_ui=args.dd_ui)
    bar = ItemProgress(None, "distributions", label="bathtub", enabled=args.progress)
    count_distributions(eng, bar)
    from serdes.forked import helpers

    try:   # a costly phase (an interleaved ADC's rows): the other cores help
        with helpers(None):
            h = eng.bathtub_horizontal(args.phases)
        v = eng.bathtub_vertical(0.0, args.points)
    finally:
        bar.close()

    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    from serdes.plot import eye as peye

    fig, (ax1, ax2) = plt.subplots(1, 2, figsize=(11, 4.2))
    peye.horizontal_bathtub(h, ax=ax1)
    peye.vertical_bathtub(v, ax=ax2, thresholds=eng.thresholds)
    peye.save_figure(fig, args.output, dpi=args.dpi, close=True)
    if args.json:
        print(json.dumps(json_safe({
            "taps": note, "ffe_taps": eng.w.tolist(), "dfe_taps": eng.b.tolist(),
            "eyes": list(h.eye_names),
            "horizontal": {"phase_ui": h.x.tolist(), "ber": h.ber.tolist(),
                           "ber_per_eye": h.ber_per_eye.tolist()},
            "vertical": {"offset": v.x.tolist(),
                         "offset_mv": (v.x * v.volts_per_unit * 1e3).tolist(),
                         "ber_per_eye": v.ber_per_eye.tolist()},
        }), allow_nan=False))
    else:
        print(f"wrote {args.output} ({note})")
    return 0
