"""The time-interleaved ADC as built: N lanes with offset, gain, timing-skew and
track-and-hold bandwidth mismatch, aperture jitter, and the supply (LDO) that feeds the
sampling clock and the front end.

* :mod:`serdes.tiadc.model`: :class:`TiAdc` (an :class:`serdes.adc.Adc` of N lanes) and
  its seeded draws;
* :mod:`serdes.tiadc.supply`: ripple tones and broadband supply noise through an LDO's
  PSRR, as clock jitter and front-end gain modulation;
* :mod:`serdes.tiadc.spectrum`: the sine test (coherent FFT, SNDR, ENOB, interleaving
  spurs) behind ``serdes adc``;
* :mod:`serdes.tiadc.lanes`: per-lane pulse taps for the pulse engine.
"""
