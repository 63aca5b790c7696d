"""A run split into blocks (serdes run --threads N / --scheduler) counts exactly what one
thread counts: same bit and symbol errors, bursts, latency, stop block and counted eye.

The reference is the ordinary single-thread run of the same system and seed; links with
a high error rate (DFE error propagation across range boundaries) and the stop rule are
included, and a warm-up too short on purpose shows the boundary check catching it.
"""

from __future__ import annotations

import contextlib
import io
import json
import os

import numpy as np
import pytest

from conftest import EARLIER_DEFAULT
from serdes.build import build
from serdes.config import Config
from serdes.engines.blocks_run import simulate_split
from serdes.engines.run import simulate
from serdes.parallel import VERIFY
from serdes.pipeline import SlicerCapture
from serdes.signal.prbs import POLYNOMIALS, PrbsGenerator, lfsr_jump
from serdes.signal.source import SymbolSource

COUNTS = ("symbols", "bits", "bit_errors", "symbol_errors", "latency", "stopped_by", "bursts")


def _system(*sets):
    return build(Config.default().with_overrides(EARLIER_DEFAULT).with_overrides(list(sets)))


def _same_counts(a, b):
    for k in COUNTS:
        assert getattr(a, k) == getattr(b, k), k
    # the SNR sums are added in another order: equal to rounding
    assert a.snr_db == pytest.approx(b.snr_db, rel=1e-9)


# --------------------------------------------------------------- jumping ahead
@pytest.mark.parametrize("name", sorted(POLYNOMIALS))
def test_prbs_jump_equals_stepping(name):
    order, taps = POLYNOMIALS[name]
    for n in (0, 1, 2, 63, 1000, 12345):
        g = PrbsGenerator(name)
        g.bits(n)
        assert lfsr_jump((1 << order) - 1, order, taps, n) == g.state
        h = PrbsGenerator(name)
        h.skip(n)
        assert np.array_equal(h.bits(200), g.bits(200))


def test_prbs_jump_over_a_whole_period_returns_to_the_state():
    order, taps = POLYNOMIALS["prbs31"]
    assert lfsr_jump(12345, order, taps, (1 << order) - 1) == 12345
    assert lfsr_jump(12345, order, taps, 1 << 40) == lfsr_jump(
        lfsr_jump(12345, order, taps, 1 << 39), order, taps, 1 << 39)


@pytest.mark.parametrize("pattern", ["prbs31", "prbs9", "qprbs13", "random"])
@pytest.mark.parametrize("precoding", [False, True])
def test_source_seek_equals_stepping(pattern, precoding):
    for m in (2, 4):
        a = SymbolSource(pattern=pattern, m=m, precoding=precoding, seed=3)
        a.next(70001)
        b = SymbolSource(pattern=pattern, m=m, precoding=precoding, seed=3)
        b.seek(70001)
        for x, y in zip(a.next(5000), b.next(5000)):
            assert np.array_equal(x, y)


# ------------------------------------------------------------- equal counts
@pytest.mark.parametrize("threads,sets", [
    (2, ("link.seed=3", "channel.loss_db=34", "dfe.taps=3")),                # BER ~ 5e-3
    (3, ("link.seed=4", "channel.loss_db=38", "dfe.taps=4")),                # BER ~ 0.15
    (2, ("link.seed=5", "channel.loss_db=36", "link.precoding=true", "link.pattern=random",
         "noise.dd_ui=0.05", "noise.sj_ui=0.05", "link.chunk_symbols=10000")),
    (4, ("link.seed=6", "channel.loss_db=35", "link.pattern=qprbs13", "dfe.taps=2")),
    # TX jitter without clock recovery (its front end: block-seeded offsets, fixed phase)
    (2, ("link.seed=7", "channel.loss_db=34", "tx_jitter.rj_ui=0.02", "tx_jitter.dcd_ui=0.04",
         "tx_jitter.buj_ui=0.02", "tx_jitter.sj_ui=0.1", "tx_jitter.sj_hz=3e6")),
    (2, ("link.seed=9", "channel.loss_db=34", "tx_jitter.rj_ui=0.02", "adc.lanes=8",
         "adc.skew_rms_s=1e-12", "adc.offset_rms_v=2e-3")),
    # a reflection canceller with its taps placed from the pulse (frozen with MMSE taps)
    (2, ("link.seed=10", "channel.loss_db=33", "reflections.echo_delay_ui=60",
         "reflections.echo_db=-20", "link.pulse_ui=96", "rc.taps=4")),
    # MLSE: the boundary also compares the detector's path metrics and survivors
    (2, ("link.seed=12", "channel.loss_db=37", "eq.detector=mlse", "mlse.memory=2",
         "mlse.whitening=predictor")),
    (3, ("link.seed=13", "channel.loss_db=38", "eq.detector=mlse", "mlse.memory=1",
         "link.precoding=true", "reflections.echo_delay_ui=60", "reflections.echo_db=-20",
         "link.pulse_ui=96", "rc.taps=2", "link.chunk_symbols=10000")),
])
def test_split_run_counts_what_one_thread_counts(threads, sets):
    system = _system("link.symbols=700000", "link.target_errors=0", *sets)
    cap1 = SlicerCapture(1 << 17)
    one = simulate(system, observers=[cap1])
    assert one.bit_errors > 100  # the boundaries see error bursts in the DFE
    many, cap, how = simulate_split(system, threads=threads, capture_limit=1 << 17)
    assert how.threads == threads and how.tasks > threads
    _same_counts(one, many)
    assert cap.first == cap1.first
    assert np.array_equal(cap.sent, cap1.sent) and np.array_equal(cap.v, cap1.v)


