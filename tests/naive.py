"""Slow, obviously-right references for the numba kernels."""

import math

import numpy as np
from scipy import special


def fir_valid(x, taps):
    return np.convolve(x, taps, mode="valid")


def lagrange4(p, pos):
    """4-point Lagrange interpolation of p at one fractional index, zero outside."""
    i = int(np.floor(pos))
    t = pos - i
    xs = np.array([-1.0, 0.0, 1.0, 2.0])
    val = 0.0
    for a, xa in enumerate(xs):
        w = 1.0
        for b, xb in enumerate(xs):
            if a != b:
                w *= (t - xb) / (xa - xb)
        idx = i + int(xa)
        if 0 <= idx < len(p):
            val += w * p[idx]
    return val


def pulse_sum_jitter(a, p_fine, m, phase, offsets, n_ui):
    n = len(a) - n_ui + 1
    y = np.zeros(n)
    for k in range(n):
        for j in range(n_ui):
            y[k] += a[k + n_ui - 1 - j] * lagrange4(p_fine, phase + offsets[k] + j * m)
    return y


def upsample_pulse_sum(a, p_fine, m, n_ui):
    n = len(a) - n_ui + 1
    up = np.zeros(len(a) * m)
    up[::m] = a
    full = np.convolve(up, p_fine)
    return full[(n_ui - 1) * m:(n_ui - 1) * m + n * m]


def quantize(x, lsb, bits):
    codes = np.clip(np.floor(x / lsb), -(2 ** (bits - 1)), 2 ** (bits - 1) - 1)
    return (codes + 0.5) * lsb


def dfe_run(z, taps, levels, thresholds, hist):
    hist = list(hist)
    dec, vs = [], []
    for zk in z:
        v = zk - sum(t * h for t, h in zip(taps, hist))
        d = int(np.searchsorted(thresholds, v, side="left"))
        d = int(np.sum(v > thresholds))
        dec.append(d)
        vs.append(v)
        hist = [levels[d]] + hist[:-1] if len(taps) else hist
    return np.array(dec, dtype=np.uint8), np.array(vs), np.array(hist)


def ffe_dfe_lms(x, w, b, levels, thresholds, hist, ref, n_train, mu, b_limit):
    w, b, hist = w.copy(), b.copy(), list(hist)
    nw = len(w)
    dec, vs = [], []
    for k in range(len(x) - nw + 1):
        xs = x[k:k + nw][::-1]
        v = float(w @ xs) - float(b @ np.array(hist)) if len(b) else float(w @ xs)
        d = int(np.sum(v > thresholds))
        target = ref[k] if k < n_train else levels[d]
        e = v - target
        w = w - mu * e * xs
        if len(b):
            b = np.clip(b + mu * e * np.array(hist), -b_limit, b_limit)
            hist = [target] + hist[:-1]
        dec.append(d)
        vs.append(v)
    return np.array(dec, dtype=np.uint8), np.array(vs), w, b


def rc_reference(x, w, b, c, lags, ref, n_train, mu_w, mu_b, mu_c, b_limit, adapt_eq,
                 search, search_lo, span, search_start, search_n, levels, thresholds,
                 level_power):
    """FFE + DFE + RC written out plainly: the whole decision history in a list, the
    placement by a stable sort of |correlation|."""
    w, b, c, lags = w.copy(), b.copy(), c.copy(), list(lags)
    nw, nb = len(w), len(b)
    past = []  # levels fed back, decision n at past[n]
    corr = np.zeros(span + 1)
    n_acc = 0
    dec, vs = [], []

    def level(n):
        return past[n] if n >= 0 else 0.0

    for k in range(len(x) - nw + 1):
        cnt = len(past)
        xs = x[k:k + nw][::-1]
        hist = np.array([level(cnt - 1 - m) for m in range(nb)])
        v = float(w @ xs) - float(b @ hist)
        v -= sum(c[i] * level(cnt - lags[i]) for i in range(len(c)))
        d = int(np.sum(v > thresholds))
        target = ref[k] if k < n_train else levels[d]
        e = v - target
        if adapt_eq:
            w = w - mu_w * e * xs
            b = np.clip(b + mu_b * e * hist, -b_limit, b_limit)
        if search:
            if cnt >= search_start:
                for j in range(search_lo, span + 1):
                    corr[j] += e * level(cnt - j)
                n_acc += 1
                if n_acc == search_n:
                    cand = np.arange(search_lo, span + 1)
                    pick = np.sort(cand[np.argsort(-np.abs(corr[cand]), kind="stable")[:len(c)]])
                    lags = list(pick)
                    c = corr[pick] / (n_acc * level_power)
                    search = False
        elif mu_c > 0:
            c = c + mu_c * e * np.array([level(cnt - j) for j in lags])
        past.append(target)
        dec.append(d)
        vs.append(v)
    return np.array(dec, np.uint8), np.array(vs), w, b, np.asarray(c), np.array(lags)


