"""The payload a transmitter sends when FEC is on: the pattern's bits cut into
messages, encoded, interleaved and mapped to data symbols (:mod:`serdes.fec.framing`).

Data symbol ``i`` lies in interleave group ``i // G`` (G line symbols per group) and
the group's messages are payload bits ``g * B .. (g + 1) * B - 1`` (B bits per group), so
any symbol can be reached directly (:meth:`EncodedPayload.seek`) and chunked calls
return exactly what one call would.
"""

from __future__ import annotations

import numpy as np

from serdes import rng
from serdes.errors import ConfigError
from serdes.fec.framing import FecSpec, bits_to_messages, codewords_to_data
from serdes.fec.rs import encode
from serdes.signal.prbs import PrbsGenerator


class EncodedPayload:
    """Data symbols (before precoding) carrying RS-encoded ``pattern`` bits."""

    def __init__(self, spec: FecSpec, *, pattern: str, m: int, seed: int):
        if not (pattern.startswith("prbs") or pattern == "random"):
            raise ConfigError(f"link.pattern = {pattern!r} cannot carry FEC codewords "
                              "(fec.mode = 'kp4'): use a PRBS or 'random'")
        self.spec, self.pattern, self.m = spec, pattern, m
        self.group = spec.line_symbols(m)
        self.bits_per_group = spec.message_bits()
        self._seed = seed
        self.seek(0)

    def seek(self, position: int) -> None:
        g, off = divmod(int(position), self.group)
        self._next_group = g
        if self.pattern.startswith("prbs"):
            self._prbs = PrbsGenerator(self.pattern)
            self._prbs.skip(g * self.bits_per_group)
        else:
            self._rng = rng.BlockRNG(self._seed, rng.DATA)
        self._buf = self._groups(1)[off:]

    def _groups(self, count: int) -> np.ndarray:
        nbits = count * self.bits_per_group
        if self.pattern.startswith("prbs"):
            bits = self._prbs.bits(nbits)
        else:
            bits = self._rng.integers(self._next_group * self.bits_per_group, nbits, 2)
        self._next_group += count
        return codewords_to_data(encode(bits_to_messages(bits, self.spec)), self.spec, self.m)

    def next(self, n: int) -> np.ndarray:
        n = int(n)
        if n > self._buf.shape[0]:
            more = -(-(n - self._buf.shape[0]) // self.group)
            self._buf = np.concatenate([self._buf, self._groups(more)])
        out, self._buf = self._buf[:n], self._buf[n:]
        return np.ascontiguousarray(out, dtype=np.uint8)
