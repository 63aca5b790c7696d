"""ADC quantizer kernel (private; wrapper in serdes.adc)."""

import numpy as np
from numba import njit


@njit(cache=True)
def quantize(x, lsb, bits):
    """Mid-rise uniform quantizer with 2**bits codes spanning +-2**(bits-1) * lsb.

    Inputs beyond full scale clip to the outermost codes. Returns the reconstructed
    values (code + 0.5) * lsb.
    """
    top = (1 << (bits - 1)) - 1
    bot = -(1 << (bits - 1))
    y = np.empty(x.shape[0], dtype=np.float64)
    for i in range(x.shape[0]):
        c = np.floor(x[i] / lsb)
        if c > top:
            c = top
        elif c < bot:
            c = bot
        y[i] = (c + 0.5) * lsb
    return y
