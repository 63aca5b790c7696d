"""The sampler with clock recovery: one fused kernel per chunk.

For each output k (nominal symbol s = k0 - P + k), the sampling offset from the pulse
peak (UI) is

    c_k = phi_k (the phase interpolator's code / pi_steps) + d_k (RX jitter) - tau_s

held within the slip window, |c_k| <= P + 1/2 (a sample past it reads the window's edge).

(tau_s: the TX jitter of symbol s). Its nearest whole UI n shifts the symbol window (the
sampler takes symbol s + n: a cycle slip, |n| <= P) and its fraction f picks the pulse:

    x_k = sum_j a_{s+n-j} [p(jT + f) + D p'(jT + f) + D^2 / 2 p''(jT + f)] + w_k,
    D = tau_s - tau_{s+n-j}

The first term is read from a table of the pulse at Q phases per UI (linear
interpolation between neighbouring rows); the others, second order in the TX jitter
that differs between the symbols in the pulse span (RJ, DCD, BUJ, and the change of SJ
and of the ppm ramp over the span), from tables of p' and p'' (nearest row). w_k: RX
noise.

Then the Mueller-Muller detector on the sample and a slicer decision on it,
e = (x_k d_{k-1} - x_{k-1} d_k) / h0 - bias (mode 1; mode 2: the sign of that), enters
a ring of L + 1 values (the loop latency) and the loop filter updates the phase
(:mod:`serdes.cdr`). ``state`` = [phi, integral, x_prev, d_prev, ring position].

Mode 3, the bang-bang (Alexander) detector with 2x sampling: a second sample of the same
pulse tables at c_k - 1/2 (the edge between symbols k - 1 and k, same TX-jitter and
aggressor terms, its own noise ``we``); with decisions d_{k-1} != d_k (signs) the
output is -sign(edge) (d_k - d_{k-1}) / 2 (edge on d_k's side: sampling late, move
earlier), else 0.

Crosstalk aggressors (optional): ``xv``/``xs`` hold their sum and its slope per UI at
the nominal instants of UIs s - P .. s_last + P; the sample adds them to first order at
the same offset, ``xv[s + n] + f xs[s + n]`` (the aggressors run on the victim
transmitter's symbol grid: with a TX ppm offset they walk with it).
"""

import numpy as np
from numba import njit

from serdes.errors import ConfigError
from serdes.kernels import args


@njit(cache=True, fastmath=True)
def _edge_sample(a, tau, table, dtable, d2table, q, c, k, hist, big_p, n_ui, per_sym, xv, xs):
    # the sample at offset c (UI from the peak) of output k, as the data sample
    rows = table.shape[0]
    shift = int(np.floor(c + 0.5))
    if shift > big_p:
        shift = big_p
    elif shift < -big_p:
        shift = -big_p
    f = c - shift
    u = (f + 0.5) * q + 1.0
    r = int(np.floor(u))
    if r < 0:
        r = 0
    elif r > rows - 2:
        r = rows - 2
    t = u - r
    base = k + big_p + shift
    aw = a[base:base + n_ui]
    t0 = table[r]
    t1 = table[r + 1]
    s0 = 0.0
    s1 = 0.0
    for i in range(n_ui):
        s0 += aw[i] * t0[i]
        s1 += aw[i] * t1[i]
    x = (1.0 - t) * s0 + t * s1
    if per_sym:
        rn = r + 1 if t >= 0.5 else r
        dt = dtable[rn]
        d2 = d2table[rn]
        tk = tau[k + hist - big_p]
        tw = tau[base:base + n_ui]
        s2 = 0.0
        for i in range(n_ui):
            dl = tk - tw[i]
            s2 += aw[i] * dl * (dt[i] + 0.5 * dl * d2[i])
        x += s2
    if xv.shape[0] > 0:
        x += xv[base] + f * xs[base]
    return x