@pytest.mark.parametrize("sets", [
    ("link.seed=16", "channel.loss_db=36"),
    ("link.seed=17", "channel.loss_db=35", "noise.rj_ui=0.02", "noise.sj_ui=0.05",
     "noise.sj_hz=1e6", "link.chunk_symbols=10000"),
    ("link.seed=18", "channel.loss_db=37", "eq.detector=mlse", "mlse.memory=2"),
])
def test_waveform_engine_split_counts_what_one_thread_counts(sets):
    """The waveform engine's noise is formed in blocks of absolute-indexed white noise,
    so a range starts at its own block (it was run in one thread)."""
    system = _system("link.symbols=600000", "link.target_errors=0", *sets)
    cap1 = SlicerCapture(1 << 16)
    one = simulate(system, engine="waveform", observers=[cap1])
    assert one.bit_errors > 100
    many, cap, how = simulate_split(system, engine="waveform", threads=2,
                                    capture_limit=1 << 16)
    assert how.threads == 2 and how.tasks > 2 and how.note is None
    _same_counts(one, many)
    assert np.array_equal(cap.v, cap1.v)


def test_waveform_ranges_are_short():
    """The waveform engine counts about 8x slower: its ranges are at most 16 blocks, so
    a process answers a Ctrl-C (and the merge moves on) within about a second."""
    from serdes.engines.run import design_equalizer, pipeline
    from serdes.parallel import plan

    system = _system("link.symbols=20000000", "link.target_errors=0")
    taps = design_equalizer(system)
    sizes = {e: max(t.end - t.first for t in plan(system, pipeline(system, taps, engine=e,
                                                                   seed=1), 2))
             for e in ("pulse", "waveform")}
    assert sizes["waveform"] <= 16 * 65536 < sizes["pulse"]


def test_stop_rule_stops_at_the_same_block():
    system = _system("link.symbols=3000000", "link.target_errors=2000", "channel.loss_db=33",
                     "link.seed=8")
    one = simulate(system)
    many, _, how = simulate_split(system, threads=2)
    assert one.stopped_by == "target_errors" and how.tasks > 2
    _same_counts(one, many)
    assert one.symbols < 3_000_000


def test_a_short_warmup_is_caught_and_widened():
    """A warm-up shorter than the latency search cannot give the boundary decisions: the
    check fails, the range runs again with a longer one, the counts are still exact."""
    system = _system("link.symbols=400000", "link.target_errors=0", "channel.loss_db=36",
                     "link.seed=2")
    one = simulate(system)
    many, _, how = simulate_split(system, threads=2, warmup=VERIFY)
    assert how.retries > 0
    _same_counts(one, many)


