"""The counted-BER loop shared by the pulse and waveform engines.

Symbols stream in chunks through: source -> levels + TX noise -> front end (pulse or
waveform engine) -> digital receiver -> error counter. Counting starts after a warm-up
(histories filled, LMS trained) and the latency is found by correlation. The run stops
at the symbol limit, or at the first 65536-symbol block boundary where the bit-error
count reaches the target, so a given seed gives the same result for any chunk size.
A caller may also stop it between chunks (``should_stop``, e.g. on Ctrl-C): the result
then holds what was counted so far, with ``stopped_by = "interrupted"``.
"""

from __future__ import annotations

import time
from dataclasses import asdict, dataclass, field

import numpy as np

from serdes.dsp.mmse import EqualizerTaps, mmse_ffe_dfe
from serdes.dsp.receiver import DigitalReceiver
from serdes.signal.pam import unprecode
from serdes.metrics.ber import ErrorCounter, align_delay
from serdes.signal.source import Transmitter

STOP_BLOCK = 1 << 16
ALIGN_WINDOW = 4096


@dataclass
class RunResult:
    symbols: int
    bits: int
    bit_errors: int
    symbol_errors: int
    ber: float
    ber_ci: tuple[float, float]
    ser: float
    snr_db: float
    predicted_snr_db: float
    latency: int
    ffe_taps: list[float]
    dfe_taps: list[float]
    elapsed_s: float
    symbols_per_s: float
    stopped_by: str
    bursts: dict[int, int] = field(default_factory=dict)
    detector: str = "dfe"
    rc_lags: list[int] = field(default_factory=list)
    rc_taps: list[float] = field(default_factory=list)
    whitening_taps: list[float] = field(default_factory=lambda: [1.0])
    mlse_target: list[float] = field(default_factory=list)
    pulse_dropped_energy: float = 0.0  # fraction of the pulse energy outside the kept span

    def to_dict(self) -> dict:
        d = asdict(self)
        d["ber_ci"] = list(self.ber_ci)
        d["bursts"] = {str(k): v for k, v in sorted(self.bursts.items())}
        return d


def design_equalizer(link) -> EqualizerTaps:
    """FFE/DFE taps for the link's config: joint MMSE, or the LMS starting point. With a
    reflection canceller or the MLSE detector, a :class:`serdes.dsp.design.ReceiverTaps`
    that also holds the RC taps, the whitening filter and the Viterbi target."""
    c = link.config
    if c["rc"]["taps"] or c["eq"]["detector"] != "dfe":
        from serdes.dsp.design import design_receiver

        return design_receiver(link)
    h = link.pulse.taps
    n_taps, n_pre, n_dfe = c["ffe"]["taps"], c["ffe"]["pre"], c["dfe"]["taps"]
    mmse = mmse_ffe_dfe(h, link.pulse.cursor, link.sampled_noise_autocorr(n_taps),
                        n_taps=n_taps, n_pre=n_pre, n_dfe=n_dfe,
                        level_power=link.level_power, dfe_limit=c["dfe"]["limit"])
    if c["eq"]["mode"] == "mmse":
        return mmse
    w = np.zeros(n_taps)
    w[n_pre] = 1.0 / h[link.pulse.cursor]
    return EqualizerTaps(ffe=w, dfe=np.zeros(n_dfe), delay=mmse.delay, combined=mmse.combined,
                         predicted_snr_db=mmse.predicted_snr_db)


class _Bursts:
    """Histogram of runs of consecutive symbol errors, carried across chunks."""

    def __init__(self):
        self.hist: dict[int, int] = {}
        self.run = 0

    def add(self, err: np.ndarray) -> None:
        if not err.any():
            if self.run:
                self.hist[self.run] = self.hist.get(self.run, 0) + 1
                self.run = 0
            return
        e = np.concatenate([[0], err.astype(np.int8), [0]])
        d = np.diff(e)
        starts = np.nonzero(d == 1)[0]
        ends = np.nonzero(d == -1)[0]
        lengths = ends - starts
        open_end = err[-1]
        if self.run and err[0]:
            lengths[0] += self.run
        elif self.run:
            self.hist[self.run] = self.hist.get(self.run, 0) + 1
        self.run = 0
        if open_end:
            self.run = int(lengths[-1])
            lengths = lengths[:-1]
        for L in lengths:
            self.hist[int(L)] = self.hist.get(int(L), 0) + 1

    def close(self) -> dict[int, int]:
        if self.run:
            self.hist[self.run] = self.hist.get(self.run, 0) + 1
            self.run = 0
        return self.hist


