"""``serdes adc``: the sine test of the modelled ADC (interleaving mismatch, aperture and
supply jitter, ENOB): SNDR, ENOB, SFDR and the spurs at k fs/N +- f_in with their
closed-form levels."""

from __future__ import annotations

import json
import math

from serdes.commands.common import (add_config_options, check_figure_path, json_safe,
                                    load_config)
from serdes.errors import ConfigError


def add_parser(sub):
    p = sub.add_parser("adc", help="sine test of the (time-interleaved) ADC",
                       description="A coherently sampled sine through the modelled ADC at "
                                   "the symbol rate: SNDR, ENOB, SFDR and the interleaving "
                                   "spurs at k*fs/N +- f_in (measured and closed form).")
    add_config_options(p)
    p.add_argument("--fin", type=float, required=True, metavar="HZ",
                   help="input frequency (moved to the nearest coherent bin)")
    p.add_argument("--amplitude-dbfs", type=float, default=-1.0,
                   help="sine amplitude relative to full scale (dBFS, default -1)")
    p.add_argument("--samples", type=int, default=None,
                   help="record length (a multiple of adc.lanes; default lanes x 2^k >= 8192)")
    p.add_argument("--plot", metavar="FILE", help="write the spectrum as an image")
    p.add_argument("--json", action="store_true", help="print one JSON object")
    return p


def main(args) -> int:
    from serdes.build import build_adc
    from serdes.tiadc.model import TiAdc
    from serdes.tiadc.spectrum import sine_test

    cfg = load_config(args)
    if args.plot:
        check_figure_path(args.plot)
    if not -60.0 <= args.amplitude_dbfs <= 0.0:
        raise ConfigError(f"--amplitude-dbfs = {args.amplitude_dbfs:g}: expected a number "
                          f"in [-60, 0]")
    adc = build_adc(cfg)
    if not isinstance(adc, TiAdc):
        a = cfg["adc"]
        adc = TiAdc(bits=a["bits"], fullscale_v=a["fullscale_v"], enob=a["enob"])
    if args.samples is not None and not (adc.lanes <= args.samples <= 1 << 24
                                         and args.samples % adc.lanes == 0):
        raise ConfigError(f"--samples = {args.samples}: expected a multiple of adc.lanes = "
                          f"{adc.lanes} up to {1 << 24}")
    if not math.isfinite(args.fin):
        raise ConfigError(f"--fin = {args.fin}: expected a frequency in Hz")
    fs = cfg["link"]["symbol_rate_hz"]
    r = sine_test(adc, fs, args.fin, amplitude_dbfs=args.amplitude_dbfs, n=args.samples,
                  seed=cfg["link"]["seed"])
    power = r.pop("power")
    if args.plot:
        from serdes.plot.adc import plot_spectrum

        plot_spectrum(power, r, args.plot)
    if args.json:
        print(json.dumps(json_safe(r)))
        return 0
    print(f"adc       {adc.describe()}")
    print(f"sine      {r['f_in_hz'] / 1e9:.6g} GHz at {args.amplitude_dbfs:g} dBFS, "
          f"fs {fs / 1e9:.6g} GS/s, {r['samples']} samples (coherent)")
    print(f"SNDR      {r['sndr_db']:.2f} dB   ENOB {r['enob']:.2f}   SFDR {r['sfdr_db']:.2f} dB")
    shown = sorted(r["spurs"], key=lambda s: -s["dbc"])[:12]
    if shown:
        print("spurs     f (GHz)     measured dBc  closed form dBc  (k, kind)")
        for s in shown:
            print(f"          {s['f_hz'] / 1e9:10.5f}  {s['dbc']:12.2f}  "
                  f"{s['predicted_dbc']:15.2f}  ({s['k']}, {s['kind']})")
    return 0