@njit(cache=True, fastmath=True)
def _cdr_sampler(a, tau, drx, w, table, dtable, d2table, q, lookahead, levels, h0, mode, bias,
                 kp, ki, steps, first, state, ring, x_out, ph_out, e_out, xv, xs, we):
    rows, n_ui = table.shape
    n = x_out.shape[0]
    big_p = lookahead
    hist = n_ui - 1 + 2 * big_p
    per_sym = dtable.shape[0] > 0
    aggr = xv.shape[0] > 0
    n_lev = levels.shape[0]
    phi = state[0]
    integ = state[1]
    x_prev = state[2]
    d_prev = state[3]
    pos = int(state[4])
    n_ring = ring.shape[0]
    for k in range(n):
        phq = np.floor(phi * steps + 0.5) / steps
        ks = k + hist - big_p
        c = phq + drx[k] - tau[ks]
        # past the slip window the sample is the window's edge: bounded, where the
        # table's linear interpolation extrapolated (~1e4 h0 at 600 UI, and a lost loop
        # ran its phase to 1e15 UI); the front end counts these samples
        if c > big_p + 0.5:
            c = big_p + 0.5
        elif c < -big_p - 0.5:
            c = -big_p - 0.5
        shift = int(np.floor(c + 0.5))
        if shift > big_p:
            shift = big_p
        elif shift < -big_p:
            shift = -big_p
        f = c - shift
        u = (f + 0.5) * q + 1.0
        r = int(np.floor(u))
        if r < 0:
            r = 0
        elif r > rows - 2:
            r = rows - 2
        t = u - r
        base = k + big_p + shift
        s0 = 0.0
        s1 = 0.0
        t0 = table[r]
        t1 = table[r + 1]
        # the window as a slice: indices i >= 0 need no wrap-around test, so the dot
        # products vectorize (a[base + i] with a signed base ran ~1.5x slower)
        aw = a[base:base + n_ui]
        for i in range(n_ui):
            v = aw[i]
            s0 += v * t0[i]
            s1 += v * t1[i]
        x = (1.0 - t) * s0 + t * s1 + w[k]
        if per_sym:
            rn = r + 1 if t >= 0.5 else r
            dt = dtable[rn]
            d2 = d2table[rn]
            tk = tau[ks]
            tw = tau[base:base + n_ui]
            s2 = 0.0
            for i in range(n_ui):
                dl = tk - tw[i]
                s2 += aw[i] * dl * (dt[i] + 0.5 * dl * d2[i])
            x += s2
        if aggr:
            ix = k + big_p + shift
            x += xv[ix] + f * xs[ix]
        x_out[k] = x
        ph_out[k] = phq
        # slicer on the ADC sample: nearest level of x / h0
        y = x / h0
        d = levels[0]
        for i in range(1, n_lev):
            if y > 0.5 * (levels[i - 1] + levels[i]):
                d = levels[i]
        e_mm = (x * d_prev - x_prev * d) / h0
        if mode == 3:
            # Alexander: the edge sample half a UI before this one, between d_prev and d
            xe = _edge_sample(a, tau, table, dtable, d2table, q, c - 0.5, k, hist, big_p,
                              n_ui, per_sym, xv, xs) + we[k]
            se = 1.0 if xe > 0 else (-1.0 if xe < 0 else 0.0)
            e_mm = -0.5 * se * (d - d_prev) if d != d_prev else 0.0
        e_out[k] = e_mm
        x_prev = x
        d_prev = d
        if k < first:
            continue
        e = e_mm - bias
        if mode == 2:
            e = 1.0 if e > 0 else (-1.0 if e < 0 else 0.0)
        ring[pos] = e
        pos += 1
        if pos == n_ring:
            pos = 0
        e_del = ring[pos]
        integ += ki * e_del
        phi += kp * e_del + integ
    state[0] = phi
    state[1] = integ
    state[2] = x_prev
    state[3] = d_prev
    state[4] = pos
    return x_out


def cdr_sampler(a, tau, drx, w, table, dtable, d2table, q, lookahead, levels, h0, mode, bias, kp, ki,
                steps, first, state, ring, xv=None, xs=None, we=None):
    """Samples, sampling phases and raw MM outputs of one chunk (see the module notes).

    ``a``, ``tau``: symbols and their TX jitter with n_ui - 1 + 2 P of history in front;
    ``drx``, ``w``: RX jitter and noise per output; ``table``/``dtable``/``d2table``:
    (Q + 3, n_ui) reversed rows of p, p', p'' for f = (r - 1) / Q - 1/2 (the derivative
    tables may have 0 rows: no per-symbol TX jitter); ``mode`` 0 (open loop), 1 (MM), 2 (sign MM),
    3 (bang-bang on an edge sample half a UI earlier, ``we`` its noise; None: none; the
    third output is then the raw Alexander output);
    ``first``: outputs before it do not move the loop; ``xv``, ``xs``: the aggressors'
    sum and slope at n + 2 P nominal instants (None: no aggressors). Returns (x, phase, e_mm)."""
    table = args.array("table", table, ndim=2)
    n_ui = table.shape[1]
    dtable = args.array("dtable", dtable, ndim=2)
    d2table = args.array("d2table", d2table, ndim=2)
    for name, d in (("dtable", dtable), ("d2table", d2table)):
        if d.shape != dtable.shape or (d.shape[0] and d.shape != table.shape):
            raise ConfigError(f"{name}: expected shape {table.shape} (both) or no rows, "
                              f"got {d.shape}")
    lookahead = args.integer("lookahead", lookahead, lo=0)
    hist = n_ui - 1 + 2 * lookahead
    a = args.array("a", a, min_len=hist)
    n = a.shape[0] - hist
    tau = args.array("tau", tau)
    drx, w = args.array("drx", drx), args.array("w", w)
    if tau.shape[0] != a.shape[0] or drx.shape[0] != n or w.shape[0] != n:
        raise ConfigError(f"tau/drx/w: expected {a.shape[0]}/{n}/{n} values, got "
                          f"{tau.shape[0]}/{drx.shape[0]}/{w.shape[0]}")
    levels = args.array("levels", levels, min_len=2)
    state = args.state("state", state, size=5)
    ring = args.state("ring", ring)
    if ring.shape[0] < 1:
        raise ConfigError("ring: needs at least one value (latency + 1)")
    if xv is None and xs is None:
        xv = xs = np.zeros(0)
    else:
        xv, xs = args.array("xv", xv, finite=True), args.array("xs", xs, finite=True)
        if xv.shape[0] != n + 2 * lookahead or xs.shape[0] != n + 2 * lookahead:
            raise ConfigError(f"xv/xs: expected {n + 2 * lookahead} values each, got "
                              f"{xv.shape[0]}/{xs.shape[0]}")
    we = np.zeros(n) if we is None else args.array("we", we, finite=True)
    if we.shape[0] != n:
        raise ConfigError(f"we: expected {n} values, got {we.shape[0]}")
    x, ph, e = np.empty(n), np.empty(n), np.empty(n)
    _cdr_sampler(a, tau, drx, w, table, dtable, d2table, args.real("q", q, positive=True), lookahead,
                 levels, args.real("h0", h0, positive=True),
                 args.integer("mode", mode, lo=0, hi=3), args.real("bias", bias),
                 args.real("kp", kp, nonneg=True), args.real("ki", ki, nonneg=True),
                 args.real("steps", steps, positive=True), args.integer("first", first, lo=0),
                 state, ring, x, ph, e, xv, xs, we)
    return x, ph, e


