"""Running the ranges of one split run (:mod:`serdes.parallel`) on local worker
processes or a Dask cluster, and merging them into one
:class:`~serdes.engines.run.RunResult` with the counts of one thread."""

from __future__ import annotations

import os
import time
from collections import deque
from dataclasses import replace

import numpy as np

from serdes.parallel import (RangeResult, Split, Task, _Merge, agree, can_split, plan,
                             run_range, split_limit, verify_length, warmup_ui)

__all__ = ["simulate_split", "RangeResult"]
from serdes.pipeline import SlicerCapture
_WORKER: tuple = ()


def _init_worker(system, taps, engine, capture_limit, owners=None) -> None:
    import signal

    global _WORKER
    signal.signal(signal.SIGINT, signal.SIG_IGN)  # Ctrl-C is the parent's to handle
    _WORKER = (system, taps, engine, capture_limit, owners)


def _local_task(task: Task) -> RangeResult | None:
    """A worker's range; None when the parent took it first (:func:`_claim`)."""
    system, taps, engine, capture_limit, owners = _WORKER
    if owners is not None and not _claim(owners, task.index, -1):
        return None
    return run_range(system, taps, engine, task, capture_limit)


def _claim(owners, index: int, who: int) -> bool:
    """Take range ``index`` for the parent (``who`` +1) or a worker (-1) unless the other
    has taken it: a slot per range in flight (they are consecutive and fewer than the
    slots) holds ``who * (index + 1)``."""
    slot = index % len(owners)
    with owners.get_lock():
        if owners[slot] == -who * (index + 1):
            return False
        owners[slot] = who * (index + 1)
        return True


class _Local:
    """``threads - 1`` worker processes on this machine and the parent itself: the parent
    counts ranges whenever it would otherwise wait for a worker's, so ``threads`` ranges
    run at once on ``threads`` cores (no core shared by a worker and the parent's waiting
    or report work). At the end, with no range left to hand out, the parent takes a range
    queued for a worker that has not started it (the worker then skips it), so that the
    processes finish together. Forked where the platform has it: the workers inherit the
    built system and the compiled kernels."""

    here = True   # the parent runs ranges too (:meth:`run_here`, :meth:`steal`)

    def __init__(self, threads: int, system, taps, engine, capture_limit):
        import multiprocessing as mp
        from concurrent.futures import ProcessPoolExecutor

        method = "fork" if "fork" in mp.get_all_start_methods() else "spawn"
        ctx = mp.get_context(method)
        self.workers, self.procs = threads, max(1, threads - 1)
        self._args = (system, taps, engine)
        self._limit = capture_limit
        self.owners = ctx.Array("q", 4 * threads)   # the window of ranges in flight
        if method == "fork":
            _warm_kernels(system, taps, engine)
        self.pool = ProcessPoolExecutor(self.procs, mp_context=ctx, initializer=_init_worker,
                                        initargs=(system, taps, engine, capture_limit,
                                                  self.owners))

    def submit(self, task: Task):
        return self.pool.submit(_local_task, task)

    def run_here(self, task: Task, should_stop=None) -> RangeResult:
        return run_range(*self._args, task, self._limit, should_stop=should_stop)

    def claim(self, task: Task) -> bool:
        """``task`` taken from the workers (they skip it) unless one has started it."""
        return _claim(self.owners, task.index, 1)

    def steal(self, task: Task, should_stop=None) -> RangeResult | None:
        """``task`` counted here if no worker has started it (None otherwise)."""
        if not self.claim(task):
            return None
        return self.run_here(task, should_stop)

    def done(self, fut) -> None:
        pass

    def close(self) -> None:
        """Wait for the workers to end their ranges and exit; interrupted while waiting
        (a second Ctrl-C), end them at once: a worker left waiting for its next range
        would outlive the parent (it holds its task pipe's other end, so it never sees
        the parent go)."""
        try:
            self.pool.shutdown(wait=True, cancel_futures=True)
        except BaseException:
            from multiprocessing.connection import wait

            procs = list((getattr(self.pool, "_processes", None) or {}).values())
            for proc in procs:
                proc.terminate()
            # a process's end is its sentinel, ready whoever reaps it: is_alive() read
            # True for one the executor's own thread had just reaped (a flaky test)
            for proc in procs:
                if not wait([proc.sentinel], 5):   # not ended on SIGTERM (a loaded machine)
                    proc.kill()
                    wait([proc.sentinel], 5)
            raise


