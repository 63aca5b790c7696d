"""ADC quantizer kernel (private ``_quantize``) and its checking wrapper ``quantize``."""

import numpy as np

from serdes.kernels import args
from serdes.kernels.jit import njit


@njit(cache=True)
def _quantize(x, lsb, bits):
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


def quantize(x, lsb, bits) -> np.ndarray:
    """x through a mid-rise quantizer of 2**bits codes of ``lsb`` (see _quantize)."""
    return _quantize(args.array("x", x), args.real("lsb", lsb, positive=True),
                     args.integer("bits", bits, lo=1, hi=62))
