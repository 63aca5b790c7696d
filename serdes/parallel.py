"""One counted run on all cores or on a Dask cluster, with the counts of one thread.

The symbol stream is cut into ranges of whole 65536-symbol blocks (the blocks of the
seeded random streams, :mod:`serdes.rng`, and of the stop rule). Each range runs its own
:class:`~serdes.pipeline.Pipeline`: the transmitter jumps to ``warm-up`` symbols before
the range (a PRBS register jumps ahead over GF(2), random data and noise are indexed by
absolute position, the precoder state - an alternating sum of all data - is stepped
through on the caller), every history (pulse, noise FIR, FFE, DFE decisions, decoder)
fills during the warm-up, the latency is found again by correlation, and only decisions
from the range start on are counted, block by block.

Exactness is checked, not assumed: a range also records its last ``VERIFY`` decisions
(with a reflection canceller, its whole span: :func:`verify_length`) and slicer inputs,
and the next range the same ones from its warm-up. Equal decisions (at least the DFE's
and the canceller's reach) and bit-equal slicer inputs at the boundary mean an equal
feedback state, and the other histories are set by the data alone after the warm-up, so the
next range decides exactly as the single run does (by induction from the first range,
which is the single run's own start). If they differ (a DFE still in an error burst
started by the empty history), the range runs again with four times the warm-up, at
worst from symbol 0. Blocks are merged in order, so the stop rule (target errors on a
block boundary) stops at the same block as one thread; bursts crossing block or range
boundaries are joined. The slicer SNR is summed in a different order (equal to rounding).
A Ctrl-C (``should_stop``) ends the parent's own range at its next chunk; the ranges
before it that the workers finish are still merged, and the part it counted
(``RangeResult.stopped_at``), so the count is the gap-free prefix one thread would have.
FEC codewords: each range counts the interleave groups that start in it (finished past
its end); where the stop rule fires, that range is counted again up to the stop, so the
groups are those one pass has when it stops.

An MLSE detector's feedback state is more than its decisions: its path metrics and
survivor registers. Both ranges record the detector's whole state at the boundary
(:meth:`~serdes.dsp.mlse.MlseDetector.fingerprint`, bytes) and the check compares it
too: equal bytes there mean the same decisions from then on. That it converges bit for
bit in a warm-up is what makes the split pay (the metrics are reduced by the best one
every step, so once the survivors merge the best path's metric is exactly 0 in both and
the others the same sums of the same branch metrics); when it does not, the range runs
again as above.

Fixed-tap FFE + DFE or MLSE receivers with the pulse or the waveform engine are split
(the waveform engine's filtered noise is formed in fixed blocks of absolute-indexed white
noise; a range starts at the block holding its first sample, its history drawn again:
:class:`~serdes.engines.wave_noise.SampledNoise`), with a canceller placed from the pulse
(fixed taps) and with TX jitter at a fixed phase (below half a UI, no ppm); LMS
adaptation (each tap update depends on all earlier ones), the adaptive reflection
canceller (tap placement from the start of the run) and clock recovery run in one
thread, and the report says so.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from serdes.kernels.tally import snr_sums
from serdes.metrics.ber import ErrorCounter
from serdes.pipeline import ALIGN_WINDOW, STOP_BLOCK, Bursts, SlicerCapture

VERIFY = 64            # decisions compared at each range boundary
MAX_TASK_BLOCKS = 128  # a range: at most 128 blocks (8.4 M symbols), at least 4 per worker
TAIL_BLOCKS = 4        # the shortest range of the tapered tail (its warm-up stays < 1 %)


def split_limit(system, engine: str) -> str | None:
    """Why a run of ``system`` must stay in one thread (None: it can be split)."""
    spec = system.receiver
    if engine not in ("pulse", "waveform"):
        return f"the {engine} engine has no split"
    if spec.mode == "lms":
        return "LMS adaptation is sequential"
    if getattr(system, "cdr", None) is not None and system.cdr.active:
        return "the CDR loop is sequential (its phase state feeds back per symbol)"
    txj = getattr(system, "tx_jitter", None)
    if txj is not None and txj.active:
        # without the loop: block-seeded offsets of the absolute symbol index at a fixed
        # phase, so a range warmed up on the blocks before it samples as the whole run
        # does (the boundary check verifies it); a ppm offset, or offsets that reach half
        # a UI, slip the fixed phase by whole UIs, which the sampler follows from the
        # run's start
        if txj.ppm != 0:
            return "a TX frequency offset without clock recovery walks from the run's start"
        from serdes.txjitter import reach_ui

        reach = reach_ui(txj)
        if reach >= 0.5:
            return (f"TX jitter reaching {reach:g} UI without clock recovery slips whole UIs "
                    "from the run's start")
    if spec.rc.taps and spec.rc.mode == "adaptive":
        return "the reflection canceller places its taps from the start of the run"
    if getattr(system.link.adc, "calibration", None) is not None:
        return "the ADC's background calibration adapts from the start of the run"
    return None


def verify_length(system) -> int:
    """Decisions compared at a boundary: VERIFY (at least the DFE's span), or with a
    reflection canceller (fixed taps at lags up to rc.span_ui) every decision it reads,
    so equal decisions there mean an equal canceller state too."""
    rc = system.receiver.rc
    return max(VERIFY, int(rc.span_ui) + 1) if rc.taps else VERIFY


@dataclass(frozen=True)
class Task:
    index: int
    start: int            # first UI simulated
    skip: int             # first decision of the latency search
    head: int             # first decision recorded (head .. first - 1: boundary check)
    first: int            # first decision counted
    end: int              # one past the last decision counted
    precode_state: int = 0
    verify: int = VERIFY  # decisions compared at the boundary (verify_length)
    # the run ends at `end` (its last range, or the range where the stop rule fired):
    # codewords are counted as one pass counts them at its end, whole groups only
    final: bool = False


@dataclass
class RangeResult:
    """The counts of one range, block by block (block ``b0 + i``)."""

    index: int
    first: int
    end: int
    b0: int
    delay: int
    symbols: np.ndarray
    sym_err: np.ndarray
    bit_err: np.ndarray
    sq_err: np.ndarray
    sq_sig: np.ndarray
    full: np.ndarray      # the whole block was one run of symbol errors
    lead: np.ndarray      # symbol errors at the block's start (run joined to the last block's)
    trail: np.ndarray     # symbol errors at its end (run continued by the next block)
    inner: list           # per block: {length: count} of runs inside
    head_line: np.ndarray
    head_soft: np.ndarray
    tail_line: np.ndarray
    tail_soft: np.ndarray
    cap_first: int
    cap_sent: np.ndarray
    cap_v: np.ndarray
    simulated: int        # UIs simulated (warm-up included)
    # a range ended by ``should_stop`` (a Ctrl-C): its first decision not counted (the
    # blocks from there on are empty or partial); None when it counted to its end
    stopped_at: int | None = None
    fec: dict | None = None   # the codewords it counted (CodewordCounter.state)
    # an MLSE detector's state (MlseDetector.fingerprint) before sample `first` (after
    # the warm-up) and before sample `end` (where the next range's is compared)
    det_head: bytes | None = None
    det_tail: bytes | None = None


class _Runs:
    """Runs of symbol errors inside one block: leading run, closed runs, trailing run."""

    def __init__(self):
        self.leading, self.lead, self.bursts = True, 0, Bursts()

    def add(self, err: np.ndarray) -> None:
        if self.leading and err.shape[0]:
            # the first correct decision: O(1) in the usual case (none wrong at the start)
            ok = 0 if not err[0] else int(np.argmin(err))
            if err[ok]:
                self.lead += err.shape[0]
                return
            self.lead += ok
            self.leading = False
            err = err[ok:]
        self.bursts.add(err)


class _Tally:
    """Observer of one range: counts per block, boundary decisions, the first slicer
    samples (for the counted eye)."""

    def __init__(self, task: Task, levels, capture_limit: int):
        self.t, self.limit = task, int(capture_limit)
        self.levels = np.asarray(levels, dtype=np.float64)
        self.b0 = task.first // STOP_BLOCK
        nb = (task.end - 1) // STOP_BLOCK - self.b0 + 1
        self.n = np.zeros((3, nb), dtype=np.int64)
        self.sq = np.zeros((2, nb))
        self.runs = [_Runs() for _ in range(nb)]
        self.head_line, self.head_soft = [], []
        self.tail_line, self.tail_soft = np.zeros(0, np.uint8), np.zeros(0)
        self.cap_sent, self.cap_v, self.cap_n = [], [], 0

    def observe(self, rec) -> None:
        k, n = rec.first, rec.sym_err.shape[0]
        # only the chunk's last v values can be among the range's last v
        v = self.t.verify
        self.tail_line = np.concatenate([self.tail_line, rec.rx_line[-v:]])[-v:]
        self.tail_soft = np.concatenate([self.tail_soft, rec.soft[-v:]])[-v:]
        j = min(n, max(0, self.t.first - k))
        if j:
            self.head_line.append(rec.rx_line[:j])
            self.head_soft.append(rec.soft[:j])
        if j < n and self.cap_n < self.limit:
            c = min(n - j, self.limit - self.cap_n)
            self.cap_sent.append(rec.tx_line[j:j + c].copy())
            self.cap_v.append(rec.soft[j:j + c].copy())
            self.cap_n += c
        while j < n:
            b = (k + j) // STOP_BLOCK
            e = min(n, (b + 1) * STOP_BLOCK - k)
            i = b - self.b0
            err = rec.sym_err[j:e]
            self.n[:, i] += (e - j, np.count_nonzero(err), int(rec.bit_err[j:e].sum()))
            self.sq[:, i] += snr_sums(self.levels, rec.tx_line, rec.soft, j, e)
            self.runs[i].add(err)
            j = e

    def result(self, delay: int, simulated: int) -> RangeResult:
        cat = (lambda parts, dt: np.concatenate(parts) if parts else np.zeros(0, dt))
        return RangeResult(
            index=self.t.index, first=self.t.first, end=self.t.end, b0=self.b0, delay=delay,
            symbols=self.n[0], sym_err=self.n[1], bit_err=self.n[2], sq_err=self.sq[0],
            sq_sig=self.sq[1], full=np.array([r.leading for r in self.runs]),
            lead=np.array([r.lead for r in self.runs], dtype=np.int64),
            trail=np.array([r.bursts.run for r in self.runs], dtype=np.int64),
            inner=[dict(r.bursts.hist) for r in self.runs],
            head_line=cat(self.head_line, np.uint8), head_soft=cat(self.head_soft, float),
            tail_line=self.tail_line, tail_soft=self.tail_soft, cap_first=self.t.first,
            cap_sent=cat(self.cap_sent, np.uint8), cap_v=cat(self.cap_v, float),
            simulated=simulated)


def run_range(system, taps, engine: str, task: Task, capture_limit: int = 0,
              should_stop=None) -> RangeResult:
    """Simulate one range of a run (a worker's job): from ``task.start`` with empty
    histories, counting decisions ``task.first .. task.end - 1`` per block;
    ``should_stop()`` is checked before each chunk (a range it ends is not complete)."""
    from serdes.engines.run import pipeline

    run = system.run
    pipe = pipeline(system, taps, engine=engine, seed=run.seed)
    pipe.transmitter.seek(task.start, task.precode_state)
    tally = _Tally(task, pipe.levels, capture_limit)
    observers, end, fec = [tally], task.end, None
    spec = getattr(system.source, "fec", None)
    if spec is not None:   # the codewords that start in the range, completed past its end
        from serdes.fec.counter import CodewordCounter

        last = task.final or task.end >= run.symbols
        fec = CodewordCounter(spec, system.link.modulation_order, positions=True,
                              first=task.first if task.index else None,
                              end=None if last else task.end)
        observers = [_Until(tally, task.end), fec]
        if not last:
            end = min(run.symbols, task.end + spec.line_symbols(system.link.modulation_order)
                      + 2 * pipe.max_delay)
    from serdes.dsp.blocks import Mlse

    mlse = pipe.rx.find(Mlse)
    if mlse is not None:   # its path metrics and survivors: the boundary check compares them
        mlse.mark(task.end, *((task.first,) if task.index else ()))
    out = pipe.run(end, chunk=run.chunk_symbols, observers=observers, start=task.start,
                   skip=task.skip, count_from=task.head, should_stop=should_stop)
    res = tally.result(out.latency, out.decisions - task.start)
    if out.stopped_by == "interrupted" and out.decisions < end:
        # (past task.end: every decision counted, but codewords left unfinished)
        res.stopped_at = min(int(out.decisions), task.end)
    if fec is not None:
        res.fec = fec.state()
    if mlse is not None:
        res.det_head = mlse.states.get(task.first) if task.index else None
        res.det_tail = mlse.states.get(task.end)
    return res


class _Until:
    """An observer's records cut at decision ``end`` (a range run past its end)."""

    def __init__(self, observer, end: int):
        self.observer, self.end = observer, int(end)

    def observe(self, rec) -> None:
        from dataclasses import fields, replace

        n = self.end - int(rec.first)
        if n <= 0:
            return
        if n < rec.sym_err.shape[0]:
            rec = replace(rec, **{f.name: getattr(rec, f.name)[:n] for f in fields(rec)
                                  if isinstance(getattr(rec, f.name), np.ndarray)})
        self.observer.observe(rec)


def agree(prev: RangeResult, nxt: RangeResult) -> bool:
    """The boundary check: same latency, same last decisions and bit-equal slicer inputs
    where the earlier range ends and the later one's warm-up reaches, and with an MLSE
    detector the same detector state there (path metrics, survivors, rings: its
    fingerprint, which both ranges record before that sample)."""
    n = nxt.head_line.shape[0]
    return (prev.delay == nxt.delay and n >= VERIFY and n == prev.tail_line.shape[0]
            and np.array_equal(prev.tail_line, nxt.head_line)
            and np.array_equal(prev.tail_soft, nxt.head_soft)
            and prev.det_tail == nxt.det_head)


class _Merge:
    """Blocks in order: counts, bursts joined across boundaries, the stop rule."""

    def __init__(self, m: int, symbols: int, target: int, capture_limit: int, fec=None):
        self.counter = ErrorCounter(m, skip=0)
        self.symbols, self.target = symbols, target
        self.sq_err = self.sq_sig = 0.0
        self.run, self.hist = 0, {}
        self.capture = SlicerCapture(capture_limit) if capture_limit else None
        self.end = None   # set when the stop rule fires: one past the last counted decision
        self.stopped_by = "symbols"
        self.fec = None   # the ranges' codewords (fec: a FecSpec), absorbed in order
        if fec is not None:
            from serdes.fec.counter import CodewordCounter

            self.fec = CodewordCounter(fec, m)

    def add(self, r: RangeResult) -> bool:
        """Its blocks in order; True when the stop rule fired in it. Its codewords are
        absorbed unless it did (the caller then absorbs those of the range counted
        again up to the stop, :meth:`absorb_final`)."""
        for i in range(r.symbols.shape[0]):
            b = r.b0 + i
            self.counter.add(int(r.sym_err[i]), int(r.bit_err[i]), int(r.symbols[i]))
            self.sq_err += float(r.sq_err[i])
            self.sq_sig += float(r.sq_sig[i])
            if r.full[i]:
                self.run += int(r.symbols[i])
            else:
                self.run += int(r.lead[i])
                if self.run:
                    self.hist[self.run] = self.hist.get(self.run, 0) + 1
                for length, count in r.inner[i].items():
                    self.hist[length] = self.hist.get(length, 0) + count
                self.run = int(r.trail[i])
            # the stop rule looks at whole blocks only (one thread checks it at a block's
            # end), not at the part of a block a stopped range counted
            if (self.target > 0 and self.counter.bit_errors >= self.target
                    and (b + 1) * STOP_BLOCK <= self.symbols
                    and (r.stopped_at is None or (b + 1) * STOP_BLOCK <= r.stopped_at)):
                self.end = (b + 1) * STOP_BLOCK
                break
        if self.capture is not None and r.cap_v.size:
            c = r.cap_v.shape[0] if self.end is None else max(0, self.end - r.cap_first)
            self.capture.observe(_Piece(r.cap_first, r.cap_sent[:c], r.cap_v[:c]))
        if r.fec is not None and self.end is None:
            self.fec.absorb(r.fec)
        return self.end is not None

    def absorb_final(self, r: RangeResult) -> None:
        """The codewords of the range where the stop rule fired, counted again up to the
        stop (a :class:`Task` with ``final``): one pass stops there and counts the whole
        groups it has; the range had counted the groups that start in it, completed past
        its end."""
        if r.fec is not None:
            self.fec.absorb(r.fec)

    def bursts(self) -> dict[int, int]:
        if self.run:
            self.hist[self.run] = self.hist.get(self.run, 0) + 1
            self.run = 0
        return self.hist


@dataclass
class _Piece:
    first: int
    tx_line: np.ndarray
    soft: np.ndarray


@dataclass
class Split:
    """How a run was split: ``threads`` local processes or ``workers`` Dask worker
    threads, ``tasks`` ranges, ``warmup`` UI before each, ``retries`` ranges run again
    with a longer warm-up because the boundary check differed."""

    threads: int = 1
    workers: int | None = None
    tasks: int = 0
    warmup: int = 0
    retries: int = 0
    simulated: int = 0
    note: str | None = None
    extra: dict = field(default_factory=dict)
    fec: dict | None = None   # the report's "fec" object when the source sends codewords


def range_blocks(nblocks: int, workers: int, most: int = MAX_TASK_BLOCKS
                 ) -> list[tuple[int, int]]:
    """(first block, blocks) of each range: at most ``MAX_TASK_BLOCKS``, at least four
    ranges per worker when the run is long enough, and a tail that tapers (each range at
    most half a worker's share of what is left, down to ``TAIL_BLOCKS``) so that the
    workers finish together instead of one waiting on another's last long range. Each
    range costs a warm-up (a pipeline, about 5500 UI, and a whole 65536-value block of
    every noise stream for the part of the warm-up in the block before it: 2-6 ms of CPU
    beyond its symbols' on the default link, measured on the tail's short ranges), so the
    ranges are as few as that balance allows (25 for 1e8 symbols on 2 workers)."""
    per = max(1, min(most, -(-nblocks // (4 * workers))))
    out, b = [], 0
    while b < nblocks:
        n = max(min(per, TAIL_BLOCKS), min(per, (nblocks - b) // (2 * workers)))
        out.append((b, min(n, nblocks - b)))
        b += out[-1][1]
    return out


def plan(system, pipe, workers: int, warmup: int | None = None):
    """The ranges, in order (a generator: a 1e13-symbol run has millions): whole blocks
    (:func:`range_blocks`); the first is the single run's own start."""
    symbols = system.run.symbols
    skip = pipe.skip_for(symbols)
    nblocks = -(-symbols // STOP_BLOCK)
    v = verify_length(system)
    w = warmup_ui(pipe, v) if warmup is None else int(warmup)
    # a slower front end takes shorter ranges (``range_blocks_max``): a range is what a
    # process finishes before it sees a Ctrl-C or the merge moves on
    most = int(getattr(pipe.front, "range_blocks_max", MAX_TASK_BLOCKS))
    for i, (b, per) in enumerate(range_blocks(nblocks, workers, most)):
        first, end = b * STOP_BLOCK, min((b + per) * STOP_BLOCK, symbols)
        if i == 0:
            yield Task(0, 0, skip, skip, skip, end, verify=v)
        else:
            start = max(0, first - w)
            yield Task(i, start, skip if start == 0 else start + pipe.warm,
                       first - v, first, end, verify=v)


def warmup_ui(pipe, verify: int = VERIFY) -> int:
    """UIs simulated before a range: the pipeline's warm-up (pulse span, FFE, latency,
    64), the latency search window and the boundary check (``verify`` decisions), plus
    1024 for a DFE to leave an error burst begun by its empty history."""
    return pipe.warm + ALIGN_WINDOW + pipe.max_delay + verify + 1024


def can_split(pipe, symbols: int, workers: int, verify: int = VERIFY) -> bool:
    return (workers > 1 and symbols >= 2 * STOP_BLOCK
            and pipe.skip_for(symbols) + ALIGN_WINDOW + pipe.max_delay < STOP_BLOCK
            and warmup_ui(pipe, verify) < STOP_BLOCK)