class _Dask:
    """The ranges as tasks of a Dask cluster (the system and taps sent once to every
    worker); the scheduler is probed with a timeout first (:mod:`serdes.dask_client`)."""

    here = False

    def __init__(self, address: str, timeout: float | None, system, taps, engine,
                 capture_limit):
        from serdes.dask_client import DASK_TIMEOUT_S, connect

        self.client = connect(address, DASK_TIMEOUT_S if timeout is None else timeout)
        self.workers = sum(self.client.nthreads().values())
        self._args = (self.client.scatter(system, broadcast=True),
                      self.client.scatter(taps, broadcast=True), engine)
        self._limit, self._futures = capture_limit, {}
        self._token = f"{os.getpid()}-{time.monotonic_ns()}"

    def submit(self, task: Task):
        fut = self.client.submit(run_range, *self._args, task, self._limit, pure=False,
                                 key=f"serdes-range-{self._token}-{task.index}-{task.start}")
        self._futures[fut.key] = fut
        return fut

    def done(self, fut) -> None:
        """A range merged: its result leaves the cluster (a long run has millions)."""
        self._futures.pop(fut.key, None)
        fut.release()

    def close(self) -> None:
        try:
            if self._futures:  # stopped or interrupted: take the rest off the cluster
                self.client.cancel(list(self._futures.values()))
        finally:
            self._futures.clear()
            self.client.close()


def simulate_split(system, *, engine: str = "pulse", threads: int | None = None,
                   scheduler: str | None = None, timeout: float | None = None,
                   capture_limit: int = 0, progress=None, should_stop=None,
                   warmup: int | None = None, during=None):
    """Count errors on ``system`` over ``threads`` local processes (default: all cores;
    this one and ``threads - 1`` forked workers) or the Dask cluster at ``scheduler``,
    with the counts of one thread. Returns ``(RunResult, SlicerCapture or None, Split)``; a run that cannot be split (see
    :func:`split_limit`) or is too short runs in one thread (refused with a scheduler).
    ``warmup``: UIs before each range (default :func:`serdes.parallel.warmup_ui`; a
    range whose boundary check fails runs again with four times as many).
    ``during``: work for this process while the workers count (called once, after the
    first ranges are handed out, before this process counts any itself; not called when
    the run is not split), so that it overlaps the counting instead of following it."""
    from serdes.engines.run import design_equalizer, pipeline, simulate
    from serdes.errors import ConfigError
    from serdes.validate import whole_number

    t0 = time.perf_counter()
    run = system.run
    note = split_limit(system, engine)
    if note and scheduler:
        raise ConfigError(f"--scheduler {scheduler}: this run cannot be split into blocks "
                          f"({note}); run it without --scheduler")
    taps = design_equalizer(system)
    pipe = pipeline(system, taps, engine=engine, seed=run.seed)
    threads = ((os.cpu_count() or 1) if threads is None
               else whole_number("threads", threads, 1, 4096))
    if scheduler is None and threads > 1 and not note and _daemonic():
        note = ("this process is a daemonic worker (a process pool's or a cluster's), "
                "which cannot start worker processes")
    if scheduler is None and (note or not can_split(pipe, run.symbols, threads,
                                                    verify_length(system))):
        capture = SlicerCapture(capture_limit) if capture_limit else None
        fec = None
        if getattr(system.source, "fec", None) is not None:   # imported only then
            from serdes.fec.counter import counter_for

            fec = counter_for(system)
        res = simulate(system, engine=engine, taps=taps, progress=progress,
                       should_stop=should_stop,
                       observers=[o for o in (capture, fec) if o is not None])
        return res, capture, Split(threads=1, note=note if threads > 1 else None,
                                   simulated=res.symbols,
                                   fec=None if fec is None else fec.result())
    ex = (_Dask(scheduler, timeout, system, taps, engine, capture_limit) if scheduler
          else _Local(threads, system, taps, engine, capture_limit))
    try:
        merge, split, delay = _drive(ex, system, pipe, capture_limit, progress, should_stop,
                                     warmup, during)
    finally:
        ex.close()
    if scheduler:
        split.threads, split.workers = 1, ex.workers
    else:
        split.threads = threads
    if merge.fec is not None:   # the ranges' codewords, absorbed in order
        split.fec = merge.fec.result()
    return _result(system, taps, pipe, merge, delay, split, t0), merge.capture, split


