"""Viterbi (MLSE) kernel for PAM-M with channel memory L: private ``_mlse_run`` behind the
checking wrapper ``mlse_run`` (used by serdes.dsp.mlse).

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

from typing import NamedTuple

import numpy as np
from numba import njit

from serdes.errors import ConfigError
from serdes.kernels import args


class Trellis(NamedTuple):
    """The fixed description of the detector.

    wh       whitening FIR, wh[0] = 1
    c, lags  RC taps and lags (int64, 1 <= lags < len of the decision ring)
    ev       expected branch samples (n_states * m), g the target, levels the PAM levels
    m, n_states, bits  levels, states (m ** memory), bits per symbol (log2 m)
    delay    fixed decision delay (traceback), 1..64 // bits
    """

    wh: np.ndarray
    c: np.ndarray
    lags: np.ndarray
    ev: np.ndarray
    g: np.ndarray
    levels: np.ndarray
    m: int
    n_states: int
    bits: int
    delay: int


class MlseState(NamedTuple):
    """What the detector carries from one call to the next (updated in place).

    zh       the last len(wh) - 1 canceller outputs (newest first)
    ring     ring[t & (len-1)] holds the level of final decision t
    ubuf     the last whitened samples, ubuf[t & (len-1)] = u_t (len >= delay)
    pm       path metrics (n_states), paths their survivor registers (uint64)
    st       int64 [steps so far, best state after the last step]
    """

    zh: np.ndarray
    ring: np.ndarray
    ubuf: np.ndarray
    pm: np.ndarray
    paths: np.ndarray
    st: np.ndarray


@njit(cache=True)
def _mlse_run(z, tr, s_):
    """Whitening + RC + Viterbi over FFE outputs z; returns (decisions, v).

    tr a Trellis, s_ an MlseState (updated in place). RC lags < delay read the best
    survivor's register. Output k is the decision (level index) of symbol
    st0 + k - delay + 1, and its v.
    """
    wh, c, lags, ev, g, levels = tr.wh, tr.c, tr.lags, tr.ev, tr.g, tr.levels
    m, n_states, bits, delay = tr.m, tr.n_states, tr.bits, tr.delay
    zh, ring, ubuf, pm, paths, st = s_.zh, s_.ring, s_.ubuf, s_.pm, s_.paths, s_.st
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


# ------------------------------------------------------------------ public wrapper
def _pow2(name: str, a: np.ndarray, at_least: int) -> None:
    n = a.shape[0]
    if n < at_least or n & (n - 1):
        raise ConfigError(f"{name}: length must be a power of two >= {at_least}, got {n}")


def check_trellis(tr: Trellis) -> Trellis:
    """tr with every array converted and checked, and the scalars as ints."""
    if not isinstance(tr, Trellis):
        raise ConfigError(f"trellis: expected Trellis(...), got {type(tr).__name__}")
    m = args.integer("m", tr.m, lo=2)
    bits = args.integer("bits", tr.bits, lo=1)
    if 1 << bits != m:
        raise ConfigError(f"m: the trellis needs a power of two levels (2 ** bits = {1 << bits}),"
                          f" got {m}")
    n_states = args.integer("n_states", tr.n_states, lo=m)
    delay = args.integer("delay", tr.delay, lo=1, hi=64 // bits)
    levels = args.array("levels", tr.levels, finite=True, min_len=m)
    g = args.array("g", tr.g, finite=True, min_len=2)
    if n_states != m ** (g.shape[0] - 1):
        raise ConfigError(f"n_states: must be m ** memory = {m} ** {g.shape[0] - 1}, "
                          f"got {n_states}")
    ev = args.array("ev", tr.ev, finite=True, min_len=n_states * m)
    wh = args.array("wh", tr.wh, finite=True, min_len=1)
    c = args.array("c", tr.c, finite=True)
    lags = args.array("lags", tr.lags, dtype=np.int64)
    if lags.shape[0] != c.shape[0]:
        raise ConfigError(f"lags: need one per RC tap ({c.shape[0]}), got {lags.shape[0]}")
    if lags.size and lags.min() < 1:
        raise ConfigError(f"lags: must be >= 1, got {lags.tolist()}")
    return Trellis(wh, c, lags, ev, g, levels, m, n_states, bits, delay)


def mlse_state(tr: Trellis, ring_len: int, ubuf_len: int) -> MlseState:
    """A fresh MlseState for tr with the given ring and sample-buffer lengths."""
    return MlseState(np.zeros(max(tr.wh.shape[0] - 1, 0)), np.zeros(ring_len),
                     np.zeros(ubuf_len), np.zeros(tr.n_states),
                     np.zeros(tr.n_states, dtype=np.uint64), np.zeros(2, dtype=np.int64))


def mlse_run(z, tr: Trellis, state: MlseState):
    """Whitening + RC + Viterbi over FFE outputs z (see _mlse_run); ``state`` is updated
    in place. Returns (decisions, v)."""
    tr = check_trellis(tr)
    if not isinstance(state, MlseState):
        raise ConfigError(f"state: expected MlseState(...), got {type(state).__name__}")
    args.state("zh", state.zh, size=max(tr.wh.shape[0] - 1, 0))
    args.state("ring", state.ring)
    args.state("ubuf", state.ubuf)
    args.state("pm", state.pm, size=tr.n_states)
    args.state("paths", state.paths, dtype=np.uint64, size=tr.n_states)
    args.state("st", state.st, dtype=np.int64, size=2)
    need = max(int(tr.lags.max()) + 1 if tr.lags.size else 0, tr.g.shape[0], tr.delay + 1)
    _pow2("ring", state.ring, need)
    _pow2("ubuf", state.ubuf, tr.delay)
    return _mlse_run(args.array("z", z), tr, state)
