"""The receiver's settings as one typed object (what the [ffe], [dfe], [eq], [rc] and
[mlse] config sections say), read by the equalizer design and the receiver."""

from __future__ import annotations

import math
from dataclasses import dataclass, field

from serdes.dsp.rc import RcSettings
from serdes.errors import ConfigError
from serdes.validate import whole_number

MAX_COUNT = 1 << 30  # bound of the library's tap and symbol counts (the config's are lower)


@dataclass(frozen=True)
class MlseSettings:
    """Viterbi detector: target memory L, whitening method, decision delay."""

    memory: int = 1
    whitening: str = "target"   # "target" or "predictor"
    traceback: int = 24


@dataclass(frozen=True)
class ReceiverSpec:
    """FFE (``ffe_taps``, ``ffe_pre`` pre-cursor taps), DFE (``dfe_taps``, |tap| at most
    ``dfe_limit``), tap computation (``mode`` "mmse" or "lms" with step ``mu`` and
    ``train_symbols`` of training), the detector ("dfe" or "mlse"), the reflection
    canceller and the MLSE settings."""

    ffe_taps: int = 24
    ffe_pre: int = 4
    dfe_taps: int = 1
    dfe_limit: float = 1.0
    mode: str = "mmse"
    mu: float = 1e-2
    train_symbols: int = 200_000
    detector: str = "dfe"
    rc: RcSettings = field(default_factory=RcSettings)
    mlse: MlseSettings = field(default_factory=MlseSettings)

    def __post_init__(self):
        if self.mode not in ("mmse", "lms"):
            raise ConfigError(f"mode = {self.mode!r}: expected 'mmse' or 'lms'")
        if self.detector not in ("dfe", "mlse"):
            raise ConfigError(f"detector = {self.detector!r}: expected 'dfe' or 'mlse'")
        for name, lo in (("ffe_taps", 1), ("ffe_pre", 0), ("dfe_taps", 0),
                         ("train_symbols", 0)):
            object.__setattr__(self, name, whole_number(name, getattr(self, name), lo,
                                                        MAX_COUNT))
        if not 0 <= self.ffe_pre < self.ffe_taps:
            raise ConfigError(f"ffe_pre = {self.ffe_pre} must be in 0..ffe_taps-1 "
                              f"({self.ffe_taps - 1})")
        if not (math.isfinite(self.dfe_limit) and self.dfe_limit >= 0):
            raise ConfigError(f"dfe_limit = {self.dfe_limit!r}: must be a finite number >= 0")
        if self.mode == "lms" and not (math.isfinite(self.mu) and self.mu > 0):
            raise ConfigError(f"mu = {self.mu!r}: the LMS step must be a finite number > 0")

    @property
    def mlse_active(self) -> bool:
        return self.detector == "mlse"

    @property
    def rc_first_lag(self) -> int:
        """First lag the RC may take: after the DFE taps, or, with the MLSE, after the
        target memory (lags below the Viterbi decision delay use its tentative
        decisions)."""
        return self.mlse.memory + 1 if self.mlse_active else self.dfe_taps + 1
