"""The aggressors' sum at the victim's sampling instants, for the counting engines.

Each aggressor (:mod:`serdes.crosstalk`) has its own symbol stream, indexed by absolute
UI (random data from its seed's block streams, QPRBS13 by position, a PRBS register
that jumps with :meth:`serdes.signal.source.SymbolSource.seek`), so a chunk's samples do
not depend on the chunk size and a block-split run (``serdes.parallel``) reproduces
them exactly: nothing is carried between chunks but a cache. Its taps are fixed, or,
with a ppm offset, re-sampled per block of :data:`serdes.crosstalk.XTALK_BLOCK` UI at
the block centre's phase. The victim's sampling jitter enters to first order through
the taps' slope (the same offsets as the victim's samples). Aggressor symbols before
UI 0 are zero, as the victim's.
"""

from __future__ import annotations

import numpy as np

from serdes import rng
from serdes.crosstalk import XTALK_BLOCK
from serdes.kernels.xtalk import xtalk_add
from serdes.signal.source import SymbolSource


class AggressorSymbols:
    """An aggressor's symbol values (its levels) at absolute UI indices."""

    def __init__(self, agg, levels: np.ndarray):
        self.levels = np.ascontiguousarray(levels, dtype=np.float64)
        m = self.levels.shape[0]
        self._random = agg.pattern == "random"
        if self._random:
            self._rng = rng.BlockRNG(agg.seed, rng.DATA)
        else:
            self._src = SymbolSource(pattern=agg.pattern, m=m, precoding=False, seed=agg.seed)
        self._m = m
        self._start, self._buf = 0, np.zeros(0)

    def _make(self, start: int, n: int) -> np.ndarray:
        if self._random:
            return self.levels[self._rng.integers(start, n, self._m)]
        if self._src.position != start:
            self._src.seek(start)
        return self.levels[self._src.next(n)[0]]

    def fetch(self, start: int, n: int) -> np.ndarray:
        """Values of UIs start .. start+n-1 (zero before UI 0)."""
        out = np.zeros(n)
        lo = max(start, 0)
        if lo >= start + n:
            return out
        end = start + n
        b0, b1 = self._start, self._start + self._buf.shape[0]
        if b0 <= lo <= b1 and end > b1:   # the usual case: overlap, then new symbols
            new = self._make(b1, end - b1)
            have = np.concatenate([self._buf[lo - b0:], new])
        elif b0 <= lo and end <= b1:
            have = self._buf[lo - b0:end - b0]
        else:
            have = self._make(lo, end - lo)
        out[lo - start:] = have
        self._start, self._buf = lo, have
        return out


class CrosstalkFrontEnd:
    """``(k0, n) -> the aggressors' sum at the ADC input for UIs k0..k0+n-1`` (volts)."""

    def __init__(self, link, jitter):
        self.pulses = link.aggressor_pulses
        self.jitter = jitter
        self.sources = [AggressorSymbols(p.agg, link.levels) for p in self.pulses]
        self._fixed = {}
        self._blocks: list[dict] = [{} for _ in self.pulses]

    def _taps(self, i: int, phase_ui: float) -> tuple[np.ndarray, np.ndarray]:
        p = self.pulses[i]
        t = p.taps(phase_ui)
        d = p.slope(phase_ui) if self.jitter.active else t[:0]
        return t, d

    def _plan(self, i: int, k0: int, n: int):
        """(seg, shift, taps, dtaps) of aggressor i over UIs k0..k0+n-1."""
        agg = self.pulses[i].agg
        if agg.ppm == 0:
            if i not in self._fixed:
                t, d = self._taps(i, agg.phase_ui)
                self._fixed[i] = (np.array([0], dtype=np.int64), t[None, :],
                                  d.reshape(-1 if d.size else 0, t.shape[0]))
            shift, taps, dtaps = self._fixed[i]
            return np.array([0, n], dtype=np.int64), shift, taps, dtaps
        B = XTALK_BLOCK
        b0, b1 = k0 // B, (k0 + n - 1) // B
        cache = self._blocks[i]
        rows, drows, shifts = [], [], []
        for b in range(b0, b1 + 1):
            hit = cache.get(b)
            if hit is None:
                phi = agg.phase_ui + agg.ppm * 1e-6 * (b * B + B / 2.0)
                s = int(np.floor(phi))
                t, d = self._taps(i, phi - s)
                hit = (s, t, d)
                if len(cache) > 256:
                    cache.clear()
                cache[b] = hit
            shifts.append(hit[0])
            rows.append(hit[1])
            drows.append(hit[2])
        seg = np.clip(np.arange(b0, b1 + 2) * B - k0, 0, n).astype(np.int64)
        seg[0], seg[-1] = 0, n
        taps = np.array(rows)
        dtaps = np.array(drows) if self.jitter.active else np.zeros((0, taps.shape[1]))
        return seg, np.array(shifts, dtype=np.int64), taps, dtaps

    def __call__(self, k0: int, n: int) -> np.ndarray:
        out = np.zeros(n)
        off = self.jitter.offsets_ui(k0, n) if self.jitter.active else out[:0]
        for i, src in enumerate(self.sources):
            seg, shift, taps, dtaps = self._plan(i, k0, n)
            L = taps.shape[1]
            lo = k0 + int(np.min(seg[:-1] - shift)) - (L - 1)
            hi = k0 + int(np.max(seg[1:] - 1 - shift))
            b = src.fetch(lo, hi - lo + 1)
            xtalk_add(out, b, lo, k0, seg, shift, taps, dtaps, off)
        return out


def crosstalk_front_end(link, jitter):
    """The aggressors' front end of a link, or None without aggressors."""
    return CrosstalkFrontEnd(link, jitter) if link.aggressor_pulses else None
