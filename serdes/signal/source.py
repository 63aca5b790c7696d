"""The transmitted symbol stream: pattern -> Gray-coded symbols -> optional precoding."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from serdes import rng
from serdes.signal import pam
from serdes.signal.prbs import PrbsGenerator, qprbs13_symbols


class SymbolSource:
    """Streams transmitted symbols in chunks; ``next(n)`` returns ``(line, data)``.

    ``data`` are the Gray-coded symbol indices carrying the bits, ``line`` the indices
    actually sent (equal to ``data`` without precoding). Chunked calls return exactly
    what one call would.
    """

    def __init__(self, *, pattern: str, m: int, precoding: bool, seed: int, fec=None):
        self.pattern = pattern
        self.m = m
        self.bits_per_symbol = 1 if m == 2 else 2
        self.precoding = precoding
        self.position = 0
        self._precode_state = 0
        self._seed = seed
        self.fec = fec
        if fec is not None:  # RS-encoded payload (serdes.fec.source)
            from serdes.fec.source import EncodedPayload

            self._payload = EncodedPayload(fec, pattern=pattern, m=m, seed=seed)
        elif pattern.startswith("prbs"):
            self._prbs = PrbsGenerator(pattern)
        elif pattern == "qprbs13":
            sym = qprbs13_symbols()
            self._cycle = sym if m == 4 else (sym >= 2).astype(np.uint8)
        else:
            self._rng = rng.BlockRNG(seed, rng.DATA)

    def seek(self, position: int, precode_state: int | None = None) -> None:
        """Continue from symbol ``position`` as if ``position`` symbols had been sent: a
        PRBS register jumps ahead (:meth:`PrbsGenerator.skip`), QPRBS13 and random data
        are indexed by position. With precoding the precoder state there (the line symbol
        before ``position``) is ``precode_state`` or, if None, found by stepping the data
        from 0 (see :func:`precode_states`)."""
        position = int(position)
        if self.fec is not None:
            self._payload.seek(position)
        elif self.pattern.startswith("prbs"):
            self._prbs = PrbsGenerator(self.pattern)
            self._prbs.skip(position * self.bits_per_symbol)
        self.position = position
        if self.precoding:
            if precode_state is None:
                precode_state = precode_states(self.pattern, self.m, self._seed, [position],
                                               fec=self.fec)[0]
            self._precode_state = int(precode_state)

    def next(self, n: int) -> tuple[np.ndarray, np.ndarray]:
        if self.fec is not None:
            data = self._payload.next(n)
        elif self.pattern.startswith("prbs"):
            data = pam.bits_to_symbols(self._prbs.bits(n * self.bits_per_symbol), self.m)
        elif self.pattern == "qprbs13":
            idx = (self.position + np.arange(n)) % self._cycle.shape[0]
            data = self._cycle[idx]
        else:
            data = self._rng.integers(self.position, n, self.m)
        self.position += n
        data = np.ascontiguousarray(data, dtype=np.uint8)
        if not self.precoding:
            return data, data
        line, self._precode_state = pam.precode(data, self.m, self._precode_state)
        return np.ascontiguousarray(line, dtype=np.uint8), data


def precode_states(pattern: str, m: int, seed: int, positions, fec=None) -> list[int]:
    """The 1/(1+D) precoder state (the line symbol sent just before) at each of the
    increasing symbol ``positions``, in one pass over the data from symbol 0: the state
    has unbounded memory (an alternating sum of all data), so it cannot be warmed up."""
    src = SymbolSource(pattern=pattern, m=m, precoding=True, seed=seed, fec=fec)
    out = []
    for pos in positions:
        while src.position < pos:
            src.next(min(1 << 20, int(pos) - src.position))
        out.append(int(src._precode_state))
    return out


@dataclass(frozen=True)
class SourceSpec:
    """What is sent: the data ``pattern`` (see :data:`serdes.config.PATTERNS`) and
    whether 1/(1+D) precoding is on; ``fec``: a :class:`serdes.fec.FecSpec` to send
    RS-encoded payload (None: the pattern itself)."""

    pattern: str = "prbs31"
    precoding: bool = False
    fec: object = None


class Transmitter:
    """The link's transmitted stream: ``next(n)`` returns ``(line, data, a)`` with ``a``
    the symbol values sent (levels of ``line`` plus the TX noise of those UIs). Every
    engine and measurement that drives a link uses this one place."""

    def __init__(self, link, source: SourceSpec, seed: int):
        self.levels = link.levels
        self.sigma = link.tx_noise_sigma
        self.source = SymbolSource(pattern=source.pattern, m=link.modulation_order,
                                   precoding=source.precoding, seed=seed,
                                   fec=getattr(source, "fec", None))
        self._noise = rng.BlockRNG(seed, rng.TX_NOISE)

    def seek(self, position: int, precode_state: int | None = None) -> None:
        """Send from symbol ``position`` on (see :meth:`SymbolSource.seek`)."""
        self.source.seek(position, precode_state)

    def next(self, n: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        k0 = self.source.position
        line, data = self.source.next(n)
        a = self.levels[line]
        if self.sigma > 0:
            a = a + self.sigma * self._noise.normal(k0, n)
        return line, data, np.ascontiguousarray(a)