@njit(cache=True)
def _impulse_energy(kpd, kp, ki, latency, n, block, rel_tol):
    # the loop of the module notes with a linear detector e = Kpd (theta - phi),
    # theta = the unit impulse at k = 0; returns sum_k phi_k^2
    ring = np.zeros(latency + 1)
    pos = 0
    phi = 0.0
    integ = 0.0
    total = 0.0
    part = 0.0
    for k in range(n):
        part += phi * phi
        theta = 1.0 if k == 0 else 0.0
        ring[pos] = kpd * (theta - phi)
        pos += 1
        if pos == latency + 1:
            pos = 0
        e_del = ring[pos]
        integ += ki * e_del
        phi += kp * e_del + integ
        if (k + 1) % block == 0:
            total += part
            if not np.isfinite(total) or (k + 1 > block and part <= rel_tol * total):
                return total
            part = 0.0
    return total + part


def impulse_energy(kpd, kp, ki, latency, n=1 << 22, block=4096, rel_tol=1e-13):
    """sum_k h_k^2 of the loop's phase response h to a unit impulse of the data's phase
    (the loop of the module notes, linear detector of gain ``kpd``), summed until a block
    of ``block`` UI adds at most ``rel_tol`` of the total, at most ``n`` UI. Not finite
    when the loop is unstable."""
    return _impulse_energy(args.real("kpd", kpd), args.real("kp", kp, nonneg=True),
                           args.real("ki", ki, nonneg=True),
                           args.integer("latency", latency, lo=0), args.integer("n", n, lo=1),
                           args.integer("block", block, lo=1),
                           args.real("rel_tol", rel_tol, nonneg=True))


@njit(cache=True)
def _mm_open_loop(x, levels, mids, h0):
    n = x.shape[0]
    e = np.empty(max(n - 1, 0))
    d_prev = 0.0
    for k in range(n):
        v = x[k] / h0
        i = 0
        for t in range(mids.shape[0]):
            if v > mids[t]:
                i += 1
        d = levels[i]
        if k > 0:
            e[k - 1] = (x[k] * d_prev - x[k - 1] * d) / h0
        d_prev = d
    return e


def mm_open_loop(x, levels, h0):
    """The Mueller-Muller detector's raw outputs on samples ``x`` with the loop open:
    the slicer decision d_k = levels[i], i the number of thresholds (midpoints of the
    ascending ``levels``) strictly below x_k / h0 (numpy's ``searchsorted(...,
    side="left")``), and e_k = (x_{k+1} d_k - x_k d_{k+1}) / h0, k = 0 .. n - 2: the
    NumPy expression's values bit for bit, in one pass (the S-curve calibration runs it
    about 20 times per link on 131,072 samples)."""
    lv = np.ascontiguousarray(levels, dtype=np.float64)
    mids = np.ascontiguousarray(0.5 * (lv[:-1] + lv[1:]))
    return _mm_open_loop(np.ascontiguousarray(x, dtype=np.float64), lv, mids, float(h0))
