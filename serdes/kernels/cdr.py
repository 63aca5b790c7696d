"""The clock-recovery loop and its samplers: every CDR kernel in one module, so the loop
exists once (numba caches a kernel on its own module's source, so the helpers the
kernels share live here).

The loop (:mod:`serdes.cdr`): a detector output e_k enters a ring of L + 1 values (the
loop latency L) and the PI filter updates the phase, I += ki e_{k-L}, phi += kp e_{k-L}
+ I (:func:`_loop_step`); the phase interpolator samples at phi rounded to 1 / steps UI.

The sampler (:func:`cdr_sampler`, one converter; :func:`cdr_ti_sampler`, a time-
interleaved one). For each output k (nominal symbol s = k0 - P + k) the sampling offset
from the pulse peak (UI) is

    c_k = phi_k (the PI code) + d_k (RX jitter; with lanes also the lane's skew and the
          aperture and supply jitter of the instant) - tau_s

held within the slip window, |c_k| <= P + 1/2 (a sample past it reads the window's edge;
tau_s: the TX jitter of symbol s). Its nearest whole UI n shifts the symbol window (the
sampler takes symbol s + n: a cycle slip, |n| <= P) and its fraction f picks the pulse:

    x_k = sum_j a_{s+n-j} [p(jT + f) + D p'(jT + f) + D^2 / 2 p''(jT + f)] + w_k,
    D = tau_s - tau_{s+n-j}

The first term is read from a table of the pulse at Q phases per UI (linear
interpolation between neighbouring rows); the others, second order in the TX jitter
that differs between the symbols in the pulse span (RJ, DCD, BUJ, and the change of SJ
and of the ppm ramp over the span), from tables of p' and p'' (nearest row). w_k: RX
noise. Crosstalk aggressors (optional): ``xv``/``xs`` hold their sum and its slope per
UI at the nominal instants of UIs s - P .. s_last + P; the sample adds them to first
order at the same offset, ``xv[s + n] + f xs[s + n]`` (the aggressors run on the victim
transmitter's symbol grid: with a TX ppm offset they walk with it).

With lanes, output k is taken by lane l = (lane0 + k) mod N from its own table set
(its track-and-hold; table index (lane0 + k) mod L with L table sets), and the detector
sees the lane's converted sample g_k x_k + o_k (its gain and offset), so lane mismatch
reaches the loop as detector noise; the sample returned is x_k, the ADC input.

The detector, on the (converted) sample and a slicer decision d_k on it: Mueller-Muller
e = (x_k d_{k-1} - x_{k-1} d_k) / h0 - bias (mode 1; mode 2: its sign; mode 0: open
loop). Mode 3, the bang-bang (Alexander) detector with 2x sampling (one converter): a
second sample of the same tables at c_k - 1/2 (the edge between symbols k - 1 and k,
same TX-jitter and aggressor terms, its own noise ``we``); with d_{k-1} != d_k the
output is -sign(edge) (d_k - d_{k-1}) / 2 (edge on d_k's side: sampling late, move
earlier), else 0. ``state`` = [phi, integral, x_prev, d_prev, ring position].

The phase-domain loop (:func:`phase_loop`, for the statistical engine's tracking model
:mod:`serdes.engines.cdr_track`): the detector replaced by its measured S-curve and
noise, e_k = S(c_k) + sqrt(V(c_k)) n_k with c_k = phi_k - x_k (x: the data's phase;
tables on a uniform grid, linearly interpolated and held at the ends), through the same
loop. :func:`impulse_energy`: the same loop with a linear detector.
"""

import numpy as np
from numba import njit

from serdes.errors import ConfigError
from serdes.kernels import args


@njit(cache=True)
def _loop_step(e, ring, pos, integ, phi, kp, ki):
    # e into the latency ring; the value L UI old drives the PI filter
    ring[pos] = e
    pos += 1
    if pos == ring.shape[0]:
        pos = 0
    e_del = ring[pos]
    integ += ki * e_del
    phi += kp * e_del + integ
    return pos, integ, phi


# The same update compiled for the fastmath samplers, under its own name: numba keeps one
# compilation of a helper per signature (in the process and in its cache file, whose name
# comes from the function), and a helper that sets no flags takes the fastmath of the
# kernel that compiled it first, so one helper shared by fastmath and plain kernels made
# the phase-domain loop's results depend on which kernel ran first.
@njit(cache=True, fastmath=True, inline="always")
def _loop_step_fast(e, ring, pos, integ, phi, kp, ki):
    ring[pos] = e
    pos += 1
    if pos == ring.shape[0]:
        pos = 0
    e_del = ring[pos]
    integ += ki * e_del
    phi += kp * e_del + integ
    return pos, integ, phi


