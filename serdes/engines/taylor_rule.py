"""The rule that chooses the Taylor-2 expansion over the exact interpolated pulse sum
for jittered sampling: the expansion's error bound against a fraction of the rms noise
at the ADC input. Shared by the pulse engine and the interleaved ADC's lanes."""

from __future__ import annotations

import numpy as np

# Taylor-2 runs when its per-sample error bound (kernels.jitter.taylor_error_bound, RJ at
# its 8-sigma clip) is at most this fraction of the rms noise at the ADC input: a
# deterministic shift that small moves no decision threshold by more than 5 % of sigma
# even in the worst alignment of symbols and jitter (the rms error is ~1e-3 of the bound).
TAYLOR_TOL = 0.05


def taylor_scales(link) -> tuple[float, float]:
    """(largest symbol level with 8-sigma TX noise, rms noise at the ADC input): the
    scales of the Taylor-2 rule (the bound against TAYLOR_TOL times the noise)."""
    tx = link.tx_noise_sigma
    sigma = np.sqrt(link.noise.variance + tx ** 2 * float(np.sum(link.pulse.taps ** 2))
                    + link.adc.noise_v2)
    return float(np.max(np.abs(link.levels))) + 8 * tx, float(sigma)
