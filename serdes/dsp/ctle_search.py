"""Choice of the IEEE CTLE gains (g_DC, g_DC2) by the receiver's own criterion.

COM picks the reference CTLE from a grid by its figure of merit; here the criterion is
the one the equalizer is designed by: the MMSE-predicted slicer SNR of the configured
FFE/DFE (or RC, MLSE) receiver, with every noise term of :mod:`serdes.impairments` (the
VGA renormalises each candidate, so the ADC noise is weighed against the boosted thermal
noise and the residual ISI). The grid is the 802.3ck one: g_DC in -20..0 dB and g_DC2
in -6..0 dB, 1 dB steps (147 points).

Only the CTLE changes between grid points, so the TX, channel and other RX stage
responses are computed once on the link's FFT grid and reused (each point then costs
two inverse FFTs, a pulse trim and a small linear solve, about 20 ms). The SNR is a
smooth, single-peaked function of the two gains, so the search is coarse to fine:
every other g_DC at g_DC2 = 0, every g_DC2 at the best of those, then a climb to the
best of the 8 neighbours until none is better (about 25 of the 147 points);
``exhaustive=True`` evaluates the whole grid (a test checks both agree on several
links). Ties go to the least boost.
"""

from __future__ import annotations

from dataclasses import dataclass
from types import SimpleNamespace

import numpy as np

from serdes.analog.ctle import IeeeCtle
from serdes.stage import cascade

G_DC_GRID_DB = tuple(float(g) for g in range(0, -21, -1))
G_DC2_GRID_DB = tuple(float(g) for g in range(0, -7, -1))


class _Fixed:
    """A stage whose response was computed once on the search's frequency grid."""

    def __init__(self, h: np.ndarray, label: str):
        self.h = h
        self.label = label

    def response(self, f_hz) -> np.ndarray:
        if np.shape(f_hz) != self.h.shape:
            raise ValueError("a precomputed stage answers only on its own grid")
        return self.h

    def describe(self) -> str:
        return self.label


@dataclass(frozen=True)
class CtleChoice:
    """The chosen gains, their predicted slicer SNR and the whole grid's (dB);
    ``snr_db[i, k]`` is for ``g_dc_db[i]``, ``g_dc2_db[k]``."""

    g_dc_db: float
    g_dc2_db: float
    predicted_snr_db: float
    grid_g_dc_db: tuple
    grid_g_dc2_db: tuple
    snr_db: np.ndarray


#: the SNR of a candidate on which the loop finds no lock point (cdr.lock = 'mm')
NO_LOCK_DB = -1e9


def predicted_snr_db(link, receiver, cdr=None) -> float:
    """MMSE-predicted slicer SNR (dB) of ``receiver`` (a ReceiverSpec) on ``link``; with
    ``cdr`` (:class:`serdes.cdr.CdrSettings`), at the loop's lock point
    (:func:`serdes.engines.run.design_link`), as the run designs it."""
    from serdes.engines.run import design_equalizer
    from serdes.txjitter import TxJitter

    system = SimpleNamespace(link=link, receiver=receiver, cdr=cdr, tx_jitter=TxJitter())
    return float(design_equalizer(system).predicted_snr_db)


def search_ctle(link, receiver, *, g_dc_grid=G_DC_GRID_DB, g_dc2_grid=G_DC2_GRID_DB,
                exhaustive: bool = False, cdr=None) -> CtleChoice:
    """Best (g_DC, g_DC2) for ``link``, whose ``rx`` stages hold one :class:`IeeeCtle`
    (its pole/zero frequencies are kept; its gains are the ones searched). Grid points
    not evaluated are -inf in ``CtleChoice.snr_db``. ``cdr``: each candidate is judged
    at its own lock point where the loop locks at its detector's zero
    (``cdr.lock = 'mm'``: the zero moves with the CTLE); a candidate without one is
    :data:`NO_LOCK_DB`."""
    from serdes.errors import ConfigError
    from serdes.link import Link

    ctles = [s for s in link.rx_stages if isinstance(s, IeeeCtle)]
    if len(ctles) != 1:
        raise ValueError("search_ctle needs a link with exactly one IeeeCtle stage")
    template = ctles[0]
    f = link.f_hz  # the link's own window (widened if its response needed it)
    fixed_tx = _Fixed(link.h_tx, "tx")
    fixed_ch = _Fixed(link.h_channel, "channel")
    others = [s for s in link.rx_stages if s is not template]
    fixed_rx = _Fixed(cascade(others, f), "rx")
    grid = link.grid.with_window(link.window_ui)
    snr = np.full((len(g_dc_grid), len(g_dc2_grid)), -np.inf)

    def evaluate(i: int, k: int) -> float:
        if snr[i, k] == -np.inf:
            ctle = IeeeCtle(g_dc_db=g_dc_grid[i], g_dc2_db=g_dc2_grid[k],
                            symbol_rate_hz=template.symbol_rate_hz, f_z_hz=template.f_z_hz,
                            f_p1_hz=template.f_p1_hz, f_p2_hz=template.f_p2_hz,
                            f_lf_hz=template.f_lf_hz)
            cand = Link(grid, tx=[fixed_tx], channel=[fixed_ch], rx=[ctle, fixed_rx],
                        levels=link.levels, swing_v=link.swing_v,
                        impairments=link.impairments, adc=link.adc,
                        clip_sigma=link.clip_sigma, pulse_ui=link.pulse_ui,
                        fixed_window=True, bulk_delay_ui=link.bulk_delay_ui)
            try:
                snr[i, k] = predicted_snr_db(cand, receiver, cdr)
            except ConfigError:   # no lock point on this candidate (cdr.lock = 'mm')
                if cdr is None:
                    raise
                snr[i, k] = NO_LOCK_DB
        return snr[i, k]

    rows, cols = range(len(g_dc_grid)), range(len(g_dc2_grid))
    if exhaustive:
        for i in rows:
            for k in cols:
                evaluate(i, k)
    else:
        # every other g_DC at the first g_DC2, every g_DC2 there, then climb to the best
        # of the 8 neighbours until none is better
        i = max(rows[::2], key=lambda r: (evaluate(r, 0), -r))
        k = max(cols, key=lambda c: (evaluate(i, c), -c))
        while True:
            near = [(r, c) for r in range(max(i - 1, 0), min(i + 2, len(rows)))
                    for c in range(max(k - 1, 0), min(k + 2, len(cols)))]
            best = max(near, key=lambda rc: (evaluate(*rc), -rc[0], -rc[1]))
            if best == (i, k):
                break
            i, k = best
    i, k = np.unravel_index(int(np.argmax(snr)), snr.shape)  # first maximum: least boost
    return CtleChoice(g_dc_db=float(g_dc_grid[i]), g_dc2_db=float(g_dc2_grid[k]),
                      predicted_snr_db=float(snr[i, k]), grid_g_dc_db=tuple(g_dc_grid),
                      grid_g_dc2_db=tuple(g_dc2_grid), snr_db=snr)
