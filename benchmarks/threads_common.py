"""What `threads_timeline.py` and `threads_serial.py` share: their arguments, the base
tree (REV's `serdes/` from `git archive`, with the instrumenting script beside it), and
one whole `serdes run --threads N` of a tree through that script, which prints one JSON
line. A script is PRELUDE, its own instrumentation (patches of
`serdes.engines.blocks_run`, here named `br`), RUN_CLI, and a print of one JSON object
(`rep` is the run's `--json` report, `ch` the workers' resource usage).
"""

from __future__ import annotations

import contextlib
import json
import os
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]

PRELUDE = r'''
import json, os, resource, sys, time
sys.path.insert(0, sys.argv[1])
w0 = time.perf_counter()
c0 = time.process_time()
import serdes.engines.blocks_run as br
'''

RUN_CLI = r'''
import serdes.cli
import io, contextlib
buf = io.StringIO()
with contextlib.redirect_stdout(buf):
    rc = serdes.cli.main(sys.argv[2:])
ch = resource.getrusage(resource.RUSAGE_CHILDREN)
rep = json.loads(buf.getvalue())
'''


def arguments(argv, rounds: int) -> tuple[str, str, int, int]:
    """REV [SYMBOLS [ROUNDS [THREADS]]]: (rev, symbols as an integer string, rounds,
    threads); defaults 1e8 symbols, ``rounds``, 2 threads. Without REV: the usage line
    and exit code 2."""
    if not argv or argv[0].startswith("-"):
        print(f"usage: {Path(sys.argv[0]).name} REV [SYMBOLS [ROUNDS [THREADS]]] "
              "(REV: the base revision to compare with, e.g. HEAD~1)", file=sys.stderr)
        sys.exit(2)
    rev = argv[0]
    symbols = str(int(float(argv[1]))) if len(argv) > 1 else str(10 ** 8)
    return (rev, symbols, int(argv[2]) if len(argv) > 2 else rounds,
            int(argv[3]) if len(argv) > 3 else 2)


@contextlib.contextmanager
def base_tree(rev: str, measure: str):
    """(script, base): the instrumenting script and REV's tree, in a temporary folder."""
    with tempfile.TemporaryDirectory() as tmp:
        base = Path(tmp) / "base"
        base.mkdir()
        arch = subprocess.run(["git", "-C", str(ROOT), "archive", rev, "serdes"],
                              check=True, capture_output=True).stdout
        subprocess.run(["tar", "-x", "-C", str(base)], input=arch, check=True)
        script = Path(tmp) / "measure.py"
        script.write_text(measure)
        yield script, base


def one(script, tree, symbols, threads) -> dict:
    """One whole CLI run of ``tree`` (default link, no error target) under ``script``."""
    out = subprocess.run([sys.executable, str(script), str(tree), "run", "--json",
                          "--no-progress", "--set", f"link.symbols={symbols}", "--set",
                          "link.target_errors=0", "--threads", str(threads)],
                         capture_output=True, text=True, check=True,
                         env={**os.environ, "PYTHONPATH": str(tree)})
    return json.loads(out.stdout.strip().splitlines()[-1])


# a function for the scripts of benchmarks that compare two trees' statistical engines:
# the statistical sections of `serdes run` (report._stat_parts) of a built link on its
# designed taps: CPU time, BER, per-eye rates, eye heights and widths
STAT_PARTS = r'''
def stat_parts(system):
    import dataclasses, time
    import numpy as np
    from serdes.engines.run import design_equalizer
    from serdes.report import _stat_parts
    d = design_equalizer(system)
    taps = dataclasses.replace(d, ffe=np.asarray(d.ffe, dtype=np.float64),
                               dfe=np.asarray(d.dfe, dtype=np.float64))
    t0 = time.process_time()
    r = _stat_parts(system, taps)
    eyes = r["stat_eye"]["eyes"]
    return {"cpu_s": time.process_time() - t0, "ber": r["sb"].ber,
            "per_eye": [float(v) for v in r["sb"].ber_per_eye],
            "height": [eyes[e]["height"] for e in eyes],
            "width_ui": [eyes[e]["width_ui"] for e in eyes]}
'''


def both_trees(rev: str, measure: str, args) -> dict:
    """{"new": ..., "old": ...}: the JSON that the script ``measure`` prints, run with the
    tree's path and ``args``, for this checkout and then for REV's tree."""
    runs = {}
    with base_tree(rev, measure) as (script, old):
        for name, tree in (("new", ROOT), ("old", old)):
            runs[name] = json.loads(subprocess.run(
                [sys.executable, str(script), str(tree), *args], check=True,
                capture_output=True, text=True).stdout)
    return runs


def cases_of_both_trees(doc: str, measure: str, default: str, argv=None):
    """The command line REV [--cases ...] of a script that compares two trees' cases
    (``doc``: the script's docstring, ``default``: its case letters), and
    :func:`both_trees`' runs of those cases: (cases, runs)."""
    import argparse

    ap = argparse.ArgumentParser(description=doc.splitlines()[0])
    ap.add_argument("rev", help="the earlier revision (commit, tag, branch)")
    ap.add_argument("--cases", nargs="+", default=list(default))
    args = ap.parse_args(argv)
    return args.cases, both_trees(args.rev, measure, args.cases)