def test_a_canceller_boundary_compares_every_decision_it_reads():
    """With a reflection canceller the boundary compares rc.span_ui + 1 decisions (the
    DFE's 64 left decisions the canceller reads unchecked); a warm-up as short as that
    is caught and widened, and the counts are one thread's."""
    from serdes.parallel import plan, verify_length

    system = _system("link.symbols=700000", "link.target_errors=0", "link.seed=11",
                     "channel.loss_db=33", "reflections.echo_delay_ui=150",
                     "reflections.echo_db=-16", "link.pulse_ui=320", "link.window_ui=2048", "rc.taps=2",
                     "rc.span_ui=300")
    assert verify_length(system) == 301
    from serdes.engines.run import design_equalizer, pipeline

    pipe = pipeline(system, design_equalizer(system), seed=1)
    tasks = list(plan(system, pipe, 2))
    assert all(t.verify == 301 for t in tasks) and tasks[1].first - tasks[1].head == 301
    one = simulate(system)
    assert one.bit_errors > 100
    many, _, how = simulate_split(system, threads=2, warmup=301)
    assert how.threads == 2 and how.retries > 0
    _same_counts(one, many)


def _mlse_ranges(*sets):
    """Two adjacent ranges of an MLSE run, each from its own warm-up, and their system."""
    from serdes.engines.run import design_equalizer, pipeline
    from serdes.parallel import plan, run_range

    system = _system("link.symbols=400000", "link.target_errors=0", "channel.loss_db=37",
                     "eq.detector=mlse", "mlse.memory=2", "link.seed=14", *sets)
    taps = design_equalizer(system)
    tasks = list(plan(system, pipeline(system, taps, seed=14), 2))
    return system, taps, tasks, [run_range(system, taps, "pulse", t) for t in tasks[:2]]


def test_mlse_boundary_compares_the_detector_state():
    """Each range records the Viterbi state (path metrics, survivors, rings) before its
    boundary sample; after the usual warm-up it equals the earlier range's bit for bit,
    and a range whose state differs where its decisions and slicer inputs agree fails
    the check."""
    from dataclasses import replace

    from serdes.parallel import agree

    _, _, tasks, (a, b) = _mlse_ranges()
    assert tasks[1].first == a.end and a.det_tail and b.det_head
    assert a.det_head is None   # the first range is the single run's own start
    assert agree(a, b) and a.det_tail == b.det_head
    flipped = bytes([b.det_head[0] ^ 1]) + b.det_head[1:]
    assert not agree(a, replace(b, det_head=flipped))
    assert not agree(a, replace(b, det_head=None))


def test_mlse_marks_do_not_change_the_decisions():
    """Recording the state cuts the detector's chunks at the marked samples: the
    decisions and slicer inputs are those of the uncut run, and the state recorded is
    the one a detector stopped there has."""
    from serdes.dsp.blocks import Mlse
    from serdes.dsp.mlse import MlseDetector

    rng = np.random.default_rng(3)
    levels = np.array([-3.0, -1.0, 1.0, 3.0])
    a = levels[rng.integers(0, 4, 5000)]
    z = a + 0.5 * np.r_[0.0, a[:-1]] + 0.4 * rng.standard_normal(5000)

    def det():
        return MlseDetector(levels, target=[1.0, 0.5], whitening=[1.0, -0.2], traceback=16)

    plain, cut = Mlse(det()), Mlse(det())
    cut.mark(1000, 1001, 2999, 3000)
    outs = [(plain(z[k:k + 1000], k), cut(z[k:k + 1000], k)) for k in range(0, 5000, 1000)]
    for p, c in outs:
        assert np.array_equal(p.decisions, c.decisions) and np.array_equal(p.soft, c.soft)
    assert sorted(cut.states) == [1000, 1001, 2999, 3000] and not cut.marks
    stopped = det()
    stopped.process(z[:2999])
    assert cut.states[2999] == stopped.fingerprint() != cut.states[3000]


def test_mlse_state_from_a_short_warmup_is_caught():
    """A warm-up too short for the latency search and the Viterbi state: the ranges run
    again with longer ones and the counts are one thread's."""
    system = _system("link.symbols=400000", "link.target_errors=0", "channel.loss_db=37",
                     "eq.detector=mlse", "mlse.memory=2", "link.seed=15")
    one = simulate(system)
    assert one.bit_errors > 100
    many, _, how = simulate_split(system, threads=2, warmup=VERIFY)
    assert how.threads == 2 and how.retries > 0
    _same_counts(one, many)


