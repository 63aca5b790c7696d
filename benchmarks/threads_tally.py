"""CPU per chunk of a split run's per-block tally (`serdes.parallel._Tally`, the observer
every range of `serdes run --threads N` runs), this tree against a base revision's, in
one process: the aligned chunks of one range of the default link are recorded once and
replayed through both tallies, rounds interleaved (the order reverses every round), and
the two tallies' block counts must agree exactly. The one-thread observers
(ErrorCounter, Bursts, SnrMeter) on the same chunks are timed beside them as the
baseline of what one thread pays for the same counting.

Run: taskset -c 1 python benchmarks/threads_tally.py BASE_REV [ROUNDS [--set key=value ...]]
     (default 7 rounds; the default link with 1e8 symbols, its second range)
"""

from __future__ import annotations

import importlib.util
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from serdes.build import build
from serdes.config import Config
from serdes.engines.run import design_equalizer, pipeline
from serdes.heap import keep_freed_memory
from serdes.metrics.ber import ErrorCounter
from serdes.parallel import _Tally, plan, run_range
from serdes.pipeline import Bursts, SnrMeter

ROOT = Path(__file__).resolve().parents[1]


def _base_module(rev: str, tmp: str):
    """``serdes/parallel.py`` of ``rev`` as a module of its own (it imports only
    names that this tree's serdes still has)."""
    src = subprocess.run(["git", "-C", str(ROOT), "show", f"{rev}:serdes/parallel.py"],
                         check=True, capture_output=True, text=True).stdout
    path = Path(tmp) / "base_parallel.py"
    path.write_text(src)
    spec = importlib.util.spec_from_file_location("base_parallel", path)
    mod = importlib.util.module_from_spec(spec)
    sys.modules["base_parallel"] = mod   # its dataclasses look their module up
    spec.loader.exec_module(mod)
    return mod


def _counts(tally) -> tuple:
    r = tally.result(0, 0)
    return (r.symbols.tolist(), r.sym_err.tolist(), r.bit_err.tolist(), r.sq_err.tolist(),
            r.sq_sig.tolist(), r.full.tolist(), r.lead.tolist(), r.trail.tolist(), r.inner)


def main(argv) -> None:
    rev = argv[0]
    rounds = int(argv[1]) if len(argv) > 1 and not argv[1].startswith("--") else 7
    sets = [a for a in argv[1:] if a != "--set" and "=" in a]
    keep_freed_memory()   # as in `serdes run`
    cfg = Config.default().with_overrides(["link.symbols=100000000", "link.target_errors=0",
                                           *sets])
    system = build(cfg, cache=True)
    taps = design_equalizer(system)
    pipe = pipeline(system, taps, engine="pulse", seed=system.run.seed)
    task = list(plan(system, pipe, 2))[1]
    recs = []

    class Recorder(_Tally):
        def observe(self, rec):
            recs.append(rec)
            super().observe(rec)

    import serdes.parallel as par
    par._Tally, keep = Recorder, par._Tally
    try:
        run_range(system, taps, "pulse", task, 1 << 17)
    finally:
        par._Tally = keep
    with tempfile.TemporaryDirectory() as tmp:
        base = _base_module(rev, tmp)
    kinds = {"base": base._Tally, "this": _Tally}
    cpu = {"base": [], "this": [], "one-thread observers": []}
    got = {}
    for r in range(rounds):
        for name in (("base", "this", "one-thread observers") if r % 2 == 0
                     else ("one-thread observers", "this", "base")):
            if name in kinds:
                tally = kinds[name](task, pipe.levels, 1 << 17)
                c0 = time.process_time()
                for rec in recs:
                    tally.observe(rec)
                cpu[name].append(time.process_time() - c0)
                got[name] = _counts(tally)
            else:
                obs = (ErrorCounter(pipe.m, skip=0), Bursts(), SnrMeter(pipe.levels))
                c0 = time.process_time()
                for rec in recs:
                    for o in obs:
                        o.observe(rec)
                cpu[name].append(time.process_time() - c0)
    assert got["base"] == got["this"], "the tallies counted differently"
    per = {k: 1e6 * statistics.median(v) / len(recs) for k, v in cpu.items()}
    errors = sum(got["this"][1])
    print(f"{len(recs)} chunks of range 1 ({task.end - task.first} symbols, {errors} symbol "
          f"errors), medians of {rounds} rounds: " + ", ".join(
              f"{k} {v:.0f} us/chunk" for k, v in per.items())
          + f"; this/base {per['this'] / per['base']:.2f}x; over a 1e8-symbol run "
          f"({100_000_000 // 65536 + 1} chunks) {(per['base'] - per['this']) * 1526e-6:+.2f} "
          "s CPU less in the workers")


if __name__ == "__main__":
    main(sys.argv[1:])
