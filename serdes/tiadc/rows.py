"""The interleaved engine's jitter rows of one output phase, and which of them take the
random-jitter classes joint with the ISI.

The joint classes (:mod:`serdes.engines.stat.rj_joint`) are computed per row, from the
model's whole symbol sample (each row has its own common sampling offset and residual
ISI; the samples' V and K3 interpolated between the offsets of the grid
:data:`~serdes.engines.stat.rj.CLASS_GRID_UI`, ``RandomJitterModel.joint_grid_ui``): a
calibrated 64-lane ADC with a supply tone has 2592 rows per phase, and they cost
several times the level-only classes on the grid.
Most rows carry almost none of the error rate (the skew residual's outer Gauss-Hermite
states: small weights at offsets that do not reach the tails): on that example 1876 of
the 2592 rows carry 1e-4 of the BER together (their joint-class contributions). So each
row is first formed with the level-only classes on the grid (cheap); the rows whose
contributions to the phase's BER (weight x rate at the slicer thresholds, level-only),
smallest first, add up to at most :data:`RJ_SCREEN` of the total keep them, and the
others take the joint classes on the ISI part (pmf, grid, Gaussian terms) of that
pass. Measured against every row joint on a calibrated 8-lane ADC with a tone (``tests/test_tiadc_rj_screen.py``) the rates and the
vertical bathtub's points move by about the share left level-only (1e-4: 8.5e-5 and
1.2e-4; 1e-3: 8.8e-4 and 1.1e-3): stated bound 1e-3 relative, which the test checks
and which fails at 100x RJ_SCREEN (eye openings within 7.8e-5 mV and 1.1e-6 UI).
Rows the engine forms one by one (TX jitter, the aggressors' SJ points, quasi-static
rows: :func:`screened_any`) are screened the same way: 6.8e-5 and 1.2e-4 with DCD on
that 8-lane link (``tests/test_tiadc_rj_screen.py``).
The calibrated 64-lane example's BER moves by 1.9e-4 (1.672207e-7 against 1.672532e-7
with every row joint and the exact samples, 1.672237e-7 with the screen alone; 661 of
its 2592 rows take the joint classes; read with the skew residual's closed form before the
gain LMS's coupling).
"""

from __future__ import annotations

import numpy as np

# jitter rows whose lane pulses are re-sampled together (a calibrated 64-lane ADC with a
# supply tone has 2592 rows of 24 taps; the RJ moments' cache holds 4096 offsets)
ROW_BLOCK = 128
# the rows whose level-only contributions, smallest first, add up to at most this share
# of the phase's level-only BER keep the level-only classes (0: every row joint)
RJ_SCREEN = 1e-4


def row_blocks(eng, offset_ui: float, grid_step, idx, isi: list | None = None) -> list:
    """[(weight, distribution)] of the jitter rows ``idx`` at the current output phase,
    ``ROW_BLOCK`` rows' responses per kernel call (``eng._block_responses``); ``isi``:
    a list that gets each row's ISI part (``eng._isi_part``) as well."""
    J = eng.jitter
    lanes = eng._lane_of_tap
    out = []
    for s in range(0, len(idx), ROW_BLOCK):
        k = idx[s:s + ROW_BLOCK]
        block = J.offsets[k]
        offs = (offset_ui + block) + eng.skew_ui[lanes][None, :]   # as response()
        fs, jvars = eng._block_responses(offs)
        skew = (eng.cal_skew.variance_many(offset_ui, block)
                if eng.cal_skew is not None else [None] * block.shape[0])
        for wq, row, f, jv, sv in zip(J.weights[k], block, fs, jvars, skew):
            if sv is not None:
                eng._skew_var = float(sv)
            part = eng._isi_part(f, jv, offset_ui, row, None, grid_step)
            if isi is not None:
                isi.append(part)
            dist = eng._from_isi(part)
            if eng._pre_apart:   # precursors_apart(): the values its residual left out
                dist.precursor_values = eng._last_pre
            out.append((wq, dist))
    return out


def screened_rows(eng, offset_ui: float, grid_step, screen: float = RJ_SCREEN) -> list:
    """:func:`row_blocks` of every row, the joint RJ classes only in the rows that carry
    more than ``screen`` of the phase's error rate (see the module; :func:`screened_any`
    with the blocked rows: the level-only pass keeps each row's ISI part)."""
    idx = np.arange(eng.jitter.weights.shape[0])
    if idx.shape[0] < 2:
        return row_blocks(eng, offset_ui, grid_step, idx)
    isi: list = []
    return screened_any(
        eng, lambda: row_blocks(eng, offset_ui, grid_step, idx,
                                isi if eng.rj_level_only else None),
        lambda k: eng._from_isi(isi[k]), screen)


def _carriers(eng, rows: list, screen: float) -> np.ndarray:
    """Indices of the rows (level-only classes) whose contributions to the phase's error
    rate are not among the smallest that add up to at most ``screen`` of it."""
    c = np.array([wq * float((d.decision_matrix() * eng.bit_errors).sum())
                  for wq, d in rows])
    if not c.sum() > 0:
        return np.arange(len(rows))
    order = np.argsort(c, kind="stable")
    small = np.cumsum(c[order]) <= screen * float(c.sum())
    return np.sort(order[~small])


def screened_any(eng, whole, again, screen: float = RJ_SCREEN) -> list:
    """The screen (see the module) on rows formed by ``whole()``: the blocked rows
    (:func:`screened_rows`) or the engine's row by row path (TX jitter, the aggressors'
    SJ points, quasi-static rows). ``whole()`` gives every row [(weight,
    distribution)], formed once with the level-only classes (``eng.rj_level_only``
    set: it keeps what ``again`` needs); ``again(k)`` gives row k with the joint
    classes from what that pass kept of it, for the rows that carry more than
    ``screen`` of the phase's error rate."""
    if eng.rj is None or screen <= 0 or eng.rj_level_only:
        return whole()
    eng.rj_level_only = True
    try:
        rows = whole()
    finally:
        eng.rj_level_only = False
    if len(rows) < 2:
        return whole()
    from serdes.forked import split_map

    # their ISI parts as formed, the joint classes added (about 2.4 ms a row on a
    # calibrated 8-lane ADC with a tone, 750 of them: a helper may take a part)
    keep = _carriers(eng, rows, screen)
    for k, dist in zip(keep, split_map(again, keep)):
        _carry_precursors(rows[k][1], dist)
        rows[k] = (rows[k][0], dist)
    return rows


def _carry_precursors(old, new) -> None:
    """The pre-cursor values a row formed inside ``precursors_apart()`` noted (each DCD
    parity's its own), onto the same row formed again from its ISI parts."""
    got = getattr(old, "precursor_values", None)
    if got is not None:
        new.precursor_values = got
        return
    for a, b in zip(getattr(old, "parts", ()), getattr(new, "parts", ())):
        _carry_precursors(a, b)
