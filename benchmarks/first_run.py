"""The first `serdes run` after install: the default command (text summary with the
statistical BER) from an empty numba cache, this tree against a base revision, in
interleaved pairs.

    python3 benchmarks/first_run.py REV [--rounds 3] [--symbols 100000]

Each run gets a fresh copy of its tree's ``serdes/`` (REV's from ``git archive``), an
empty NUMBA_CACHE_DIR and SERDES_CACHE_DIR and ``SERDES_AOT=off`` (no precompiled
kernels: a plain install), so numba compiles every kernel the run calls, and the CTLE
choice is searched. Printed per run: CPU (user + system) and wall seconds; at the end
the medians and the median of the per-pair CPU ratios. Both trees must print the same
summary lines for BER and the statistical BER (else the script stops).
"""

from __future__ import annotations

import argparse
import os
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def _tree(rev: str | None, dest: Path) -> Path:
    """A fresh copy of ``serdes/`` (this tree's when rev is None) under dest."""
    dest.mkdir()
    if rev is None:
        arch = subprocess.run(["tar", "-c", "--exclude=__pycache__", "-C", str(ROOT),
                               "serdes"], check=True, capture_output=True).stdout
    else:
        arch = subprocess.run(["git", "-C", str(ROOT), "archive", rev, "serdes"],
                              check=True, capture_output=True).stdout
    subprocess.run(["tar", "-x", "-C", str(dest)], input=arch, check=True)
    return dest


def one(rev: str | None, symbols: int) -> tuple[float, float, list[str]]:
    """(CPU, wall, the BER lines) of one cold default run of rev's tree."""
    with tempfile.TemporaryDirectory() as tmp:
        tree = _tree(rev, Path(tmp) / "tree")
        env = dict(os.environ, PYTHONPATH=str(tree), SERDES_AOT="off",
                   NUMBA_CACHE_DIR=str(Path(tmp) / "numba"),
                   SERDES_CACHE_DIR=str(Path(tmp) / "cache"))
        r0 = resource.getrusage(resource.RUSAGE_CHILDREN)
        t = time.perf_counter()
        out = subprocess.run([sys.executable, "-m", "serdes.cli", "run", "--no-progress",
                              "--set", f"link.symbols={symbols}"], env=env, cwd=tmp,
                             check=True, capture_output=True, text=True).stdout
        wall = time.perf_counter() - t
        r1 = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = (r1.ru_utime - r0.ru_utime) + (r1.ru_stime - r0.ru_stime)
    keep = [ln for ln in out.splitlines() if ln.startswith(("counted", "BER", "stat BER"))]
    return cpu, wall, keep


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("rev")
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--symbols", type=int, default=100_000)
    a = ap.parse_args(argv)
    rows: dict[str, list] = {"base": [], "this": []}
    lines = set()
    for r in range(a.rounds):
        for name in (("base", "this") if r % 2 == 0 else ("this", "base")):
            cpu, wall, keep = one(a.rev if name == "base" else None, a.symbols)
            rows[name].append((cpu, wall))
            lines.add(tuple(keep))
            print(f"round {r} {name:4s}: {cpu:.2f} s CPU, {wall:.2f} s wall; load average "
                  f"{os.getloadavg()[0]:.1f}", flush=True)
    if len(lines) != 1:
        sys.exit(f"the trees printed different results: {sorted(lines)}")
    ratio = statistics.median(b[0] / t[0] for b, t in zip(rows["base"], rows["this"]))
    med = {k: (statistics.median(c for c, _ in v), statistics.median(w for _, w in v))
           for k, v in rows.items()}
    print(f"first default run ({a.symbols} symbols, empty caches): {a.rev} "
          f"{med['base'][0]:.2f} s CPU ({med['base'][1]:.2f} s wall), this tree "
          f"{med['this'][0]:.2f} s CPU ({med['this'][1]:.2f} s wall); CPU ratio per pair "
          f"median {ratio:.2f}x; the same results: {' | '.join(next(iter(lines)))}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
