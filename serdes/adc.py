"""ADC: uniform quantizer with clipping, ENOB noise, and the VGA that sets its range.

An ideal B-bit converter spanning ``fullscale_v`` peak to peak has an LSB
q = fullscale_v / 2**B and quantization noise q^2/12. An ENOB below B is modelled by
extra white Gaussian noise so that the total equals that of an ideal ENOB-bit
converter: sigma^2 = (fullscale_v / 2**ENOB)^2 / 12 (the full-scale-sine SINAD
6.02 ENOB + 1.76 dB).

``bits = 0`` means no quantizer (no clipping, no quantization noise); an ENOB > 0 still
adds its noise, the whole (fullscale_v / 2**ENOB)^2 / 12, so ``enob = 0`` is the only
noiseless ADC.
"""

from __future__ import annotations

import numpy as np

from serdes.kernels.adc import quantize
from serdes.validate import float_in, whole_number

MAX_BITS = 62  # the quantizer kernel's range (0: no quantizer)


class Adc:
    """Quantizer settings; ``__call__`` quantizes an array of input voltages."""

    def __init__(self, *, bits: int, fullscale_v: float, enob: float = 0.0):
        self.bits = whole_number("adc bits", bits, 0, MAX_BITS)
        self.fullscale_v = float_in("adc fullscale_v", fullscale_v,
                                    "a finite full scale > 0 V", above=0.0)
        self.enob = float_in("adc enob", enob, "a finite number of bits >= 0", at_least=0.0)

    @property
    def lsb_v(self) -> float:
        return self.fullscale_v / 2.0 ** self.bits if self.bits else 0.0

    @property
    def quantization_noise_v2(self) -> float:
        return self.lsb_v ** 2 / 12.0

    @property
    def enob_noise_sigma_v(self) -> float:
        """Std of the extra Gaussian noise that brings the ADC down to its ENOB."""
        if self.enob <= 0 or (self.bits and self.enob >= self.bits):
            return 0.0
        total = (self.fullscale_v / 2.0 ** self.enob) ** 2 / 12.0
        return float(np.sqrt(total - self.quantization_noise_v2))

    @property
    def noise_v2(self) -> float:
        """Total white noise power the ADC adds (quantization + ENOB)."""
        return self.quantization_noise_v2 + self.enob_noise_sigma_v ** 2

    def describe(self) -> str:
        """What the ADC model applies, for summaries."""
        noise = f"ENOB {self.enob:g}" if self.enob > 0 else "no ENOB noise"
        if not self.bits:
            return f"ADC unquantized ({noise})"
        return f"ADC {self.bits} b ({noise})" if self.enob > 0 and self.enob < self.bits \
            else f"ADC {self.bits} b (ideal quantizer)"

    def __call__(self, x_v, extra_noise=None):
        x = np.ascontiguousarray(x_v, dtype=np.float64)
        if extra_noise is not None and self.enob_noise_sigma_v > 0:
            x = x + self.enob_noise_sigma_v * extra_noise
        if not self.bits:
            return x
        return quantize(x, self.lsb_v, self.bits)
