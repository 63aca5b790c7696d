"""A whole simulated system: the analog link, what is sent, the receiver, the run.

:class:`System` is what the engines, eyes and reports take. :func:`serdes.build.build`
makes one from a config; in Python any part can be made directly and swapped with
``dataclasses.replace``.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from serdes.cdr import CdrSettings
from serdes.dsp.spec import ReceiverSpec
from serdes.errors import ConfigError
from serdes.link import Link
from serdes.signal.source import SourceSpec
from serdes.txjitter import TxJitter


@dataclass(frozen=True)
class RunSpec:
    """How long to count: at most ``symbols``, stopping at ``target_errors`` bit errors
    (0: never) on a 65536-symbol block boundary; ``chunk_symbols`` per streamed chunk
    (results do not depend on it); ``seed`` of every random stream."""

    symbols: int = 4_000_000
    target_errors: int = 1000
    chunk_symbols: int = 1 << 16
    seed: int = 1

    def __post_init__(self):
        for name in ("symbols", "chunk_symbols"):
            if getattr(self, name) < 1:
                raise ConfigError(f"{name} = {getattr(self, name)!r}: must be >= 1")
        if self.target_errors < 0 or self.seed < 0:
            raise ConfigError("target_errors and seed must be >= 0")


@dataclass(frozen=True)
class System:
    link: Link
    source: SourceSpec = field(default_factory=SourceSpec)
    receiver: ReceiverSpec = field(default_factory=ReceiverSpec)
    run: RunSpec = field(default_factory=RunSpec)
    cdr: CdrSettings = field(default_factory=CdrSettings)   # clock recovery (off: fixed phase)
    tx_jitter: TxJitter = field(default_factory=TxJitter)   # jitter of the transmitted edges
