"""Viterbi (MLSE) kernel for PAM-M with channel memory L (private; wrapper in
serdes.dsp.mlse).

Trellis: the state after symbol k is (a_k, a_{k-1}, .., a_{k-L+1}), encoded as
s = a_k + M a_{k-1} + .. + M^(L-1) a_{k-L+1}: S = M^L states, M branches into each. The
predecessors of s are s // M + t M^(L-1), t = a_{k-L} in 0..M-1, and the branch carries
the expected sample ``ev[s * M + t] = sum_i g_i level(a_{k-i})`` of the target g. Branch
metric (u_k - ev)^2; add-compare-select keeps the best predecessor (the first on ties);
metrics are reduced by their minimum every step.

Survivors by register exchange: each state's path is a uint64 holding its last
64 / log2(M) symbols, 2 bits per PAM4 symbol, newest in the low bits. The decision for
symbol k - D + 1 is taken at step k from the best state's path (fixed decision delay
D <= 32 for PAM4), so memory is bounded and the output does not depend on chunking.

The same step also applies, per sample, an optional reflection canceller (taps c at
lags beyond the target memory: on final decisions for lags >= D, on the tentative
decisions of the best survivor of the previous step for shorter lags) and the whitening
FIR (first tap 1) before the trellis,
and forms the slicer-equivalent value v_t = u_t - sum_{i>=1} g_i level(a^_{t-i}) of
each decided symbol, so the error u - g * a can be measured like a DFE's.
"""

import numpy as np
from numba import njit


@njit(cache=True)
def mlse_run(z, wh, zh, c, lags, ring, ubuf, ev, g, levels, m, n_states, bits, delay, pm,
             paths, st):
    """Whitening + RC + Viterbi over FFE outputs z; returns (decisions, v).

    wh       whitening FIR, wh[0] = 1; zh the last len(wh) - 1 canceller outputs (newest
             first)
    c, lags  RC taps and lags (1 <= lags < len(ring)); ring[t & (len-1)] holds the
             level of final decision t; lags < delay read the best survivor's register
    ubuf     the last whitened samples, ubuf[t & (len-1)] = u_t (len >= delay)
    ev       expected branch samples (n_states * m), g the target, levels the PAM levels
    pm       path metrics (n_states), paths their survivor registers (uint64)
    st       int64 state [steps so far, best state after the last step]
    Output k is the decision (level index) of symbol st0 + k - delay + 1, and its v.
    """
    n = z.shape[0]
    nwh = wh.shape[0]
    nc = c.shape[0]
    ng = g.shape[0]
    rmask = ring.shape[0] - 1
    umask = ubuf.shape[0] - 1
    dec = np.empty(n, dtype=np.uint8)
    v_out = np.empty(n, dtype=np.float64)
    pm_new = np.empty(n_states, dtype=np.float64)
    paths_new = np.empty(n_states, dtype=np.uint64)
    stride = n_states // m  # M^(L-1)
    shift = np.uint64(bits)
    out_shift = np.uint64(bits * (delay - 1))
    sym_mask = np.uint64(m - 1)
    t_step = st[0]
    sprev = st[1]
    for k in range(n):
        # reflection canceller (final or tentative decisions), then the whitening FIR
        zc = z[k]
        for i in range(nc):
            lag = lags[i]
            if lag >= delay:
                zc -= c[i] * ring[(t_step - lag) & rmask]
            elif t_step - lag >= 0:
                sym = np.int64((paths[sprev] >> np.uint64(bits * (lag - 1))) & sym_mask)
                zc -= c[i] * levels[sym]
        u = zc
        for i in range(1, nwh):
            u += wh[i] * zh[i - 1]
        for i in range(nwh - 2, 0, -1):
            zh[i] = zh[i - 1]
        if nwh > 1:
            zh[0] = zc
        ubuf[t_step & umask] = u
        # add-compare-select (m is a power of two: rest = s >> bits, newest = s & (m-1))
        lo = np.inf
        sbest = 0
        for s in range(n_states):
            rest = s >> bits
            base = s * m
            best = np.inf
            arg = rest
            for t in range(m):
                sp = rest + t * stride
                dd = u - ev[base + t]
                metric = pm[sp] + dd * dd
                if metric < best:
                    best = metric
                    arg = sp
            pm_new[s] = best
            paths_new[s] = (paths[arg] << shift) | np.uint64(s & (m - 1))
            if best < lo:
                lo = best
                sbest = s
        for s in range(n_states):
            pm[s] = pm_new[s] - lo
            paths[s] = paths_new[s]
        # fixed-delay decision from the best survivor
        d = np.int64((paths[sbest] >> out_shift) & sym_mask)
        t_dec = t_step - delay + 1
        v = ubuf[t_dec & umask]
        for i in range(1, ng):
            v -= g[i] * ring[(t_dec - i) & rmask]
        if t_dec >= 0:  # before the first symbol the history stays 0
            ring[t_dec & rmask] = levels[d]
        dec[k] = d
        v_out[k] = v
        t_step += 1
        sprev = sbest
    st[0] = t_step
    st[1] = sprev
    return dec, v_out
