"""Where the wall time of `serdes run --threads N` goes, from timestamps: whole CLI
runs per tree (this tree and a base revision, paired and interleaved; each round also
runs both in one thread for the CPU-based ratio), with every range's
start and end (monotonic clock, shared by the processes) and CPU time in the process that
counted it (a worker, or the parent, which counts ranges too), and the parent's marks
(workers forked, its work while they count, last range merged, end). From them: the
serial part before the fork (CPU), each counting process's CPU, the time each ran no range
between the fork and the last range's end (waiting for work, or the parent's report
work), the time from the first process's finish to the last's (the late tail), the
parent's time after the last range, and idle core-seconds before the fork, while the
ranges are counted and after. Wall clocks (and so the idle core-seconds) mean little on
a shared machine; the CPU accounts move less.

Run: python benchmarks/threads_timeline.py REV [SYMBOLS [ROUNDS [THREADS]]]
     (default 1e8 symbols, 2 rounds, 2 threads; the default link, no error target,
     the CTLE choice from the on-disk cache after the first run)
"""

from __future__ import annotations

import statistics
import sys

from threads_common import PRELUDE, RUN_CLI, ROOT, arguments, base_tree, one

MEASURE = PRELUDE + r"""
marks, ranges = {"parent": os.getpid()}, []
drive, task = br._drive, br.run_range
def timed_task(*a, **k):   # in the workers (forked after the patch) and in the parent
    t0, ca = time.perf_counter(), time.process_time()
    r = task(*a, **k)
    r.timing = (os.getpid(), t0, time.perf_counter(), time.process_time() - ca)
    return r
br.run_range = timed_task
def timed_drive(ex, *a, **k):
    marks["serial_cpu"] = time.process_time() - c0
    marks["fork"] = time.perf_counter()
    out = drive(ex, *a, **k)
    marks["drive_end"] = time.perf_counter()
    marks["drive_cpu"] = time.process_time() - c0 - marks["serial_cpu"]
    return out
br._drive = timed_drive
merge_add = br._Merge.add
def timed_add(self, r):
    if hasattr(r, "timing"):
        ranges.append(r.timing)
    return merge_add(self, r)
br._Merge.add = timed_add
""" + RUN_CLI + r"""
print(json.dumps(dict(marks, serial_cpu=marks.get("serial_cpu", 0.0), fork=marks.get("fork", 0.0), w0=w0, end=time.perf_counter(), cpu=time.process_time() - c0,
                      ranges=ranges, workers_cpu=ch.ru_utime + ch.ru_stime,
                      bit_errors=rep["bit_errors"], threads=rep.get("threads", 1),
                      load=os.getloadavg()[0])))
"""


def accounts(m: dict, threads: int) -> dict:
    """The run's accounts from its marks and its ranges' timestamps. Idle core-seconds
    (``threads`` cores, wall times: meaningful only when the cores are otherwise quiet):
    before the fork (the serial part: all but one core), from the fork to the last range
    merged (cores times that wall minus the CPU of the workers and of the parent in it)
    and after it (the report, with the workers gone)."""
    per = {}
    for pid, a, b, cpu in m["ranges"]:
        per.setdefault(pid, []).append((a, b, cpu))
    last = max(b for v in per.values() for _, b, _ in v)
    work = {p: (sum(c for *_, c in v), min(a for a, _, _ in v), max(b for _, b, _ in v),
                sum(b - a for a, b, _ in v)) for p, v in per.items()}
    # idle: from the fork to the last range's end, the time a counter ran no range
    idle = {p: (last - m["fork"]) - busy for p, (_, _, _, busy) in work.items()}
    finish = sorted(e for _, _, e, _ in work.values())
    parent_ranges = work.get(m["parent"], (0.0,))[0]
    count_wall = m["drive_end"] - m["fork"]
    after_wall = m["end"] - m["drive_end"]
    after_cpu = m["cpu"] - m["serial_cpu"] - m["drive_cpu"]
    serial_wall = m["fork"] - m["w0"]
    return dict(serial_cpu=m["serial_cpu"], serial_wall=serial_wall,
                parent_after_fork_cpu=m["cpu"] - m["serial_cpu"],
                parent_ranges_cpu=parent_ranges,
                parent_other_cpu=m["drive_cpu"] - parent_ranges,
                ranges_cpu=sorted(c for c, *_ in work.values()),
                first_start=min(s for _, s, _, _ in work.values()) - m["fork"],
                idle=sorted(idle.values()), tail=finish[-1] - finish[0],
                after=m["end"] - last, wall=m["end"] - m["w0"],
                idle_serial=(threads - 1) * serial_wall,
                idle_count=threads * count_wall - m["workers_cpu"] - m["drive_cpu"],
                idle_after=threads * after_wall - after_cpu,
                workers_cpu=m["workers_cpu"], n=len(m["ranges"]), load=m["load"],
                bit_errors=m["bit_errors"])


