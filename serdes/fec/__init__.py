"""RS(544,514) "KP4" forward error correction over GF(2^10) (IEEE 802.3 Clause 91).

- :mod:`serdes.fec.gf`: the field tables and the generator polynomial;
- :mod:`serdes.fec.rs`: the numba kernels (systematic encoder; syndromes,
  Berlekamp-Massey, Chien search, Forney) behind checking wrappers;
- :mod:`serdes.fec.framing`: bits <-> 10-bit symbols <-> line symbols and the codeword
  interleave (:class:`FecSpec`);
- :mod:`serdes.fec.source`: the encoded payload a transmitter sends;
- :mod:`serdes.fec.counter`: the codeword observer of a counted run;
- :mod:`serdes.fec.model`: the burst-aware extrapolation of the frame loss ratio.
"""

from serdes.fec.framing import FecSpec

__all__ = ["FecSpec"]
