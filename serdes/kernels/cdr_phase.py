"""The clock-recovery loop in the phase domain: the detector replaced by its measured
S-curve and noise (no pulse, no samples), for the statistical engine's model of the
tracking error (:mod:`serdes.engines.cdr_track`).

For each UI k the sampling offset from the data's phase is c_k = phi_k - x_k (x: the
data's phase, e.g. an SJ; phi rounded to 1 / ``steps`` UI when ``steps`` > 0), the
detector's output e_k = S(c_k) + sqrt(V(c_k)) n_k (S, V: tables on a uniform phase grid,
linearly interpolated and held at the ends; n: the caller's noise, zero for the mean
trajectory), and the loop is the one of :mod:`serdes.cdr`: e reaches the loop filter
``latency`` UI later, I += ki e, phi += kp e + I. ``state`` = [phi, I, ring position].
"""

import numpy as np
from numba import njit

from serdes.errors import ConfigError
from serdes.kernels import args


@njit(cache=True)
def _interp(tab, x0, step, c):
    u = (c - x0) / step
    n = tab.shape[0]
    if u <= 0.0:
        return tab[0]
    if u >= n - 1:
        return tab[n - 1]
    i = int(u)
    t = u - i
    return (1.0 - t) * tab[i] + t * tab[i + 1]


@njit(cache=True)
def _phase_loop(x, noise, s_tab, v_tab, x0, step, kp, ki, steps, state, ring, c_out):
    phi = state[0]
    integ = state[1]
    pos = int(state[2])
    n_ring = ring.shape[0]
    use_noise = noise.shape[0] > 0
    for k in range(x.shape[0]):
        phq = np.floor(phi * steps + 0.5) / steps if steps > 0 else phi
        c = phq - x[k]
        c_out[k] = c
        e = _interp(s_tab, x0, step, c)
        if use_noise:
            e += np.sqrt(_interp(v_tab, x0, step, c)) * noise[k]
        ring[pos] = e
        pos += 1
        if pos == n_ring:
            pos = 0
        e_del = ring[pos]
        integ += ki * e_del
        phi += kp * e_del + integ
    state[0] = phi
    state[1] = integ
    state[2] = pos


def phase_loop(x, noise, s_tab, v_tab, x0, step, kp, ki, steps, state, ring):
    """Sampling offsets c_k (UI) of the phase-domain loop driven by the data phase ``x``
    (see the module notes). ``noise``: one value per UI or empty (no noise);
    ``s_tab``/``v_tab``: S-curve and noise variance on the grid x0 + i step (same
    length); ``steps`` <= 0: no phase rounding; ``state`` (3) and ``ring`` (latency + 1)
    are updated in place, so a long run can go in pieces."""
    x = args.array("x", x, finite=True)
    noise = args.array("noise", noise, finite=True)
    if noise.shape[0] not in (0, x.shape[0]):
        raise ConfigError(f"noise: expected 0 or {x.shape[0]} values, got {noise.shape[0]}")
    s_tab = args.array("s_tab", s_tab, finite=True, min_len=2)
    v_tab = args.array("v_tab", v_tab, finite=True)
    if v_tab.shape != s_tab.shape or (v_tab < 0).any():
        raise ConfigError(f"v_tab: expected {s_tab.shape[0]} values >= 0, got "
                          f"{v_tab.shape[0]}")
    state = args.state("state", state, size=3)
    ring = args.state("ring", ring)
    if ring.shape[0] < 1:
        raise ConfigError("ring: needs at least one value (latency + 1)")
    out = np.empty(x.shape[0])
    _phase_loop(x, noise, s_tab, v_tab, args.real("x0", x0),
                args.real("step", step, positive=True), args.real("kp", kp, nonneg=True),
                args.real("ki", ki, nonneg=True), args.real("steps", steps), state, ring, out)
    return out
