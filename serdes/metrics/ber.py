"""Counted error rates with exact (Clopper-Pearson) confidence intervals, and the
closed forms they are tested against."""

from __future__ import annotations

import math

import numpy as np

# scipy.special is imported where used: a split run (serdes.parallel) forks its workers
# after this module's import and before any interval is computed, so the 0.2-0.3 s of
# that import leaves the run's serial part (scipy.stats would cost ~0.25 s more).


def clopper_pearson(errors: int, trials: int, confidence: float = 0.95) -> tuple[float, float]:
    """Exact two-sided binomial confidence interval for errors/trials."""
    if trials <= 0:
        return (0.0, 1.0)
    alpha = 1.0 - confidence
    if errors == 0:
        # Beta(1, n) has CDF 1 - (1 - x)^n: its upper quantile in closed form, so a run
        # without errors (every short run) does not import scipy.special (~0.05-0.1 s)
        return (0.0, -math.expm1(math.log(alpha / 2) / trials))
    from scipy import special

    # beta quantiles: scipy.stats.beta.ppf(q, a, b) is special.betaincinv(a, b, q)
    lo = 0.0 if errors == 0 else float(special.betaincinv(errors, trials - errors + 1,
                                                          alpha / 2))
    hi = 1.0 if errors == trials else float(special.betaincinv(errors + 1, trials - errors,
                                                               1 - alpha / 2))
    return (lo, hi)


def q_function(x):
    from scipy import special

    return 0.5 * special.erfc(np.asarray(x, dtype=np.float64) / np.sqrt(2.0))


def pam_ser_awgn(m: int, sigma: float) -> float:
    """Symbol error rate of M-PAM with levels +-1, +-(M-3)/(M-1), ... in Gaussian noise
    of std sigma: SER = 2 (M-1)/M Q(d/sigma), d = half the level spacing = 1/(M-1)."""
    d = 1.0 / (m - 1)
    return float(2.0 * (m - 1) / m * q_function(d / sigma))


def pam4_gray_ber_awgn(sigma: float) -> float:
    """Exact bit error rate of Gray-coded PAM4 (levels +-1, +-1/3) in AWGN of std sigma.

    With q_i = Q(i d / sigma), d = 1/3: an outer level moves one level with probability
    q1 - q3 (1 bit), two levels q3 - q5 (2 bits), three levels q5 (1 bit); an inner level
    moves one level outward q1 (1 bit), one level inward q1 - q3 (1 bit) and two levels
    q3 (2 bits). Averaged over levels and divided by 2 bits: (3 q1 + 2 q3 - q5) / 4.
    """
    d = 1.0 / 3.0
    q1, q3, q5 = (float(q_function(i * d / sigma)) for i in (1, 3, 5))
    return (3 * q1 + 2 * q3 - q5) / 4.0


class ErrorCounter:
    """Aligns decisions with transmitted symbols and counts symbol and bit errors."""

    def __init__(self, m: int, *, skip: int):
        self.m = m
        self.bits_per_symbol = 1 if m == 2 else 2
        # bit pattern of each Gray-coded symbol index: 0->00, 1->01, 2->11, 3->10
        gray = np.array([0, 1, 3, 2], dtype=np.uint8) if m == 4 else np.array([0, 1], np.uint8)
        pop = np.array([bin(i).count("1") for i in range(4)], dtype=np.int64)
        self._bit_err = pop[gray[:, None] ^ gray[None, :]]
        self.skip = skip
        self.symbols = 0
        self.symbol_errors = 0
        self.bit_errors = 0

    def bit_errors_of(self, rx: np.ndarray, tx: np.ndarray) -> np.ndarray:
        return self._bit_err[rx, tx]

    @property
    def bits(self) -> int:
        return self.symbols * self.bits_per_symbol

    def add(self, symbol_errors: int, bit_errors: int, symbols: int) -> None:
        self.symbols += symbols
        self.symbol_errors += symbol_errors
        self.bit_errors += bit_errors

    def observe(self, rec) -> None:
        """Pipeline observer: count an aligned chunk (:class:`serdes.pipeline.Aligned`)."""
        self.add(int(rec.sym_err.sum()), int(rec.bit_err.sum()), int(rec.sym_err.shape[0]))

    @property
    def ber(self) -> float:
        return self.bit_errors / self.bits if self.bits else float("nan")

    @property
    def ser(self) -> float:
        return self.symbol_errors / self.symbols if self.symbols else float("nan")

    def ber_ci(self, confidence: float = 0.95) -> tuple[float, float]:
        return clopper_pearson(self.bit_errors, self.bits, confidence)


def align_delay(rx: np.ndarray, rx_start: int, tx: np.ndarray, tx_start: int,
                max_delay: int) -> int:
    """The delay D in 0..max_delay (rx[k] ~ tx[k - D], absolute indices) with the fewest
    symbol mismatches; rx_start - max_delay must be >= tx_start."""
    n = rx.shape[0]
    errs = [int(np.count_nonzero(rx != tx[rx_start - d - tx_start:rx_start - d - tx_start + n]))
            for d in range(max_delay + 1)]
    return int(np.argmin(errs))