def mlse_reference(z, wh, c, lags, g, levels, delay):
    """RC + whitening + Viterbi written out: states are tuples of the last L symbol
    indices (newest first), survivors are full Python lists; the decision for symbol
    k - delay + 1 is read from the best survivor at step k (ties: lowest state code).
    RC lags below the delay take symbol k - lag from the best survivor of step k - 1."""
    m, mem = len(levels), len(g) - 1
    states = [tuple((s // m ** i) % m for i in range(mem)) for s in range(m ** mem)]
    pm = {s: 0.0 for s in states}
    path = {s: [] for s in states}
    dec, vs, zc_all, u_all = [], [], [], []

    def lev(t):
        return levels[dec[t]] if 0 <= t < len(dec) and t >= 0 else 0.0

    best_path = []

    def rc_level(t, lag):
        if t < 0:
            return 0.0
        return lev(t) if lag >= delay else levels[best_path[t]]

    for k, zk in enumerate(z):
        zc = zk - sum(c[i] * rc_level(k - lags[i], lags[i]) for i in range(len(c)))
        zc_all.append(zc)
        u = sum(wh[i] * zc_all[k - i] for i in range(len(wh)) if k - i >= 0)
        u_all.append(u)
        new_pm, new_path = {}, {}
        for s in states:
            best, arg = np.inf, None
            for t in range(m):
                prev = s[1:] + (t,)
                seq = s + (t,)
                e = u - sum(g[i] * levels[seq[i]] for i in range(mem + 1))
                metric = pm[prev] + e * e
                if metric < best:
                    best, arg = metric, prev
            new_pm[s], new_path[s] = best, path[arg] + [s[0]]
        lo = min(new_pm.values())
        pm = {s: new_pm[s] - lo for s in states}
        path = new_path
        sbest = min(states, key=lambda s: (pm[s], sum(x * m ** i for i, x in enumerate(s))))
        best_path = path[sbest]
        t_dec = k - delay + 1
        d = path[sbest][t_dec] if t_dec >= 0 else 0
        v = (u_all[t_dec] - sum(g[i] * lev(t_dec - i) for i in range(1, mem + 1))
             if t_dec >= 0 else 0.0)
        if t_dec >= 0:
            dec.append(d)
        vs.append(v)
    out = [0] * (delay - 1) + dec
    return np.array(out[:len(z)], dtype=np.uint8), np.array(vs), pm, path


def isi_pmf(values, probs, delta):
    """Each component split linearly onto the grid, then np.convolve."""
    pmf, k0 = np.array([1.0]), 0
    for vr, pr in zip(values, probs):
        pts = [(v, p) for v, p in zip(vr, pr) if p > 0]
        fl = [int(np.floor(v / delta)) for v, _ in pts]
        lo, hi = min(fl), max(fl) + 1
        comp = np.zeros(hi - lo + 1)
        for (v, p), f in zip(pts, fl):
            t = v / delta - f
            comp[f - lo] += p * (1 - t)
            comp[f + 1 - lo] += p * t
        pmf = np.convolve(pmf, comp)
        k0 += lo
    nz = np.nonzero(pmf)[0]
    return pmf[nz[0]:nz[-1] + 1], k0 + nz[0]


def tail(pmf, k0, delta, y, sigma, upper, beta=0.0):
    """sum_n pmf[n] P(x_n + sigma (U + beta (U^2 - 1)) beyond y): both roots of the
    quadratic in U, no cut-offs."""
    x = (k0 + np.arange(pmf.shape[0])) * delta
    t = (np.asarray(y)[:, None] - x[None, :]) / sigma
    if beta == 0.0:
        q = special.ndtr(-t) if upper else special.ndtr(t)
    else:
        # U + beta (U^2 - 1) > t  <=>  beta U^2 + U - (beta + t) > 0: roots r1 < r2
        disc = 1.0 + 4.0 * beta * (t + beta)
        sq = np.sqrt(np.maximum(disc, 0.0))
        r1, r2 = np.sort(np.stack([(-1 - sq) / (2 * beta), (-1 + sq) / (2 * beta)]), axis=0)
        between = np.where(r1 > 0, special.ndtr(-r1) - special.ndtr(-r2),
                           special.ndtr(r2) - special.ndtr(r1))  # P(r1 < U < r2)
        outside = special.ndtr(r1) + special.ndtr(-r2)        # P(U < r1 or U > r2)
        none_in = disc <= 0                                    # the quadratic has one sign
        if beta > 0:    # N > sigma t outside the roots
            q = np.where(none_in, 1.0, outside) if upper else np.where(none_in, 0.0, between)
        else:           # N > sigma t between the roots
            q = np.where(none_in, 0.0, between) if upper else np.where(none_in, 1.0, outside)
    return q @ pmf


def slow_lfsr(taps, cells, n):
    """Textbook Fibonacci LFSR: cells[k-1] holds y[i-k]; output = XOR of tapped cells."""
    cells = list(cells)
    out = []
    for _ in range(n):
        b = 0
        for t in taps:
            b ^= cells[t - 1]
        out.append(b)
        cells = [b] + cells[:-1]
    return out, cells


def cells_from_state(state, order):
    return [(state >> k) & 1 for k in range(order)]


def state_from_cells(cells):
    return sum(b << k for k, b in enumerate(cells))


def slow_precode(g, m, prev):
    out = []
    for x in g:
        prev = (int(x) - prev) % m
        out.append(prev)
    return out, prev


def slow_unprecode(p, m, prev):
    out = []
    for x in p:
        out.append((int(x) + prev) % m)
        prev = int(x)
    return out, prev


def viterbi_numpy(u, g, delay, levels):
    """PAM4 register-exchange Viterbi (fixed delay, no whitening or RC) with each step's
    add-compare-select vectorized over the states in NumPy (also the speed baseline of
    benchmarks/bench_mlse.py)."""
    m = levels.shape[0]
    mem = len(g) - 1
    n_states = m ** (len(g) - 1)
    stride = n_states // m
    s = np.arange(n_states)
    prev = (s // m)[:, None] + np.arange(m)[None, :] * stride
    # ev[s, t]: sum_i g_i level(a_{k-i}) for state s = (a_k, .., a_{k-L+1}) and a_{k-L} = t
    ev = np.array([[sum(g[i] * levels[([(s_ // m ** j) % m for j in range(mem)] + [t])[i]]
                        for i in range(mem + 1)) for t in range(m)]
                   for s_ in range(n_states)])
    x = (s % m).astype(np.uint64)
    pm = np.zeros(n_states)
    paths = np.zeros(n_states, dtype=np.uint64)
    out = np.empty(u.shape[0], dtype=np.uint8)
    two, oshift, three = np.uint64(2), np.uint64(2 * (delay - 1)), np.uint64(3)
    for k in range(u.shape[0]):
        metric = pm[prev] + (u[k] - ev) ** 2
        j = np.argmin(metric, axis=1)
        pm = metric[s, j]
        pm = pm - pm.min()
        paths = (paths[prev[s, j]] << two) | x
        out[k] = (paths[int(np.argmin(pm))] >> oshift) & three
    return out


def pulse_sum_taylor(a, taps, seg, delta):
    """Taylor-2 sum straight from its definition (taps reversed, one segment at a time)."""
    n_ui = taps.shape[2]
    y = np.zeros(len(delta))
    for s in range(taps.shape[0]):
        for k in range(seg[s], seg[s + 1]):
            win = a[k:k + n_ui]
            a0, a1, a2 = (float(np.dot(win, taps[s, r])) for r in range(3))
            y[k] = a0 + delta[k] * a1 + delta[k] ** 2 / 2 * a2
    return y


def xtalk_add(out, b, start, k0, seg, shift, taps, dtaps, off):
    """out[n] += sum_i b[k0 + n - shift_g - start - i] (taps[g, i] + off[n] dtaps[g, i])."""
    out = out.copy()
    for g in range(len(seg) - 1):
        for n in range(seg[g], seg[g + 1]):
            for i in range(taps.shape[1]):
                v = b[k0 + n - shift[g] - start - i]
                out[n] += v * taps[g, i] + (v * off[n] * dtaps[g, i] if len(dtaps) else 0.0)
    return out


def cdr_sampler(a, tau, drx, w, table, dtable, d2table, q, big_p, levels, h0, mode, bias, kp, ki,
                steps, first, phi0, latency, agg_v=None, agg_s=None, we=None):
    """The CDR sampler loop written out plainly (one sample at a time, a list as the
    latency line); ``agg_v``/``agg_s``: aggressor sum and slope at nominal instants s - P ..
    (added as agg_v + f agg_s at the sample's shift); mode 3: the Alexander detector on
    the sample at c - 1/2 plus ``we``. Returns (x, phase, raw detector output)."""
    n_ui = table.shape[1]
    hist = n_ui - 1 + 2 * big_p
    n = len(a) - hist
    phi, integ, x_prev, d_prev = phi0, 0.0, 0.0, 0.0
    line = [0.0] * latency
    xs, phs, es = [], [], []
    def sample(k, c):
        ks = k + hist - big_p
        shift = min(max(math.floor(c + 0.5), -big_p), big_p)
        f = c - shift
        u = (f + 0.5) * q + 1.0
        r = min(max(math.floor(u), 0), table.shape[0] - 2)
        t = u - r
        base = k + big_p + shift
        win = np.asarray(a[base:base + n_ui])
        x = (1 - t) * float(win @ table[r]) + t * float(win @ table[r + 1])
        if dtable.shape[0]:
            rn = r + 1 if t >= 0.5 else r
            dl = tau[ks] - np.asarray(tau[base:base + n_ui])
            x += float(np.sum(win * dl * (dtable[rn] + dl / 2 * d2table[rn])))
        if agg_v is not None:
            x += agg_v[k + big_p + shift] + f * agg_s[k + big_p + shift]
        return x

    for k in range(n):
        phq = math.floor(phi * steps + 0.5) / steps
        c = phq + drx[k] - tau[k + hist - big_p]
        c = min(max(c, -big_p - 0.5), big_p + 0.5)  # past the slip window: its edge
        x = sample(k, c) + w[k]
        d = levels[int(np.argmin(np.abs(levels - x / h0)))]
        e_mm = (x * d_prev - x_prev * d) / h0
        if mode == 3:
            edge = sample(k, c - 0.5) + (we[k] if we is not None else 0.0)
            e_mm = -0.5 * float(np.sign(edge)) * (d - d_prev)
        xs.append(x)
        phs.append(phq)
        es.append(e_mm)
        x_prev, d_prev = x, d
        if k < first:
            continue
        e = e_mm - bias
        if mode == 2:
            e = float(np.sign(e))
        line.append(e)
        e_del = line.pop(0)
        integ += ki * e_del
        phi += kp * e_del + integ
    return np.array(xs), np.array(phs), np.array(es)


def lane_convert(x, noise, gains, offsets, lane0, lsb, bits):
    """Per-lane gain and offset, noise, then the mid-rise quantizer (time-interleaved ADC)."""
    lane = (lane0 + np.arange(len(x))) % len(gains)
    v = np.asarray(gains)[lane] * x + np.asarray(offsets)[lane]
    if len(noise):
        v = v + noise
    return quantize(v, lsb, bits) if bits else v


def lane_pulse_sum(a, p_fines, m, phase, offsets, n_ui, lane0):
    """The jittered pulse sum with lane (lane0 + k) mod N's own fine pulse, one sample at
    a time (4-point Lagrange of each tap)."""
    y = np.zeros(len(offsets))
    for k in range(len(offsets)):
        p = p_fines[(lane0 + k) % len(p_fines)]
        y[k] = sum(a[k + n_ui - 1 - j] * lagrange4(p, phase + offsets[k] + j * m)
                   for j in range(n_ui))
    return y



class WaveformDirect:
    """The waveform front end's ADC samples the direct way: the whole fine-grid waveform
    (``fe.waveform``: signal and noise) formed chunk by chunk and interpolated at the
    jittered instants (wraps a fresh front end ``fe``; calls in order)."""

    def __init__(self, fe):
        self.fe, self.latency = fe, fe.latency
        self.tail = np.zeros(2 * fe.latency * fe.m)

    def __call__(self, a, k0):
        from serdes.kernels.fir import interp_cubic

        fe, n = self.fe, len(a)
        w_ext = np.concatenate([self.tail, fe.waveform(a, k0)])
        self.tail = w_ext[len(w_ext) - len(self.tail):].copy()
        pos = (np.arange(n, dtype=np.float64) + fe.latency) * fe.m + fe.pulse.phase
        if fe.jitter.active:
            pos += fe.jitter.offsets_ui(k0 - fe.latency, n) * fe.m
            x = interp_cubic(w_ext, pos)
        else:
            x = w_ext[pos.astype(np.int64)]
        if fe.crosstalk is not None:
            x += fe.crosstalk(k0 - fe.latency, n)
        return x


# ---- statistical engine, jitter quadrature rows (serdes/kernels/stat_rows.py)
def row_responses(fine, phase, m, n_ui, offsets_ui, w, rj_ui=0.0, gh_x=(0.0,), gh_w=(1.0,)):
    """Every tap's pulse re-sampled on its own (lagrange4), averaged over the nodes with
    NumPy; f = sum_i w_i h_i shifted by i."""
    offsets_ui = np.atleast_2d(offsets_ui)
    R, n = offsets_ui.shape
    f = np.zeros((R, n + n_ui - 1))
    jvar = np.zeros((R, n, n_ui))
    j = np.arange(n_ui)
    for r in range(R):
        for i in range(n):
            o = offsets_ui[r, i]
            nodes = [o + rj_ui * x for x in gh_x] if rj_ui > 0 else [o]
            h = np.array([[lagrange4(fine, phase + on * m + m * jj) for jj in j] for on in nodes])
            wq = np.asarray(gh_w) if rj_ui > 0 else np.ones(1)
            pbar = wq @ h
            jvar[r, i] = wq @ (h - pbar) ** 2
            f[r, i:i + n_ui] += w[i] * pbar
    return f, jvar


def rj_classes(a, idx, dev, lo, hi, gh_w, w2, w3, d, m, fracs, nc):
    """The random-jitter class sums with np.convolve, np.quantile and np.bincount (the
    steps of serdes.engines.stat.rj before they became one kernel)."""
    L = dev.shape[1]
    N = a.shape[0] - L + 1
    var = np.zeros(N)
    m3 = np.zeros(N)
    for q in range(dev.shape[0]):
        y = np.convolve(a, dev[q, lo:hi])[L - 1 - lo: L - 1 - lo + N]
        var += gh_w[q] * y * y
        m3 += gh_w[q] * y * y * y
    v = np.convolve(var, w2, mode="valid")
    k3 = np.convolve(m3, w3, mode="valid")
    lv = idx[np.arange(L + w2.shape[0] - 2, a.shape[0]) - d]
    counts = np.bincount(lv, minlength=m)
    cls = np.zeros(v.shape[0], dtype=np.int64)
    for i in range(m):
        sel = lv == i
        q = np.quantile(v[sel], fracs)
        cls[sel] = np.sum(v[sel][:, None] < q[None, :], axis=1)
    group = (lv * nc + cls) * 2 + (k3 < 0)
    G = m * nc * 2
    return (np.bincount(group, minlength=G).astype(np.float64),
            np.bincount(group, weights=v, minlength=G),
            np.bincount(group, weights=v * v, minlength=G),
            np.bincount(group, weights=k3, minlength=G), counts)


def com_mlsd_der(p_an, ystep, a_s, b, rho, levels, rel_tol=1e-4):
    """DER_MLSD of 802.3dj eq. 178A-50 written out: u from the 178A-51 list, u^T V u by a
    double loop, each scaled PMF by the overlap of every source bin (mass uniform over the
    bin) with every target bin, the PMFs of sum_i u_i n_i by direct np.convolve, the CDF
    at -x as the sum of the bins up to the first grid point at or above -x."""
    n = len(p_an)
    c = n // 2

    def scaled(a):
        out = np.zeros(n)
        if a == 0:
            out[c] = 1.0
            return out
        for k in range(n):
            if p_an[k] == 0.0:
                continue
            lo, hi = (k - c - 0.5) * a, (k - c + 0.5) * a     # where bin k's mass goes
            for t in range(max(0, int(math.floor(lo + 0.5)) + c - 1),
                           min(n, int(math.ceil(hi + 0.5)) + c + 1)):
                ov = min(hi, t - c + 0.5) - max(lo, t - c - 0.5)
                if ov > 0:
                    out[t] += p_an[k] * ov / (hi - lo)
        return out / out.sum()

    p_b, p_1mb = scaled(b), scaled(1.0 - b)
    pj = np.convolve(p_an, p_b)                  # centred, length 2n-1
    der = 0.0
    for j in range(1, len(rho)):
        u = [1.0] + [(-1) ** (i - 1) * (1 - b) for i in range(2, j + 1)] + [(-1) ** (j + 1) * b]
        uu = sum(x * x for x in u)
        uvu = 0.0
        for i1 in range(len(u)):
            for i2 in range(len(u)):
                uvu += u[i1] * u[i2] * rho[abs(i1 - i2)]
        x = a_s * uu ** 1.5 / math.sqrt(uvu)
        cc = len(pj) // 2
        k = int(math.ceil(-x / ystep - 1e-9)) + cc
        cdf = 0.0 if k < 0 else (1.0 if k >= len(pj) else float(np.sum(pj[:k + 1]) / np.sum(pj)))
        term = ((levels - 1) / levels) ** (j - 1) * cdf
        der += term
        if term <= rel_tol * der:
            return der, j
        pj = np.convolve(pj, p_1mb)
    return der, len(rho) - 1


def xtalk_tx_jitter(pulse, values, tau, n, block=1024):
    """An aggressor's first-order TX-jitter term at the victim's samples 0..n-1, one sample
    and one tap at a time: ``-sum_i tau_j b_j slope_i(phi)`` with j = k - s - i, where phi
    and s are the fractional and whole UIs of the aggressor's phase at the centre of the
    1024-UI block of sample k (fixed without ppm); ``values`` and ``tau`` are its symbol
    values and TX jitter from UI 0 (none before)."""
    agg = pulse.agg
    out = np.zeros(n)
    cache = {}
    for k in range(n):
        b = k // block
        if b not in cache:
            phi = agg.phase_ui + (agg.ppm * 1e-6 * (b * block + block / 2.0) if agg.ppm else 0.0)
            s = int(np.floor(phi))
            cache[b] = (s, pulse.slope(phi - s))
        s, d = cache[b]
        acc = 0.0
        for i in range(d.shape[0]):
            j = k - s - i
            if 0 <= j < len(values):
                acc += tau[j] * values[j] * d[i]
        out[k] = -acc
    return out


def com_float_banks(h, cur, nbf, nbg, bmaxg):
    """Floating DFE group positions of the IEEE COM code (``findbankloc``), the slow literal
    way: MATLAB's 1-based indices kept (``nd[i - 1]`` is its ndiff(i)), a stable descending
    sort redone whenever the code sorts, ndiff growing with zeros when assigned beyond its
    end. ``h``: post-cursors of the floating span; returns the 0-based tap positions."""
    a = [abs(float(x)) for x in h]
    ln = len(a)
    b = [max(0.0, x - bmaxg * cur) for x in a]
    nd = [sum(a[j + i] ** 2 - b[j + i] ** 2 for i in range(nbf)) for j in range(ln - nbf + 1)]

    def zero(i):                      # ndiff(i) = 0, 1-based
        while len(nd) < i:
            nd.append(0.0)
        nd[i - 1] = 0.0

    def vsort():                      # [~, val_sort] = sort(ndiff, 'descend'), 1-based
        return [i + 1 for i in sorted(range(len(nd)), key=lambda i: -nd[i])]

    def bad_of(s):
        lo, hi = s - nbf + 1, s - 1
        return [] if hi <= 0 else list(range(max(lo, 1), hi + 1))

    idx = [0] * (nbf * nbg)
    ordered = list(range(1, (nbg - 1) * nbf + 2))
    nxt = 0
    for k in range(1, nbg + 1):
        val_sort = vsort()
        if k == 1 and sorted(val_sort[:len(ordered)]) == ordered:
            idx = list(range(1, nbg * nbf + 1))
            break
        if nxt > 0:
            bank = list(range(nxt, nxt + nbf))
            idx[nbf * (k - 1):nbf * k] = bank
            nxt = 0
            for i in bank:
                zero(i)
            for i in bad_of(bank[0]):
                zero(i)
            continue
        bank = list(range(val_sort[0], val_sort[0] + nbf))
        if k == nbg:
            idx[nbf * (k - 1):nbf * k] = bank
            break
        again, first = True, True
        badv = []
        while again:
            again = False
            badv = [v for v in bad_of(bank[0]) if v not in idx]
            good = bank[0] - nbf
            if badv:
                if not first:
                    val_sort = vsort()
                first = False
                check = badv + bank
                pos = [val_sort.index(v) + 1 for v in badv]
                found = False
                ii = 0
                for ii in range(1, len(val_sort) + 1):
                    if val_sort[ii - 1] == good:
                        found = True
                        break
                    if val_sort[ii - 1] not in check:
                        break
                if not found and min(pos) < ii:
                    again = True
                    zero(bank[0])
                    bank = list(range(val_sort[1], val_sort[1] + nbf))
                if found:
                    nxt = good
        for i in bank:
            zero(i)
        idx[nbf * (k - 1):nbf * k] = bank
        for i in badv:
            zero(i)
    return sorted({i - 1 for i in idx if 1 <= i <= ln})


def cdr_phase_loop(x, noise, s_tab, v_tab, x0, step, kp, ki, steps, latency, phi0=0.0):
    """The phase-domain clock-recovery loop (serdes.kernels.cdr_phase), one UI at a
    time: detector = S(c) + sqrt(V(c)) n (tables held at their ends), its output
    ``latency`` UI late into the PI filter, phi rounded to 1 / steps (steps <= 0: not)."""
    grid = x0 + step * np.arange(len(s_tab))
    phi, integ = phi0, 0.0
    late = [0.0] * latency
    out = []
    for k in range(len(x)):
        phq = np.floor(phi * steps + 0.5) / steps if steps > 0 else phi
        c = phq - x[k]
        out.append(c)
        e = np.interp(c, grid, s_tab)
        if len(noise):
            e += np.sqrt(np.interp(c, grid, v_tab)) * noise[k]
        late.append(e)
        e_del = late.pop(0)
        integ += ki * e_del
        phi += kp * e_del + integ
    return np.array(out)


def v_qc_grid(h, sigma, levels, p_qc, npts=2001):
    """COM quantizer clipping amplitude (802.3dj 178A-30) the slow obvious way: the PMF
    of sum h_n x_n (x_n uniform on the levels) built by shifting and adding on a grid
    over +-(sum |h| + 10 sigma) (samples within half a step dropped, values rounded),
    an FFT convolution with the sampled Gaussian, and the first grid point whose CDF
    reaches p_qc / 2 (its minus)."""
    from scipy.signal import fftconvolve

    h = np.asarray(h, dtype=float)
    npts |= 1
    step = 2 * (np.abs(h).sum() + 10 * sigma) / (npts - 1)
    y = (np.arange(npts) - npts // 2) * step
    pmf = np.zeros(npts)
    pmf[npts // 2] = 1.0
    lv = 2.0 * np.arange(levels) / (levels - 1) - 1.0
    for x in h[np.abs(h) > step / 2]:
        out = np.zeros(npts)
        for s in np.round(x * lv / step).astype(int):
            out += np.roll(pmf, s)          # support stays inside the grid: no wrap
        pmf = out / levels
    if sigma > 0:
        pmf = fftconvolve(pmf, np.exp(-y ** 2 / (2 * sigma ** 2)), mode="same")
    cdf = np.cumsum(np.clip(pmf, 0, None))
    cdf /= cdf[-1]
    return float(-y[np.argmax(cdf >= p_qc / 2)]), step


def com_rxffe_float_place(av, rn, hr, nfix, nmax, nwg, nwf, dw, wmin, wmax, bmin, bmax,
                          var_x, rlm, levels):
    """Floating RX FFE groups of 802.3dj COM, written literally after the IEEE code's
    FOM_rxffe_floating_taps / MMSE_FOM (1-based start locations, the list of valid
    starts shrunk by position then by value, MATLAB's first-maximum rule) with the code's
    bordered KKT system [R -Hb'; -Hb I] solved densely. av, rn: autocorrelations over the
    span (lags 0 .. nmax - 1), hr: cursor and DFE rows over the span. Returns (tap
    positions, 0-based, ascending; FOM dB)."""
    nb = hr.shape[0] - 1

    def fom_of(cols):
        cols = np.asarray(cols)
        n = len(cols)
        R = np.array([[av[abs(i - j)] + rn[abs(i - j)] / var_x for j in cols] for i in cols])
        h0 = hr[0, cols]
        Hb = hr[1:, cols].reshape(nb, n)
        A = np.block([[R, -Hb.T], [-Hb, np.eye(nb)]])
        C = np.concatenate((h0, np.zeros(nb)))
        Z = np.linalg.solve(A, C)
        s_inv = C @ Z
        w = Z[:n] / s_inv
        b = Z[n:] / s_inv
        blim = np.minimum(bmax, np.maximum(bmin, b))
        if nb > 0 and np.any(b != blim):
            A2 = np.block([[R, -h0[:, None]], [h0[None, :], np.zeros((1, 1))]])
            w = np.linalg.solve(A2, np.concatenate((h0 + Hb.T @ blim, [1.0])))[:n]
        wlim = np.minimum(wmax[cols] * w[dw], np.maximum(wmin[cols] * w[dw], w))
        if np.any(w != wlim):
            wlim = wlim / (h0 @ wlim)
            if nb > 0:
                blim = np.minimum(bmax, np.maximum(bmin, Hb @ wlim))
        w, b = wlim, blim
        e2 = var_x * (w @ R @ w + 1 + b @ b - 2 * w @ h0 - 2 * w @ Hb.T @ b)
        return 20 * math.log10(rlm / (levels - 1) / math.sqrt(e2))

    valid = list(range(1, nmax - nfix - nwf + 2))       # 1-based start locations
    all_idx = []
    best = None
    for _ in range(nwg):
        if not valid:
            break
        foms = []
        for loc in valid:
            new = sorted(all_idx + list(range(loc, loc + nwf)))
            foms.append(fom_of(list(range(nfix)) + [nfix - 1 + q for q in new]))
        k = max(range(len(foms)), key=lambda i: (foms[i], -i))   # first of the maxima
        best = foms[k]
        start = valid[k]
        all_idx += list(range(start, start + nwf))
        del valid[k:k + nwf]
        for bad in range(max(start - nwf + 1, 1), start):
            if bad in valid:
                valid.remove(bad)
    cols = list(range(nfix)) + [nfix - 1 + q for q in sorted(all_idx)]
    return cols, (fom_of(cols) if best is None else best)


def ti_skewed_samples(a, lane_taps, k0):
    """Interleaved lanes sampled at their own instants, one dot product per sample:
    y_k = sum_j P_l[j] a_{k - j}, l = k mod N, for k = k0 .. k0 + n - 1, where ``a``
    holds the symbols a_{k0 - J + 1} .. a_{k0 + n - 1} (J = lane_taps.shape[1]) and
    ``lane_taps[l]`` is the pulse sampled at lane l's instant."""
    lanes, span = lane_taps.shape
    win = np.lib.stride_tricks.sliding_window_view(a, span)[:, ::-1]   # row i: a_{k-j}
    rows = lane_taps[(k0 + np.arange(win.shape[0])) % lanes]
    return np.sum(win * rows, axis=1)


def rj_slicer_ber(h_rows, a, w, d, levels, thresholds, bit_errors, sigma, batches=32,
                  dfe=()):
    """BER of a slicer fed ``z_k = sum_i w_i x_{k-i}``, ``x_m = sum_n a_{m-n} h_m[n]``
    (``h_rows[m]``: the pulse sampled at ADC sample m's own jittered instant) plus
    Gaussian noise of std ``sigma[level]``, the decided level of z_k being a_{k-d},
    one dot product at a time; ``dfe``: taps b_j subtracting b_j a_{k-d-j} (correct
    decisions); returns (BER, its batch-means std error)."""
    N, L = h_rows.shape
    x = np.zeros(N)
    for m in range(L - 1, N):
        x[m] = float(a[m - L + 1:m + 1][::-1] @ h_rows[m])
    n = len(w)
    ks = np.arange(L + n - 2, N)
    z = np.array([float(x[k - n + 1:k + 1][::-1] @ w) for k in ks])
    for j, bj in enumerate(dfe, start=1):
        z -= bj * a[ks - d - j]
    lev = np.searchsorted(levels, a[ks - d])
    bits = 1 if len(levels) == 2 else 2
    edges = np.concatenate([[-np.inf], thresholds, [np.inf]])
    s = sigma[lev]
    # P(decide j) for every sample, from the normal CDF at the decision edges
    cdf = special.ndtr((edges[None, :] - z[:, None]) / s[:, None])
    pj = np.diff(cdf, axis=1)
    per = (pj * bit_errors[lev]).sum(axis=1) / bits
    b = per[: per.size // batches * batches].reshape(batches, -1).mean(axis=1)
    return float(per.mean()), float(b.std(ddof=1) / np.sqrt(batches))


# the random-jitter classes joint with the ISI (serdes.kernels.stat_joint), in NumPy:
# a stable sort of all samples by cell, then V from the largest; the constants are
# serdes.engines.stat.rj's ISI_QUANTILES, MIN_CLASS, MIN_BIN
def _rj_joint_cell(vs: np.ndarray, ks: np.ndarray, tail_edges, K: int, MIN_CLASS=8):
    """(var, weights, k3) of length K (zero-padded) for the V samples of one cell,
    sorted from the largest (ties in sample order), and their K3: classes by rank from
    the top at ``tail_edges`` fractions, a class with fewer than MIN_CLASS samples
    merged into the next; two points per class (mean -+ std)."""
    n = vs.shape[0]
    bounds = [0]
    for f in tail_edges[1:-1]:
        c = int(round(f * n))
        if c - bounds[-1] >= MIN_CLASS and n - c >= MIN_CLASS:
            bounds.append(c)
    bounds.append(n)
    out = np.zeros((3, K))
    for j, (s, e) in enumerate(zip(bounds[:-1], bounds[1:])):
        seg = vs[s:e]
        mu = float(seg.mean())
        sd = float(seg.std())
        out[0, 2 * j:2 * j + 2] = (mu - sd, mu + sd)
        out[1, 2 * j:2 * j + 2] = 0.5 * (e - s) / n
        out[2, 2 * j:2 * j + 2] = float(ks[s:e].mean())
    return out


def rj_joint_classes(v, k3, lev, x, m: int, tail_edges,
                     ISI_QUANTILES=(1e-3, 1e-2, 0.05, 0.25, 0.75, 0.95, 0.99, 0.999),
                     MIN_CLASS=8, MIN_BIN=16):
    """(edges, var, weights, k3): the ISI bin edges (B - 1) and per bin and level the V
    classes (B, m, K), rows of weights summing to 1, from the samples V, K3 (already
    scaled), their decided level index and their ISI value x. Within each (bin, level)
    the classes are tail ranks of the cell's own V (:func:`_rj_joint_cell`); a bin with fewer
    than MIN_BIN samples of a level takes the classes of the next bin inward."""
    edges = np.quantile(x, ISI_QUANTILES)
    b = np.searchsorted(edges, x, side="right")
    B = edges.shape[0] + 1
    K = 2 * (len(tail_edges) - 1)
    out = np.zeros((3, B, m, K))
    centre = int(np.searchsorted(np.asarray(ISI_QUANTILES), 0.5))
    order = sorted(range(B), key=lambda i: (abs(i - centre + 0.5), i))
    cell = lev.astype(np.int64) * B + b
    o = np.argsort(-v, kind="stable")              # by cell, then V from the largest
    o = o[np.argsort(cell[o], kind="stable")]
    start = np.concatenate([[0], np.cumsum(np.bincount(cell, minlength=m * B))])
    vo, ko = v[o], k3[o]
    for i in range(m):
        for bi in order:
            s, e = start[i * B + bi], start[i * B + bi + 1]
            if e - s < MIN_BIN:
                inner = bi + 1 if bi < centre else bi - 1
                out[:, bi, i] = out[:, inner, i]
                continue
            out[:, bi, i] = _rj_joint_cell(vo[s:e], ko[s:e], tail_edges, K, MIN_CLASS)
    return edges, out[0], out[1], out[2]


def merge_close(sigma, beta, weights, rel=1e-3):
    """Merge the components of each level whose sigma differ by less than rel
    relative and beta by less than rel (variance-weighted, weights added): the
    tail at z changes by ~ (z^2 rel)^2 / 8, below 1e-3 to z = 9. Returns arrays
    padded with zero weights."""
    m, K = sigma.shape
    out_s, out_b, out_w = np.ones((m, K)), np.zeros((m, K)), np.zeros((m, K))
    for i in range(m):
        o = np.argsort(sigma[i])
        c = -1
        ref_s = ref_b = None
        for k in o:
            if weights[i, k] <= 0:
                continue
            if (ref_s is not None and sigma[i, k] <= ref_s * (1 + rel)
                    and abs(beta[i, k] - ref_b) <= rel):
                w0, w1 = out_w[i, c], weights[i, k]
                out_s[i, c] = np.sqrt((w0 * out_s[i, c] ** 2 + w1 * sigma[i, k] ** 2)
                                      / (w0 + w1))
                b0, b1 = out_b[i, c], beta[i, k]
                out_b[i, c] = np.clip((w0 * b0 + w1 * b1) / (w0 + w1), min(b0, b1), max(b0, b1))
                out_w[i, c] = w0 + w1
                continue
            c += 1
            out_s[i, c], out_b[i, c], out_w[i, c] = sigma[i, k], beta[i, k], weights[i, k]
            ref_s, ref_b = sigma[i, k], beta[i, k]
    return out_s, out_b, out_w
