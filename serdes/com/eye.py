"""Eye height and vertical eye closure at DER_0 from the COM distributions.

The COM budget (``noise.py``) gives the distribution of noise + interference around a
symbol level at the cursor sample. Two adjacent levels are 2 A_s apart (A_s = RLM h0 /
(L - 1), half their distance); the eye between them at DER_0 is bounded from
below by the upper DER_0 quantile of the distribution around the lower level and from
above by the lower DER_0 quantile around the upper level:

    EH = 2 A_s - (v_up + v_low),   v_low = -y where CDF(y) = DER_0 (this is A_ni),
                                   v_up  =  y where 1 - CDF(y) = DER_0,

and the vertical eye closure is the eye amplitude over the eye height (Annex 120E style,
AV = 2 A_s the distance between the level means):

    VEC = 20 log10(2 A_s / EH)      (dB; undefined when the eye is closed, EH <= 0).

For the symmetric distributions of COM (every part is symmetric) v_up = v_low = A_ni,
so EH = 2 (A_s - A_ni) and VEC = 20 log10(A_s / (A_s - A_ni)). The eye is taken at the
COM sampling time only: the timing window of the C2M eye (T_O, the minimum over +-T_O
around the sampling time) is not modelled.
"""

from __future__ import annotations

import math

import numpy as np

__all__ = ["eye_at_der0"]


def eye_at_der0(y: np.ndarray, pdf: np.ndarray, a_s: float,
                der0: float) -> tuple[float, float | None]:
    """(eye height in V, VEC in dB or None for a closed eye) from the noise +
    interference PMF ``pdf`` on the voltage grid ``y`` and the half level spacing ``a_s``."""
    w = np.asarray(pdf, dtype=float)
    w = w / w.sum()
    cdf = np.cumsum(w)
    ccdf = np.cumsum(w[::-1])[::-1]          # P(Y >= y)
    v_low = -float(y[np.nonzero(cdf >= der0)[0][0]])
    v_up = float(y[np.nonzero(ccdf >= der0)[0][-1]])
    eh = 2.0 * a_s - (v_up + v_low)
    vec = 20.0 * math.log10(2.0 * a_s / eh) if eh > 0 else None
    return eh, vec
