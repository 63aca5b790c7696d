"""The aggressors' sum at the victim's sampling instants, for the counting engines.

Each aggressor (:mod:`serdes.crosstalk`) has its own symbol stream, indexed by absolute
UI (random data from its seed's block streams, QPRBS13 by position, a PRBS register
that jumps with :meth:`serdes.signal.source.SymbolSource.seek`), so a chunk's samples do
not depend on the chunk size and a block-split run (``serdes.parallel``) reproduces
them exactly: nothing is carried between chunks but a cache. Its taps are fixed, or,
with a ppm offset, re-sampled per block of :data:`serdes.crosstalk.XTALK_BLOCK` UI at
the block centre's phase. The victim's sampling jitter enters to first order through
the taps' slope (the same offsets as the victim's samples). The TX noise of two or
more short fixed-phase aggressors is drawn as one stream through a factor of its
summed autocorrelation (:mod:`serdes.engines.xtalk_noise`). An aggressor's own TX
jitter (:mod:`serdes.crosstalk`: RJ, DCD, BUJ, SJ) adds, to first order, the FIR of ``-tau_j b_j`` (its
jitter from its own seed's streams times its symbol values) through the taps' slope,
in both summing paths and in :meth:`CrosstalkFrontEnd.streams`. Aggressor symbols
before UI 0 are zero, as the victim's.

Two ways to sum, by the aggressor's length: up to :data:`DIRECT_MAX_TAPS` taps (and
every walking aggressor) a direct FIR (``kernels/xtalk.py``); longer fixed-phase ones
(a NEXT path through a cable spreads over its round trip: 1000-2000 UI on the 802.3ck
CR set) together by FFT (overlap-save) in fixed blocks at absolute positions (the FFT
size less the longest span): all their spectra times their taps' spectra summed, one inverse FFT (two
with jitter), so a block's samples never depend on the chunking.
"""

from __future__ import annotations

import numpy as np

from serdes import rng
from serdes.crosstalk import XTALK_BLOCK
from serdes.kernels.xtalk import xtalk_add
from serdes.signal.source import SymbolSource
from serdes.txjitter import TxJitterSource

DIRECT_MAX_TAPS = 96     # longer fixed-phase aggressors are summed by FFT
FFT_MIN = 1 << 15        # smallest FFT of the FFT path (8x the longest taps, or this)
COMBINE_MIN = 2          # fewest short fixed-phase aggressors whose TX noise is one stream


