"""Health checks of an LMS adaptation: refuse a receiver that diverged instead of
counting the errors of a broken one.

Checked on absolute 8192-symbol blocks (so the verdict does not depend on the chunk
size): non-finite taps or slicer input; a training that ends more than LMS_MARGIN_DB
below the MMSE prediction; after the training, a decision-directed error more than
LMS_DD_DROP_DB above the training's, or a slicer input power that left [1/2, 2] x the
trained one (the loop lost the level scale).
"""

from __future__ import annotations

import numpy as np

from serdes.errors import ConfigError

LMS_MARGIN_DB = 10.0        # training SNR this far below the MMSE prediction: failed
LMS_DD_DROP_DB = 3.0        # decision-directed error this far above the training's
LMS_BLOCK = 1 << 13         # symbols per decision-directed check


class LmsDivergedError(ConfigError):
    """The LMS adaptation did not converge with the configured step size."""


class LmsMonitor:
    """Watches the slicer of an adaptive FFE + DFE; :meth:`check` raises
    :class:`LmsDivergedError` naming ``eq.mu`` when the adaptation failed."""

    def __init__(self, *, mu: float, train_symbols: int, level_power: float, levels,
                 predicted_snr_db: float):
        self.mu = float(mu)
        self.train_symbols = int(train_symbols)
        self.level_power = float(level_power)
        self.levels = np.asarray(levels, dtype=np.float64)
        self.predicted_snr_db = float(predicted_snr_db)
        # second half of the training: squared error, count, slicer power
        self._train_err = [0.0, 0, 0.0]
        self._train_snr = self._train_power = None
        self._dd = [-1, 0.0, 0.0, 0]  # decision-directed block: index, sums, count

    def check(self, taps: tuple, dec: np.ndarray, v: np.ndarray, ref, n_train: int,
              k0: int) -> None:
        with np.errstate(over="ignore", invalid="ignore"):
            why = self._trouble(taps, dec, v, ref, n_train, k0)
        if why:
            raise LmsDivergedError(
                f"eq.mu = {self.mu:g}: the LMS adaptation diverged ({why}); the FFE + DFE "
                f"loop is stable only for smaller steps on this link: use a smaller eq.mu "
                f"(0 < eq.mu < {self.mu:g}; 0.01 is the default and 0.1 has converged up "
                f"to 30 dB loss)")

    def _trouble(self, taps, dec, v, ref, n_train: int, k0: int):
        why = None
        if not (all(np.all(np.isfinite(t)) for t in taps) and np.all(np.isfinite(v))):
            why = "the taps became non-finite"
        elif n_train > 0 and ref is not None:
            first = max(self.train_symbols // 2 - k0, 0)
            if first < n_train:
                e = v[first:n_train] - np.asarray(ref)[first:n_train]
                self._train_err[0] += float(np.sum(e * e))
                self._train_err[1] += int(e.shape[0])
                self._train_err[2] += float(np.sum(v[first:n_train] ** 2))
            if k0 + n_train >= self.train_symbols and self._train_err[1]:
                n_t = self._train_err[1]
                self._train_snr = 10 * np.log10(self.level_power * n_t
                                                / max(self._train_err[0], 1e-300))
                self._train_power = self._train_err[2] / n_t
                if self._train_snr < self.predicted_snr_db - LMS_MARGIN_DB:
                    why = (f"the training ended at {self._train_snr:.1f} dB SNR where the "
                           f"MMSE taps reach {self.predicted_snr_db:.1f} dB")
        if why is None and v.shape[0] > n_train:
            why = self._decision_directed(dec[n_train:], v[n_train:], k0 + n_train)
        return why

    def _decision_directed(self, dec, v, k_first: int):
        e = v - self.levels[dec]
        blk = (np.arange(v.shape[0]) + k_first) // LMS_BLOCK
        b0 = int(blk[0])
        sums = [np.bincount(blk - b0, weights=w) for w in (e * e, v * v)]
        counts = np.bincount(blk - b0)
        for j in range(counts.shape[0]):
            if self._dd[0] != b0 + j:
                self._dd = [b0 + j, 0.0, 0.0, 0]
            self._dd[1] += sums[0][j]
            self._dd[2] += sums[1][j]
            self._dd[3] += int(counts[j])
            if self._dd[3] < LMS_BLOCK:
                continue  # block not complete yet
            snr = 10 * np.log10(self.level_power * self._dd[3] / max(self._dd[1], 1e-300))
            ratio = self._dd[2] / self._dd[3] / (self._train_power or self.level_power)
            if self._train_snr is not None and snr < self._train_snr - LMS_DD_DROP_DB:
                return (f"after the training the decision error rose to {snr:.1f} dB SNR "
                        f"from {self._train_snr:.1f} dB")
            if not 0.5 < ratio < 2.0:
                return (f"after the training the slicer input power moved by "
                        f"{10 * np.log10(ratio):+.1f} dB")
        return None