@pytest.mark.parametrize("sets,why", [
    (("eq.mode=lms",), "LMS adaptation is sequential"),
    (("tx_jitter.ppm=20",), "TX frequency offset without clock recovery"),
    (("tx_jitter.sj_ui=3", "tx_jitter.sj_hz=2e5"), "slips whole UIs"),
    (("reflections.echo_delay_ui=60", "reflections.echo_db=-20", "link.pulse_ui=96",
      "rc.taps=2", "rc.mode=adaptive", "rc.search_symbols=20000"), "reflection canceller"),
    (("cdr.mode=mm", "tx_jitter.rj_ui=0.01"), "the CDR loop is sequential"),
])
def test_receivers_that_cannot_be_split_run_in_one_thread(sets, why):
    system = _system("link.symbols=300000", *sets)
    res, _, how = simulate_split(system, threads=2)
    assert how.threads == 1 and why in how.note
    _same_counts(simulate(system), res)


# ----------------------------------------------------------------------- CLI
def _run(argv):
    from serdes.cli import main

    buf = io.StringIO()
    with contextlib.redirect_stdout(buf):
        rc = main(["run", "--json", "--no-stat", "--no-progress", *argv])
    return rc, json.loads(buf.getvalue())


SETS = [x for kv in EARLIER_DEFAULT for x in ("--set", kv)] + ["--set", "link.symbols=400000", "--set", "channel.loss_db=34", "--set",
        "link.target_errors=0"]


def test_cli_threads_json_is_the_single_run_object():
    rc1, one = _run(SETS + ["--threads", "1"])
    rc2, two = _run(SETS + ["--threads", "2"])
    assert rc1 == rc2 == 0
    assert one["threads"] == 1 and two["threads"] == 2
    assert set(one) == set(two)
    differ = {k for k in one if one[k] != two[k]}
    assert differ <= {"elapsed_s", "symbols_per_s", "threads", "snr_db", "eye"}
    assert two["snr_db"] == pytest.approx(one["snr_db"], rel=1e-9)
    assert two["eye"]["counted"] == one["eye"]["counted"]


def test_cli_threads_must_be_positive(capsys):
    from serdes.cli import main

    with pytest.raises(SystemExit) as exc:
        main(["run", "--threads", "0"])
    assert exc.value.code == 2
    assert "threads" in capsys.readouterr().err


# ---------------------------------------------------------------------- Dask
def test_cluster_run_counts_what_the_local_run_counts():
    distributed = pytest.importorskip("distributed", reason="Dask is an optional extra: "
                                      "pip install 'serdes[dask]'")
    with distributed.LocalCluster(n_workers=2, threads_per_worker=1, host="127.0.0.1",
                                  dashboard_address=None, processes=True) as cluster:
        rc1, local = _run(SETS + ["--threads", "1"])
        rc2, remote = _run(SETS + ["--scheduler", cluster.scheduler_address])
        # post-FEC counting on the cluster (it was refused: "counts codewords in one pass")
        fec = ["--set", "fec.mode=kp4", "--set", "noise.eta0_v2_per_ghz=1e-8"]
        rc4, fec_local = _run(SETS + fec + ["--threads", "1"])
        rc5, fec_remote = _run(SETS + fec + ["--scheduler", cluster.scheduler_address])
        # MLSE: the Viterbi state compared at the boundaries comes back from the workers
        mlse = ["--set", "eq.detector=mlse", "--set", "mlse.memory=2", "--set",
                "channel.loss_db=37"]
        rc6, mlse_local = _run(SETS + mlse + ["--threads", "1"])
        rc7, mlse_remote = _run(SETS + mlse + ["--scheduler", cluster.scheduler_address])
        from serdes.cli import main

        err = io.StringIO()
        with contextlib.redirect_stderr(err):
            rc3 = main(["run", "--set", "eq.mode=lms", "--scheduler",
                        cluster.scheduler_address])
    assert rc1 == rc2 == 0 and remote["workers"] == 2
    assert set(remote) == set(local) | {"workers"}
    for k in ("symbols", "bits", "bit_errors", "symbol_errors", "bursts", "latency",
              "stopped_by", "ber", "ber_ci"):
        assert remote[k] == local[k], k
    assert remote["eye"]["counted"] == local["eye"]["counted"]
    assert rc3 == 2 and err.getvalue().count("\n") == 1
    assert "cannot be split" in err.getvalue()
    assert rc4 == rc5 == 0 and fec_remote["workers"] == 2
    assert fec_local["fec"]["symbol_errors"] > 0
    assert json.dumps(fec_remote["fec"], sort_keys=True) == json.dumps(fec_local["fec"],
                                                                       sort_keys=True)
    assert rc6 == rc7 == 0 and mlse_remote["workers"] == 2 and mlse_local["bit_errors"] > 100
    for k in ("symbols", "bit_errors", "symbol_errors", "bursts", "latency"):
        assert mlse_remote[k] == mlse_local[k], k