class AggressorSymbols:
    """An aggressor's symbol values (its levels plus its TX noise, ``sigma`` per symbol
    value from its own seed's stream, as the victim's ``Transmitter``) at absolute UI
    indices."""

    def __init__(self, agg, levels: np.ndarray, sigma: float = 0.0, *, ui_s: float):
        self.levels = np.ascontiguousarray(levels, dtype=np.float64)
        self.sigma = float(sigma)
        self._noise = rng.BlockRNG(agg.seed, rng.TX_NOISE) if self.sigma > 0 else None
        m = self.levels.shape[0]
        self._random = agg.pattern == "random"
        if self._random:
            self._rng = rng.BlockRNG(agg.seed, rng.DATA)
        else:
            self._src = SymbolSource(pattern=agg.pattern, m=m, precoding=False, seed=agg.seed)
        self._m = m
        self._start, self._buf = 0, np.zeros(0)
        tj = agg.tx_jitter
        # its own clock: its own seed's jitter streams (serdes.txjitter ids)
        self._tau = TxJitterSource(tj, ui_s, agg.seed) if tj.active else None

    @property
    def jittered(self) -> bool:
        return self._tau is not None

    def offsets(self, start: int, n: int) -> np.ndarray:
        """Its TX jitter offsets tau_j (UI) of UIs start .. start+n-1."""
        return self._tau.offsets(start, n)

    def fetch_moved(self, start: int, n: int, values: np.ndarray) -> np.ndarray:
        """``-tau_j b_j`` for UIs start .. start+n-1 (``values``: :meth:`fetch`'s b_j of
        them): the symbol stream of the first-order TX-jitter term."""
        return -self._tau.offsets(start, n) * values

    def _make(self, start: int, n: int) -> np.ndarray:
        if self._random:
            v = self.levels[self._rng.integers(start, n, self._m)]
        else:
            if self._src.position != start:
                self._src.seek(start)
            v = self.levels[self._src.next(n)[0]]
        if self._noise is not None:
            v = v + self.sigma * self._noise.normal(start, n)
        return v

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

    def __init__(self, link, jitter, slopes: bool = False):
        self.pulses = link.aggressor_pulses
        self.jitter = jitter
        # the taps' slopes: for the victim's jitter, or for :meth:`streams` (``slopes``)
        self._slopes = bool(slopes) or jitter.active
        sigma = link.tx_noise_sigma
        self.fft = [i for i, p in enumerate(self.pulses)
                    if p.agg.ppm == 0 and p.n_taps > DIRECT_MAX_TAPS]
        self.direct = [i for i in range(len(self.pulses)) if i not in self.fft]
        # short fixed-phase aggressors without their own TX jitter: their TX noise as one
        # stream (engines/xtalk_noise.py), when two or more of them have any
        calm = [i for i in self.direct if self.pulses[i].agg.ppm == 0
                and not self.pulses[i].agg.tx_jitter.active] if sigma > 0 else []
        self.noise = None
        if len(calm) >= COMBINE_MIN:
            from serdes.engines.xtalk_noise import CombinedTxNoise

            nz = CombinedTxNoise([self.pulses[i].taps(self.pulses[i].agg.phase_ui)
                                  for i in calm], sigma, self.pulses[calm[0]].agg.seed)
            self.noise = nz if nz.fir is not None else None
        quiet = set(calm) if self.noise is not None else set()
        self.sources = [AggressorSymbols(p.agg, link.levels, 0.0 if i in quiet else sigma,
                                         ui_s=link.ui_s) for i, p in enumerate(self.pulses)]
        self._moved = [s.jittered for s in self.sources]   # own TX jitter: needs slopes
        self._fixed = {}
        self._blocks: list[dict] = [{} for _ in self.pulses]
        if self.fft:
            from scipy import fft as sfft   # only for long aggressors (scipy.fft: ~0.2 s import)

            self._lmax = max(self.pulses[i].n_taps for i in self.fft)
            self._nfft = max(FFT_MIN, 1 << int(np.ceil(np.log2(8 * self._lmax))))
            self._block = self._nfft - self._lmax + 1   # overlap-save: all but L - 1 valid
            self._spec = []
            for i in self.fft:
                t, d = self._taps(i, self.pulses[i].agg.phase_ui)
                self._spec.append((sfft.rfft(t, self._nfft),
                                   sfft.rfft(d, self._nfft) if d.size else None))
            self._fft_cache: dict = {}

    def _taps(self, i: int, phase_ui: float) -> tuple[np.ndarray, np.ndarray]:
        p = self.pulses[i]
        t = p.taps(phase_ui)
        d = p.slope(phase_ui) if self._slopes or self._moved[i] else t[:0]
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
        dtaps = (np.array(drows) if self._slopes or self._moved[i]
                 else np.zeros((0, taps.shape[1])))
        return seg, np.array(shifts, dtype=np.int64), taps, dtaps

    def _fft_block(self, b: int) -> tuple[np.ndarray, np.ndarray | None]:
        """(sum, slope sum) of the FFT-path aggressors over UIs of block b."""
        from scipy import fft as sfft

        hit = self._fft_cache.get(b)
        if hit is None:
            B, L, N = self._block, self._lmax, self._nfft
            y0 = np.zeros(N // 2 + 1, dtype=np.complex128)
            y1 = y0.copy() if self._slopes else None
            for i, (c, d) in zip(self.fft, self._spec):
                src = self.sources[i]
                v = src.fetch(b * B - (L - 1), B + L - 1)
                s = sfft.rfft(v, N)
                if y1 is not None:
                    y1 += s * d
                s *= c
                y0 += s
                if src.jittered:   # its own TX jitter, first order
                    y0 += sfft.rfft(src.fetch_moved(b * B - (L - 1), B + L - 1, v), N) * d
            hit = (sfft.irfft(y0, N)[L - 1:L - 1 + B],
                   None if y1 is None else sfft.irfft(y1, N)[L - 1:L - 1 + B])
            if len(self._fft_cache) > 2:
                self._fft_cache.clear()
            self._fft_cache[b] = hit
        return hit

    def __call__(self, k0: int, n: int) -> np.ndarray:
        out = np.zeros(n)
        off = self.jitter.offsets_ui(k0, n) if self.jitter.active else out[:0]
        if self.fft:
            B = self._block
            for b in range(k0 // B, (k0 + n - 1) // B + 1):
                y0, y1 = self._fft_block(b)
                lo, hi = max(b * B, k0), min((b + 1) * B, k0 + n)
                out[lo - k0:hi - k0] += y0[lo - b * B:hi - b * B]
                if y1 is not None and self.jitter.active:
                    out[lo - k0:hi - k0] += off[lo - k0:hi - k0] * y1[lo - b * B:hi - b * B]
        for i in self.direct:
            src = self.sources[i]
            seg, shift, taps, dtaps = self._plan(i, k0, n)
            L = taps.shape[1]
            lo = k0 + int(np.min(seg[:-1] - shift)) - (L - 1)
            hi = k0 + int(np.max(seg[1:] - 1 - shift))
            b = src.fetch(lo, hi - lo + 1)
            if self.jitter.active:
                xtalk_add(out, b, lo, k0, seg, shift, taps, dtaps, off)
            else:
                xtalk_add(out, b, lo, k0, seg, shift, taps, dtaps[:0], off)
            if src.jittered:   # its own TX jitter, first order
                xtalk_add(out, src.fetch_moved(lo, hi - lo + 1, b), lo, k0, seg, shift, dtaps,
                          dtaps[:0], off)
        if self.noise is not None:
            self.noise.add(out, k0, n)
        return out

    def streams(self, k0: int, n: int) -> tuple[np.ndarray, np.ndarray]:
        """(sum, slope of the sum per UI) of the aggressors at the nominal instants of UIs
        k0..k0+n-1 (built with ``slopes``): the clock-recovery sampler adds
        ``sum + offset * slope`` at the offset it recovers per symbol, the first order
        of :meth:`__call__`'s jitter term (the same taps, slopes and summing order)."""
        if not self._slopes:
            raise ValueError("streams: build the front end with slopes=True")
        val, slope = np.zeros(n), np.zeros(n)
        if self.fft:
            B = self._block
            for b in range(k0 // B, (k0 + n - 1) // B + 1):
                y0, y1 = self._fft_block(b)
                lo, hi = max(b * B, k0), min((b + 1) * B, k0 + n)
                val[lo - k0:hi - k0] += y0[lo - b * B:hi - b * B]
                slope[lo - k0:hi - k0] += y1[lo - b * B:hi - b * B]
        for i in self.direct:
            seg, shift, taps, dtaps = self._plan(i, k0, n)
            L = taps.shape[1]
            lo = k0 + int(np.min(seg[:-1] - shift)) - (L - 1)
            hi = k0 + int(np.max(seg[1:] - 1 - shift))
            src = self.sources[i]
            b = src.fetch(lo, hi - lo + 1)
            xtalk_add(val, b, lo, k0, seg, shift, taps, taps[:0], val[:0])
            xtalk_add(slope, b, lo, k0, seg, shift, dtaps, dtaps[:0], val[:0])
            if src.jittered:   # its own TX jitter, first order (its slope: second order)
                xtalk_add(val, src.fetch_moved(lo, hi - lo + 1, b), lo, k0, seg, shift, dtaps,
                          dtaps[:0], val[:0])
        if self.noise is not None:   # (no slope: see engines/xtalk_noise.py)
            self.noise.add(val, k0, n)
        return val, slope


class AggressorWaveform:
    """``(k0, n) -> the aggressors' sum on the fine grid for UIs k0..k0+n-1`` (n m samples,
    volts at the ADC input, laid out as ``WaveformFrontEnd.waveform``): at the victim's
    sampling instants it equals :class:`CrosstalkFrontEnd` without jitter (the same taps,
    the same symbols, the same blocks of phase of a walking aggressor); between them,
    the aggressors' pulses at the same phases. An aggressor's TX jitter moves each of its
    symbols' pulses by its own offset (exactly; the counted engines take it to first
    order). For the analog eye."""

    def __init__(self, link):
        from serdes.txjitter import MAX_DRAWN_UI, reach_ui

        self.pulses = link.aggressor_pulses
        for i, p in enumerate(self.pulses):   # each symbol's pulse moved by its own offset
            a = p.agg
            reach = reach_ui(a.tx_jitter)
            if reach > MAX_DRAWN_UI:
                from serdes.errors import ConfigError

                raise ConfigError(
                    f"aggressor[{i}] TX jitter reaching {reach:g} UI (tx_sj_ui + 8 tx_rj_ui + "
                    f"tx_dcd_ui/2 + tx_buj_ui, default [tx_jitter]): the analog eye draws at "
                    f"most {MAX_DRAWN_UI:g} UI; the statistical and equalized eyes "
                    "take it")
        self.m, self.phase = link.m, link.pulse.phase
        self.sources = [AggressorSymbols(p.agg, link.levels, link.tx_noise_sigma,
                                         ui_s=link.ui_s) for p in self.pulses]
        self._fixed: dict = {}
        self._blocks: list[dict] = [{} for _ in self.pulses]

    def _segments(self, i: int, k0: int, n: int):
        """(lo, hi, shift, g) of aggressor i: UIs lo..hi-1 at one phase."""
        p = self.pulses[i]
        agg = p.agg
        if agg.ppm == 0:
            if i not in self._fixed:
                self._fixed[i] = p.fine(agg.phase_ui, self.phase)
            return [(k0, k0 + n, 0, self._fixed[i])]
        B, out, cache = XTALK_BLOCK, [], self._blocks[i]
        for b in range(k0 // B, (k0 + n - 1) // B + 1):
            hit = cache.get(b)
            if hit is None:
                phi = agg.phase_ui + agg.ppm * 1e-6 * (b * B + B / 2.0)
                s = int(np.floor(phi))
                hit = (s, p.fine(phi - s, self.phase))
                if len(cache) > 256:
                    cache.clear()
                cache[b] = hit
            out.append((max(b * B, k0), min((b + 1) * B, k0 + n), hit[0], hit[1]))
        return out

    def __call__(self, k0: int, n: int) -> np.ndarray:
        from serdes.kernels.fir import upsample_pulse_sum

        m = self.m
        out = np.zeros(n * m)
        for i, src in enumerate(self.sources):
            for lo, hi, s, g in self._segments(i, k0, n):
                L = g.shape[0] // m
                start = lo - s - (L - 1)
                b = src.fetch(start, hi - lo + L - 1)
                # its TX jitter: each of its symbols' pulses moved by its own offset (the
                # offsets the counted engines take to first order)
                shift = src.offsets(start, b.shape[0]) * m if src.jittered else None
                out[(lo - k0) * m:(hi - k0) * m] += upsample_pulse_sum(b, g, m, L, shift)
        return out


def crosstalk_front_end(link, jitter):
    """The aggressors' front end of a link, or None without aggressors."""
    return CrosstalkFrontEnd(link, jitter) if link.aggressor_pulses else None
