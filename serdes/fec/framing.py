"""How RS codewords ride on the line: bits -> 10-bit symbols -> codeword interleave ->
PAM4 (or NRZ) symbols.

- Each 10-bit RS symbol is sent bit 0 first (the convention of the 802.3 RS-FEC
  sublayers, Clause 91.5.2); PAM4 then takes the bits in pairs, MSB first, Gray coded
  (:func:`serdes.signal.pam.bits_to_symbols`, 802.3 Clause 120.5.7), so one RS symbol is
  5 PAM4 symbols and a burst of PAM4 errors can straddle two RS symbols.
- ``interleave = 1``: codewords follow each other, as the single-lane Clause 91
  RS-FEC sends them; ``interleave = 2``: two codewords A and B alternate on 10-bit symbol
  boundaries (A0 B0 A1 B1 ...), the 2-way interleave of the 200G/400G PCS (Clause
  119.2.4) that 802.3ck also uses for 100GBASE-KR1/CR1 (Clause 161), so a burst up to 10
  PAM4 symbols costs each codeword at most 2 symbols.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from serdes.fec.gf import K, M, N, T
from serdes.signal import pam


@dataclass(frozen=True)
class FecSpec:
    """The FEC of a link: the KP4 code and the codeword interleave (1 or 2)."""

    mode: str = "kp4"
    interleave: int = 2
    target_post_fec_ber: float = 1e-13
    n: int = N
    k: int = K
    t: int = T

    def line_symbols(self, m: int) -> int:
        """Line (data) symbols of one interleave group of ``interleave`` codewords."""
        return self.interleave * self.n * M // (1 if m == 2 else 2)

    def message_bits(self) -> int:
        """Payload bits of one interleave group."""
        return self.interleave * self.k * M


def codewords_to_data(cw: np.ndarray, spec: FecSpec, m: int) -> np.ndarray:
    """Data symbols (uint8, before precoding) of whole groups of codewords (rows)."""
    il = spec.interleave
    cw = np.asarray(cw, dtype=np.int64)
    groups = cw.shape[0] // il
    seq = cw[:groups * il].reshape(groups, il, spec.n).transpose(0, 2, 1).reshape(-1)
    bits = ((seq[:, None] >> np.arange(M)) & 1).astype(np.uint8).reshape(-1)
    return pam.bits_to_symbols(bits, m)


def data_to_codewords(data: np.ndarray, spec: FecSpec, m: int) -> np.ndarray:
    """Inverse of :func:`codewords_to_data`: rows of N RS symbols from whole groups of
    data symbols."""
    il = spec.interleave
    bits = pam.symbols_to_bits(np.asarray(data, dtype=np.uint8), m)
    sym = (bits.reshape(-1, M).astype(np.int64) << np.arange(M)).sum(axis=1)
    groups = sym.shape[0] // (il * spec.n)
    return np.ascontiguousarray(sym[:groups * il * spec.n].reshape(groups, spec.n, il)
                                .transpose(0, 2, 1).reshape(groups * il, spec.n))


def bits_to_messages(bits: np.ndarray, spec: FecSpec) -> np.ndarray:
    """Rows of K message symbols from payload bits (bit 0 of each symbol first)."""
    b = np.asarray(bits, dtype=np.int64).reshape(-1, spec.k, M)
    return (b << np.arange(M)).sum(axis=2)


def symbol_bits(x: np.ndarray) -> np.ndarray:
    """Number of ones in each 10-bit symbol (e.g. of an XOR of two words)."""
    x = np.asarray(x, dtype=np.int64)
    return ((x[..., None] >> np.arange(M)) & 1).sum(axis=-1)
