"""Noise whitening + MLSE (Viterbi) detector after the FFE.

Chain per FFE output sample: reflection canceller (optional, lags beyond the target
memory; lags >= the decision delay use final decisions, shorter lags the tentative
decisions of the best survivor, so no lag range is out of reach) -> whitening FIR c
(c[0] = 1) -> Viterbi on the
partial-response target g with branch metrics (u_k - sum_i g_i a_{k-i})^2 -> decision
with a fixed delay of ``traceback`` symbols. See :mod:`serdes.kernels.viterbi` for the
trellis and :mod:`serdes.dsp.design` for how c and g are designed.

Precoding: the Viterbi decides line symbols; with ``link.precoding`` the run loop undoes
the 1/(1+D) precoder on its decisions as it does for the DFE, so an error event of the
MLSE that flips a run of line symbols by alternating offsets costs about two data
symbols (its ends) instead of the whole run.

Memory L gives M^L states and M^(L+1) branches per symbol: for PAM4, memory 1 has
4 states (16 branches), memory 2 has 16 states (64 branches), memory 3 has 64 states.
"""

from __future__ import annotations

import numpy as np

from serdes.dsp.rc import ring_size
from serdes.kernels.viterbi import Trellis, check_trellis, mlse_run, mlse_state

MAX_DELAY = {2: 64, 4: 32}  # symbols per uint64 survivor register


def branch_table(levels: np.ndarray, target: np.ndarray) -> np.ndarray:
    """ev[s * M + t]: the noiseless sample of the branch into state s from the
    predecessor whose oldest symbol is t (see serdes.kernels.viterbi)."""
    levels = np.asarray(levels, dtype=np.float64)
    g = np.asarray(target, dtype=np.float64)
    m, memory = levels.shape[0], g.shape[0] - 1
    n_states = m ** memory
    ev = np.empty(n_states * m)
    for s in range(n_states):
        syms = [(s // m ** i) % m for i in range(memory)]  # a_k, a_{k-1}, ..
        for t in range(m):
            seq = syms + [t]
            ev[s * m + t] = sum(g[i] * levels[seq[i]] for i in range(memory + 1))
    return ev


class MlseDetector:
    """Whitening + optional RC + Viterbi with state carried across calls.

    ``process(z)`` takes FFE outputs and returns (decisions, v) of the same length;
    output k is about the symbol ``traceback - 1`` samples before input k.
    """

    def __init__(self, levels, *, target, whitening=(1.0,), traceback: int = 24,
                 rc_lags=(), rc_taps=()):
        self.levels = np.ascontiguousarray(levels, dtype=np.float64)
        self.m = self.levels.shape[0]
        if self.m not in MAX_DELAY:
            raise ValueError(f"MLSE needs 2 or 4 levels, got {self.m}")
        self.target = np.ascontiguousarray(target, dtype=np.float64)
        self.whitening = np.ascontiguousarray(whitening, dtype=np.float64)
        if self.target[0] != 1.0 or self.whitening[0] != 1.0:
            raise ValueError("the MLSE target and the whitening filter must start with 1")
        self.memory = self.target.shape[0] - 1
        if self.memory < 1:
            raise ValueError("the MLSE target needs memory >= 1")
        self.traceback = int(traceback)
        if not 1 <= self.traceback <= MAX_DELAY[self.m]:
            raise ValueError(f"traceback must be in 1..{MAX_DELAY[self.m]}")
        self.bits = 2 if self.m == 4 else 1
        self.n_states = self.m ** self.memory
        self.ev = branch_table(self.levels, self.target)
        self.rc_lags = np.ascontiguousarray(rc_lags, dtype=np.int64)
        self.rc_taps = np.ascontiguousarray(rc_taps, dtype=np.float64)
        if self.rc_lags.size and self.rc_lags.min() <= self.memory:
            raise ValueError("RC lags must lie beyond the target memory")
        span = max(int(self.rc_lags.max()) if self.rc_lags.size else 0, self.memory,
                   self.traceback)
        self.trellis = check_trellis(Trellis(self.whitening, self.rc_taps, self.rc_lags, self.ev,
                                             self.target, self.levels, self.m, self.n_states,
                                             self.bits, self.traceback))
        self.state = mlse_state(self.trellis, ring_size(span), ring_size(self.traceback))

    @property
    def states(self) -> int:
        return self.n_states

    def process(self, z: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        return mlse_run(z, self.trellis, self.state)

    def fingerprint(self) -> bytes:
        """The whole state the next outputs depend on, as bytes: path metrics, survivor
        registers, whitening history, best state, and the decision ring and sample
        buffer read back from the newest entry (so the number of steps taken, which only
        places entries in the rings, does not enter). Two detectors with equal
        fingerprints give the same outputs from the same inputs on (once both have taken
        more steps than the canceller's lags and the decision delay, as after a
        warm-up): a split run compares it at each range boundary
        (:mod:`serdes.parallel`)."""
        s = self.state
        t = int(s.st[0])
        ring = s.ring[(t - 1 - np.arange(s.ring.shape[0])) & (s.ring.shape[0] - 1)]
        ubuf = s.ubuf[(t - 1 - np.arange(s.ubuf.shape[0])) & (s.ubuf.shape[0] - 1)]
        return b"".join(a.tobytes() for a in (s.pm, s.paths, s.zh, s.st[1:2], ring, ubuf))