def test_unreachable_scheduler_is_one_line(capsys):
    pytest.importorskip("distributed")
    from serdes.cli import main

    rc = main(["run", "--scheduler", "tcp://127.0.0.1:9", "--timeout", "1"])
    err = capsys.readouterr().err
    assert rc == 2 and err.count("\n") == 1
    assert "cannot reach the Dask scheduler at tcp://127.0.0.1:9" in err


# ------------------------------------------------------- ranges and overlap
@pytest.mark.parametrize("nblocks,workers", [(1, 2), (7, 2), (11, 3), (306, 2), (1526, 2),
                                             (15259, 4)])
def test_ranges_cover_the_blocks_once_and_taper_at_the_end(nblocks, workers):
    from serdes.parallel import MAX_TASK_BLOCKS, TAIL_BLOCKS, range_blocks

    r = range_blocks(nblocks, workers)
    assert r[0][0] == 0 and sum(n for _, n in r) == nblocks
    assert all(b + n == b2 for (b, n), (b2, _) in zip(r, r[1:]))
    sizes = [n for _, n in r]
    assert max(sizes) <= MAX_TASK_BLOCKS and sizes == sorted(sizes, reverse=True)[:-1] + [
        sizes[-1]]
    assert len(r) >= min(nblocks, 4 * workers)
    if nblocks >= 8 * TAIL_BLOCKS * workers:  # the last ranges are the short ones
        assert sizes[-2] == TAIL_BLOCKS


def test_split_report_computes_its_statistical_sections_in_a_forked_child(monkeypatch,
                                                                         tmp_path):
    """The statistical sections of a split run are computed once, in a child forked
    before the workers count (on the designed taps, checked against the run's), and equal
    one thread's; when the child gives no value, this process computes them, the same."""
    import serdes.report as report

    system = _system("link.symbols=400000", "link.target_errors=0", "channel.loss_db=34")
    one = report.run_report(system, threads=1).to_dict()
    log, parts, me = tmp_path / "calls", report._stat_parts, os.getpid()

    def logged(*a):
        with open(log, "a") as f:
            f.write(f"{os.getpid()}\n")
        return parts(*a)

    def failing_in_child(*a):
        if os.getpid() != me:
            raise RuntimeError("the child fails")
        return logged(*a)

    for patch, where in ((logged, "child"), (failing_in_child, "here")):
        log.write_text("")
        monkeypatch.setattr(report, "_stat_parts", patch)
        two = report.run_report(system, threads=2).to_dict()
        assert two["threads"] == 2
        pids = [int(p) for p in log.read_text().split()]
        assert len(pids) == 1 and (pids[0] != me if where == "child" else pids[0] == me)
        for k in ("stat", "eye", "stat_ber"):  # (json: a NaN field compares equal)
            assert json.dumps(two[k], sort_keys=True) == json.dumps(one[k], sort_keys=True), k


def test_a_second_ctrl_c_while_the_child_computes_skips_the_statistical_sections(
        monkeypatch):
    """A second Ctrl-C while the parent waits for the forked child (the CLI's handler
    raises KeyboardInterrupt then): the report comes at once with the sections marked
    interrupted, and the parent does not compute them itself; without a stop event (a
    library call) the KeyboardInterrupt reaches the caller."""
    import serdes.report as report
    from serdes.forked import Forked

    system = _system("link.symbols=100000", "link.target_errors=0")
    parts, me, here = report._stat_parts, os.getpid(), []

    def logged(*a):
        if os.getpid() == me:
            here.append(1)
        return parts(*a)

    def ctrl_c(self):
        raise KeyboardInterrupt

    monkeypatch.setattr(report, "_stat_parts", logged)
    monkeypatch.setattr(Forked, "result", ctrl_c)
    rep = report.run_report(system, threads=2, should_stop=lambda: False)
    assert rep.counted.symbols > 0 and rep.skipped == "statistical sections (interrupted)"
    assert not here and rep.to_dict().get("stat_ber") is None
    from serdes.commands.run import format_summary
    assert "skipped   statistical sections (interrupted)" in format_summary(rep.to_dict())
    with pytest.raises(KeyboardInterrupt):
        report.run_report(system, threads=2)


