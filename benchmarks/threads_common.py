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
