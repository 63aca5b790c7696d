"""The codeword observer of a counted run: frames the aligned data symbols into the
interleave groups the transmitter sent (:mod:`serdes.fec.source`), decodes what was
received and compares with what was sent.

Counted per codeword: RS symbol errors before decoding (the histogram), whether the
decoder gave up (``detected``) or returned a wrong codeword (``miscorrected``; both are
lost frames), and the payload bit errors left after decoding. The data-symbol error
events feed the burst model (:mod:`serdes.fec.model`).
"""

from __future__ import annotations

from collections import Counter

import numpy as np

from serdes.fec import model
from serdes.fec.framing import FecSpec, data_to_codewords, symbol_bits
from serdes.fec.gf import M
from serdes.fec.rs import decode

MAX_PATTERNS = 200_000  # event patterns kept for the model (the rate counts all events)


class CodewordCounter:
    """Observer (``observe(rec)``) counting post-FEC results; :meth:`result` is the
    ``"fec"`` object of a report."""

    def __init__(self, spec: FecSpec, m: int, *, first: int | None = None,
                 end: int | None = None, positions: bool = False):
        """``first``/``end``: one range of a split run (:mod:`serdes.parallel`): only
        the interleave groups whose first symbol is decided at or after decision
        ``first`` and before ``end`` (None: from the first whole group, up to the last
        whole one), which the range completes past ``end``; ``positions``: keep the data
        symbol error positions (:meth:`state`) instead of forming the error events, which
        :meth:`absorb` forms over all ranges in order."""
        self.spec, self.m = spec, int(m)
        self.first, self.end, self._keep = first, end, bool(positions)
        self._positions: list[np.ndarray] = []
        self.group = spec.line_symbols(self.m)
        self._tx = np.zeros(0, dtype=np.uint8)
        self._rx = np.zeros(0, dtype=np.uint8)
        self._start: int | None = None      # tx index of _tx[0] (a group boundary)
        self.codewords = self.detected = self.miscorrected = 0
        self.symbol_errors = self.bit_errors_pre = self.bit_errors_post = 0
        self.hist = np.zeros(spec.n + 1, dtype=np.int64)
        self.line_symbols = 0
        self.data_symbol_errors = 0
        self.events = 0
        self.patterns: Counter = Counter()
        self._kept = 0
        self._open: np.ndarray | None = None  # error positions of the event not closed yet

    def observe(self, rec) -> None:
        t0 = int(rec.first) - int(rec.delay)
        tx, rx = rec.tx_data, rec.rx_data
        if self._start is None:
            lo = t0 if self.first is None else max(t0, self.first - int(rec.delay))
            first = -(-lo // self.group) * self.group
            cut = first - t0
            if cut >= tx.shape[0]:
                return
            tx, rx, t0 = tx[cut:], rx[cut:], first
            self._start = first
        self._tx = np.concatenate([self._tx, tx])
        self._rx = np.concatenate([self._rx, rx])
        whole = (self._tx.shape[0] // self.group) * self.group
        if self.end is not None:   # the groups that start before decision ``end``
            starts = -(-(self.end - int(rec.delay) - self._start) // self.group)
            whole = min(whole, max(starts, 0) * self.group)
        if whole:
            self._groups(self._tx[:whole], self._rx[:whole], self._start)
            self._tx, self._rx = self._tx[whole:], self._rx[whole:]
            self._start += whole

    def _groups(self, tx: np.ndarray, rx: np.ndarray, start: int) -> None:
        spec = self.spec
        cw_tx = data_to_codewords(tx, spec, self.m)
        cw_rx = data_to_codewords(rx, spec, self.m)
        wrong = cw_tx != cw_rx
        per_cw = wrong.sum(axis=1)
        self.hist += np.bincount(per_cw, minlength=spec.n + 1)[:spec.n + 1]
        self.codewords += cw_tx.shape[0]
        self.symbol_errors += int(per_cw.sum())
        self.bit_errors_pre += int(symbol_bits(cw_tx[wrong] ^ cw_rx[wrong]).sum())
        bad = per_cw > 0
        if bad.any():
            dec, status = decode(cw_rx[bad])
            sent = cw_tx[bad]
            self.detected += int(np.sum(status < 0))
            self.miscorrected += int(np.sum((status >= 0) & (dec != sent).any(axis=1)))
            left = dec[:, :spec.k] != sent[:, :spec.k]
            self.bit_errors_post += int(symbol_bits(dec[:, :spec.k][left]
                                                    ^ sent[:, :spec.k][left]).sum())
        self.line_symbols += tx.shape[0]
        pos = np.nonzero(tx != rx)[0] + start
        self.data_symbol_errors += int(pos.size)
        if self._keep:
            if pos.size:
                self._positions.append(pos)
            return
        if self._open is not None:
            pos = np.concatenate([self._open, pos])
            self._open = None
        evs = model.events_of(pos)
        if evs and evs[-1][-1] > start + tx.shape[0] - 1 - model.GAP:
            self._open = evs.pop()   # may continue in the next group
        for e in evs:
            self._add_event(e)

    def _add_event(self, e: np.ndarray) -> None:
        self.events += 1
        if self._kept < MAX_PATTERNS:
            self.patterns[tuple(int(v) for v in e - e[0])] += 1
            self._kept += 1

    _COUNTS = ("codewords", "detected", "miscorrected", "symbol_errors", "bit_errors_pre",
               "bit_errors_post", "line_symbols", "data_symbol_errors")

    def state(self) -> dict:
        """What a range counted (``positions=True``), for :meth:`absorb`."""
        return {**{k: getattr(self, k) for k in self._COUNTS}, "hist": self.hist,
                "positions": (np.concatenate(self._positions) if self._positions
                              else np.zeros(0, dtype=np.int64))}

    def absorb(self, state: dict) -> None:
        """Add the :meth:`state` of the next range (ranges in order): its counts, and the
        error events over its positions, the last one kept open for the next range (as
        one pass forms them group after group: the same events, patterns and cap; the
        memory stays that of one pass)."""
        for k in self._COUNTS:
            setattr(self, k, getattr(self, k) + int(state[k]))
        self.hist = self.hist + state["hist"]
        pos = state["positions"]
        if self._open is not None:
            pos = np.concatenate([self._open, pos])
            self._open = None
        evs = model.events_of(pos)
        if evs:
            self._open = evs.pop()   # may continue in the next range
        for e in evs:
            self._add_event(e)

    def result(self) -> dict:
        """Counted and modelled post-FEC numbers (the ``"fec"`` object of a report)."""
        from serdes.metrics.ber import clopper_pearson

        if self._open is not None:
            self._add_event(self._open)
            self._open = None
        spec = self.spec
        lost = self.detected + self.miscorrected
        n_sym = self.codewords * spec.n
        msg_bits = self.codewords * spec.k * M
        ser = self.symbol_errors / n_sym if n_sym else float("nan")
        b_per = self.bit_errors_pre / self.symbol_errors if self.symbol_errors else 1.0
        mdl = model.predict(self.patterns, self.events, self.line_symbols, spec, self.m, b_per)
        flr_bin = model.binomial_flr(ser, spec.n, spec.t) if n_sym else float("nan")
        bin_pk = model.binomial(ser, spec.n) if n_sym else np.zeros(spec.n + 1)
        return {
            "mode": spec.mode, "interleave": spec.interleave,
            "n": spec.n, "k": spec.k, "t": spec.t,
            "codewords": self.codewords,
            "uncorrectable": lost, "detected": self.detected, "miscorrected": self.miscorrected,
            "flr": lost / self.codewords if self.codewords else float("nan"),
            "flr_ci": list(clopper_pearson(lost, self.codewords)) if self.codewords
            else [float("nan")] * 2,
            "pre_fec_ber": (self.bit_errors_pre / (n_sym * M)) if n_sym else float("nan"),
            "post_fec_ber": self.bit_errors_post / msg_bits if msg_bits else float("nan"),
            "post_fec_bit_errors": self.bit_errors_post,
            "symbol_error_ratio": ser,
            "symbol_errors": self.symbol_errors,
            "bits_per_symbol_error": b_per,
            "errors_per_codeword": {str(k): int(v) for k, v in enumerate(self.hist) if v},
            "error_events": self.events,
            "error_propagation": (1.0 - self.events / self.data_symbol_errors)
            if self.data_symbol_errors else 0.0,
            "flr_model": mdl["flr"],
            "post_fec_ber_model": mdl["post_fec_ber"],
            "flr_binomial": flr_bin,
            "post_fec_ber_binomial": model.post_fec_ber(bin_pk, spec.t, spec.n, b_per),
            "model": mdl,
            **_margin(mdl["post_fec_ber"], spec.target_post_fec_ber, self.events),
        }


def counter_for(system) -> CodewordCounter | None:
    """A one-pass codeword observer of ``system`` when its source sends FEC codewords,
    else None (a split run counts them per range: :mod:`serdes.parallel`)."""
    spec = getattr(system.source, "fec", None)
    return None if spec is None else CodewordCounter(spec, system.link.modulation_order)


def _margin(post_fec_ber_model: float, target: float, events: int) -> dict:
    """The margin of the burst model's post-FEC BER to the PHY's objective, in decades
    (> 0: below the objective). The counted post-FEC BER cannot reach such levels; the
    model can, and its standing is that of the model (see :mod:`serdes.fec.model`).
    Without a counted error event the model has nothing to go on: no margin (None)."""
    import math

    if events == 0 or not post_fec_ber_model >= 0:
        margin = None
    elif post_fec_ber_model == 0:   # the model leaves no error beyond t per codeword
        margin = math.inf
    else:
        margin = math.log10(target / post_fec_ber_model)
    return {"target_post_fec_ber": target, "margin_decades": margin,
            "meets_target": None if margin is None else bool(margin >= 0)}
