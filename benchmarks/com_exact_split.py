"""Where the exact pass of the 802.3dj branch and bound (floating RX FFE taps, kernel
qmode 2) spends its time, split by what follows the pair bound at V_qc's lower bound
(the gate every visited sampling time passes through): the exact V_qc, the bounds at
the exact V_qc (prefix, tap-limit, pair) and the IEEE placement.

Every EVERY-th exact-pass call of `serdes com THRU --preset 802.3dj-kr` is captured
(two numba threads, as the CLI runs), then replayed in one thread, pinned, through the
kernel and through four copies of it, each cut short after one more step (written to a
temporary folder by text substitution of serdes/kernels/com_mmse_search.py; the cut
returns a value below the row's threshold, so the visits are those of the real pass):
  gate   after the pair bound at V_qc's lower bound
  +vqc   after the exact V_qc
  +pref  after the prefix bounds at the exact V_qc
  -place everything but the placement (_float_solve)
  full   the kernel itself
CPU seconds of each, ROUNDS interleaved rounds, and their medians' shares.

Run: OPENBLAS_NUM_THREADS=1 PYTHONPATH=. python3 benchmarks/com_exact_split.py THRU
     [EVERY [ROUNDS]]   (default 20 and 2; the capture is one full `serdes com` run)
"""

from __future__ import annotations

import os
import pickle
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
SRC = ROOT / "serdes" / "kernels" / "com_mmse_search.py"
WRAP = ROOT / "serdes" / "kernels" / "com_mmse.py"

VQC = """    _shift_sum(c, t0[ph], offs, 0, N, hq)
    v = _v_qc(hq, sig, np.int64(levels), p_half, npts_q)
    d = 2.0 * v / qden
    rn[0] = rn0 + d * d / 12.0
    if nwg and pb.shape[0] > 0:
        _prefix_bounds(av, rn, hr, nwt, nb, bmin, bmax, var_x, rlm, levels, lv, gram, G, b,
                       hist, pb)
        fx = pb[nwt - 1] + _SLACK_DB"""
GATE = """        if fb < thr:
            rn[0] = rn0
            return fb
    _shift_sum(c, t0[ph], offs, 0, N, hq)"""
PLACE = """        if fx < thr:
            fo = fx
        else:
            fo = _float_solve(av, rn, hr, nw, nwt, nwg, nwf, dw, nb, wmin, wmax, bmin, bmax,
                              var_x, rlm, levels, R, lo, Y, G, y, z, w, b, cols, chosen,
                              valid, thr, pb)"""
CUT = "\n        rn[0] = rn0\n        return thr - 1.0"


def variants(src: str) -> dict[str, str]:
    for part in (VQC, GATE, PLACE):
        assert part in src, "the kernel changed: update this script's cut points"
    head, tail = VQC.split("    if nwg and pb.shape[0] > 0:\n")
    return {
        "gate": src.replace(GATE, GATE.replace("    _shift_sum(c, t0[ph], offs, 0, N, hq)",
                                               CUT.lstrip("\n") + "\n    _shift_sum(c, t0[ph], offs, 0, N, hq)")),
        "vqc": src.replace(VQC, head + "    if nwg and pb.shape[0] > 0:" + CUT + " + 0.0 * d\n"
                           "    if nwg and pb.shape[0] > 0:\n" + tail),
        "pref": src.replace(VQC, VQC + CUT + " + 0.0 * fx"),
        "noplace": src.replace(PLACE, "        fo = thr - 1.0 if not fx < thr else fx"),
    }


REPLAY = """
import pickle, sys, time, importlib
calls = pickle.load(open(sys.argv[1], 'rb'))
mod = importlib.import_module(sys.argv[2])
a, k = calls[0]
mod.mmse_block(*a, **k)          # compile / load, untimed
t = time.process_time()
for a, k in calls:
    mod.mmse_block(*a, **k)
print(time.process_time() - t)
"""

CAPTURE = """
import pickle, sys
import serdes.com.quant as Q
orig, every, calls, n = Q.mmse_block, int(sys.argv[2]), [], [0]
def cap(*a, **k):
    if k.get('qmode') == 2:
        n[0] += 1
        if n[0] % every == 0:
            calls.append((a, k))
    return orig(*a, **k)
Q.mmse_block = cap
import serdes.cli
rc = serdes.cli.main(['com', sys.argv[1], '--preset', '802.3dj-kr', '--json'])
if rc:
    sys.exit(rc)                # the CLI's error is its one line on stderr
pickle.dump(calls, open(sys.argv[3], 'wb'))
print(n[0], len(calls), file=sys.stderr)
"""


def capture(thru: str, every: int, path: Path, env: dict) -> str:
    """Every EVERY-th exact-pass call of `serdes com THRU --preset 802.3dj-kr` (two numba
    threads, as the CLI runs) pickled to path; returns the run's stderr, "<calls>
    <captured>"."""
    out = subprocess.run([sys.executable, "-c", CAPTURE, thru, str(every), str(path)],
                         env={**env, "NUMBA_NUM_THREADS": "2"}, capture_output=True, text=True)
    if out.returncode:
        last = out.stderr.strip().splitlines()[-1:] or ["no message"]
        raise SystemExit(f"capture failed: {last[0]}")
    return out.stderr


def main(argv) -> None:
    thru = argv[0]
    every = int(argv[1]) if len(argv) > 1 else 20
    rounds = int(argv[2]) if len(argv) > 2 else 2
    tmp = Path(tempfile.mkdtemp(prefix="com_split_"))
    env = {**os.environ, "OPENBLAS_NUM_THREADS": "1", "PYTHONPATH": f"{tmp}:{ROOT}"}
    cap = tmp / "calls.pkl"
    err = capture(thru, every, cap, env)
    print(f"captured {err.split()[1]} of {err.split()[0]} exact-pass calls, "
          f"{sum(len(a[0]) for a, _ in pickle.load(open(cap, 'rb')))} rows", flush=True)
    src, wrap = SRC.read_text(), WRAP.read_text()
    mods = {"full": "serdes.kernels.com_mmse"}
    for name, text in variants(src).items():
        (tmp / f"split_{name}_search.py").write_text(text)
        (tmp / f"split_{name}.py").write_text(wrap.replace(
            "from serdes.kernels.com_mmse_search import _mmse_block",
            f"from split_{name}_search import _mmse_block"))
        mods[name] = f"split_{name}"
    one = {**env, "NUMBA_NUM_THREADS": "1"}
    times = {k: [] for k in mods}
    for r in range(rounds):
        for name, mod in mods.items():
            t = subprocess.run(["taskset", "-c", "1", sys.executable, "-c", REPLAY, str(cap),
                                mod], env=one, capture_output=True, text=True, check=True)
            times[name].append(float(t.stdout.split()[-1]))
        print(f"round {r}: " + ", ".join(f"{k} {v[-1]:.2f} s" for k, v in times.items()),
              flush=True)
    med = {k: statistics.median(v) for k, v in times.items()}
    full = med["full"]
    steps = [("gate (pair bound at V_qc's lower bound, tables)", med["gate"]),
             ("exact V_qc", med["vqc"] - med["gate"]),
             ("prefix bounds at the exact V_qc", med["pref"] - med["vqc"]),
             ("tap-limit and pair bounds at the exact V_qc", med["noplace"] - med["pref"]),
             ("placement (_float_solve)", full - med["noplace"])]
    print(f"exact pass, {full:.2f} s CPU in one thread (median of {rounds}):")
    for what, s in steps:
        print(f"  {what}: {s:.2f} s ({100 * s / full:.0f} %)")


if __name__ == "__main__":
    main(sys.argv[1:])