def _daemonic() -> bool:
    import multiprocessing as mp

    return bool(mp.current_process().daemon)


def _warm_kernels(system, taps, engine) -> None:
    """Two short chunks of a throw-away pipeline before the workers are forked, so that
    they inherit the counting kernels loaded from numba's cache instead of each loading
    them again (measured: about 0.05 s here against 0.1 s less in each worker); the
    parent, which counts ranges too, needs them loaded as well."""
    from serdes.engines.run import pipeline
    from serdes.kernels.tally import snr_sums

    pipe = pipeline(system, taps, engine=engine, seed=system.run.seed)
    pipe.run(2048, chunk=1024)
    snr_sums(pipe.levels, np.zeros(8, np.uint8), np.zeros(8))   # the tally's kernel


def _drive(ex, system, pipe, capture_limit, progress, should_stop, warmup, during=None):
    from serdes.signal.source import SymbolSource

    run, link = system.run, system.link
    merge = _Merge(link.modulation_order, run.symbols, run.target_errors, capture_limit,
                   fec=getattr(system.source, "fec", None))
    pre = system.source.precoding

    def state_at(start):
        from serdes.signal.source import precode_states

        return precode_states(system.source.pattern, link.modulation_order, run.seed,
                              [start], fec=fec)[0] if pre else 0

    fec = getattr(system.source, "fec", None)   # the data carry RS codewords
    src = (SymbolSource(pattern=system.source.pattern, m=link.modulation_order,
                        precoding=True, seed=run.seed, fec=fec) if pre else None)
    todo, flight = plan(system, pipe, ex.workers, warmup), deque()
    window = 4 * ex.workers
    # with the parent counting too, two ranges queued per worker process: each has the
    # next while the parent counts one of the same size, and at the end little is left
    # queued for the parent to wait on (the tail's ranges are short)
    ahead = 2 * ex.procs if ex.here else window

    following = [next(todo, None)]   # the next range to hand out (None: all are)

    def take():
        t = following[0]
        if t is not None:
            following[0] = next(todo, None)
            split.tasks += 1
            if src is not None:  # precoding: one pass over the data while ranges run
                while src.position < t.start:
                    src.next(min(1 << 20, t.start - src.position))
                t = replace(t, precode_state=int(src._precode_state))
        return t

    def fill():
        while len(flight) < window and (sum(not f.done() for _, f in flight) if ex.here
                                        else len(flight)) < ahead:
            t = take()
            if t is None:
                return
            flight.append((t, ex.submit(t)))

    stopped = []

    def stop():  # the parent's own ranges check it between chunks, as one thread does
        if should_stop is not None and should_stop():
            stopped.append(True)
        return bool(stopped)

    split = Split(warmup=warmup_ui(pipe, verify_length(system)) if warmup is None
                  else int(warmup))
    prev, delay, skip0 = None, -1, pipe.skip_for(run.symbols)
    fill()
    if during is not None:
        during()
    while flight:
        if stop():
            merge.stopped_by = "interrupted"
            break
        t, fut = flight[0]
        if ex.here and not fut.done():
            nt = take() if len(flight) < window else None
            if nt is not None:   # the parent would wait: it counts the next range itself
                flight.append((nt, _ready(ex.run_here(nt, stop))))
                fill()
                continue
            if following[0] is None and _steal(ex, flight, stop):  # all handed out:
                continue                                       # one queued for a worker
        flight.popleft()
        r = fut.result()
        ex.done(fut)
        fill()
        split.simulated += r.simulated
        w = t.first - t.start
        while prev is not None and not agree(prev, r):
            if t.start == 0:
                raise RuntimeError(f"range {t.index}: differs from the run before it "
                                   "even from symbol 0 (a non-deterministic block?)")
            split.retries += 1
            w *= 4
            start = max(0, t.first - w)
            t = replace(t, start=start, skip=skip0 if start == 0 else start + pipe.warm,
                        precode_state=state_at(start))
            r = _again(ex, t)
            split.simulated += r.simulated
        delay = r.delay if prev is None else delay
        prev = r
        done = merge.add(r)
        if progress is not None:
            c = merge.counter
            progress(merge.end or r.end, run.symbols, c.symbols, c.bit_errors, c.bits)
        if done:
            _fired(ex, t, merge, split)
            break
    if merge.stopped_by == "interrupted":
        prev, delay = _counted_before_stop(ex, flight, merge, split, prev, delay)
    return merge, split, delay


