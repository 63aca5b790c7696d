"""The README's speed table from one run of the goal benchmarks, each row beside its
baseline measured in the same run.

    python3 benchmarks/speed_table.py [--base REV] [--quick] [--out table.md]

Runs, in this order: the single-thread benchmarks in one pytest process pinned to one
core (``taskset -c 1``: bench_core, bench_jitter, bench_cdr, bench_statistical,
bench_mlse), the multi-process ones unpinned (bench_parallel.py as its own process, 3
rounds; bench_sweep; bench_threads_cli.py at 1e8 symbols on numba's JIT, then
``serdes precompile`` and the same with the precompiled kernels; then the default
command at 1e5 symbols, warm, precompiled against JIT), then
compare_engines.py against ``--base`` (the revision the waveform and statistical-SJ rows
are compared with; default: the tree before the second round of speed work), startup.py
and peers.py (serdespy and PyBERT on the DPO_4in channel; rows say why when a peer or
the channel file is absent). Prints the Markdown section (the paragraph and the table)
to paste under "## Speed"; ``--out`` also writes it to a file; the raw numbers go to
``--json``. The paragraph gives the run's wall and CPU time (all its processes);
``--quick`` leaves out the NumPy eye baseline (~45 s CPU a round) and PyBERT (~40 s CPU),
and their rows say so.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import resource
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
BENCH = ROOT / "benchmarks"
# the tree the second round of speed work started from (waveform and statistical-SJ rows)
BASE = "93896a7"

PINNED = [
    "bench_core.py::test_ffe_kernel_24_taps",
    "bench_core.py::test_dfe_kernel_vs_python_loop",
    "bench_core.py::test_end_to_end_pulse_engine",
    "bench_jitter.py::test_default_link_rj_vs_no_jitter",
    "bench_jitter.py::test_256ui_pulse_rj_vs_no_jitter",
    "bench_cdr.py::test_cdr_vs_fixed_phase_speed",
    "bench_statistical.py::test_statistical_eye_numba",
    "bench_statistical.py::test_statistical_eye_numba_independent",
    "bench_statistical.py::test_statistical_eye_numpy_baseline",
    "bench_mlse.py::test_viterbi_kernel",
]
UNPINNED = ["bench_sweep.py::test_sweep_throughput"]
# the --threads row: bench_parallel.py as its own process (as one runs it by hand and as
# `serdes run` is its own process), 3 rounds, the medians; inside the pytest process the
# same measurement read 1.35x where the script read 1.6-1.7x on the same tree
PARALLEL = ["1e7", "2", "--rounds", "3", "--json"]
# goal 3 as a user meets it: whole `serdes run --threads 2` CLI processes against
# `--threads 1` at 1e8 symbols, 5 interleaved rounds, once on numba's JIT (SERDES_AOT=off)
# and once with the precompiled kernels (`serdes precompile` first)
THREADS_CLI = ["1e8", "5", "2", "--json"]


def _pin() -> list[str]:
    return ["taskset", "-c", "1"] if shutil.which("taskset") else []


def _env() -> dict:
    # every row on numba's JIT (as after a plain install) but the one that says otherwise
    return dict(os.environ, PYTHONPATH=str(ROOT), QT_QPA_PLATFORM="offscreen",
                SERDES_BENCH_CLOCK="cpu", SERDES_AOT="off")


def _log(msg: str) -> None:
    print(msg, file=sys.stderr, flush=True)


def run_pytest(nodes: list[str], pin: bool, tmp: Path, name: str) -> dict:
    """{test name (with parameters): benchmark dict} of one pytest process."""
    out = tmp / f"{name}.json"
    # single-thread rows in CPU time; the multi-process ones time themselves (wall and
    # CPU of the workers)
    timer = ["--benchmark-timer=time.process_time"] if pin else []
    cmd = (_pin() if pin else []) + [
        sys.executable, "-m", "pytest", *nodes, "--benchmark-only", f"--benchmark-json={out}",
        *timer, "-p", "no:cacheprovider", "-q", "-s", "-o", "addopts="]
    _log(f"[speed_table] {name}: {len(nodes)} benchmark nodes")
    r = subprocess.run(cmd, cwd=str(BENCH), env=_env(), capture_output=True, text=True)
    if r.returncode != 0:
        _log(r.stdout[-3000:] + r.stderr[-2000:])
    if not out.exists():
        return {}
    return {b["name"]: b for b in json.loads(out.read_text())["benchmarks"]}


def run_script(args: list[str], pin: bool = False, env: dict | None = None) -> str:
    _log(f"[speed_table] {' '.join(args)}" + "".join(f" {k}={v}" for k, v in (env or {}).items()))
    r = subprocess.run((_pin() if pin else []) + [sys.executable, *args], cwd=str(ROOT),
                       env=dict(_env(), **(env or {})), capture_output=True, text=True)
    if r.returncode != 0:
        _log(r.stderr[-2000:])
    return r.stdout


def warm_short_runs(rounds: int = 5) -> dict:
    """Goal 5 as a user meets it: the default command, ``serdes run --set
    link.symbols=100000`` (text summary with the statistical BER), warm (CTLE choice
    cached, kernels compiled or precompiled), whole processes pinned to one core
    (``startup_paired._run``), interleaved rounds of the precompiled kernels and numba's
    JIT: medians of CPU (user + system) and wall seconds per variant ({} if a run failed
    or taskset is missing)."""
    from startup_paired import _run

    cmd = [sys.executable, "-m", "serdes.cli", "run", "--set", "link.symbols=100000"]
    out = {"aot": [], "jit": []}
    for r in range(rounds + 1):                     # round 0 warms both variants' caches
        for key in ("aot", "jit"):
            env = dict(_env(), SERDES_AOT="on" if key == "aot" else "off")
            try:
                wall, cpu, _ = _run(cmd, env, str(ROOT), 1)
            except (OSError, subprocess.CalledProcessError):
                return {}
            if r:
                out[key].append((cpu, wall))
    med = statistics.median
    return {k: dict(cpu_s=med(c for c, _ in v), wall_s=med(w for _, w in v),
                    cpu_lo=min(c for c, _ in v), cpu_hi=max(c for c, _ in v),
                    rounds=len(v)) for k, v in out.items()}


def _m(x: float) -> str:
    return f"{x / 1e6:.1f}" if x >= 1e7 else f"{x / 1e6:.2f}"


def _k(x: float) -> str:
    return f"{x / 1e3:.0f}" if x >= 1e4 else f"{x / 1e3:.1f}"


def rows_from(b: dict, engines: str, startup: str, peers: list[dict] | None,
              quick: bool, base: str, parallel: dict | None = None,
              threads_cli: dict | None = None, short: dict | None = None
              ) -> list[tuple[str, str, str]]:
    rows = []
    missing = "not measured in this run (see the log)"

    def info(name):
        return b.get(name, {}).get("extra_info", {})

    def tmin(name):
        return b[name]["stats"]["min"] if name in b else float("nan")

    e = info("test_ffe_kernel_24_taps")
    rows.append(("FFE kernel, 24 taps",
                 f"{_m(e['symbols_per_s'])} M samples/s" if e else missing,
                 f"numpy.convolve {_m(e['numpy_symbols_per_s'])} M/s "
                 f"({e['speedup_vs_numpy']:.1f}x)" if e else ""))
    e = info("test_dfe_kernel_vs_python_loop")
    rows.append(("DFE kernel, 1 tap, PAM4 slicer",
                 f"{_m(e['symbols_per_s'])} M symbols/s" if e else missing,
                 f"Python loop {_m(e['python_symbols_per_s'])} M/s "
                 f"({e['speedup_vs_python']:.0f}x)" if e else ""))
    e = info("test_end_to_end_pulse_engine")
    rows.append(("end to end, default link without jitter (64-UI pulse, 24-tap FFE, 1-tap DFE)",
                 f"{_m(e['symbols_per_s'])} M symbols/s" if e else missing,
                 f"NumPy + Python DFE {_m(e['numpy_symbols_per_s'])} M/s "
                 f"({e['speedup_vs_numpy']:.0f}x)" if e else ""))
    for test, what in (("test_default_link_rj_vs_no_jitter",
                        "end to end, default link with 0.01 UI RJ (Taylor-2 path)"),
                       ("test_256ui_pulse_rj_vs_no_jitter",
                        "end to end, 256-UI pulse with 0.01 UI RJ")):
        e = info(test)
        rows.append((what,
                     f"{e['ratio']:.2f}x the jitter-free time ({e['jitter_msym_s']:.2f} vs "
                     f"{e['no_jitter_msym_s']:.2f} M symbols/s; {e['path']} path)" if e
                     else missing,
                     "same link without jitter, paired (`bench_jitter.py`)"))
    e = info("test_cdr_vs_fixed_phase_speed")
    rows.append(("end to end, default link with the MM clock-recovery loop (`cdr.mode = \"mm\"`)",
                 f"{e['ratio']:.2f}x the fixed-phase time ({e['cdr_msym_s']:.2f} vs "
                 f"{e['fixed_msym_s']:.2f} M symbols/s)" if e else missing,
                 "same link, fixed phase, paired (`bench_cdr.py`)"))
    t_nb, t_np = tmin("test_statistical_eye_numba"), tmin("test_statistical_eye_numpy_baseline")
    t_in = tmin("test_statistical_eye_numba_independent")
    rows.append(("statistical eye, 64 phases x 256 bins to 1e-15, 64-UI pulse, 0.01 UI RJ",
                 (f"{t_nb:.2f} s (RJ classes joint with the ISI); {t_in:.2f} s with the "
                  "classes independent of it" if t_nb == t_nb else missing),
                 (f"NumPy version of the independent classes {t_np:.0f} s "
                  f"({t_np / t_in:.0f}x)" if t_np == t_np else
                  "NumPy version not run (`--quick`)" if quick else missing)))
    vit = [info(f"test_viterbi_kernel[{m}]") for m in (1, 2, 3)]
    rows.append(("Viterbi PAM4, memory 1 / 2 / 3 (4 / 16 / 64 states)",
                 " / ".join(_m(v["symbols_per_s"]) for v in vit) + " M symbols/s"
                 if all(vit) else missing,
                 "NumPy " + " / ".join(_k(v["numpy_symbols_per_s"]) for v in vit) + " k/s"
                 if all(vit) else ""))
    e = info("test_sweep_throughput")
    rows.append(("sweep, 64 points x 1e5 symbols",
                 f"{e['points_per_min_1_workers']:.0f} points/min (1 worker), "
                 f"{e['points_per_min_2_workers']:.0f} (2)" if e else missing, ""))
    e = parallel
    rows.append((f"one run on 2 worker processes (`serdes run --threads 2`), "
                 f"{e.get('symbols', 0):.0e} symbols, default link" if e else
                 "one run on 2 worker processes (`serdes run --threads 2`)",
                 f"{e['ratio']:.2f}x wall ({e['ratio_lo']:.2f}-{e['ratio_hi']:.2f}), "
                 f"{e['per_core_ratio']:.2f}x per core from CPU time ({e['per_core_lo']:.2f}-"
                 f"{e['per_core_hi']:.2f}); median of {e['rounds']} rounds (same "
                 f"{e['bit_errors']} bit errors; load average {e['load_lo']:.1f}-"
                 f"{e['load_hi']:.1f})" if e else missing,
                 f"the same run in one thread, {e['symbols'] / e['one_cpu_s'] / 1e6:.2f} M "
                 f"symbols/s CPU ({e['one_symbols_per_s'] / 1e6:.2f} M/s wall; "
                 f"`bench_parallel.py {' '.join(PARALLEL[:-1])}`)" if e else ""))
    for key, how in (("jit", "numba's JIT (`SERDES_AOT=off`)"),
                     ("aot", "the precompiled kernels (`serdes precompile`)")):
        e = (threads_cli or {}).get(key)
        rows.append(("whole CLI, `serdes run --threads 2` against `--threads 1`, 1e8 symbols, "
                     f"default link, {how}",
                     f"wall ratio median {e['ratio']:.2f}x ("
                     + ", ".join(f"{x:.2f}" for x in e["ratios"]) + f"); one thread "
                     f"{min(e['one_wall_s']):.1f}-{max(e['one_wall_s']):.1f} s wall, two "
                     f"{min(e['n_wall_s']):.2f}-{max(e['n_wall_s']):.2f} s; {e['bit_errors']} "
                     f"bit errors in every run; load average {e['load_lo']:.1f}-"
                     f"{e['load_hi']:.1f}" if e else missing,
                     "the same command in one thread, rounds interleaved "
                     f"(`bench_threads_cli.py {' '.join(THREADS_CLI[:-1])}`)"))
    w = re.search(r"waveform, median of (\d+) pairs: ([\d.]+) -> ([\d.]+) M symbols/s "
                  r"\(([\d.]+)x; pair ratios ([\d.]+-[\d.]+)\)", engines)
    rows.append(("waveform engine, default link (noise, 0.01 UI RJ), CPU time",
                 f"{float(w.group(3)):.2f} M symbols/s" if w else missing,
                 f"revision {base}: {float(w.group(2)):.2f} M/s ({w.group(4)}x, median of "
                 f"{w.group(1)} paired runs, pair ratios {w.group(5)}; "
                 "`compare_engines.py`)" if w else ""))
    s = re.search(r"SJ stat report ([\d.]+) -> ([\d.]+) s \(([\d.]+)x[;)]", engines)
    rows.append(("statistical BER + eye openings with SJ 0.1 UI at 1 MHz (each tap its own "
                 "phase), no RJ, CPU time",
                 f"{float(s.group(2)):.2f} s" if s else missing,
                 f"revision {base}: {float(s.group(1)):.2f} s ({s.group(3)}x; "
                 "`compare_engines.py`)" if s else ""))
    c = re.search(r"cold ([\d.]+) s wall \(([\d.]+) s CPU\), warm best ([\d.]+) s wall.*?"
                  r"CPU best ([\d.]+) s", startup)
    rows.append(("warm `serdes run --set link.symbols=100000 --no-stat`, CPU time",
                 f"{float(c.group(4)):.2f} s ({float(c.group(3)):.2f} s wall); cold "
                 f"{float(c.group(2)):.1f} s CPU ({float(c.group(1)):.1f} s wall)" if c
                 else missing,
                 "first run after install = cold (`startup.py`)"))
    e = short or {}
    rows.append(("warm `serdes run --set link.symbols=100000` (the default command: text "
                 "summary with the statistical BER), pinned, median of "
                 f"{e.get('aot', {}).get('rounds', 0)} interleaved rounds",
                 f"with the precompiled kernels {e['aot']['cpu_s']:.2f} s CPU "
                 f"({e['aot']['cpu_lo']:.2f}-{e['aot']['cpu_hi']:.2f}), "
                 f"{e['aot']['wall_s']:.2f} s wall" if e else missing,
                 f"numba's JIT, warm cache: {e['jit']['cpu_s']:.2f} s CPU "
                 f"({e['jit']['cpu_lo']:.2f}-{e['jit']['cpu_hi']:.2f}), "
                 f"{e['jit']['wall_s']:.2f} s wall" if e else ""))
    rows += peer_rows(peers, quick)
    return rows


def peer_rows(peers: list[dict] | None, quick: bool) -> list[tuple[str, str, str]]:
    rows = []
    for row in peers or []:
        label = {"serdespy": "serdespy 1.0", "pybert": "PyBERT"}.get(row["peer"], row["peer"])
        what = (f"the same link (DPO_4in, CTLE, 24-tap FFE + 1-tap DFE) beside {label}, "
                "CPU time, warm")
        if "skipped" in row:
            rows.append((what, "not measured", row["skipped"]))
            continue
        res = row["results"]
        ours = next(iter(res))
        mine, peer = res[ours], res[row["peer"]]
        extra = ""
        if row["peer"] == "serdespy":
            extra = (f"; with 0.01 UI RJ {res['serdes-rj']['symbols_per_s'] / 1e6:.2f} M/s"
                     f"; slicer SNR {mine['snr_db']:.2f} vs {peer['snr_db']:.2f} dB")
        elif "serdes-waveform" in res:  # PyBERT simulates the waveform: the like-for-like
            wf = res["serdes-waveform"]
            extra = (f"; the waveform engine {wf['symbols_per_s'] / 1e6:.2f} M/s "
                     f"({wf['symbols_per_s'] / peer['symbols_per_s']:.0f}x PyBERT), run "
                     f"memory {wf['run_peak_mb']:.0f} MB")
        rows.append((what + f", {row['symbols']:.0e} symbols",
                     f"{mine['symbols_per_s'] / 1e6:.2f} M symbols/s, run memory "
                     f"{mine['run_peak_mb']:.0f} MB{extra}",
                     f"{label} {_k(peer['symbols_per_s'])} k symbols/s, run memory "
                     f"{peer['run_peak_mb']:.0f} MB ({row['ratio']:.0f}x slower, "
                     f"{row['memory_ratio']:.1f}x the memory; `peers.py`)"))
    if quick:
        rows.append(("the same link beside PyBERT", "not measured", "left out (`--quick`)"))
    return rows


def _children_cpu_s() -> float:
    r = resource.getrusage(resource.RUSAGE_CHILDREN)
    return r.ru_utime + r.ru_stime


def markdown(rows, elapsed_s: float, load: tuple[float, float], cpu_s: float) -> str:
    head = ("Measured with `python3 benchmarks/speed_table.py` (one run: "
            f"{elapsed_s / 60:.1f} min wall, {cpu_s / 60:.1f} min CPU; load average "
            f"{load[0]:.1f} at the start and "
            f"{load[1]:.1f} at the end) on the 2-core development machine: single-thread "
            "rows in CPU time pinned to one core, numba compile time excluded by a warm-up, "
            "every row on numba's JIT unless it says otherwise, "
            "each row beside its baseline in the same run; absolute numbers on a shared "
            "machine vary by about 30 %, the ratios less:\n")
    lines = [head, "| what | serdes | baseline in the same run |", "|---|---|---|"]
    lines += [f"| {a} | {b} | {c} |" for a, b, c in rows]
    return "\n".join(lines) + "\n"


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--base", default=BASE, help="revision for compare_engines.py")
    ap.add_argument("--quick", action="store_true",
                    help="leave out the NumPy eye baseline and PyBERT")
    ap.add_argument("--out", help="also write the Markdown to this file")
    ap.add_argument("--json", help="write the raw numbers to this file")
    args = ap.parse_args(argv)
    t0, load0 = time.perf_counter(), os.getloadavg()[0]
    pinned = [n for n in PINNED if not (args.quick and "numpy_baseline" in n)]
    with tempfile.TemporaryDirectory() as tmp:
        b = run_pytest(pinned, True, Path(tmp), "pinned")
        try:
            parallel = json.loads(run_script([str(BENCH / "bench_parallel.py"), *PARALLEL]))
        except json.JSONDecodeError:
            parallel = None
        b.update(run_pytest(UNPINNED, False, Path(tmp), "unpinned"))
    threads_cli = {}
    for key in ("jit", "aot"):
        if key == "aot":
            run_script(["-m", "serdes.cli", "precompile"], env={"SERDES_AOT": "on"})
        try:
            threads_cli[key] = json.loads(run_script(
                [str(BENCH / "bench_threads_cli.py"), *THREADS_CLI],
                env=None if key == "jit" else {"SERDES_AOT": "on"}))
        except json.JSONDecodeError:
            pass
    _log("[speed_table] warm short runs, precompiled kernels and JIT")
    short = warm_short_runs()
    engines = run_script([str(BENCH / "compare_engines.py"), args.base, "--pairs", "5"])
    startup = run_script([str(BENCH / "startup.py"), "--runs", "3"])
    peers_cmd = [str(BENCH / "peers.py"), "--json", "--rounds", "2"]
    if args.quick:
        peers_cmd += ["--peers", "serdespy"]
    out = run_script(peers_cmd)
    try:
        peers = json.loads(out)
    except json.JSONDecodeError:
        peers = [dict(peer="serdespy / PyBERT", skipped=out.strip() or "peers.py failed")]
    if args.quick:
        peers = [p for p in peers if p.get("peer") != "pybert"]
    rows = rows_from(b, engines, startup, peers, args.quick, args.base, parallel, threads_cli,
                     short)
    md = markdown(rows, time.perf_counter() - t0, (load0, os.getloadavg()[0]),
                  _children_cpu_s())
    print(md)
    if args.out:
        Path(args.out).write_text(md)
    if args.json:
        Path(args.json).write_text(json.dumps(dict(
            benchmarks={k: dict(extra_info=v.get("extra_info"), min_s=v["stats"]["min"])
                        for k, v in b.items()},
            compare_engines=engines, parallel=parallel, threads_cli=threads_cli, short=short,
            startup=startup, peers=peers),
            indent=1, default=str))
    return 0


if __name__ == "__main__":
    sys.exit(main())