@pytest.mark.parametrize("seed", range(6))
def test_block_runs_match_run_lengths_counted_one_by_one(seed):
    """A block's runs of symbol errors (leading run, inner runs, trailing run), fed in
    pieces as the tally does, against run lengths counted symbol by symbol."""
    from serdes.parallel import _Runs

    rng = np.random.default_rng(seed)
    n = 300
    err = rng.random(n) < (0.0, 0.02, 0.5, 0.9, 1.0, 0.3)[seed]
    if seed == 5:
        err[:7] = True   # a leading run that spans the first pieces
    cuts = np.sort(rng.choice(np.arange(1, n), 5, replace=False))
    runs = _Runs()
    for piece in np.split(err, [0, 3, *cuts]):   # an empty piece and a short one first
        runs.add(piece)
    lengths, k = [], 0
    for e in err:
        if e:
            k += 1
        elif k or lengths == []:
            lengths.append(k)
            k = 0
    if not err.any() or err.all():
        assert runs.leading == err.all() and runs.lead == (n if err.all() else 0)
        assert runs.bursts.hist == {} and runs.bursts.run == 0
        return
    lead = int(np.argmin(err))
    inner = {}
    for L in lengths[1:]:
        if L:
            inner[L] = inner.get(L, 0) + 1
    trail = n - 1 - int(np.flatnonzero(~err)[-1])
    assert not runs.leading and runs.lead == lead
    assert runs.bursts.run == trail and runs.bursts.hist == inner


@pytest.mark.parametrize("threads", [2, 3])
def test_the_parent_counts_ranges_beside_threads_minus_one_workers(monkeypatch, threads):
    """`--threads N` is N processes counting: this one and N - 1 forked workers (before,
    N workers and a parent that only waited or did report work, N + 1 processes on N
    cores). Every range is tagged with the process that counted it; the counts stay
    those of one thread."""
    import os

    import serdes.engines.blocks_run as blocks_run
    from serdes.parallel import _Merge

    system = _system("link.symbols=1500000", "link.target_errors=0", "channel.loss_db=34",
                     "link.seed=9")
    run_range, add, pids = blocks_run.run_range, _Merge.add, []

    def tagged(*a, **k):
        r = run_range(*a, **k)
        r.pid = os.getpid()   # set in the process that ran it (the workers are forked)
        return r

    monkeypatch.setattr(blocks_run, "run_range", tagged)
    monkeypatch.setattr(_Merge, "add", lambda self, r: (pids.append(r.pid), add(self, r))[1])
    many, _, how = simulate_split(system, threads=threads)
    assert how.threads == threads and len(pids) == how.tasks > 2 * threads
    assert os.getpid() in pids and len(set(pids)) == threads
    _same_counts(simulate(system), many)


def test_a_range_taken_by_the_parent_is_skipped_by_its_worker():
    """The claim on a range in flight: whoever takes it first counts it, the other skips."""
    import multiprocessing as mp

    import serdes.engines.blocks_run as blocks_run
    from serdes.parallel import Task

    owners = mp.get_context().Array("q", 8)
    assert blocks_run._claim(owners, 13, 1)          # the parent takes range 13
    assert not blocks_run._claim(owners, 13, -1)     # its worker then skips it
    assert blocks_run._claim(owners, 14, -1)         # a worker starts range 14 ...
    assert not blocks_run._claim(owners, 14, 1)      # ... the parent cannot take it
    assert blocks_run._claim(owners, 21, 1)          # the slot of 13, reused 8 ranges on
    system = _system("link.symbols=300000")
    saved = blocks_run._WORKER
    try:
        blocks_run._WORKER = (system, None, "pulse", 0, owners)
        assert blocks_run._local_task(Task(21, 0, 0, 0, 0, 1)) is None
    finally:
        blocks_run._WORKER = saved


