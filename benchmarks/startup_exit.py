"""What the interpreter's teardown costs a short ``serdes run``: this tree's entry point
(``serdes.cli.console``: the output flushed, then the process ends at once), the same
tree through ``serdes.cli.main`` with the usual exit, and REV's entry point, in paired
rounds.

    python3 benchmarks/startup_exit.py [REV] [--rounds 5] [--symbols 100000] [--cpu 1]
                                       [--threads N --json]

REV (default main) is unpacked with ``git archive``; this tree's package is copied. Both
copies take no bytecode (PYTHONDONTWRITEBYTECODE=1 here: every run compiles our modules
from source, as an editable install does) and fill their own numba cache and CTLE cache
in a first, untimed run. Then each round runs the three processes in a rotating order,
each ``python3 -m serdes.cli run --set link.symbols=N`` (what the installed ``serdes``
script runs: ``console`` where the tree has it, else ``main``) or, for the usual exit,
``python3 -c "...sys.exit(main())"``, under ``taskset -c CPU``; CPU = user + system of
the process (with ``--threads``, the workers' CPU too; pin to several CPUs with e.g.
``--cpu 0,1``). Medians, the paired differences and the load are printed; the outputs
must be equal (the "time" line aside; with ``--json``, the elapsed fields).
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import tempfile
from pathlib import Path

from startup_paired import _body, _run, _tree


def _strip(out: str):
    """The output without its times (text summary or JSON)."""
    if out.lstrip().startswith("{"):
        import json

        d = json.loads(out)
        return {k: v for k, v in d.items() if k not in ("elapsed_s", "symbols_per_s")}
    return _body(out)


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("rev", nargs="?", default="main")
    ap.add_argument("--rounds", type=int, default=5)
    ap.add_argument("--symbols", type=int, default=100_000)
    ap.add_argument("--cpu", default="1")
    ap.add_argument("--threads", type=int, default=None)
    ap.add_argument("--json", action="store_true")
    args = ap.parse_args(argv)
    load0 = os.getloadavg()[0]
    with tempfile.TemporaryDirectory() as tmp:
        tmp = Path(tmp)
        trees = {"rev": _tree(args.rev, tmp / "base"), "this": _tree(None, tmp / "ours")}
        run = ["run", "--set", f"link.symbols={args.symbols}", "--no-progress"]
        run += ["--threads", str(args.threads)] if args.threads else []
        run += ["--json"] if args.json else []
        arms = {
            f"{args.rev} (its entry)": ("rev", [sys.executable, "-m", "serdes.cli", *run]),
            "this tree, console": ("this", [sys.executable, "-m", "serdes.cli", *run]),
            "this tree, main + usual exit": ("this", [
                sys.executable, "-c", "import sys; from serdes.cli import main; "
                "sys.exit(main())", *run]),
        }
        envs = {k: dict(os.environ, PYTHONPATH=str(p), PYTHONDONTWRITEBYTECODE="1",
                        SERDES_CACHE_DIR=str(p / "cache")) for k, p in trees.items()}
        outs = {}
        for name, (tree, cmd) in arms.items():  # cold: numba's and the CTLE caches
            outs[name] = _strip(_run(cmd, envs[tree], tmp, args.cpu)[2])
        first = next(iter(outs.values()))
        assert all(o == first for o in outs.values()), "the arms printed different results"
        cpu = {n: [] for n in arms}
        names = list(arms)
        for r in range(args.rounds):
            for name in names[r % 3:] + names[:r % 3]:
                tree, cmd = arms[name]
                wall, c, _ = _run(cmd, envs[tree], tmp, args.cpu)
                cpu[name].append(c)
                print(f"round {r} {name:30s} CPU {c:.3f} s, wall {wall:.3f} s", flush=True)
    print(f"`serdes {' '.join(run)}`, pinned to CPU {args.cpu}, "
          f"{args.rounds} rounds, load average {load0:.1f} -> {os.getloadavg()[0]:.1f}")
    ref = names[1]
    for name in names:
        line = f"  {name:30s} median {statistics.median(cpu[name]):.3f} s CPU"
        if name != ref:
            d = [a - b for a, b in zip(cpu[name], cpu[ref])]
            line += (f"; minus '{ref}' per round {min(d):+.3f} .. {max(d):+.3f} s, median "
                     f"{statistics.median(d):+.3f} s")
        print(line)
    return 0


if __name__ == "__main__":
    sys.exit(main())
