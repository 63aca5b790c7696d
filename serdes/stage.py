"""Analog stages: anything with a frequency response.

A stage is any object with its settings fixed at construction and a method
``response(f_hz) -> complex ndarray`` (the transfer function at the frequencies
``f_hz``, 1-D, Hz, first point 0 Hz on a link's grid). It may also have
``describe() -> str`` (a short label for reports) and ``il_db(f_hz) -> float``
(its insertion loss, for channels). :class:`serdes.link.Link` multiplies the
responses of its TX, channel and RX stages; users can write their own stage in a
notebook and pass it in.
"""

from __future__ import annotations

from typing import Protocol, Sequence, runtime_checkable

import numpy as np

from serdes.errors import ConfigError


@runtime_checkable
class Stage(Protocol):
    def response(self, f_hz: np.ndarray) -> np.ndarray: ...


class Ideal:
    """A flat, lossless stage (H = 1): the ideal channel."""

    def response(self, f_hz) -> np.ndarray:
        return np.ones(np.shape(f_hz), dtype=np.complex128)

    def describe(self) -> str:
        return "ideal"

    def il_db(self, f_hz) -> float:
        return 0.0


def describe(stage) -> str:
    """A stage's own label, or its class name."""
    fn = getattr(stage, "describe", None)
    return fn() if callable(fn) else type(stage).__name__


def check_stages(name: str, stages: Sequence) -> tuple:
    """A tuple of stages, each checked for the ``response`` method."""
    out = tuple(stages)
    for s in out:
        if not callable(getattr(s, "response", None)):
            raise ConfigError(f"{name}: {s!r} is not a stage (it has no response(f_hz) method)")
    return out


def cascade(stages: Sequence, f_hz: np.ndarray) -> np.ndarray:
    """The product of the stages' responses at ``f_hz`` (checked finite and shaped)."""
    h = np.ones(np.shape(f_hz), dtype=np.complex128)
    for s in stages:
        r = np.asarray(s.response(f_hz), dtype=np.complex128)
        if r.shape != h.shape:
            raise ConfigError(f"{describe(s)}: response has shape {r.shape}, expected {h.shape}")
        if not np.all(np.isfinite(r)):
            raise ConfigError(f"{describe(s)}: response is not finite on the link's grid")
        h = h * r
    return h
