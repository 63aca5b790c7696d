"""serdes com --preset 802.3dj-kr (P802.3dj/D3.3) against PyChOpMarg 3.4's D3.3 KR run
(``pychopmarg.config.ieee_8023dj_d3p3.com_params("KR")`` with its class A device models
of Test 1 and Test 2, ``kr_c2c_device``), both searching every point of the same reduced
grid, per package case.

PyChOpMarg's D3.3 set also has the floating RX FFE taps (N_wg 2 x N_wf 4 up to N_max 87),
quantization noise (N_qb 6) and MLSD; by default they are switched off in PyChOpMarg's
run (15 fixed RX FFE taps, N_qb 0, no MLSD; see --float, --quant), and MLSD in ours
(``mlsd=false``), so both compute the same thing (MLSD alone is compared in
``benchmarks/com_mlsd.py``). Everything else is PyChOpMarg's D3.3 set as it stands.

``--quant``: both with the quantization noise of the D3.3 set (N_qb 6, P_qc 1e-7; ours
``n_qb`` of the preset, PyChOpMarg's ``N_qb``); without it both have N_qb 0.
``--class B``: both with the class B packages of Table 178-14 (ours ``package_class=B``,
PyChOpMarg's ``kr_c2c_device("B", test, ...)``); class A without it.
``--float``: both with the floating RX FFE taps of the D3.3 set (2 groups of 4 taps within
+-0.05 up to N_max 87; ours ``rx_ffe_n_wg=2``, PyChOpMarg's Nfix / Nwg / Nwf of its set);
``--one``: the one candidate g_DC -12, g_DC2 -2, TX FFE off instead of the grid (see ONE).
``--mlsd``: both with the MLSD reference receiver (ours ``mlsd=true``, PyChOpMarg's
``mlsd=True``); each row then also has the MLSD parts of both (COM_DFE, gain, DER_MLSD,
g_an). With ``--quant`` too, ``--ours-search-delta`` gives our MLSD noise
autocorrelation the search's quantization step at the chosen candidate, as PyChOpMarg
does, instead of the final budget's (:func:`search_delta_for_mlsd`).
Sets: ``dpo4``, ``dpo12``, ``ca`` (../shared/channels) and ``lineNN``: a synthetic
Annex 93A line of NN dB at 53.125 GHz (``LossLine``, 1 ns delay, 0 - 100 GHz in 0.01 GHz,
written as a 4-port file with ports 1 -> 2 and 3 -> 4, no crosstalk), where the eye is
open at 106.25 GBd and the MLSD gains (the 802.3ck channels' eyes are closed there).

Run: PYTHONPATH=. python3 benchmarks/com_pychopmarg_d3p3.py [--quant] [--float] [--one] [--class B]
        [--mlsd [--ours-search-delta]] [--test 1|2] [dpo4|dpo12|ca|line20 ...]
(needs pychopmarg; dpo4, dpo12, ca need ../shared/channels).
"""

from __future__ import annotations

import dataclasses
import json
import os
import sys
from pathlib import Path

import numpy as np

os.environ.setdefault("PYCHOPMARG_PROCS", "1")
from pychopmarg.config.ieee_8023dj_d3p3 import com_params, kr_c2c_device  # noqa: E402

from serdes.com.core import compute_com  # noqa: E402

sys.path.insert(0, str(Path(__file__).resolve().parent))
from com_pychopmarg_dj import CH, SETS, pcm_com, pcm_fields  # noqa: E402

#: the reduced grid both programs search (every point): 3 x 2 CTLE x 9 TX settings
GRID = {"g_dc": [-12.0, -8.0, -4.0], "g_dc2": [-2.0, 0.0],
        "tx_min": [0.0, 0.0, -0.1, -0.1, 0.0, 0.0], "tx_max": [0.0, 0.0, 0.0, 0.0, 0.0, 0.0],
        "tx_step": [0.0, 0.0, 0.05, 0.05, 0.0, 0.0]}