@njit(cache=True, fastmath=True, inline="always")
def _sample(a, tau, table, dtable, d2table, q, c, k, ks, big_p, w0, xv, xs):
    # the sample of output k at offset c (UI from the peak), noise w0 added
    rows, n_ui = table.shape
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
    # the window as a slice: indices i >= 0 need no wrap-around test, so the dot
    # products vectorize (a[base + i] with a signed base ran ~1.5x slower)
    aw = a[base:base + n_ui]
    t0 = table[r]
    t1 = table[r + 1]
    s0 = 0.0
    s1 = 0.0
    for i in range(n_ui):
        v = aw[i]
        s0 += v * t0[i]
        s1 += v * t1[i]
    x = (1.0 - t) * s0 + t * s1 + w0
    if dtable.shape[0] > 0:
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
    if xv.shape[0] > 0:
        x += xv[base] + f * xs[base]
    return x


@njit(cache=True, fastmath=True)
def _cdr_sampler(a, tau, drx, w, tables, dtables, d2tables, lane0, q, lookahead, levels, h0,
                 mode, bias, kp, ki, steps, first, state, ring, gd, od, x_out, ph_out, e_out,
                 xv, xs, we):
    n_tab, _, n_ui = tables.shape
    big_p = lookahead
    hist = n_ui - 1 + 2 * big_p
    lanes = gd.shape[0] > 0
    n_lev = levels.shape[0]
    phi = state[0]
    integ = state[1]
    x_prev = state[2]
    d_prev = state[3]
    pos = int(state[4])
    lt = lane0 % n_tab
    for k in range(x_out.shape[0]):
        # the PI code in line: as a helper it moved the samplers' results in the last bit
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
        x = _sample(a, tau, tables[lt], dtables[lt], d2tables[lt], q, c, k, ks, big_p, w[k],
                    xv, xs)
        x_out[k] = x
        ph_out[k] = phq
        if lanes:
            x = gd[k] * x + od[k]
        # slicer on the sample: nearest level of x / h0
        y = x / h0
        d = levels[0]
        for i in range(1, n_lev):
            if y > 0.5 * (levels[i - 1] + levels[i]):
                d = levels[i]
        e_mm = (x * d_prev - x_prev * d) / h0
        if mode == 3:
            # Alexander: the edge sample half a UI before this one, between d_prev and d
            xe = _sample(a, tau, tables[lt], dtables[lt], d2tables[lt], q, c - 0.5, k, ks,
                         big_p, 0.0, xv, xs) + we[k]
            se = 1.0 if xe > 0 else (-1.0 if xe < 0 else 0.0)
            e_mm = -0.5 * se * (d - d_prev) if d != d_prev else 0.0
        lt += 1
        if lt == n_tab:
            lt = 0
        e_out[k] = e_mm
        x_prev = x
        d_prev = d
        if k < first:
            continue
        e = e_mm - bias
        if mode == 2:
            e = 1.0 if e > 0 else (-1.0 if e < 0 else 0.0)
        pos, integ, phi = _loop_step_fast(e, ring, pos, integ, phi, kp, ki)
    state[0] = phi
    state[1] = integ
    state[2] = x_prev
    state[3] = d_prev
    state[4] = pos
    return x_out


def _run_sampler(a, tau, drx, w, tables, dtables, d2tables, lane0, q, lookahead, levels, h0, mode,
                 max_mode, bias, kp, ki, steps, first, state, ring, gd, od, xv, xs, we):
    # the argument checks both samplers share; tables (L, Q + 3, n_ui)
    n_tab, _, n_ui = tables.shape
    if n_tab < 1:
        raise ConfigError("tables: needs at least one table set")
    for name, d in (("dtables", dtables), ("d2tables", d2tables)):
        if d.shape != dtables.shape or (d.shape[1] and d.shape != tables.shape) \
                or d.shape[0] != n_tab or d.shape[2] != n_ui:
            raise ConfigError(f"{name}: expected shape {tables.shape} (both) or "
                              f"({n_tab}, 0, {n_ui}), got {d.shape}")
    lookahead = args.integer("lookahead", lookahead, lo=0)
    hist = n_ui - 1 + 2 * lookahead
    a = args.array("a", a, min_len=hist)
    n = a.shape[0] - hist
    tau = args.array("tau", tau)
    drx, w = args.array("drx", drx, finite=True), args.array("w", w)
    if gd is None:
        gd = od = np.zeros(0)
    else:
        gd, od = args.array("gd", gd, finite=True), args.array("od", od, finite=True)
    sizes = (tau.shape[0], drx.shape[0], w.shape[0], gd.shape[0] or n, od.shape[0] or n)
    if sizes != (a.shape[0], n, n, n, n):
        raise ConfigError(f"tau/drx/w/gd/od: expected {a.shape[0]}/{n}/{n}/{n}/{n} values, "
                          f"got {'/'.join(map(str, sizes))}")
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
    _cdr_sampler(a, tau, drx, w, tables, dtables, d2tables, args.integer("lane0", lane0, lo=0),
                 args.real("q", q, positive=True), lookahead, levels,
                 args.real("h0", h0, positive=True),
                 args.integer("mode", mode, lo=0, hi=max_mode), args.real("bias", bias),
                 args.real("kp", kp, nonneg=True), args.real("ki", ki, nonneg=True),
                 args.real("steps", steps, positive=True), args.integer("first", first, lo=0),
                 state, ring, gd, od, x, ph, e, xv, xs, we)
    return x, ph, e