def _fired(ex, task: Task, merge, split) -> None:
    """The stop rule fired in ``task``'s range: the run ends there (with FEC, the range's
    codewords counted again up to the stop)."""
    merge.stopped_by = "target_errors"
    if merge.fec is not None:
        rf = _again(ex, replace(task, end=merge.end, final=True))
        split.simulated += rf.simulated
        merge.absorb_final(rf)


def _counted_before_stop(ex, flight, merge, split, prev, delay):
    """After a Ctrl-C: the ranges after the merged ones that are counted (or being
    counted by a worker, at most one range's time) merged in order as long as they
    continue the count without a gap: up to the first range no process has started, the
    first whose boundary check fails (it is not run again) or the first that the stop
    ended part-way (the parent's, counted up to the chunk where it stopped, as one thread
    stops). So an interrupted run reports the symbols counted from the start on, as one
    thread would, rather than only the ranges merged before the Ctrl-C (none, when the
    first range was still being counted). Returns (prev, delay) as the merge loop has
    them."""
    # first take every range no worker has started, so that none starts one now
    open_ = [ex.here and not fut.done() and ex.claim(t) for t, fut in flight]
    for (t, fut), taken in zip(flight, open_):
        if taken or not (ex.here or fut.done()):
            break   # nobody has counted it (a cluster's: not waited for)
        r = fut.result()
        ex.done(fut)
        if r is None:
            break
        split.simulated += r.simulated
        if prev is not None and not agree(prev, r):
            break
        delay = r.delay if prev is None else delay
        prev = r
        if merge.add(r):
            _fired(ex, t, merge, split)
            break
        if r.stopped_at is not None:
            break
    return prev, delay


def _again(ex, task: Task) -> RangeResult:
    """``task`` run now, waited for: here (local processes) or on the cluster."""
    if ex.here:
        return ex.run_here(task)
    fut = ex.submit(task)
    r = fut.result()
    ex.done(fut)
    return r


def _steal(ex, flight, stop) -> bool:
    """The parent takes the last range in flight that a worker has not started (the
    worker skips it); False when there is none (each worker has started its ranges)."""
    for i in range(len(flight) - 1, 0, -1):
        t, fut = flight[i]
        if not fut.done() and not getattr(fut, "stolen", False):
            fut.stolen = True
            r = ex.steal(t, stop)
            if r is None:
                return False
            flight[i] = (t, _ready(r))
            return True
    return False


def _ready(result):
    """A range the parent counted, as a finished future beside the workers' ones."""
    from concurrent.futures import Future

    fut = Future()
    fut.set_result(result)
    return fut


def _result(system, taps, pipe, merge, delay, split, t0):
    from serdes.dsp.receiver import chain_taps
    from serdes.engines.run import RunResult

    c = merge.counter
    now = chain_taps(pipe.rx)
    elapsed = time.perf_counter() - t0
    end = merge.end or min(system.run.symbols, c.symbols + pipe.skip_for(system.run.symbols))
    snr = (10 * np.log10(merge.sq_sig / merge.sq_err) if merge.sq_err > 0 else float("inf"))
    return RunResult(
        symbols=c.symbols, bits=c.bits, bit_errors=c.bit_errors, symbol_errors=c.symbol_errors,
        ber=c.ber, ber_ci=c.ber_ci(), ser=c.ser, snr_db=float(snr) if c.symbols else float("nan"),
        predicted_snr_db=taps.predicted_snr_db, latency=int(delay),
        ffe_taps=[float(t) for t in now["ffe"]], dfe_taps=[float(t) for t in now["dfe"]],
        elapsed_s=elapsed, symbols_per_s=end / elapsed if elapsed > 0 else float("inf"),
        stopped_by=merge.stopped_by, bursts=merge.bursts(),
        detector="dfe", whitening_taps=[float(t) for t in getattr(taps, "whitening", [1.0])],
        pulse_dropped_energy=float(system.link.pulse.dropped_energy))
