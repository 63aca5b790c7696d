"""A short ``serdes run`` against an earlier revision, and against the floor, in paired
rounds: CPU time of whole processes, pinned to one core.

    python3 benchmarks/startup_paired.py [REV] [--rounds 5] [--symbols 100000] [--cpu 1]

REV (default ae59355, the tree this round of start-up work began from) is unpacked with
``git archive``; both packages are copied into fresh temporary folders, so each one's
first run is a cold start (numba finds no cache and compiles the kernels the run needs;
the CTLE choice is searched and stored, :mod:`serdes.buildcache`). Then, in each round
and in this order, one process each of: REV's ``serdes run --set link.symbols=N``
(the default command: text summary with the statistical BER), this tree's, and the
floor: ``python3 -c "import numpy, numba"`` plus one call of a one-line cached kernel
(numba's start-up: its registries, and its BLAS check, which imports scipy.linalg).
Every process runs under ``taskset -c CPU``; CPU = user + system of the process. The
medians, their ratio and the load average are printed. The outputs of both trees are
compared line by line (the "time" line aside): they must be equal.
"""

from __future__ import annotations

import argparse
import os
import resource
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
KERNEL = "from numba import njit\n\n\n@njit(cache=True)\ndef f(x):\n    return x + 1.0\n"


def _run(cmd, env, cwd, cpu) -> tuple[float, float, str]:
    """(wall s, CPU s, stdout) of one pinned process."""
    r0 = resource.getrusage(resource.RUSAGE_CHILDREN)
    t = time.perf_counter()
    out = subprocess.run(["taskset", "-c", str(cpu), *cmd], env=env, cwd=cwd, check=True,
                         capture_output=True, text=True).stdout
    wall = time.perf_counter() - t
    r1 = resource.getrusage(resource.RUSAGE_CHILDREN)
    return wall, (r1.ru_utime - r0.ru_utime) + (r1.ru_stime - r0.ru_stime), out


def _tree(rev: str | None, dest: Path) -> Path:
    """A copy of the ``serdes`` package of ``rev`` (None: this tree) under ``dest``."""
    dest.mkdir(parents=True)
    if rev is None:
        shutil.copytree(ROOT / "serdes", dest / "serdes",
                        ignore=shutil.ignore_patterns("__pycache__"))
    else:
        arch = subprocess.run(["git", "-C", str(ROOT), "archive", rev, "serdes"], check=True,
                              capture_output=True).stdout
        subprocess.run(["tar", "-x", "-C", str(dest)], input=arch, check=True)
    return dest


def _body(text: str) -> list[str]:
    return [ln for ln in text.splitlines() if not ln.startswith("time")]


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("rev", nargs="?", default="ae59355")
    ap.add_argument("--rounds", type=int, default=5)
    ap.add_argument("--symbols", type=int, default=100_000)
    ap.add_argument("--cpu", type=int, default=1)
    args = ap.parse_args(argv)
    load0 = os.getloadavg()[0]
    with tempfile.TemporaryDirectory() as tmp:
        tmp = Path(tmp)
        trees = {args.rev: _tree(args.rev, tmp / "base"), "this tree": _tree(None, tmp / "ours")}
        floor = tmp / "floor"
        floor.mkdir()
        (floor / "kfloor.py").write_text(KERNEL)
        cmds, envs = {}, {}
        for name, path in trees.items():
            envs[name] = dict(os.environ, PYTHONPATH=str(path),
                              SERDES_CACHE_DIR=str(path / "cache"))
            cmds[name] = [sys.executable, "-m", "serdes.cli", "run", "--set",
                          f"link.symbols={args.symbols}", "--no-progress"]
        envs["floor"] = dict(os.environ, PYTHONPATH=str(floor))
        cmds["floor"] = [sys.executable, "-c", "import numpy, numba, kfloor; kfloor.f(1.0)"]
        cold, outs = {}, {}
        for name in cmds:  # first run of each: the cold start
            w, c, outs[name] = _run(cmds[name], envs[name], tmp, args.cpu)
            cold[name] = (w, c)
        a, b = _body(outs[args.rev]), _body(outs["this tree"])
        if a != b:
            print("outputs differ:\n" + "\n".join(a) + "\n--\n" + "\n".join(b))
            return 1
        warm = {n: [] for n in cmds}
        for _ in range(args.rounds):
            for name in cmds:
                w, c, _out = _run(cmds[name], envs[name], tmp, args.cpu)
                warm[name].append((w, c))
    load1 = os.getloadavg()[0]
    med = {n: (statistics.median(w for w, _ in v), statistics.median(c for _, c in v))
           for n, v in warm.items()}
    print(f"`serdes run --set link.symbols={args.symbols}` (text summary with the stat BER), "
          f"pinned to CPU {args.cpu}, {args.rounds} interleaved rounds, load average "
          f"{load0:.1f} at the start, {load1:.1f} at the end; outputs equal")
    for name in cmds:
        cpus = ", ".join(f"{c:.2f}" for _, c in warm[name])
        print(f"  {name:>10}: warm median {med[name][1]:.2f} s CPU ({med[name][0]:.2f} s wall; "
              f"CPU per round {cpus}); cold {cold[name][1]:.2f} s CPU "
              f"({cold[name][0]:.2f} s wall)")
    base, ours, fl = med[args.rev][1], med["this tree"][1], med["floor"][1]
    ratios = [o[1] / r[1] for o, r in zip(warm["this tree"], warm[args.rev])]
    print(f"  this tree / {args.rev}: warm CPU {ours / base:.2f}x (per round "
          + ", ".join(f"{r:.2f}" for r in ratios) + f"), cold CPU "
          f"{cold['this tree'][1] / cold[args.rev][1]:.2f}x; above the floor: "
          f"{args.rev} {base - fl:.2f} s, this tree {ours - fl:.2f} s")
    return 0


if __name__ == "__main__":
    sys.exit(main())
