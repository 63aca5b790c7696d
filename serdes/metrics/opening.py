"""An eye's opening read from a bathtub: NumPy alone, so the statistical engine's views
(serdes/engines/stat/views.py) and the eye measurements (serdes/metrics/eye.py) share it
without importing each other."""

from __future__ import annotations

import numpy as np

__all__ = ["opening_from_bathtub"]


def opening_from_bathtub(x: np.ndarray, ber: np.ndarray, target: float,
                         centre: float = 0.0) -> float:
    """Width of the contiguous interval around ``centre`` where ber <= target.

    The crossings are interpolated linearly in log(ber). 0 if the eye is closed at
    the centre; an interval reaching the end of ``x`` stops there.
    """
    x = np.asarray(x, dtype=np.float64)
    b = np.log(np.maximum(np.asarray(ber, dtype=np.float64), 1e-300))
    lt = np.log(target)
    i0 = int(np.argmin(np.abs(x - centre)))
    if b[i0] > lt:
        return 0.0
    n = x.shape[0]
    r = i0
    while r + 1 < n and b[r + 1] <= lt:
        r += 1
    hi = x[r] if r + 1 == n else x[r] + (x[r + 1] - x[r]) * (lt - b[r]) / (b[r + 1] - b[r])
    left = i0
    while left - 1 >= 0 and b[left - 1] <= lt:
        left -= 1
    lo = (x[left] if left == 0
          else x[left] - (x[left] - x[left - 1]) * (lt - b[left]) / (b[left - 1] - b[left]))
    return float(hi - lo)
