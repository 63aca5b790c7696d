"""A whole simulated system: the analog link, what is sent, the receiver, the run.

:class:`System` is what the engines, eyes and reports take. :func:`serdes.build.build`
makes one from a config; in Python any part can be made directly and swapped with
``dataclasses.replace``.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from serdes.cdr import CdrSettings
from serdes.dsp.spec import ReceiverSpec
from serdes.link import Link
from serdes.signal.source import SourceSpec
from serdes.txjitter import TxJitter
from serdes.validate import whole_number


@dataclass(frozen=True)
class RunSpec:
    """How long to count: at most ``symbols``, stopping at ``target_errors`` bit errors
    (0: never) on a 65536-symbol block boundary; ``chunk_symbols`` per streamed chunk
    (results do not depend on it, except with the TI-ADC background calibration, whose
    skew loop trims once per chunk); ``seed`` of every random stream."""

    symbols: int = 4_000_000
    target_errors: int = 1000
    chunk_symbols: int = 1 << 16
    seed: int = 1

    def __post_init__(self):
        for name, lo, hi in (("symbols", 1, 10**13), ("target_errors", 0, 10**12),
                             ("chunk_symbols", 1, 1 << 24), ("seed", 0, 2**63 - 1)):
            object.__setattr__(self, name, whole_number(name, getattr(self, name), lo, hi))


@dataclass(frozen=True)
class System:
    link: Link
    source: SourceSpec = field(default_factory=SourceSpec)
    receiver: ReceiverSpec = field(default_factory=ReceiverSpec)
    run: RunSpec = field(default_factory=RunSpec)
    cdr: CdrSettings = field(default_factory=CdrSettings)   # clock recovery (off: fixed phase)
    tx_jitter: TxJitter = field(default_factory=TxJitter)   # jitter of the transmitted edges
