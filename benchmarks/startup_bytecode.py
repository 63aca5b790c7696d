"""What compiling our modules from source costs a short ``serdes run``: the same tree,
warm, with PYTHONDONTWRITEBYTECODE=1 in both arms, in paired rounds, with and without
our package's bytecode stored beside it.

    python3 benchmarks/startup_bytecode.py [--rounds 5] [--symbols 100000] [--cpu 1]

Where PYTHONDONTWRITEBYTECODE=1 is set (as on the development machine) Python writes no
``.pyc``, so an editable install compiles every module a run imports from source in
every run; it still reads bytecode that is there (``python3 -m compileall serdes`` once
after an install or a change). The package is copied (with numba's cache, so both arms
are warm) into a temporary folder; each round runs, in alternating order, one process
with no ``.pyc`` of ours and one after ``compileall`` (not timed). Every process runs
under ``taskset -c CPU``; CPU = user + system. The medians, the paired differences and
the load average are printed; the two outputs must be equal (the "time" line aside).
"""

from __future__ import annotations

import argparse
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

from startup_paired import _body, _run

ROOT = Path(__file__).resolve().parents[1]


def _drop_bytecode(pkg: Path) -> None:
    for p in pkg.rglob("*.pyc"):
        p.unlink()


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--rounds", type=int, default=5)
    ap.add_argument("--symbols", type=int, default=100_000)
    ap.add_argument("--cpu", type=int, default=1)
    args = ap.parse_args(argv)
    with tempfile.TemporaryDirectory() as tmp:
        dest = Path(tmp) / "tree"
        # copy2 keeps the sources' times, so numba's cache index stays valid in the copy
        shutil.copytree(ROOT / "serdes", dest / "serdes",
                        ignore=shutil.ignore_patterns("*.pyc"))
        env = dict(os.environ, PYTHONPATH=str(dest), PYTHONDONTWRITEBYTECODE="1",
                   SERDES_CACHE_DIR=str(Path(tmp) / "cache"))
        cmd = [sys.executable, "-c", "import sys; from serdes.cli import main; "
               "sys.exit(main())", "run", "--set", f"link.symbols={args.symbols}",
               "--no-progress"]
        _run(cmd, env, tmp, args.cpu)   # fills the CTLE choice's cache (numba's is copied)
        cpu = {"source": [], "bytecode": []}
        outs = {}
        for r in range(args.rounds):
            for arm in (("source", "bytecode") if r % 2 == 0 else ("bytecode", "source")):
                _drop_bytecode(dest / "serdes")
                if arm == "bytecode":
                    subprocess.run([sys.executable, "-m", "compileall", "-q",
                                    str(dest / "serdes")], check=True,
                                   env=dict(os.environ, PYTHONDONTWRITEBYTECODE=""))
                wall, c, out = _run(cmd, env, tmp, args.cpu)
                cpu[arm].append(c)
                outs.setdefault(arm, _body(out))
                print(f"round {r} {arm:8s} CPU {c:.3f} s, wall {wall:.3f} s, load "
                      f"{os.getloadavg()[0]:.1f}", flush=True)
        assert outs["source"] == outs["bytecode"], "the two arms printed different results"
        diff = [a - b for a, b in zip(cpu["source"], cpu["bytecode"])]
        print(f"medians: from source {statistics.median(cpu['source']):.3f} s CPU, with "
              f"bytecode {statistics.median(cpu['bytecode']):.3f} s; paired differences "
              f"{min(diff):+.3f} .. {max(diff):+.3f} s (median {statistics.median(diff):+.3f}"
              f" s); load {os.getloadavg()[0]:.1f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
