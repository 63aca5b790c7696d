"""COM of a synthetic Annex 93A line (no crosstalk) over its loss at Nyquist, 802.3ck-kr
preset, full grid: COM should fall smoothly with loss.

Run: PYTHONPATH=. python3 benchmarks/com_loss_sweep.py [out_dir [loss_db ...]] [--set KEY=VALUE ...]
(``--set dfe_n_bg=0``: the fixed DFE taps only, as the numbers in docs/com.md)
"""

import json
import sys
import tempfile
from pathlib import Path

import numpy as np

from serdes.channel.loss import LossLine
from serdes.com.core import compute_com
from serdes.com.params import preset
from serdes.com.paramset import apply_overrides


def line_response(loss_db, f_ref_ghz, f_max_ghz=60.0, delay_ns=1.0):
    """(f in GHz on a 10 MHz grid from 0, S21) of a matched Annex 93A line (``LossLine``,
    ``loss_db`` at ``f_ref_ghz``) with ``delay_ns`` of delay: the synthetic line of the
    COM benchmarks, written as a 2-port here and as a 4-port by com_pychopmarg_d3p3.py."""
    f = np.arange(0.0, f_max_ghz + 1e-9, 0.01)
    h = LossLine(loss_db=loss_db, f_ref_hz=f_ref_ghz * 1e9).response(f * 1e9)
    return f, h * np.exp(-2j * np.pi * f * delay_ns)


def write_line(path, loss_db, fb_gbd=53.125, delay_ns=1.0):
    f, h = line_response(loss_db, fb_gbd / 2, 60.0, delay_ns)
    with open(path, "w") as fh:
        fh.write("# GHz S RI R 50\n")
        for fi, hi in zip(f, h):
            fh.write(f"{fi:.4f} 0 0 {hi.real:.10e} {hi.imag:.10e} {hi.real:.10e} {hi.imag:.10e} 0 0\n")
    return path


if __name__ == "__main__":
    argv = sys.argv[1:]
    sets = [argv[i + 1] for i, a in enumerate(argv) if a == "--set"]
    argv = [a for i, a in enumerate(argv) if a != "--set" and (i == 0 or argv[i - 1] != "--set")]
    out = Path(argv[0]) if argv else Path(tempfile.mkdtemp())
    p = apply_overrides(preset("802.3ck-kr"), sets)
    losses = [float(x) for x in argv[1:]] or [12, 16, 20, 24, 28, 32]
    for loss in losses:
        fn = write_line(out / f"line_{loss:g}dB.s2p", loss)
        r = compute_com(fn, preset=p)
        print(json.dumps({"loss_db": loss, "com_db": r.com_db, "elapsed_s": r.elapsed_s,
                          "cases": [[c.com_db, c.g_dc_db, c.g_dc2_db, c.tx_taps] for c in r.cases]}),
              flush=True)