def test_the_parent_takes_a_slow_workers_last_queued_range(monkeypatch):
    """A worker slowed on purpose: with nothing left to hand out, the parent counts a
    range queued for it instead of waiting; the counts are still those of one thread."""
    import os
    import time

    import serdes.engines.blocks_run as blocks_run

    system = _system("link.symbols=1500000", "link.target_errors=0", "channel.loss_db=34",
                     "link.seed=10")
    parent, run_range, steal, taken = os.getpid(), blocks_run.run_range, blocks_run._steal, []

    def slow(*a, **k):
        if os.getpid() != parent:
            time.sleep(1.0)
        return run_range(*a, **k)

    monkeypatch.setattr(blocks_run, "run_range", slow)
    monkeypatch.setattr(blocks_run, "_steal",
                        lambda *a: (lambda ok: (taken.append(ok), ok)[1])(steal(*a)))
    many, _, how = simulate_split(system, threads=2)
    assert True in taken
    _same_counts(simulate(system), many)


def test_an_interrupted_wait_for_the_workers_leaves_none_behind(monkeypatch):
    """A second Ctrl-C while the parent waits for its workers to end their ranges ends
    them at once: a worker left waiting for its next range would outlive the parent
    (before, `serdes run` interrupted twice left one idle worker process behind)."""
    import serdes.engines.blocks_run as blocks_run
    from serdes.engines.run import design_equalizer

    system = _system("link.symbols=400000", "link.target_errors=0")
    ex = blocks_run._Local(2, system, design_equalizer(system), "pulse", 0)
    assert ex.pool.submit(os.getpid).result() != os.getpid()   # a worker is up
    procs = list(ex.pool._processes.values())
    real, calls = ex.pool.shutdown, []

    def interrupted(*a, **k):   # the second Ctrl-C arrives while the parent waits
        calls.append(k)
        if len(calls) == 1:
            raise KeyboardInterrupt
        return real(*a, **k)

    monkeypatch.setattr(ex.pool, "shutdown", interrupted)
    with pytest.raises(KeyboardInterrupt):
        ex.close()
    # ended: each sentinel is ready (is_alive() can read True for a process the
    # executor's own thread reaped a moment before: this test failed 1 run in 10)
    from multiprocessing.connection import wait

    assert procs and all(wait([p.sentinel], 0) for p in procs)
    real(wait=True)


def _report_in_a_daemon(q, system):
    import serdes.report as report

    r = report.run_report(system, threads=2).to_dict()
    q.put({k: r.get(k) for k in ("threads", "threads_note", "bit_errors", "symbols",
                                 "stat_ber")})


def test_a_daemonic_caller_counts_in_one_thread_and_says_why():
    """A process pool's or a cluster's worker is daemonic and cannot start processes: a
    split run there counts in one thread (the same counts) and says why, instead of
    failing in multiprocessing."""
    import multiprocessing as mp

    import serdes.report as report

    system = _system("link.symbols=300000", "link.target_errors=0", "channel.loss_db=34")
    one = report.run_report(system, threads=1).to_dict()
    ctx = mp.get_context("fork")
    q = ctx.Queue()
    p = ctx.Process(target=_report_in_a_daemon, args=(q, system), daemon=True)
    p.start()
    got = q.get(timeout=600)
    p.join()
    assert got["threads"] == 1 and "daemonic" in got["threads_note"]
    assert (got["bit_errors"], got["symbols"], got["stat_ber"]) == (
        one["bit_errors"], one["symbols"], one["stat_ber"])


class _PerDecision:
    """Observer: bit and symbol errors of every counted decision, by absolute index."""

    def __init__(self):
        self.first, self.bit, self.sym = None, [], []

    def observe(self, rec) -> None:
        if self.first is None:
            self.first = int(rec.first)
        self.bit.append(np.asarray(rec.bit_err, dtype=np.int64))
        self.sym.append(np.asarray(rec.sym_err, dtype=bool))

    def counts(self, first: int, end: int) -> tuple[int, int]:
        bit, sym = np.concatenate(self.bit), np.concatenate(self.sym)
        a, b = first - self.first, end - self.first
        return int(bit[a:b].sum()), int(np.count_nonzero(sym[a:b]))


