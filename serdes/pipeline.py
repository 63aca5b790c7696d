"""One streaming loop: source -> front end -> receiver chain -> observers.

Symbols stream in chunks: the :class:`~serdes.signal.source.Transmitter` gives the
levels sent (with TX noise), the front end (pulse or waveform engine) the ADC-input
samples, the receiver :class:`~serdes.dsp.blocks.Chain` the decisions. Once the
decisions are aligned with the symbols sent (latency found by correlation after a
warm-up), every chunk of aligned data goes to each observer as one :class:`Aligned`
record: the error counter, the burst histogram, the SNR meter, a capture of slicer
samples for the counted eye, and (later) CDR and FEC codeword observers all see the
same run. The run stops at the symbol limit, at the first 65536-symbol block boundary
(absolute decision index) where the bit-error count reaches the target - so a seed gives
the same result for any chunk size - or on Ctrl-C, with what was counted so far.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from serdes.kernels.tally import snr_sums
from serdes.metrics.ber import align_delay
from serdes.signal.pam import unprecode

STOP_BLOCK = 1 << 16
ALIGN_WINDOW = 4096
MIN_ALIGN = 256    # a run too short for this many aligned decisions counts none


@dataclass
class Aligned:
    """One chunk of decisions aligned with the symbols they decide; ``first`` is the
    absolute decision index of element 0."""

    first: int
    tx_line: np.ndarray   # level indices sent
    tx_data: np.ndarray   # data symbols (before precoding)
    rx_line: np.ndarray   # level indices decided
    rx_data: np.ndarray   # data symbols decoded
    soft: np.ndarray      # slicer inputs
    sym_err: np.ndarray   # bool per symbol
    bit_err: np.ndarray   # bit errors per symbol
    delay: int = 0        # decision index - index of the symbol sent (tx index = first - delay)


@dataclass
class PipelineResult:
    decisions: int        # decisions made (aligned or not)
    latency: int          # -1 if never aligned
    stopped_by: str       # "symbols", "target_errors" or "interrupted"
    bit_errors: int
    early: int = 0        # decisions counted before the adaptation ended (a short run)


class Pipeline:
    """``transmitter`` (``next(n) -> (line, data, a)``), ``front_end`` (``(a, k0) ->
    samples``, with a ``latency`` in UI), ``receiver`` (a Chain). ``bit_errors_of(rx,
    tx)`` counts bits per symbol (Gray map); ``precoding`` decodes 1/(1+D) after the
    detector; ``train_symbols`` of known data are given to a trainable receiver first
    (all of them to a receiver with ``genie = True``);
    ``skip`` decisions are left out of everything counted."""

    def __init__(self, transmitter, front_end, receiver, *, levels, modulation_order: int,
                 bit_errors_of, precoding: bool = False, train_symbols: int = 0,
                 pulse_ui: int = 64, ffe_taps: int = 1):
        self.transmitter = transmitter
        self.front = front_end
        self.rx = receiver
        self.levels = np.asarray(levels, dtype=np.float64)
        self.m = int(modulation_order)
        self.bit_errors_of = bit_errors_of
        self.precoding = bool(precoding)
        self.n_train = int(train_symbols) if getattr(receiver, "trainable", False) else 0
        # a genie receiver (e.g. GenieDfe, a reference) gets the symbols sent all along
        self.genie = bool(getattr(receiver, "genie", False))
        self.expected = int(receiver.latency) + int(front_end.latency)
        self.max_delay = self.expected + int(pulse_ui) + 8
        # decisions made while the receiver trains or searches, or the front end locks
        # or calibrates: a run counts after them unless it is too short (skip_for)
        self.adapt = max(self.n_train, int(getattr(receiver, "warmup_symbols", 0)),
                         int(getattr(front_end, "warmup_symbols", 0)))
        self.warm = int(pulse_ui) + int(ffe_taps) + self.max_delay + 64 + self.adapt

    def skip_for(self, symbols: int) -> int:
        """The first decision of the alignment window: after the warm-up where the run
        holds the warm-up, the window and the delay search; in a shorter run as late as a
        whole window allows; in a run shorter still, after the warm-up if MIN_ALIGN
        decisions remain, and never before ``max_delay`` (the window is compared with the
        symbols sent up to max_delay UI before it, which must exist)."""
        skip = self.warm
        if skip + ALIGN_WINDOW + self.max_delay > symbols:
            skip = symbols - ALIGN_WINDOW - self.max_delay
            if skip < self.max_delay:
                skip = max(self.max_delay, min(self.warm, symbols - MIN_ALIGN))
        return skip

    def run(self, symbols: int, *, chunk: int, observers=(), target_errors: int = 0,
            progress=None, should_stop=None, start: int = 0, skip: int | None = None,
            count_from: int | None = None) -> PipelineResult:
        """Stream symbols up to ``symbols`` in chunks of ``chunk``. ``should_stop()``: checked
        before each chunk (e.g. set by a Ctrl-C handler), the run then ends with what was
        counted; ``progress(simulated, symbols, counted, bit_errors, bits)``: called after
        each chunk.

        A piece of a longer run (:mod:`serdes.parallel`): ``start`` is the first UI
        simulated (the transmitter must already be there, every history starts empty),
        ``skip`` the first decision of the alignment window (default
        :meth:`skip_for`), ``count_from`` the first decision counted (default ``skip``)."""
        symbols, chunk, target = int(symbols), int(chunk), int(target_errors)
        skip = self.skip_for(symbols) if skip is None else int(skip)
        count_from = skip if count_from is None else max(int(count_from), skip)
        n_align = min(ALIGN_WINDOW, symbols - skip)   # shorter only in a short run
        levels, m = self.levels, self.m
        tx_line = np.zeros(0, dtype=np.uint8)
        tx_data = np.zeros(0, dtype=np.uint8)
        tx_start = int(start)
        dec_line = np.zeros(0, dtype=np.uint8)
        dec_data = np.zeros(0, dtype=np.uint8)
        dec_v = np.zeros(0)
        dec_start = int(start)
        delay = None
        precode_state = 0
        counted = n_counted = 0
        bps = 1 if self.m == 2 else 2
        stopped_by = "symbols"
        k0 = int(start)
        try:
            while k0 < symbols:
                if should_stop is not None and should_stop():
                    stopped_by = "interrupted"
                    break
                n = min(chunk, symbols - k0)
                line, data, a = self.transmitter.next(n)
                tx_line = np.concatenate([tx_line, line])
                tx_data = np.concatenate([tx_data, data])
                x = self.front(a, k0)
                ref, n_tr = None, 0
                if self.n_train > k0 or self.genie:
                    idx = np.clip(np.arange(k0, k0 + n) - self.expected - tx_start, 0, None)
                    ref = levels[tx_line[idx]]
                    n_tr = n if self.genie else min(n, self.n_train - k0)
                det = self.rx(x, k0, ref=ref, n_train=n_tr)
                dec, v = det.decisions, det.soft
                dd = dec
                if self.precoding:
                    dd, precode_state = unprecode(dec, m, precode_state)
                dec_line = np.concatenate([dec_line, dec])
                dec_data = np.concatenate([dec_data, dd])
                dec_v = np.concatenate([dec_v, v])
                k0 += n
                if delay is None and n_align >= MIN_ALIGN and k0 >= skip + n_align:
                    seg = dec_line[skip - dec_start:skip - dec_start + n_align]
                    delay = align_delay(seg, skip, tx_line, tx_start, self.max_delay)
                stop_at = None
                if delay is not None:
                    first = max(dec_start, count_from)
                    sel = np.arange(first, k0) - dec_start
                    txi = np.arange(first, k0) - delay - tx_start
                    rx_d, tx_d = dec_data[sel], tx_data[txi]
                    sym_err = rx_d != tx_d
                    bit_err = self.bit_errors_of(rx_d, tx_d)
                    if target > 0 and bit_err.size and counted + bit_err.sum() >= target:
                        ks = np.arange(first, k0)
                        cum = counted + np.cumsum(bit_err)
                        ok = np.nonzero(((ks + 1) % STOP_BLOCK == 0) & (cum >= target))[0]
                        if ok.size:
                            stop_at = int(ok[0]) + 1
                            sel, txi = sel[:stop_at], txi[:stop_at]
                            rx_d, tx_d = rx_d[:stop_at], tx_d[:stop_at]
                            sym_err, bit_err = sym_err[:stop_at], bit_err[:stop_at]
                    counted += int(bit_err.sum())
                    n_counted += int(bit_err.shape[0])
                    rec = Aligned(first=first, tx_line=tx_line[txi], tx_data=tx_d,
                                  rx_line=dec_line[sel], rx_data=rx_d, soft=dec_v[sel],
                                  sym_err=sym_err, bit_err=bit_err, delay=int(delay))
                    for obs in observers if sel.size else ():
                        obs.observe(rec)
                    dec_line, dec_data, dec_v = dec_line[:0], dec_data[:0], dec_v[:0]
                    dec_start = k0
                    drop = max(0, k0 - self.max_delay - 1 - tx_start)
                else:
                    drop = max(0, min(skip, k0) - self.max_delay - 1 - tx_start)
                    cut = max(0, min(skip, k0) - dec_start)
                    dec_line, dec_data, dec_v = dec_line[cut:], dec_data[cut:], dec_v[cut:]
                    dec_start += cut
                tx_line, tx_data = tx_line[drop:], tx_data[drop:]
                tx_start += drop
                if progress is not None:
                    progress(k0, symbols, n_counted, counted, n_counted * bps)
                if stop_at is not None:
                    stopped_by = "target_errors"
                    break
        except KeyboardInterrupt:  # no handler installed: stop where it was
            stopped_by = "interrupted"
        early = max(0, min(self.adapt, count_from + n_counted) - count_from)
        return PipelineResult(decisions=k0, latency=-1 if delay is None else int(delay),
                              stopped_by=stopped_by, bit_errors=counted, early=early)


# ------------------------------------------------------------------------- observers
class Bursts:
    """Histogram of runs of consecutive symbol errors, carried across chunks."""

    def __init__(self):
        self.hist: dict[int, int] = {}
        self.run = 0

    def observe(self, rec: Aligned) -> None:
        self.add(rec.sym_err)

    def add(self, err: np.ndarray) -> None:
        if not err.any():
            if self.run:
                self.hist[self.run] = self.hist.get(self.run, 0) + 1
                self.run = 0
            return
        e = np.concatenate([[0], err.astype(np.int8), [0]])
        d = np.diff(e)
        lengths = np.nonzero(d == -1)[0] - np.nonzero(d == 1)[0]
        if self.run and err[0]:
            lengths[0] += self.run
        elif self.run:
            self.hist[self.run] = self.hist.get(self.run, 0) + 1
        self.run = 0
        if err[-1]:
            self.run = int(lengths[-1])
            lengths = lengths[:-1]
        for L in lengths:
            self.hist[int(L)] = self.hist.get(int(L), 0) + 1

    def close(self) -> dict[int, int]:
        if self.run:
            self.hist[self.run] = self.hist.get(self.run, 0) + 1
            self.run = 0
        return self.hist


class SnrMeter:
    """Slicer SNR: sum of squared levels sent over the sum of squared slicer errors."""

    def __init__(self, levels):
        self.levels = np.asarray(levels, dtype=np.float64)
        self.sq_err = self.sq_sig = 0.0

    def observe(self, rec: Aligned) -> None:
        # one pass, the same pairwise sums as np.sum (no BLAS-thread dependence)
        sq_err, sq_sig = snr_sums(self.levels, rec.tx_line, rec.soft)
        self.sq_err += sq_err
        self.sq_sig += sq_sig

    @property
    def snr_db(self) -> float:
        return 10 * np.log10(self.sq_sig / self.sq_err) if self.sq_err > 0 else float("inf")


class SlicerCapture:
    """The first ``limit`` aligned slicer inputs with the level index each decides (the
    counted eye's data), taken from the run itself."""

    def __init__(self, limit: int = 1 << 17):
        self.limit = int(limit)
        self._sent: list[np.ndarray] = []
        self._v: list[np.ndarray] = []
        self.n = 0
        self.first: int | None = None  # decision index of the first sample kept

    def observe(self, rec: Aligned) -> None:
        if self.n >= self.limit:
            return
        if self.first is None:
            self.first = int(rec.first)
        k = min(self.limit - self.n, rec.soft.shape[0])
        self._sent.append(rec.tx_line[:k].copy())
        self._v.append(rec.soft[:k].copy())
        self.n += k

    @property
    def sent(self) -> np.ndarray:
        return np.concatenate(self._sent) if self._sent else np.zeros(0, dtype=np.uint8)

    @property
    def v(self) -> np.ndarray:
        return np.concatenate(self._v) if self._v else np.zeros(0)
