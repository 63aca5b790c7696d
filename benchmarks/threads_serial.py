"""The CPU accounts of `serdes run --threads N`, this tree against a base revision, in
paired and interleaved whole-CLI runs: the parent's serial part (CPU before the workers
start: imports, build, equalizer design, the kernels loaded for the fork), the parent's
CPU after it (the report's statistical sections, merging, and the ranges it counts
itself), the workers' CPU (all of them) and the wall clock. CPU times move less with the
machine's load than the wall clock does; on 2 cores the wall clock of a split run is
about the serial part plus (workers' CPU + the parent's later CPU) / 2.

Run: python benchmarks/threads_serial.py REV [SYMBOLS [ROUNDS [THREADS]]]
     (default 1e8 symbols, 3 rounds, 2 threads; the default link, no error target,
     the CTLE choice from the on-disk cache after the first run)
"""

from __future__ import annotations

import statistics
import sys

from threads_common import PRELUDE, RUN_CLI, ROOT, arguments, base_tree, one

MEASURE = PRELUDE + r'''
marks = {}
drive = br._drive
def timed_drive(*a, **k):          # the workers are forked at the first range handed out
    marks["serial_cpu"] = time.process_time()
    marks["serial_wall"] = time.perf_counter() - w0
    return drive(*a, **k)
br._drive = timed_drive
''' + RUN_CLI + r'''
print(json.dumps(dict(marks, rc=rc, cpu=time.process_time(), wall=time.perf_counter() - w0,
                      workers_cpu=ch.ru_utime + ch.ru_stime, bit_errors=rep["bit_errors"],
                      threads=rep.get("threads", 1), load=os.getloadavg()[0])))
'''


def main(argv) -> None:
    rev, symbols, rounds, threads = arguments(argv, 3)
    with base_tree(rev, MEASURE) as (script, base):
        rows = {"base": [], "this": []}
        one(script, base, 2 * 65536 * threads, threads)   # numba caches of both trees
        one(script, ROOT, 2 * 65536 * threads, threads)
        for r in range(rounds):
            for name in (("base", "this") if r % 2 == 0 else ("this", "base")):
                m = one(script, base if name == "base" else ROOT, symbols, threads)
                assert m["threads"] == threads, m
                rows[name].append(m)
                print(f"round {r} {name:4s}: serial {m['serial_cpu']:.2f} s CPU "
                      f"({m['serial_wall']:.2f} s wall), parent after it "
                      f"{m['cpu'] - m['serial_cpu']:.2f} s CPU, workers "
                      f"{m['workers_cpu']:.2f} s CPU (with the parent's after the fork "
                      f"{(m['workers_cpu'] + m['cpu'] - m['serial_cpu']) / threads:.2f} s a "
                      f"core), wall {m['wall']:.2f} s; {m['bit_errors']} bit errors; load "
                      f"average {m['load']:.1f}", flush=True)
        errs = {m["bit_errors"] for v in rows.values() for m in v}
        assert len(errs) == 1, f"the trees counted different errors: {errs}"
        med = {k: {f: statistics.median(m[f] if f != "after" else m["cpu"] - m["serial_cpu"]
                                        for m in v)
                   for f in ("serial_cpu", "after", "workers_cpu", "wall")}
               for k, v in rows.items()}
        for k, v in med.items():
            est = v["serial_cpu"] + (v["workers_cpu"] + v["after"]) / threads
            print(f"{k} ({rev if k == 'base' else 'this tree'}), medians of {rounds}: serial "
                  f"{v['serial_cpu']:.2f} s CPU, parent after it {v['after']:.2f} s, workers "
                  f"{v['workers_cpu']:.2f} s (the parent's included: "
                  f"{(v['workers_cpu'] + v['after']) / threads:.2f} s a core), wall "
                  f"{v['wall']:.2f} s; from CPU on {threads} idle cores: {est:.2f} s")
        d = [b["serial_cpu"] - t["serial_cpu"] for b, t in zip(rows["base"], rows["this"])]
        print(f"serial part: {statistics.median(d):+.3f} s CPU less than {rev} (paired "
              "differences " + ", ".join(f"{x:+.3f}" for x in d) + f"); {errs.pop()} bit errors")


if __name__ == "__main__":
    main(sys.argv[1:])
