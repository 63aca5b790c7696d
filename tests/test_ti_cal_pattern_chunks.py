"""Why PRBS31's chunks are not independent for the skew detector
(benchmarks/tiadc_cal_pattern_chunks.py): the Gray-coded PAM4 symbols' MSBs are the
PRBS31 sequence itself (decimating an m-sequence by 2 gives the same sequence, shifted:
f(x^2) = f(x)^2 over GF(2)), and an m-sequence plus a shift of itself is another shift
of itself. For g(x) = 1 + x^28 + x^31, 1 + x^(2^18 - 2) + x^(2^18 - 1) = 0 mod g, so the
product of two adjacent MSBs (a term of the detector's y_{k-1} y_k) comes back
2^18 - 1 symbols (4 chunks of 65536) later as one MSB, and so a lag-1 product there
is a lag-2 product here: M_{k+L} M_{k+L+1} = M_k M_{k+2}, L = 2^18 - 1. The detector
through the channel sums products at all short lags, so its chunk means 4 chunks apart
share terms. Checked against the closed form (GF(2)
polynomial arithmetic) and on the generator's symbols; random data as the control."""

import numpy as np

from serdes.signal.pam import symbols_to_bits
from serdes.signal.source import SymbolSource

G31 = (1 << 31) | (1 << 28) | 1          # 1 + x^28 + x^31 (delays 28, 31)
LAG = (1 << 18) - 1


def _mulmod(a: int, b: int, g: int, deg: int) -> int:
    r = 0
    while b:
        if b & 1:
            r ^= a
        b >>= 1
        a <<= 1
        if (a >> deg) & 1:
            a ^= g
    return r


def _x_pow(n: int, g: int = G31, deg: int = 31) -> int:
    r, base = 1, 2
    while n:
        if n & 1:
            r = _mulmod(r, base, g, deg)
        base = _mulmod(base, base, g, deg)
        n >>= 1
    return r


def test_closed_form_trinomial():
    # the generator's own recurrence, then the long-lag one the detector meets
    assert 1 ^ _x_pow(28) ^ _x_pow(31) == 0
    assert 1 ^ _x_pow(LAG - 1) ^ _x_pow(LAG) == 0
    # squaring keeps it (the MSB stream, the sequence decimated by 2, obeys both)
    assert 1 ^ _x_pow(2 * (LAG - 1)) ^ _x_pow(2 * LAG) == 0


def _msbs(pattern: str, start: int, n: int) -> np.ndarray:
    src = SymbolSource(pattern=pattern, m=4, precoding=False, seed=1)
    src.seek(start)
    return symbols_to_bits(src.next(n)[1], 4)[0::2]


def test_prbs31_symbols_repeat_the_product_four_chunks_on():
    start, n = 100_000, LAG + 20_000
    for pattern, same in (("prbs31", 1.0), ("random", None)):
        m = _msbs(pattern, start, n)
        k = np.arange(LAG, n)
        agree = np.mean(m[k] == (m[k - LAG] ^ m[k - LAG + 1]))
        j = np.arange(n - LAG - 2)
        pairs = np.mean((m[j + LAG] ^ m[j + LAG + 1]) == (m[j] ^ m[j + 2]))
        if same is not None:
            assert agree == same and pairs == same
        else:      # i.i.d. bits: 50 % agreement, 20,000 trials (6 sigma = 2.1 %)
            assert abs(agree - 0.5) < 6 * 0.5 / np.sqrt(k.shape[0])
