"""Analog stages: anything with a frequency response.

A stage is any object with its settings fixed at construction and a method
``response(f_hz) -> complex ndarray`` (the transfer function at the frequencies
``f_hz``, 1-D, Hz, first point 0 Hz on a link's grid). It may also have
``describe() -> str`` (a short label for reports), ``il_db(f_hz) -> float``
(its insertion loss, for channels) and ``lead_s`` (how far before t = 0 its impulse
response reaches, s: a TX FFE's pre-cursor taps, a zero-phase Gaussian edge; 0 for a
causal stage; the link delays every response by at least the sum, :func:`lead_s`).
:class:`serdes.link.Link` multiplies the
responses of its TX, channel and RX stages; users can write their own stage in a
notebook and pass it in.

Two-port stages (reflections between stages)
--------------------------------------------
A stage may also have ``s_matrix(f_hz) -> complex (nf, 2, 2)``: its differential 2-port
S-parameters referenced to ``z_ref_ohm`` single-ended (default 50 ohm, i.e. 100 ohm
differential; port 1 toward the transmitter), and ``terminations = (z1, z2)``: the
single-ended termination it puts at port 1 (a TX die) or port 2 (an RX die), None where
it has none (e.g. :class:`serdes.analog.package.Package`, :class:`TouchstoneChannel`).
:func:`cascade` joins a list of stages with the S-parameter cascade when reflections
can bounce between them (two or more stages with ``s_matrix``, or a termination): the
stages are cascaded in order (a stage without ``s_matrix`` as a matched 2-port,
S11 = S22 = 0, S21 = S12 = its response), and the result is the voltage transfer of
the cascade between the terminations, eq. 93A-18 of IEEE 802.3 (1 for a matched ideal
thru; :func:`serdes.analog.package.terminated_transfer`). A terminating stage must be
the first (port-1 termination) or last (port-2) of its list. Otherwise (at most one
``s_matrix`` stage and no termination: no path for a reflection to return) the
responses are multiplied, exactly as before.
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


def lead_s(stages: Sequence) -> float:
    """How far before t = 0 the cascade of ``stages`` reaches (s): the sum of their
    ``lead_s`` (absent: a causal stage, 0)."""
    return float(sum(max(float(getattr(s, "lead_s", 0.0) or 0.0), 0.0) for s in stages))


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


def _checked(s, r, shape, what: str) -> np.ndarray:
    r = np.asarray(r, dtype=np.complex128)
    if r.shape != shape:
        raise ConfigError(f"{describe(s)}: {what} has shape {r.shape}, expected {shape}")
    if not np.all(np.isfinite(r)):
        raise ConfigError(f"{describe(s)}: {what} is not finite on the link's grid")
    return r


def _two_port(stages: Sequence) -> bool:
    n_s = sum(callable(getattr(s, "s_matrix", None)) for s in stages)
    terms = any(t is not None for s in stages for t in (getattr(s, "terminations", None) or ()))
    return n_s >= 2 or terms


def cascade(stages: Sequence, f_hz: np.ndarray) -> np.ndarray:
    """The stages' joint response at ``f_hz`` (checked finite and shaped): the product of
    their responses, or the terminated S-parameter cascade when reflections can bounce
    between them (see the module docstring)."""
    shape = np.shape(f_hz)
    if not _two_port(stages):
        # the loop of earlier revisions, unchanged: numpy's SIMD complex multiply can
        # round the last bit differently with the operands' memory alignment, and a
        # rewrite moved it (pinned statistical numbers, tests/test_stat_pinned.py)
        h = np.ones(shape, dtype=np.complex128)
        for s in stages:
            r = np.asarray(s.response(f_hz), dtype=np.complex128)
            if r.shape != h.shape:
                raise ConfigError(f"{describe(s)}: response has shape {r.shape}, expected {h.shape}")
            if not np.all(np.isfinite(r)):
                raise ConfigError(f"{describe(s)}: response is not finite on the link's grid")
            h = h * r
        return h
    from serdes.analog.package import cascade_s, terminated_transfer

    f = np.asarray(f_hz, dtype=np.float64)
    total = None
    z_ref = None
    for i, s in enumerate(stages):
        t = getattr(s, "terminations", None) or (None, None)
        if (t[0] is not None and i != 0) or (t[1] is not None and i != len(stages) - 1):
            raise ConfigError(f"{describe(s)}: a stage with a termination must be the first "
                              "(TX die) or last (RX die) of its list")
        if callable(getattr(s, "s_matrix", None)):
            m = _checked(s, s.s_matrix(f), shape + (2, 2), "s_matrix")
            z = float(getattr(s, "z_ref_ohm", 50.0))
            if z_ref is not None and z != z_ref:
                raise ConfigError(f"{describe(s)}: S-parameters referenced to {z:g} ohm, the "
                                  f"other stages to {z_ref:g} ohm")
            z_ref = z
        else:
            h = _checked(s, s.response(f_hz), shape, "response")
            m = np.zeros(shape + (2, 2), dtype=np.complex128)
            m[:, 1, 0] = m[:, 0, 1] = h
        total = m if total is None else cascade_s(total, m)
    z_ref = 50.0 if z_ref is None else z_ref

    def refl(z):
        return 0.0 if z is None else (float(z) - z_ref) / (float(z) + z_ref)

    g1 = refl((getattr(stages[0], "terminations", None) or (None, None))[0])
    g2 = refl((getattr(stages[-1], "terminations", None) or (None, None))[1])
    return _checked(stages[0], terminated_transfer(total, g1, g2), shape, "cascade")
