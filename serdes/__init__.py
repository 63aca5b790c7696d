"""serdes: a numba-accelerated simulator of 112G PAM4 links with ADC-DSP receivers.

Importing the package is cheap: submodules are imported where they are used, and
matplotlib only by :mod:`serdes.plot`.
"""

__version__ = "0.1.0"