def simulate(link, *, engine: str = "pulse", symbols: int | None = None,
             target_errors: int | None = None, chunk: int | None = None,
             seed: int | None = None, taps: EqualizerTaps | None = None,
             should_stop=None, progress=None) -> RunResult:
    """Count errors on ``link`` with the pulse (default) or waveform engine.

    ``should_stop``: a callable checked before each chunk; when it returns true the run
    ends there with what was counted (``stopped_by = "interrupted"``). ``progress``: a
    callable ``progress(simulated, symbols, counted, bit_errors, bits)`` called after
    each chunk (``simulated`` of at most ``symbols``; ``counted`` of them were compared).
    """
    from serdes.engines.pulse import PulseFrontEnd
    from serdes.engines.waveform import WaveformFrontEnd

    c = link.config
    symbols = c["link"]["symbols"] if symbols is None else int(symbols)
    target = c["link"]["target_errors"] if target_errors is None else int(target_errors)
    chunk = c["link"]["chunk_symbols"] if chunk is None else int(chunk)
    seed = c["link"]["seed"] if seed is None else int(seed)
    t0 = time.perf_counter()

    taps = taps or design_equalizer(link)
    front = (PulseFrontEnd(link, seed) if engine == "pulse" else WaveformFrontEnd(link, seed))
    mode = c["eq"]["mode"]
    n_train = c["eq"]["train_symbols"] if mode == "lms" else 0
    rx = DigitalReceiver(link, taps, mode=mode, seed=seed, mu=c["eq"]["mu"],
                         dfe_limit=c["dfe"]["limit"], train_symbols=n_train)
    m = link.modulation_order
    levels = link.levels
    transmitter = Transmitter(link, seed)
    counter = ErrorCounter(m, skip=0)
    bursts = _Bursts()
    expected = rx.latency + front.latency
    max_delay = expected + link.pulse.n_ui + 8
    skip = link.pulse.n_ui + c["ffe"]["taps"] + max_delay + 64 + max(n_train,
                                                                     rx.warmup_symbols)
    if skip + ALIGN_WINDOW + max_delay > symbols:
        skip = 0 if symbols <= ALIGN_WINDOW else max(0, symbols - ALIGN_WINDOW - max_delay)

    # buffers with the absolute index of their first element
    tx_line = np.zeros(0, dtype=np.uint8)
    tx_data = np.zeros(0, dtype=np.uint8)
    tx_start = 0
    dec_line = np.zeros(0, dtype=np.uint8)
    dec_data = np.zeros(0, dtype=np.uint8)
    dec_v = np.zeros(0)
    dec_start = 0
    delay = None
    precode_state = 0
    sq_err = sq_sig = 0.0
    stopped_by = "symbols"
    k0 = 0
    while k0 < symbols:
        if should_stop is not None and should_stop():
            stopped_by = "interrupted"
            break
        n = min(chunk, symbols - k0)
        line, data, a = transmitter.next(n)
        tx_line = np.concatenate([tx_line, line])
        tx_data = np.concatenate([tx_data, data])
        x = front(a, k0)
        ref, n_tr = None, 0
        if n_train > k0:
            idx = np.clip(np.arange(k0, k0 + n) - expected - tx_start, 0, None)
            ref, n_tr = levels[tx_line[idx]], min(n, n_train - k0)
        dec, v = rx.process(x, k0, ref_levels=ref, n_train=n_tr)
        dd = dec
        if c["link"]["precoding"]:
            dd, precode_state = unprecode(dec, m, precode_state)
        dec_line = np.concatenate([dec_line, dec])
        dec_data = np.concatenate([dec_data, dd])
        dec_v = np.concatenate([dec_v, v])
        k0 += n
        if delay is None and k0 >= skip + ALIGN_WINDOW:
            seg = dec_line[skip - dec_start:skip - dec_start + ALIGN_WINDOW]
            delay = align_delay(seg, skip, tx_line, tx_start, max_delay)
        stop_at = None
        if delay is not None:
            first = max(dec_start, skip)
            sel = np.arange(first, k0) - dec_start
            txi = np.arange(first, k0) - delay - tx_start
            rx_d, tx_d = dec_data[sel], tx_data[txi]
            sym_err = rx_d != tx_d
            bit_err = counter.bit_errors_of(rx_d, tx_d)
            if target > 0 and bit_err.size and counter.bit_errors + bit_err.sum() >= target:
                # stop at the first block boundary (absolute decision index) with enough errors
                ks = np.arange(first, k0)
                cum = counter.bit_errors + np.cumsum(bit_err)
                ok = np.nonzero(((ks + 1) % STOP_BLOCK == 0) & (cum >= target))[0]
                if ok.size:
                    stop_at = int(ok[0]) + 1
                    sel, txi, sym_err, bit_err = (sel[:stop_at], txi[:stop_at],
                                                  sym_err[:stop_at], bit_err[:stop_at])
            counter.add(int(sym_err.sum()), int(bit_err.sum()), int(sel.size))
            bursts.add(sym_err)
            sig = levels[tx_line[txi]]
            err = dec_v[sel] - sig
            sq_err += float(np.sum(err * err))  # pairwise sum: no BLAS-thread dependence
            sq_sig += float(np.sum(sig * sig))
            # counted: drop the decisions and the symbols no later decision can refer to
            dec_line, dec_data, dec_v = dec_line[:0], dec_data[:0], dec_v[:0]
            dec_start = k0
            drop = max(0, k0 - max_delay - 1 - tx_start)
        else:
            # before alignment keep what the alignment window needs
            drop = max(0, min(skip, k0) - max_delay - 1 - tx_start)
            cut = max(0, min(skip, k0) - dec_start)
            dec_line, dec_data, dec_v = dec_line[cut:], dec_data[cut:], dec_v[cut:]
            dec_start += cut
        tx_line, tx_data = tx_line[drop:], tx_data[drop:]
        tx_start += drop
        if progress is not None:
            progress(k0, symbols, counter.symbols, counter.bit_errors, counter.bits)
        if stop_at is not None:
            stopped_by = "target_errors"
            break

    elapsed = time.perf_counter() - t0
    if counter.symbols == 0:  # interrupted before counting: no measurement
        snr = float("nan")
    else:
        snr = 10 * np.log10(sq_sig / sq_err) if sq_err > 0 else float("inf")
    return RunResult(
        symbols=counter.symbols, bits=counter.bits, bit_errors=counter.bit_errors,
        symbol_errors=counter.symbol_errors, ber=counter.ber, ber_ci=counter.ber_ci(),
        ser=counter.ser, snr_db=float(snr), predicted_snr_db=taps.predicted_snr_db,
        latency=-1 if delay is None else int(delay),
        ffe_taps=[float(t) for t in rx.ffe], dfe_taps=[float(t) for t in rx.dfe],
        elapsed_s=elapsed, symbols_per_s=k0 / elapsed if elapsed > 0 else float("inf"),
        stopped_by=stopped_by, bursts=bursts.close(), detector=rx.detector,
        rc_lags=[int(j) for j in rx.rc_lags], rc_taps=[float(t) for t in rx.rc_taps],
        whitening_taps=[float(t) for t in getattr(taps, "whitening", [1.0])],
        mlse_target=([float(t) for t in taps.target] if rx.detector == "mlse" else []),
        pulse_dropped_energy=float(link.pulse.dropped_energy))
