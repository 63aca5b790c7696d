"""Which model of the clock-recovery loop a run's statistical BER uses: one model per
point for ``serdes run`` and ``serdes jtol --method stat``.

- ``"tracking"``: where :func:`serdes.engines.cdr_track.applies` (the CDR on, a TX SJ
  and no RX SJ, from 250 kHz up to the loop's bandwidth, the untracked swing
  quasi-static across the equalizer and pulse span; its untracked amplitude from the
  linear model of :func:`serdes.engines.cdr_stat.stat_link`), the BER is the engine's
  BER at a fixed sampling offset averaged over the loop's simulated tracking error
  (:func:`tracking_ber`, the function the jitter tolerance solves with), so a run and
  ``serdes jtol`` give the same BER at the same point. The rest of the statistical
  report (SER, per-eye BER, the statistical eye) stays that of the Gaussian-wander link.
- ``"linear"``: elsewhere, the untracked SJ through |1 - H|, the loop's static shift and
  its Gaussian wander (:mod:`serdes.engines.cdr_stat`): without SJ (the wander alone),
  above the loop bandwidth (where it was checked against counted JTOL), below 250 kHz.

The averaged BER gives grid points inside the tracking error's range whose BER is below
a floor the floor itself (an upper bound); a run takes the floor at :data:`FLOOR_REL`
times its own result (iterated from the linear model's BER), so that bound adds at most
that share.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass

FLOOR_REL = 1e-4   # the run's floor against its own BER (the jitter tolerance: x target)


def tracking_ber(front, resp, offset_ber, sj_ui: float, sj_hz: float, floor: float):
    """(BER, :class:`~serdes.engines.cdr_track.Tracking`) of a TX SJ ``sj_ui`` at
    ``sj_hz``: the fixed-offset BER table ``offset_ber``
    (:class:`~serdes.engines.cdr_track.OffsetBer`) averaged over the simulated tracking
    error, grid points below ``floor`` inside its range taken as ``floor``."""
    from serdes.engines import cdr_track

    tr = cdr_track.simulate(front, resp, sj_ui, sj_hz)
    return offset_ber.mean_ber(tr, floor), tr


@dataclass
class CdrStatModel:
    """The statistical model of a run's loop and, for ``"tracking"``, what it needs."""

    name: str                  # "linear" or "tracking"
    system: object = None      # the run's system (its link before the loop model)
    front: object = None
    taps: object = None
    result: dict | None = None  # the tracking model's numbers once applied

    def apply(self, sb):
        """``sb`` (the engine's :class:`StatBer` on the Gaussian-wander link) with the
        BER of this model."""
        if self.name != "tracking":
            return sb
        from serdes.engines import cdr_track
        from serdes.engines.cdr_stat import response_for

        src = self.system.tx_jitter
        table = cdr_track.OffsetBer(self.system, self.taps)
        resp = response_for(self.system, self.front)
        floor = FLOOR_REL * max(sb.ber, 1e-300)
        tr = None
        for _ in range(12):
            if tr is None:
                b, tr = tracking_ber(self.front, resp, table, src.sj_ui, src.sj_hz, floor)
            else:
                b = table.mean_ber(tr, floor)
            if floor <= FLOOR_REL * b * (1 + 1e-9) or b <= 0:
                break
            floor = FLOOR_REL * b
        self.result = {"ber": b, "linear_model_ber": float(sb.ber), "floor": floor,
                       "untracked_ui": tr.untracked, "loop_shift_ui": tr.mean,
                       "wander_ui": tr.wander}
        return dataclasses.replace(sb, ber=float(b))

    def to_dict(self) -> dict:
        out = {"stat_model": self.name}
        if self.result is not None:
            out["stat_tracking"] = dict(self.result)
        return out


def stat_system(system, taps, front=None):
    """(the system the statistical engine runs on, :class:`CdrStatModel`) of a system with
    the CDR on or TX jitter (model ``None`` with the CDR off). ``front``: a calibrated
    :class:`~serdes.engines.cdr.CdrFrontEnd` of this link and loop (made when None)."""
    from serdes.engines import cdr_track
    from serdes.engines.cdr_stat import stat_link

    s, txj = system.cdr, system.tx_jitter
    if not s.active:
        front = None
    elif front is None:
        from serdes.engines.cdr import CdrFrontEnd

        front = CdrFrontEnd(system.link, system.run.seed, s, txj)
    lk = stat_link(system, front)
    out = dataclasses.replace(system, link=lk)
    if front is None:
        return out, None
    model = CdrStatModel("linear", front=front)
    if txj.sj_ui > 0 and cdr_track.applies(system, front, taps, txj.sj_hz,
                                           lk.impairments.sj_ui):
        model = CdrStatModel("tracking", system=system, front=front, taps=taps)
    return out, model
