"""Receiver blocks: settings in the constructor, state inside, data in the call.

A block is any object with ``__call__(x, k0)``: ``x`` holds the samples of absolute
indices ``k0 .. k0 + len(x) - 1`` and the result has the same length (a block that
delays its output says so in ``latency``). The last block of a :class:`Chain` is a
detector and returns :class:`Detected`. Filter histories, decisions, adaptive taps and
random streams live in the block, so a stream processed in chunks gives the same output
as one piece. Users can write their own block in a notebook and put it in a chain.

    Chain([AdcBlock(adc, seed=1), Ffe(w), DfeSlicer(b, levels)], latency=delay)
"""

from __future__ import annotations

from typing import NamedTuple, Protocol, Sequence, runtime_checkable

import numpy as np

from serdes import rng
from serdes.dsp.rc import RcSettings, ReflectionCanceller
from serdes.errors import ConfigError
from serdes.kernels.fir import fir_valid
from serdes.kernels.slicer import dfe_run, ffe_dfe_lms


class Detected(NamedTuple):
    """A detector's output: level indices decided and the soft values they came from."""

    decisions: np.ndarray   # uint8 level indices
    soft: np.ndarray        # slicer (or Viterbi) input, normalised symbol units


@runtime_checkable
class Block(Protocol):
    def __call__(self, x: np.ndarray, k0: int): ...


def thresholds_for(levels: np.ndarray) -> np.ndarray:
    return np.ascontiguousarray((levels[1:] + levels[:-1]) / 2.0)


def _f64(name: str, values) -> np.ndarray:
    a = np.ascontiguousarray(values, dtype=np.float64).reshape(-1)
    if not np.all(np.isfinite(a)):
        raise ConfigError(f"{name}: taps must be finite")
    return a


class AdcBlock:
    """The ADC: its ENOB noise (own seeded stream, indexed by absolute sample) and
    quantization (:class:`serdes.adc.Adc`)."""

    latency = 0

    def __init__(self, adc, *, seed: int):
        self.adc = adc
        self._rng = rng.BlockRNG(seed, rng.ADC_NOISE)

    def __call__(self, x, k0: int) -> np.ndarray:
        x = np.ascontiguousarray(x, dtype=np.float64)
        extra = self._rng.normal(k0, x.shape[0]) if self.adc.enob_noise_sigma_v > 0 else None
        if getattr(self.adc, "interleaved", False):  # serdes.tiadc: per-lane conversion
            return self.adc.convert(x, extra, k0)
        return self.adc(x, extra)


class Ffe:
    """Symbol-spaced FIR ``taps`` (1/V) with its input history."""

    latency = 0

    def __init__(self, taps):
        self.taps = _f64("ffe", taps)
        if self.taps.size == 0:
            raise ConfigError("ffe: needs at least one tap")
        self._hist = np.zeros(self.taps.shape[0] - 1)

    def __call__(self, x, k0: int) -> np.ndarray:
        ext = np.concatenate([self._hist, np.asarray(x, dtype=np.float64)])
        if self._hist.size:
            self._hist = ext[ext.shape[0] - self._hist.shape[0]:].copy()
        return fir_valid(ext, self.taps)


class DfeSlicer:
    """Decision-feedback taps ``taps`` (x main cursor) and a slicer between ``levels``."""

    latency = 0

    def __init__(self, taps, levels):
        self.taps = _f64("dfe", taps)
        self.levels = _f64("levels", levels)
        self.thresholds = thresholds_for(self.levels)
        self._hist = np.zeros(self.taps.shape[0])

    def __call__(self, z, k0: int) -> Detected:
        return Detected(*dfe_run(np.ascontiguousarray(z, dtype=np.float64), self.taps,
                                 self.levels, self.thresholds, self._hist))


