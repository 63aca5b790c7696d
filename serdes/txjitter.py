"""Transmitter jitter: how far each transmitted edge is moved (UI).

Symbol j leaves the transmitter at j T + tau_j: its whole pulse is shifted, so TX
jitter passes the channel (a fast TX jitter is partly filtered into ISI-like noise),
while RX jitter (the [noise] keys, :class:`serdes.engines.pulse.Jitter`) moves the
sampling instant. tau_j is the sum of

- random jitter: Gaussian, rms ``rj_ui`` (clipped at 8 sigma), independent per symbol;
- sinusoidal jitter: ``sj_ui`` sin(2 pi ``sj_hz`` j T + phase), phase from the seed;
- duty-cycle distortion / even-odd jitter: +``dcd_ui``/2 on even symbols, -``dcd_ui``/2
  on odd ones (peak to peak ``dcd_ui``);
- bounded uncorrelated jitter: uniform in +-``buj_ui``, independent per symbol;
- a TX-RX frequency offset: tau_j = -``ppm`` 1e-6 j (the TX clock is faster by ``ppm``:
  its edges arrive earlier and earlier on the receiver's time base).

Every random part comes from its own seeded block stream (:mod:`serdes.rng`), so the
offsets of a symbol do not depend on the chunk size.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from serdes import rng
from serdes.errors import ConfigError, require_nonnegative

# block-stream ids of the TX jitter, apart from the ids in serdes.rng
TX_RJ, TX_BUJ, TX_SJ_PHASE = 101, 102, 103


@dataclass(frozen=True)
class TxJitter:
    """TX jitter settings (UI, Hz, ppm); see the module notes."""

    rj_ui: float = 0.0
    sj_ui: float = 0.0
    sj_hz: float = 1e6
    dcd_ui: float = 0.0
    buj_ui: float = 0.0
    ppm: float = 0.0

    def __post_init__(self):
        require_nonnegative(self, ("rj_ui", "sj_ui", "sj_hz", "dcd_ui", "buj_ui"), "tx_jitter.")
        if not np.isfinite(self.ppm):
            raise ConfigError(f"tx_jitter.ppm = {self.ppm!r}: must be finite")

    @property
    def active(self) -> bool:
        return (self.rj_ui > 0 or self.sj_ui > 0 or self.dcd_ui > 0 or self.buj_ui > 0
                or self.ppm != 0)

    @property
    def per_symbol(self) -> bool:
        """Jitter that differs between neighbouring symbols (RJ, DCD, BUJ)."""
        return self.rj_ui > 0 or self.dcd_ui > 0 or self.buj_ui > 0


MAX_DRAWN_UI = 0.5   # the largest TX offset the analog eye draws (UI), on its ideal clock


def reach_ui(tj) -> float:
    """How far the offsets of a :class:`TxJitter` reach (UI): SJ + 8 RJ (its clip) +
    DCD / 2 + BUJ."""
    return tj.sj_ui + 8 * tj.rj_ui + tj.dcd_ui / 2 + tj.buj_ui


class TxJitterSource:
    """tau_j for absolute symbol indices (zero before the first symbol)."""

    def __init__(self, settings: TxJitter, ui_s: float, seed: int):
        self.s = settings
        self.sj_rad_per_ui = 2 * np.pi * settings.sj_hz * ui_s
        if settings.sj_ui > 0 and not 0 < settings.sj_hz * ui_s < 0.25:
            raise ConfigError(f"tx_jitter.sj_hz = {settings.sj_hz:g} must be > 0 and below a "
                              f"quarter of the symbol rate ({0.25 / ui_s:g}) when "
                              "tx_jitter.sj_ui > 0")
        self._rj = rng.BlockRNG(seed, TX_RJ)
        self._buj = rng.BlockRNG(seed, TX_BUJ)
        self.sj_phase = 2 * np.pi * rng.BlockRNG(seed, TX_SJ_PHASE).uniform_scalar()

    def slow(self, k0: int, n: int) -> np.ndarray:
        """The trackable part: SJ and the frequency-offset ramp."""
        k = np.arange(k0, k0 + n, dtype=np.float64)
        out = np.zeros(n)
        if self.s.sj_ui > 0:
            out += self.s.sj_ui * np.sin(self.sj_rad_per_ui * k + self.sj_phase)
        if self.s.ppm != 0:
            out -= self.s.ppm * 1e-6 * k
        out[k < 0] = 0.0
        return out

    def offsets(self, k0: int, n: int) -> np.ndarray:
        out = self.slow(k0, n)
        neg = min(max(-k0, 0), n)
        if neg == n:
            return out
        s = self.s
        if s.rj_ui > 0:
            out[neg:] += np.clip(s.rj_ui * self._rj.normal(k0 + neg, n - neg),
                                 -8 * s.rj_ui, 8 * s.rj_ui)
        if s.dcd_ui > 0:
            k = np.arange(k0 + neg, k0 + n)
            out[neg:] += np.where(k % 2 == 0, 0.5, -0.5) * s.dcd_ui
        if s.buj_ui > 0:
            # uniform from the top 53 bits of a normal block's mantissa would tie it to
            # the normal generator; a uint8 pair gives 16 bits, enough for a bounded jitter
            hi = self._buj.integers(2 * (k0 + neg), 2 * (n - neg), 256).astype(np.float64)
            u = (hi[0::2] * 256 + hi[1::2] + 0.5) / 65536.0
            out[neg:] += s.buj_ui * (2 * u - 1)
        return out