#: one candidate: g_DC -12, g_DC2 -2 (the CTLE both choose on DPO_4in with the quantization
#: noise) and the TX FFE off. Off, because PyChOpMarg always adds the all-zero TX setting to
#: the grid it is given (``COM._tx_combs`` starts with it): a one-point grid of another TX
#: setting makes it search two candidates where ours searches one (with c(-1) = c(1) = -0.1
#: here it chose "off", and the comparison was of two different candidates).
ONE = {"g_dc": [-12.0], "g_dc2": [-2.0], "tx_min": [0.0] * 6, "tx_max": [0.0] * 6,
       "tx_step": [0.0] * 6}


def pcm_params(grid, quant=False, floating=False, mlsd=False):
    cp = com_params("KR")
    nfix = cp.Nfix
    if floating:
        return dataclasses.replace(
            cp, g_DC=list(grid["g_dc"]), g_DC2=list(grid["g_dc2"]),
            tx_taps_min=list(grid["tx_min"]), tx_taps_max=list(grid["tx_max"]),
            tx_taps_step=list(grid["tx_step"]), fstep=float(grid.get("f_step_ghz", cp.fstep)),
            N_qb=cp.N_qb if quant else 0, mlsd=mlsd)
    return dataclasses.replace(
        cp, g_DC=list(grid["g_dc"]), g_DC2=list(grid["g_dc2"]), tx_taps_min=list(grid["tx_min"]),
        tx_taps_max=list(grid["tx_max"]), tx_taps_step=list(grid["tx_step"]),
        fstep=float(grid.get("f_step_ghz", cp.fstep)),
        rx_taps_min=np.asarray(cp.rx_taps_min[:nfix]), rx_taps_max=np.asarray(cp.rx_taps_max[:nfix]),
        Nfix=None, Nwg=0, Nwf=0, N_qb=cp.N_qb if quant else 0, mlsd=mlsd)


def pcm_run(thru, fext, nxt, grid, test, quant=False, pkg_class="A", floating=False,
            mlsd=False):
    cp = pcm_params(grid, quant, floating, mlsd)
    com, val, el = pcm_com(cp, thru, fext, nxt,
                           tx_device=kr_c2c_device(pkg_class, test, False),
                           rx_device=kr_c2c_device(pkg_class, test, True))
    out = {**pcm_fields(com, val), "elapsed_s": el,
           "sigma_quant_v": float(com.com_rslts.get("sigma_Q", 0.0))}
    if mlsd:
        r = com.com_rslts
        out["mlsd"] = {"com_dfe_db": float(r["COM_DFE"]), "gain_db": float(r["delta_COM_mlsd"]),
                       "der_mlsd": float(r["DER_MLSD"]), "g_an": float(r["g_an"]),
                       "terms": int(r["mlsd_terms"])}
    return out


def write_line_s4p(path: Path, loss_db: float) -> Path:
    """A synthetic Annex 93A line (LossLine, loss_db at 53.125 GHz, 1 ns delay) as a 4-port
    Touchstone file, ports 1 -> 2 and 3 -> 4 (two equal lines, no coupling, matched), as
    the IEEE channel files are laid out."""
    here = str(Path(__file__).resolve().parent)
    if here not in sys.path:
        sys.path.insert(0, here)
    from com_loss_sweep import line_response

    f, h = line_response(loss_db, 53.125, 100.0, 1.0)
    z = "0 0"
    with open(path, "w") as fh:
        fh.write("# GHz S RI R 50\n")
        for fi, hi in zip(f, h):
            t = f"{hi.real:.10e} {hi.imag:.10e}"
            rows = [[z, t, z, z], [t, z, z, z], [z, z, z, t], [z, z, t, z]]
            fh.write(f"{fi:.4f} " + "\n".join(" ".join(r) for r in rows) + "\n")
    return path


def search_delta_for_mlsd():
    """From now on in this process, our MLSD noise autocorrelation takes the quantization
    step of the search's V_qc at the chosen candidate (the last one computed before the
    MLSD: the reference solve of the chosen taps), as PyChOpMarg's does, instead of the
    final budget's."""
    import serdes.com.core as core
    import serdes.com.quant as quant

    seen = {}
    v_qc, mlsd_com = quant.search_v_qc, core._mlsd.mlsd_com

    def rec(*a, **k):
        seen["v"] = v_qc(*a, **k)
        return seen["v"]

    def swap(p, budget, *a, **k):
        if budget.parts.get("q_acf") is not None:
            step = 2 * seen["v"] / (2 ** p.n_qb - 1)
            budget.parts["q_acf"] = (budget.parts["q_acf"][0], step ** 2 / 12)
        return mlsd_com(p, budget, *a, **k)

    quant.search_v_qc = rec
    core._mlsd.mlsd_com = swap


