"""A short ``serdes run`` with the precompiled kernels (``serdes precompile``) against the
same tree on numba's JIT and against an earlier revision: whole processes, paired rounds.

    python3 benchmarks/startup_aot.py [REV] [--rounds 7] [--symbols 100000] [--cpu 1]

Each variant gets its own empty cache folder (SERDES_CACHE_DIR: the CTLE choice and the
AOT module) and its own empty numba cache (NUMBA_CACHE_DIR), and REV and this tree are
copied to fresh folders, so the first steps measure a first run after install:

1. ``jit``: this tree with SERDES_AOT=off, its first run (numba compiles what it needs);
2. ``REV``: the same for REV (default main);
3. ``aot``: ``serdes precompile`` (timed), then its first run (numba's cache still empty).

Then ROUNDS rounds of one process each, in the order aot, jit, REV, every one pinned with
``taskset -c CPU``; CPU = user + system of the process. Printed: medians, per-round
ratios and the load average. The outputs (the "time" line aside) must be equal.
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from startup_paired import _body, _run, _tree  # noqa: E402


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("rev", nargs="?", default="main")
    ap.add_argument("--rounds", type=int, default=7)
    ap.add_argument("--symbols", type=int, default=100_000)
    ap.add_argument("--cpu", type=int, default=1)
    a = ap.parse_args(argv)
    load0 = os.getloadavg()[0]
    run = ["run", "--set", f"link.symbols={a.symbols}", "--no-progress"]
    with tempfile.TemporaryDirectory() as tmp:
        tmp = Path(tmp)
        ours, base = _tree(None, tmp / "ours"), _tree(a.rev, tmp / "base")
        envs = {}
        for name, tree in (("aot", ours), ("jit", ours), (a.rev, base)):
            envs[name] = dict(os.environ, PYTHONPATH=str(tree),
                              SERDES_CACHE_DIR=str(tmp / f"cache-{name}"),
                              NUMBA_CACHE_DIR=str(tmp / f"numba-{name}"),
                              SERDES_AOT="on" if name == "aot" else "off")
        cmd = [sys.executable, "-m", "serdes.cli", *run]
        cold, outs = {}, {}
        for name in ("jit", a.rev):
            *cold[name], outs[name] = _run(cmd, envs[name], tmp, a.cpu)
        pre = _run([sys.executable, "-m", "serdes.cli", "precompile"], envs["aot"], tmp,
                   a.cpu)
        *cold["aot"], outs["aot"] = _run(cmd, envs["aot"], tmp, a.cpu)
        probe = subprocess.run(
            [sys.executable, "-c", "import io, sys, contextlib, serdes.cli\n"
             "with contextlib.redirect_stdout(io.StringIO()):\n"
             f"    serdes.cli.main({run!r})\nprint('numba' in sys.modules)"],
            env=envs["aot"], capture_output=True, text=True, check=True).stdout.strip()
        if not _body(outs["aot"]) == _body(outs["jit"]) == _body(outs[a.rev]):
            print("outputs differ:\n" + "\n--\n".join(outs.values()))
            return 1
        warm = {n: [] for n in envs}
        for _ in range(a.rounds):
            for name in envs:
                w, c, _out = _run(cmd, envs[name], tmp, a.cpu)
                warm[name].append((w, c))
    load1 = os.getloadavg()[0]
    print(f"`serdes run --set link.symbols={a.symbols}` pinned to CPU {a.cpu}, {a.rounds} "
          f"interleaved rounds, load average {load0:.1f} at the start, {load1:.1f} at the "
          f"end; outputs equal; numba imported with the AOT module: {probe}")
    print(f"  serdes precompile: {pre[1]:.1f} s CPU ({pre[0]:.1f} s wall)")
    med = {}
    for name, v in warm.items():
        med[name] = (statistics.median(w for w, _ in v), statistics.median(c for _, c in v))
        print(f"  {name:>5}: warm median {med[name][1]:.2f} s CPU, {med[name][0]:.2f} s wall "
              f"(wall per round {', '.join(f'{w:.2f}' for w, _ in v)}); first run "
              f"{cold[name][1]:.2f} s CPU ({cold[name][0]:.2f} s wall)")
    for other in ("jit", a.rev):
        r = [o[0] / b[0] for o, b in zip(warm[other], warm["aot"])]
        print(f"  {other} / aot: wall {med[other][0] / med['aot'][0]:.2f}x, CPU "
              f"{med[other][1] / med['aot'][1]:.2f}x (wall per round "
              + ", ".join(f"{x:.2f}" for x in r) + ")")
    return 0


if __name__ == "__main__":
    sys.exit(main())