def cdr_sampler(a, tau, drx, w, table, dtable, d2table, q, lookahead, levels, h0, mode, bias, kp, ki,
                steps, first, state, ring, xv=None, xs=None, we=None):
    """Samples, sampling phases and raw detector outputs of one chunk, one converter (see
    the module notes).

    ``a``, ``tau``: symbols and their TX jitter with n_ui - 1 + 2 P of history in front;
    ``drx``, ``w``: RX jitter and noise per output; ``table``/``dtable``/``d2table``:
    (Q + 3, n_ui) reversed rows of p, p', p'' for f = (r - 1) / Q - 1/2 (the derivative
    tables may have 0 rows: no per-symbol TX jitter); ``mode`` 0 (open loop), 1 (MM), 2 (sign MM),
    3 (bang-bang on an edge sample half a UI earlier, ``we`` its noise; None: none; the
    third output is then the raw Alexander output);
    ``first``: outputs before it do not move the loop; ``xv``, ``xs``: the aggressors'
    sum and slope at n + 2 P nominal instants (None: no aggressors). Returns (x, phase, e_mm)."""
    table = args.array("table", table, ndim=2)
    dtable = args.array("dtable", dtable, ndim=2)
    d2table = args.array("d2table", d2table, ndim=2)
    for name, d in (("dtable", dtable), ("d2table", d2table)):
        if d.shape != dtable.shape or (d.shape[0] and d.shape != table.shape):
            raise ConfigError(f"{name}: expected shape {table.shape} (both) or no rows, "
                              f"got {d.shape}")
    if not dtable.shape[0]:
        dtable = d2table = np.zeros((0, table.shape[1]))
    return _run_sampler(a, tau, drx, w, table[None], dtable[None], d2table[None], 0, q,
                        lookahead, levels, h0, mode, 3, bias, kp, ki, steps, first, state, ring,
                        None, None, xv, xs, we)


def cdr_ti_sampler(a, tau, drx, w, tables, dtables, d2tables, lane0, q, lookahead, levels, h0,
                   mode, bias, kp, ki, steps, first, state, ring, gd, od, xv=None, xs=None):
    """Samples, sampling phases and raw MM outputs (of the lanes' converted samples) of
    one chunk through interleaved lanes; the arguments of :func:`cdr_sampler` (modes
    0-2), with ``tables``/``dtables``/``d2tables`` (L, Q + 3, n_ui) table sets (the
    derivative ones may have 0 rows), ``lane0`` the table set of output 0 (mod L),
    ``drx`` every offset of the instant but the recovered phase and the TX jitter, and
    ``gd``/``od`` the detector's gain and offset per output. Returns (x, phase, e_mm)."""
    tables = args.array("tables", tables, ndim=3)
    dtables = args.array("dtables", dtables, ndim=3)
    d2tables = args.array("d2tables", d2tables, ndim=3)
    if gd is None or od is None:
        raise ConfigError("gd/od: the detector's gain and offset per output are needed")
    return _run_sampler(a, tau, drx, w, tables, dtables, d2tables, lane0, q, lookahead, levels,
                        h0, mode, 2, bias, kp, ki, steps, first, state, ring, gd, od, xv, xs,
                        None)


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
    use_noise = noise.shape[0] > 0
    for k in range(x.shape[0]):
        phq = np.floor(phi * steps + 0.5) / steps if steps > 0 else phi
        c = phq - x[k]
        c_out[k] = c
        e = _interp(s_tab, x0, step, c)
        if use_noise:
            e += np.sqrt(_interp(v_tab, x0, step, c)) * noise[k]
        pos, integ, phi = _loop_step(e, ring, pos, integ, phi, kp, ki)
    state[0] = phi
    state[1] = integ
    state[2] = pos


def phase_loop(x, noise, s_tab, v_tab, x0, step, kp, ki, steps, state, ring):
    """Sampling offsets c_k (UI) of the phase-domain loop driven by the data phase ``x``
    (see the module notes). ``noise``: one value per UI or empty (no noise);
    ``s_tab``/``v_tab``: S-curve and noise variance on the grid x0 + i step (same
    length); ``steps`` <= 0: no phase rounding; ``state`` (3: phi, integral, ring
    position) and ``ring`` (latency + 1) are updated in place, so a long run can go in
    pieces."""
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


@njit(cache=True)
def _impulse_energy(kpd, kp, ki, latency, n, block, rel_tol):
    # the loop with a linear detector e = Kpd (theta - phi), theta = the unit impulse at
    # k = 0; returns sum_k phi_k^2
    ring = np.zeros(latency + 1)
    pos = 0
    phi = 0.0
    integ = 0.0
    total = 0.0
    part = 0.0
    for k in range(n):
        part += phi * phi
        theta = 1.0 if k == 0 else 0.0
        pos, integ, phi = _loop_step(kpd * (theta - phi), ring, pos, integ, phi, kp, ki)
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