@pytest.mark.parametrize("calls", [3, 5])
def test_a_ctrl_c_keeps_the_ranges_counted_before_it(calls):
    """A Ctrl-C while the parent counts a range of its own: the ranges before it (the
    workers', waited for) and the part of its own it counted are merged in order, up to
    the first range nobody started, and equal one thread's count of the same symbols.
    Before, the merge stopped at once and such a run reported 0 counted symbols (the
    first range, a worker's, not yet merged)."""
    from serdes.engines.run import design_equalizer, pipeline

    system = _system("link.symbols=3000000", "link.target_errors=0", "channel.loss_db=34",
                     "link.seed=3", "link.chunk_symbols=16384")
    n = []

    def stop():   # the parent's loop asks first, then its range before each chunk
        n.append(1)
        return len(n) >= calls

    part, _, how = simulate_split(system, threads=2, should_stop=stop)
    obs = _PerDecision()
    simulate(system, observers=[obs])
    skip = pipeline(system, design_equalizer(system), seed=system.run.seed).skip_for(
        system.run.symbols)
    assert part.stopped_by == "interrupted"
    # at least the first range (6 blocks here) and less than the whole run
    assert 6 * 65536 - skip <= part.symbols < system.run.symbols - skip
    assert (part.bit_errors, part.symbol_errors) == obs.counts(skip, skip + part.symbols)
    assert part.bit_errors > 0


def test_the_stop_rule_does_not_fire_in_the_part_of_a_block_a_stopped_range_counted():
    """One thread checks the target at a block's end, so a range stopped part-way
    through a block (a Ctrl-C) may hold the target's errors in that part without the
    run having stopped on them: the merge does not fire there, and does on the block
    counted whole."""
    from serdes.engines.run import design_equalizer, pipeline
    from serdes.parallel import _Merge, plan, run_range

    system = _system("link.symbols=400000", "link.target_errors=1", "channel.loss_db=34",
                     "link.seed=3", "link.chunk_symbols=16384")
    taps = design_equalizer(system)
    pipe = pipeline(system, taps, seed=system.run.seed)
    task = next(plan(system, pipe, 2))
    n = []
    part = run_range(system, taps, "pulse", task,
                     should_stop=lambda: (n.append(1), len(n) > 2)[1])
    whole = run_range(system, taps, "pulse", task)
    assert part.stopped_at == 2 * 16384 and whole.stopped_at is None
    assert part.bit_err[0] >= 1 and part.symbols[0] < whole.symbols[0]
    m = system.link.modulation_order
    assert not _Merge(m, system.run.symbols, 1, 0).add(part)
    assert _Merge(m, system.run.symbols, 1, 0).add(whole)


def _ctrl_c_in_a_kernel_callback():
    """What numba raises when a Ctrl-C arrives in a Python callback of a compiled call
    (its cached code's unpickling): a SystemError whose cause is the KeyboardInterrupt."""
    try:
        raise KeyboardInterrupt
    except KeyboardInterrupt as ki:
        err = SystemError("<function _numba_unpickle> returned a result with an exception "
                          "set")
        err.__cause__ = ki
        return err


def test_a_second_ctrl_c_inside_a_kernel_callback_skips_the_statistical_sections(
        monkeypatch):
    """The one-thread run computes its statistical sections itself: a second Ctrl-C that
    lands in a compiled kernel's Python callback reaches it as a SystemError caused by
    the KeyboardInterrupt, and is an interrupt all the same (the sections marked
    skipped, not a traceback); another SystemError is not swallowed."""
    import serdes.report as report
    from serdes.errors import interrupted

    assert interrupted(_ctrl_c_in_a_kernel_callback()) and interrupted(KeyboardInterrupt())
    assert not interrupted(SystemError("other")) and not interrupted(ValueError())
    system = _system("link.symbols=100000", "link.target_errors=0")

    def ctrl_c(*a, **k):
        raise _ctrl_c_in_a_kernel_callback()

    monkeypatch.setattr(report, "_stat_sections", ctrl_c)
    rep = report.run_report(system, threads=1, should_stop=lambda: False)
    assert rep.counted.symbols > 0 and rep.skipped == "statistical sections (interrupted)"

    def other(*a, **k):
        raise SystemError("other")

    monkeypatch.setattr(report, "_stat_sections", other)
    with pytest.raises(SystemError):
        report.run_report(system, threads=1, should_stop=lambda: False)


def test_cli_says_interrupted_for_a_ctrl_c_inside_a_kernel_callback(monkeypatch, capsys):
    from serdes import cli
    from serdes.commands import run

    def ctrl_c(*a, **k):
        raise _ctrl_c_in_a_kernel_callback()

    monkeypatch.setattr(run, "run_link", ctrl_c)
    assert cli.main(["run", "--set", "link.symbols=1000"]) == 130
    assert capsys.readouterr().err.strip() == "serdes: interrupted"
