"""What ``serdes run`` reports of the clock-recovery loop: the recovered phase's
per-block statistics, kept while :class:`serdes.engines.cdr.CdrFrontEnd` streams, and
from them the lock time, the recovered phase's mean and rms wander after lock, the cycle
slips and the tracked frequency offset.

Locked: from the first window of :data:`LOCK_BLOCKS` block means that begins
:data:`SETTLED_WINDOWS` windows in a row within :data:`LOCK_TOL` of the final mean (the
mean over the second half of the run); the window is long enough that the dither's own
spread stays far inside the tolerance. Windows outside the tolerance after that are the
loop's excursions, reported apart (count of windows, largest distance), not a later
lock: taking the lock after the last window outside put a 30 M-symbol run's lock at
27.5 M UI over one 0.1-UI excursion and left the statistics to its last 2.5 M UI. A run
too short for that many windows after its settling keeps the last-window-outside rule.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

STAT_BLOCK = 1024      # phase statistics per block of this many UI
HIST_STEP_UI = 1 / 128  # the recovered phase's histogram: bins of this width (UI)
LOCK_TOL = 0.05        # locked: every later window mean within this of the final mean (UI)
LOCK_BLOCKS = 8        # window of the lock test (blocks)
SETTLED_WINDOWS = 64   # locked: this many consecutive windows within LOCK_TOL


@dataclass
class PhaseStats:
    """Per-block means of the sampling offset (slow part, UI) and of the integrator."""

    offset: list = field(default_factory=list)
    integ: list = field(default_factory=list)
    _acc: list = field(default_factory=lambda: [0.0, 0.0, 0.0, 0])  # sum, sum^2, sum I, n
    # the counted symbols' tracking error (offset from the lock point, whole-UI slips
    # taken out) in bins of HIST_STEP_UI: {bin: symbols}
    hist: dict = field(default_factory=dict)

    def add_histogram(self, k0: int, err: np.ndarray, first: int) -> None:
        """Tracking errors ``err`` (UI) of UIs k0, k0 + 1, ..., those from ``first`` on."""
        skip = max(first - k0, 0)
        if skip >= err.shape[0]:
            return
        e = err[skip:]
        e = e - np.round(e)   # a whole-UI slip only relabels the symbols: |e| <= 1/2
        half = int(round(0.5 / HIST_STEP_UI))
        counts = np.bincount(np.rint(e / HIST_STEP_UI).astype(np.int64) + half,
                             minlength=2 * half + 1)
        for k in np.flatnonzero(counts).tolist():
            self.hist[k - half] = self.hist.get(k - half, 0) + int(counts[k])

    def add(self, k0: int, off: np.ndarray, integ: float) -> None:
        """Offsets of UIs k0, k0 + 1, ...; ``integ``: the integrator over them (one value)."""
        n = off.shape[0]
        i = 0
        pos = k0 % STAT_BLOCK
        if pos:  # the rest of a block begun in an earlier chunk
            take = min(STAT_BLOCK - pos, n)
            acc = self._acc
            acc[0] += float(off[:take].sum())
            acc[1] += float((off[:take] ** 2).sum())
            acc[2] += integ * take
            acc[3] += take
            if pos + take == STAT_BLOCK:
                self.offset.append((acc[0] / acc[3], acc[1] / acc[3]))
                self.integ.append(acc[2] / acc[3])
                self._acc = [0.0, 0.0, 0.0, 0]
            i = take
        full = (n - i) // STAT_BLOCK
        if full:  # whole blocks at once
            blk = off[i:i + full * STAT_BLOCK].reshape(full, STAT_BLOCK)
            means = blk.sum(axis=1) / STAT_BLOCK
            sq = (blk ** 2).sum(axis=1) / STAT_BLOCK
            self.offset.extend(zip(means.tolist(), sq.tolist()))
            self.integ.extend([integ] * full)
            i += full * STAT_BLOCK
        if i < n:  # a block to be finished by the next chunk
            acc = self._acc
            acc[0] += float(off[i:].sum())
            acc[1] += float((off[i:] ** 2).sum())
            acc[2] += integ * (n - i)
            acc[3] += n - i


def summarize(stats: PhaseStats, settings, cal, model: dict, outside: int) -> dict:
    """Lock time, recovered phase mean and rms wander after lock, tracked frequency
    offset, the lock points (``cal``: the front end's calibration) and the loop
    ``model``; ``outside``: samples read past the sampler's slip window. Any such sample
    means the loop lost the data (what it sampled there was not the signal, and what it
    did next no measure of the loop): ``lost_lock`` is then true and the lock time,
    phase and tracked offset are left out (None), not reported from a lost loop."""
    s, c = settings, cal
    blocks = np.array(stats.offset) if stats.offset else np.zeros((0, 2))
    out = {"mode": s.mode, "lock": s.lock, "latency_ui": s.latency_ui,
           "pi_steps": s.pi_steps, "peak_ui": 0.0,
           "mm_lock_ui": None if s.mode == "bb" else c.mm_zero_ui,
           "pd_zero_ui": c.mm_zero_ui,  # the zero of the active detector's S-curve
           "target_lock_ui": c.lock_ui, "model": model,
           "lock_symbols": None, "phase_mean_ui": None, "phase_rms_ui": None,
           "tracked_ppm": None, "blocks": int(blocks.shape[0]),
           "block_ui": STAT_BLOCK, "lock_window_ui": STAT_BLOCK * LOCK_BLOCKS,
           "outside_window_symbols": outside,
           "lost_lock": outside > 0}
    if outside > 0 or blocks.shape[0] < 2 * LOCK_BLOCKS:
        return out
    if stats.hist:   # the counted symbols' tracking error (serdes.engines.cdr_phase_ber)
        out["phase_histogram"] = {"step_ui": HIST_STEP_UI,
                                  "counts": {str(k): v for k, v in sorted(stats.hist.items())}}
    means = blocks[:, 0]
    final = float(np.mean(means[means.shape[0] // 2:]))
    # windows of LOCK_BLOCKS blocks, so that the dither's own spread stays far inside
    # the tolerance; locked from the first window after the last one outside
    win = np.convolve(means, np.ones(LOCK_BLOCKS) / LOCK_BLOCKS, mode="valid")
    dev = np.abs(win - final)
    first = settled(dev > LOCK_TOL)
    if first >= means.shape[0]:
        return out
    late = dev[first:]
    out.update(excursion_windows=int(np.count_nonzero(late > LOCK_TOL)),
               max_excursion_ui=float(late.max()) if late.size else 0.0)
    after = blocks[first:]
    slips = int(np.round(final))  # whole UIs slipped: only the symbols' labels moved
    mean = float(np.mean(after[:, 0])) - slips
    rms = float(np.sqrt(max(np.mean(after[:, 1]) - (mean + slips) ** 2, 0.0)))
    integ = np.array(stats.integ[first:])
    out.update(lock_symbols=first * STAT_BLOCK, phase_mean_ui=mean, phase_rms_ui=rms,
               cycle_slips=slips,
               tracked_ppm=float(-np.mean(integ) * 1e6))
    return out


def settled(bad: np.ndarray) -> int:
    """The first window that begins :data:`SETTLED_WINDOWS` windows in a row not ``bad``;
    where no such run exists, the window after the last ``bad`` one (``bad.size`` when
    the last window is bad)."""
    n = bad.shape[0]
    if n >= SETTLED_WINDOWS:
        nbad = np.concatenate([[0], np.cumsum(bad)])
        runs = np.nonzero(nbad[SETTLED_WINDOWS:] - nbad[:n - SETTLED_WINDOWS + 1] == 0)[0]
        if runs.size:
            return int(runs[0])
    idx = np.nonzero(bad)[0]
    return int(idx[-1]) + 1 if idx.size else 0