def channel_set(key):
    if key.startswith("line"):
        import tempfile
        path = Path(tempfile.mkdtemp()) / f"{key}.s4p"
        return str(write_line_s4p(path, float(key[4:]))), [], []
    thru, fext, nxt = SETS[key]
    return str(CH / thru), [str(CH / f) for f in fext], [str(CH / f) for f in nxt]


def compare(key, grid=GRID, tests=(1, 2), quant=False, pkg_class="A", floating=False,
            mlsd=False, search_delta=False):
    thru, fext, nxt = channel_set(key)
    ov = {k: ",".join(str(x) for x in v) if isinstance(v, list) else str(v) for k, v in grid.items()}
    ov["mlsd"] = "true" if mlsd else "false"
    ov["package_class"] = pkg_class
    if not quant:
        ov["n_qb"] = "0"
    ov["rx_ffe_n_wg"] = "2" if floating else "0"
    if search_delta:
        search_delta_for_mlsd()
    ours = compute_com(thru, fext, nxt, "802.3dj-kr", ov)
    for test in tests:
        c = ours.cases[test - 1]
        ref = pcm_run(thru, fext, nxt, grid, test, quant, pkg_class, floating, mlsd)
        tx = [x for i, x in enumerate(c.tx_taps) if i != 3]
        rx = list(c.rx_ffe_taps)
        fl = c.rx_ffe_float
        if fl:        # the whole span, 0 where no tap is (as PyChOpMarg reports it)
            rx += [0.0] * (fl["n_max"] - len(rx))
            for k, t in zip(fl["positions"], fl["taps"]):
                rx[k] = t
        yield {
            "set": key, "package_case": test, "package_class": pkg_class, "grid": grid,
            "n_qb": ours.params.n_qb, "unequalized_peak_v": c.unequalized_peak_v,
            "float_positions": {"ours": fl["positions"] if fl else None,
                                "pychopmarg": [k for k, t in enumerate(ref["rx_ffe_taps"])
                                               if k >= 15 and t != 0.0] if fl else None},
            "ours": {"com_db": c.com_db, "a_s_v": c.a_s_v, "a_ni_v": c.a_ni_v, "fom_db": c.fom_db,
                     "g_dc_db": c.g_dc_db, "g_dc2_db": c.g_dc2_db, "tx_taps": tx,
                     "rx_ffe_taps": c.rx_ffe_taps, "dfe_taps": c.dfe_taps,
                     "elapsed_s_all_cases": ours.elapsed_s},
            "sigma_quant_v": c.sigmas_v.get("quant"),
            "mlsd": {"ours": {k: c.mlsd[k] for k in ("com_dfe_db", "gain_db", "der_mlsd", "g_an",
                                                     "terms")} if c.mlsd else None,
                     "pychopmarg": ref.get("mlsd")},
            "pychopmarg": ref, "delta_com_db": c.com_db - ref["com_db"],
            "delta_fom_db": c.fom_db - ref["fom_db"],
            "max_rx_tap_diff": float(np.max(np.abs(np.subtract(rx, ref["rx_ffe_taps"]))))}


if __name__ == "__main__":
    args = sys.argv[1:]
    q, fl, ml, sd = ("--quant" in args, "--float" in args, "--mlsd" in args,
                     "--ours-search-delta" in args)
    g = ONE if "--one" in args else GRID
    cls = args[args.index("--class") + 1] if "--class" in args else "A"
    tests = tuple(int(t) for t in args[args.index("--test") + 1].split(",")) if "--test" in args else (1, 2)
    keys = [a for i, a in enumerate(args) if not a.startswith("--")
            and not (i and args[i - 1] in ("--class", "--test"))]
    for key in keys or ["dpo4", "dpo12", "ca"]:
        for row in compare(key, grid=g, quant=q, pkg_class=cls, tests=tests, floating=fl,
                           mlsd=ml, search_delta=sd):
            print(json.dumps(row, default=float), flush=True)
