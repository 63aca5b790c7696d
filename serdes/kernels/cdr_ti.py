"""The clock-recovery sampler of :mod:`serdes.kernels.cdr` for a time-interleaved ADC:
one fused kernel per chunk (private ``_cdr_ti_sampler`` behind :func:`cdr_ti_sampler`).

Output k is taken by lane l = (lane0 + k) mod N. Its sampling offset from the pulse peak
(UI) is the recovered phase plus everything that moves the lane's instant,

    c_k = phi_k (the phase interpolator's code / pi_steps) + d_k - tau_s

where ``d_k`` (per output, UI) holds the RX jitter, the lane's skew and the aperture and
supply jitter of the instant, and tau_s the TX jitter of the nominal symbol s. The
sample is formed as in :mod:`serdes.kernels.cdr` from lane l's pulse tables (the lane's
own track-and-hold; one shared table set when the lanes' bandwidths agree: table index
(lane0 + k) mod L with L table sets). The phase detector (MM, mode 1, or its sign,
mode 2; mode 0: open loop) sees the lane's sample ``g_k x_k + o_k`` (its gain and
offset, per output), so lane mismatch reaches the loop as detector noise; the sample
returned is x_k, the ADC input, which the receiver's converter takes through the same
gain and offset and its quantizer. Mode 3, the bang-bang (Alexander) detector with 2x
sampling: the edge sample half a UI before output k is taken by lane l's edge sampler,
which shares the lane's clock (its skew, trim and instant offsets ``d_k``), its
track-and-hold (table set) and its gain and offset; its own noise ``we``; the output is
:mod:`serdes.kernels.cdr`'s on the sign of ``g_k x_e + o_k``. With one table set, gains
1 and offsets 0 the arithmetic is that of :func:`serdes.kernels.cdr.cdr_sampler`
(modes 0-3).
"""

import numpy as np
from numba import njit

from serdes.errors import ConfigError
from serdes.kernels import args


@njit(cache=True, fastmath=True)
def _edge_sample(a, tau, table, dtable, d2table, q, c, k, hist, big_p, n_ui, per_sym, xv, xs):
    # the sample at offset c (UI from the peak) of output k from one table set, as the
    # data sample (the arithmetic of serdes.kernels.cdr._edge_sample: numba's cache keys
    # a kernel on its own module's source, so the helper is not imported)
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
def _cdr_ti_sampler(a, tau, drx, w, tables, dtables, d2tables, lane0, q, lookahead, levels,
                    h0, mode, bias, kp, ki, steps, first, state, ring, gd, od, x_out, ph_out,
                    e_out, xv, xs, we):
    n_tab, rows, n_ui = tables.shape
    n = x_out.shape[0]
    big_p = lookahead
    hist = n_ui - 1 + 2 * big_p
    per_sym = dtables.shape[1] > 0
    aggr = xv.shape[0] > 0
    n_lev = levels.shape[0]
    phi = state[0]
    integ = state[1]
    x_prev = state[2]
    d_prev = state[3]
    pos = int(state[4])
    n_ring = ring.shape[0]
    lt = lane0 % n_tab
    for k in range(n):
        phq = np.floor(phi * steps + 0.5) / steps
        ks = k + hist - big_p
        c = phq + drx[k] - tau[ks]
        # past the slip window the sample is the window's edge (as kernels/cdr.py)
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
        t0 = tables[lt, r]
        t1 = tables[lt, r + 1]
        aw = a[base:base + n_ui]
        for i in range(n_ui):
            v = aw[i]
            s0 += v * t0[i]
            s1 += v * t1[i]
        x = (1.0 - t) * s0 + t * s1 + w[k]
        if per_sym:
            rn = r + 1 if t >= 0.5 else r
            dt = dtables[lt, rn]
            d2 = d2tables[lt, rn]
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
        lt_k = lt
        lt += 1
        if lt == n_tab:
            lt = 0
        # the detector sees the lane's converted sample (its gain and offset)
        xl = gd[k] * x + od[k]
        y = xl / h0
        d = levels[0]
        for i in range(1, n_lev):
            if y > 0.5 * (levels[i - 1] + levels[i]):
                d = levels[i]
        e_mm = (xl * d_prev - x_prev * d) / h0
        if mode == 3:
            # Alexander: lane l's edge sample half a UI before this one (the lane's
            # table set, skew and gain/offset), between d_prev and d
            xe = _edge_sample(a, tau, tables[lt_k], dtables[lt_k], d2tables[lt_k], q,
                              c - 0.5, k, hist, big_p, n_ui, per_sym, xv, xs) + we[k]
            xe = gd[k] * xe + od[k]
            se = 1.0 if xe > 0 else (-1.0 if xe < 0 else 0.0)
            e_mm = -0.5 * se * (d - d_prev) if d != d_prev else 0.0
        e_out[k] = e_mm
        x_prev = xl
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


def cdr_ti_sampler(a, tau, drx, w, tables, dtables, d2tables, lane0, q, lookahead, levels, h0,
                   mode, bias, kp, ki, steps, first, state, ring, gd, od, xv=None, xs=None,
                   we=None):
    """Samples, sampling phases and raw detector outputs (of the lanes' converted samples)
    of one chunk; the arguments of :func:`serdes.kernels.cdr.cdr_sampler` (modes 0-3), with
    ``tables``/``dtables``/``d2tables`` (L, Q + 3, n_ui) table sets (the derivative ones
    may have 0 rows), ``lane0`` the table set of output 0 (mod L), ``drx`` every offset
    of the instant but the recovered phase and the TX jitter, and ``gd``/``od`` the
    detector's gain and offset per output. Returns (x, phase, e_mm)."""
    tables = args.array("tables", tables, ndim=3)
    n_tab, _, n_ui = tables.shape
    if n_tab < 1:
        raise ConfigError("tables: needs at least one table set")
    dtables = args.array("dtables", dtables, ndim=3)
    d2tables = args.array("d2tables", d2tables, ndim=3)
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
    gd, od = args.array("gd", gd, finite=True), args.array("od", od, finite=True)
    if tau.shape[0] != a.shape[0] or drx.shape[0] != n or w.shape[0] != n \
            or gd.shape[0] != n or od.shape[0] != n:
        raise ConfigError(f"tau/drx/w/gd/od: expected {a.shape[0]}/{n}/{n}/{n}/{n} values, "
                          f"got {tau.shape[0]}/{drx.shape[0]}/{w.shape[0]}/{gd.shape[0]}/"
                          f"{od.shape[0]}")
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
    mode = args.integer("mode", mode, lo=0, hi=3)
    if we is None:
        we = np.zeros(n if mode == 3 else 0)
    else:
        we = args.array("we", we, finite=True)
        if we.shape[0] != n:
            raise ConfigError(f"we: expected {n} edge-noise values, got {we.shape[0]}")
    x, ph, e = np.empty(n), np.empty(n), np.empty(n)
    _cdr_ti_sampler(a, tau, drx, w, tables, dtables, d2tables,
                    args.integer("lane0", lane0, lo=0), args.real("q", q, positive=True),
                    lookahead, levels, args.real("h0", h0, positive=True),
                    mode, args.real("bias", bias),
                    args.real("kp", kp, nonneg=True), args.real("ki", ki, nonneg=True),
                    args.real("steps", steps, positive=True),
                    args.integer("first", first, lo=0), state, ring, gd, od, x, ph, e, xv, xs,
                    we)
    return x, ph, e