class GenieDfe:
    """A reference detector: the DFE and slicer of :class:`DfeSlicer`, with the feedback
    formed from the symbols actually sent (``ref``, which the pipeline gives to a chain
    whose last block says ``genie = True``) instead of the decisions. Its BER is the DFE's
    without error propagation: the baseline that isolates what a detector gains by its
    decision rule alone. With precoding, ``ref`` holds the precoded line levels, as the
    DFE's own decisions do."""

    latency = 0
    trainable = True
    genie = True

    def __init__(self, taps, levels):
        self.taps = _f64("dfe", taps)
        self.levels = _f64("levels", levels)
        self.thresholds = thresholds_for(self.levels)
        self._hist = np.zeros(self.taps.shape[0])   # true levels, newest first

    def __call__(self, z, k0: int, ref=None, n_train: int = 0) -> Detected:
        z = np.asarray(z, dtype=np.float64)
        if ref is None or len(ref) != z.shape[0]:
            raise ConfigError("GenieDfe: needs the symbols sent (ref) for every sample")
        n_b = self.taps.shape[0]
        a = np.concatenate([self._hist[::-1], np.asarray(ref, dtype=np.float64)])
        v = z.copy()
        for j in range(1, n_b + 1):       # v_k = z_k - sum_j b_j a_{k-j}
            v -= self.taps[j - 1] * a[n_b - j:n_b - j + z.shape[0]]
        if n_b:
            self._hist = a[::-1][:n_b].copy()
        dec = np.searchsorted(self.thresholds, v).astype(np.uint8)
        return Detected(dec, v)


class RcDfe:
    """DFE and slicer with a reflection canceller (floating decision-fed taps at echo
    lags; :mod:`serdes.dsp.rc`), after a fixed FFE."""

    latency = 0

    def __init__(self, settings: RcSettings, *, dfe_taps, levels, lags, taps, first_lag: int,
                 level_power: float, dfe_limit: float = 1.0):
        self.dfe = _f64("dfe", dfe_taps)
        self.levels = _f64("levels", levels)
        self.thresholds = thresholds_for(self.levels)
        self.dfe_limit = float(dfe_limit)
        self._hist = np.zeros(self.dfe.shape[0])
        self.rc = ReflectionCanceller(settings, lags=lags, taps=taps, first_lag=first_lag,
                                      level_power=level_power)

    @property
    def warmup_symbols(self) -> int:
        return self.rc.warmup_symbols

    def __call__(self, z, k0: int) -> Detected:
        z = np.ascontiguousarray(z, dtype=np.float64)
        return Detected(*self.rc.run(z, np.ones(1), self.dfe, self._hist, self.levels,
                                     self.thresholds, None, 0, 0.0, 0.0, self.dfe_limit, False))


class AdaptiveFfeDfe:
    """FFE + DFE (+ optional reflection canceller) adapted by normalised LMS: trained on
    known symbols (``ref``) for the first ``n_train`` outputs the pipeline marks, then
    decision directed. ``mu_w``/``mu_b`` are the per-tap steps."""

    latency = 0
    trainable = True

    def __init__(self, *, ffe, dfe, levels, mu_w: float, mu_b: float, dfe_limit: float = 1.0,
                 rc: ReflectionCanceller | None = None, monitor=None):
        self.ffe = _f64("ffe", ffe).copy()
        self.dfe = _f64("dfe", dfe).copy()
        self.levels = _f64("levels", levels)
        self.thresholds = thresholds_for(self.levels)
        self.mu_w, self.mu_b = float(mu_w), float(mu_b)
        self.dfe_limit = float(dfe_limit)
        self.rc = rc
        self.monitor = monitor  # e.g. serdes.dsp.lms_monitor.LmsMonitor: refuses divergence
        self._x_hist = np.zeros(self.ffe.shape[0] - 1)
        self._hist = np.zeros(self.dfe.shape[0])

    @property
    def warmup_symbols(self) -> int:
        return self.rc.warmup_symbols if self.rc is not None else 0

    def _checked(self, out, ref, n_train: int, k0: int) -> Detected:
        det = Detected(*out)
        if self.monitor is not None:
            self.monitor.check((self.ffe, self.dfe), det.decisions, det.soft, ref, n_train, k0)
        return det

    def __call__(self, x, k0: int, ref=None, n_train: int = 0) -> Detected:
        x_ext = np.concatenate([self._x_hist, np.asarray(x, dtype=np.float64)])
        if self._x_hist.size:
            self._x_hist = x_ext[-self._x_hist.shape[0]:].copy()
        n = x_ext.shape[0] - self._x_hist.shape[0]
        if self.rc is not None:
            out = self.rc.run(x_ext, self.ffe, self.dfe, self._hist, self.levels,
                              self.thresholds, ref, n_train, self.mu_w, self.mu_b,
                              self.dfe_limit, True)
            return self._checked(out, ref, n_train, k0)
        r = np.zeros(n) if ref is None else np.ascontiguousarray(ref, dtype=np.float64)
        out = ffe_dfe_lms(x_ext, self.ffe, self.dfe, self.levels, self.thresholds,
                          self._hist, r, int(n_train), self.mu_w, self.mu_b, self.dfe_limit)
        return self._checked(out, r, n_train, k0)