def show(name, a) -> str:
    return (f"{name:4s}: serial {a['serial_cpu']:.2f} s CPU ({a['serial_wall']:.2f} s wall), "
            f"parent after the fork {a['parent_after_fork_cpu']:.2f} s CPU (its ranges "
            f"{a['parent_ranges_cpu']:.2f} s, other work while they count "
            f"{a['parent_other_cpu']:.2f} s), ranges' CPU per "
            f"process " + "/".join(f"{c:.2f}" for c in a["ranges_cpu"])
            + f" s (processes {a['workers_cpu']:.2f} s), first range starts "
            f"{a['first_start']:.2f} s after the fork, no range running per process "
            + "/".join(f"{x:.2f}" for x in a["idle"]) + f" s, late tail {a['tail']:.2f} s, "
            f"after the last range {a['after']:.2f} s, wall {a['wall']:.2f} s; idle "
            f"core-s: serial {a['idle_serial']:.2f}, count {a['idle_count']:.2f}, after "
            f"{a['idle_after']:.2f}; {a['n']} "
            f"ranges, {a['bit_errors']} bit errors, load {a['load']:.1f}")


def main(argv) -> None:
    rev, symbols, rounds, threads = arguments(argv, 2)
    with base_tree(rev, MEASURE) as (script, base):
        rows = {"base": [], "this": []}
        single = {"base": [], "this": []}
        one(script, base, 4 * 65536 * threads, threads)   # numba caches of both trees
        one(script, ROOT, 4 * 65536 * threads, threads)
        for r in range(rounds):
            for name in (("base", "this") if r % 2 == 0 else ("this", "base")):
                tree = base if name == "base" else ROOT
                a = accounts(one(script, tree, symbols, threads), threads)
                rows[name].append(a)
                print(f"round {r} " + show(name, a), flush=True)
                s1 = one(script, tree, symbols, 1)
                single[name].append(s1)
                print(f"round {r} {name:4s} one thread: {s1['cpu']:.2f} s CPU, wall "
                      f"{s1['end'] - s1['w0']:.2f} s; {s1['bit_errors']} bit errors, load "
                      f"{s1['load']:.1f}", flush=True)
        errs = {a["bit_errors"] for v in rows.values() for a in v}
        assert len(errs) == 1, f"the trees counted different errors: {errs}"
        for k, v in rows.items():
            med = {f: statistics.median(a[f] for a in v)
                   for f in ("serial_cpu", "parent_after_fork_cpu", "workers_cpu", "tail",
                             "after", "wall", "idle_serial", "idle_count", "idle_after")}
            idle = statistics.median(sum(a["idle"]) for a in v)
            one_cpu = statistics.median(s["cpu"] for s in single[k])
            # two idle cores: the serial part, then the workers' and the parent's CPU
            # shared evenly (an upper bound on the speed-up: idle time not counted)
            est = med["serial_cpu"] + (med["workers_cpu"] + med["parent_after_fork_cpu"]) / threads
            print(f"{k} ({rev if k == 'base' else 'this tree'}), medians of {rounds}: serial "
                  f"{med['serial_cpu']:.2f} s CPU, parent after the fork "
                  f"{med['parent_after_fork_cpu']:.2f} s CPU, workers {med['workers_cpu']:.2f} "
                  f"s CPU, idle of the workers together {idle:.2f} s, late tail "
                  f"{med['tail']:.2f} s, after the last range {med['after']:.2f} s, wall "
                  f"{med['wall']:.2f} s; idle core-s: serial {med['idle_serial']:.2f}, count "
                  f"{med['idle_count']:.2f}, after {med['idle_after']:.2f}; one thread "
                  f"{one_cpu:.2f} s CPU: {one_cpu / est:.2f}x from CPU ({est:.2f} s on "
                  f"{threads} idle cores)")


if __name__ == "__main__":
    main(sys.argv[1:])