class Mlse:
    """Noise whitening + (optional RC) + Viterbi detector (:class:`MlseDetector`); its
    output k is about the input ``traceback - 1`` samples earlier."""

    def __init__(self, detector):
        self.detector = detector
        self.latency = int(detector.traceback) - 1
        self.marks: set[int] = set()       # sample indices whose state to record
        self.states: dict[int, bytes] = {}  # index -> the detector's fingerprint there

    def mark(self, *positions: int) -> None:
        """Record the detector's state (:meth:`MlseDetector.fingerprint`) once every
        sample before each of ``positions`` (absolute sample indices) has been taken,
        in :attr:`states` (a split run's boundary check)."""
        self.marks.update(int(p) for p in positions)

    def __call__(self, z, k0: int) -> Detected:
        n = z.shape[0]
        cuts = sorted(p - k0 for p in self.marks if k0 < p <= k0 + n)
        if not cuts:
            return Detected(*self.detector.process(z))
        dec, soft, j = [], [], 0
        for c in cuts:   # the kernel carries its state: pieces give the whole's output
            d, v = self.detector.process(z[j:c])
            dec.append(d)
            soft.append(v)
            self.states[k0 + c] = self.detector.fingerprint()
            self.marks.discard(k0 + c)
            j = c
        if j < n:
            d, v = self.detector.process(z[j:])
            dec.append(d)
            soft.append(v)
        return Detected(np.concatenate(dec), np.concatenate(soft))


class Probe:
    """Records what passes through it (for measurements), up to ``limit`` samples."""

    latency = 0

    def __init__(self, limit: int = 1 << 20):
        self.limit = int(limit)
        self._parts: list[np.ndarray] = []
        self.k0: int | None = None
        self._n = 0

    def __call__(self, x, k0: int):
        if self.k0 is None:
            self.k0 = int(k0)
        if self._n < self.limit:
            part = np.array(x[: self.limit - self._n], dtype=np.float64)
            self._parts.append(part)
            self._n += part.shape[0]
        return x

    @property
    def samples(self) -> np.ndarray:
        return np.concatenate(self._parts) if self._parts else np.zeros(0)


class Chain:
    """Blocks applied in order; the last returns :class:`Detected`.

    ``latency``: decision k is about the symbol sent ``latency`` UI before ADC sample k
    (the FFE's decision delay plus the blocks' own latencies). A trainable last block
    (``trainable = True``) gets the known symbol levels ``ref`` for its first
    ``n_train`` outputs.
    """

    def __init__(self, blocks: Sequence, *, latency: int):
        self.blocks = list(blocks)
        if not self.blocks:
            raise ConfigError("a receiver chain needs at least one block (a detector)")
        for b in self.blocks:
            if not callable(b):
                raise ConfigError(f"{b!r} is not a block (it cannot be called)")
        self.latency = int(latency)

    @property
    def trainable(self) -> bool:
        return bool(getattr(self.blocks[-1], "trainable", False))

    @property
    def genie(self) -> bool:
        """True when the detector is a reference fed with the symbols sent (GenieDfe)."""
        return bool(getattr(self.blocks[-1], "genie", False))

    @property
    def warmup_symbols(self) -> int:
        """Decisions to leave uncounted beyond the usual warm-up (RC placement search)."""
        return max((int(getattr(b, "warmup_symbols", 0)) for b in self.blocks), default=0)

    def find(self, kind: type):
        """The first block of a type, or None."""
        return next((b for b in self.blocks if isinstance(b, kind)), None)

    def __call__(self, x, k0: int, ref=None, n_train: int = 0) -> Detected:
        y = x
        for b in self.blocks[:-1]:
            y = b(y, k0)
        last = self.blocks[-1]
        out = last(y, k0, ref=ref, n_train=n_train) if self.trainable else last(y, k0)
        if not isinstance(out, Detected):
            out = Detected(*out)
        return out
