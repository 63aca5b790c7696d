"""Decision-feedback kernels: slicer, DFE, and FFE + DFE + reflection canceller with LMS.

Private @njit kernels (``_name``) sit behind public wrappers (``name``) that check and
convert their arguments (serdes.kernels.args); wrappers live in serdes.dsp.

The canceller is a sparse decision-feedback filter: K taps ``c`` at lags ``lags`` (UI
after the current decision) multiply past decided levels held in a ring buffer. Its
taps may be fixed, adapted by LMS, or first placed by correlating the error with past
decisions (adaptive mode): E[e_k a_{k-j}] = s2 f_j for white data, so the K lags with
the largest |correlation| are the echo positions and corr_j / (n s2) their values.
With no canceller taps (K = 0) :func:`_ffe_dfe_rc` does what :func:`_ffe_dfe_lms` does
(tests check that they agree); the LMS path keeps its own kernel because the general one
measured 10-15 % slower on FFE 24 + DFE 1 LMS (its ring, search and canceller branches
stay in the loop). The two share their per-sample FFE/DFE output and LMS step through
helpers inlined at compile time (``inline="always"``: the same machine code as written out).

State travels in small named tuples of arrays (numba types them as records of arrays),
each array updated in place so that a run in chunks gives the same decisions as one
piece.
"""

from __future__ import annotations

from typing import NamedTuple

import numpy as np

from serdes.errors import ConfigError
from serdes.kernels import args
from serdes.kernels.jit import njit


class Slicer(NamedTuple):
    """PAM levels (ascending) and the slicer thresholds between them."""

    levels: np.ndarray
    thresholds: np.ndarray


class EqState(NamedTuple):
    """FFE taps w, DFE taps b, and the last len(b) decided levels (newest first)."""

    w: np.ndarray
    b: np.ndarray
    hist: np.ndarray


class RcState(NamedTuple):
    """Reflection canceller state.

    c, lags  taps and their lags (int64, each < len(ring))
    ring     past decided levels; ring[n & (len - 1)] is decision n (len a power of 2)
    st       int64 [decisions so far, searching (0/1), correlation samples]
    corr     error/decision correlation per lag (adaptive placement)
    """

    c: np.ndarray
    lags: np.ndarray
    ring: np.ndarray
    st: np.ndarray
    corr: np.ndarray


class Adapt(NamedTuple):
    """Adaptation settings of one :func:`ffe_dfe_rc` call.

    n_train  outputs that use the known levels ``ref`` (training), then decisions
    mu_w, mu_b, mu_c  LMS steps of the FFE, DFE and canceller taps; b_limit clips the DFE
    adapt_eq whether the FFE and DFE taps adapt
    search_* while st[1] == 1: from decision search_start on, accumulate corr over lags
             search_lo..len(corr)-1 for search_n decisions, then place the taps with
             values corr / (search_n * level_power)
    """

    n_train: int
    mu_w: float
    mu_b: float
    mu_c: float
    b_limit: float
    adapt_eq: bool
    search_lo: int
    search_start: int
    search_n: int
    level_power: float


# ------------------------------------------------------------------ kernels
@njit(cache=True)
def _slice_one(v, thresholds):
    """Index of the PAM level for slicer input v (thresholds ascending)."""
    d = 0
    for t in thresholds:
        if v > t:
            d += 1
    return d


@njit(cache=True, inline="always")
def _push(hist, n, level):
    """Shift the first n decided levels of the history one place (newest first) and put
    ``level`` in front; inlined into both equalizer kernels."""
    for m in range(n - 1, 0, -1):
        hist[m] = hist[m - 1]
    if n > 0:
        hist[0] = level


@njit(cache=True)
def _dfe_run(z, taps, levels, thresholds, hist):
    """Decision-feedback equalizer and slicer.

    v_k = z_k - sum_m taps[m] * hist[m], hist[0] the most recent decided level.
    hist is updated in place so that a run in chunks equals a run in one piece.
    Returns (decisions as level indices, slicer inputs v).
    """
    n = z.shape[0]
    nt = taps.shape[0]
    dec = np.empty(n, dtype=np.uint8)
    v_out = np.empty(n, dtype=np.float64)
    for k in range(n):
        v = z[k]
        for m in range(nt):
            v -= taps[m] * hist[m]
        d = _slice_one(v, thresholds)
        dec[k] = d
        v_out[k] = v
        for m in range(nt - 1, 0, -1):
            hist[m] = hist[m - 1]
        if nt > 0:
            hist[0] = levels[d]
    return dec, v_out


@njit(cache=True, inline="always")
def _ffe_dfe_out(w, b, hist, x, top):
    """The FFE output over the window x[top], x[top - 1], ... minus the DFE's feedback
    of the decided levels ``hist``; inlined as _lms_step."""
    v = 0.0
    for i in range(w.shape[0]):
        v += w[i] * x[top - i]
    for m in range(b.shape[0]):
        v -= b[m] * hist[m]
    return v


@njit(cache=True, inline="always")
def _lms_step(w, b, hist, x, top, e, mu_w, mu_b, b_limit):
    """One LMS step of the FFE taps (window x[top], x[top - 1], ...) and of the DFE taps
    (clipped to +-b_limit) on the error e; inlined into both equalizer kernels, so each
    loop compiles as if written out."""
    for i in range(w.shape[0]):
        w[i] -= mu_w * e * x[top - i]
    for m in range(b.shape[0]):
        bm = b[m] + mu_b * e * hist[m]
        if bm > b_limit:
            bm = b_limit
        elif bm < -b_limit:
            bm = -b_limit
        b[m] = bm


@njit(cache=True)
def _ffe_dfe_lms(x, w, b, levels, thresholds, hist, ref, n_train, mu_w, mu_b, b_limit):
    """FFE + DFE adapted by LMS, sample by sample (_ffe_dfe_rc without a canceller).

    x      ADC samples with len(w) - 1 of history in front
    ref    the known symbol levels aligned with the outputs (used while k < n_train,
           afterwards decisions drive the adaptation)
    w, b, hist are updated in place (the adaptive state). mu_w and mu_b are the step
    sizes of the FFE and DFE taps (the wrapper normalises them by the input powers).
    Returns (decisions, slicer inputs).
    """
    nw = w.shape[0]
    nb = b.shape[0]
    n = x.shape[0] - nw + 1
    dec = np.empty(n, dtype=np.uint8)
    v_out = np.empty(n, dtype=np.float64)
    for k in range(n):
        top = k + nw - 1
        v = _ffe_dfe_out(w, b, hist, x, top)
        d = _slice_one(v, thresholds)
        target = ref[k] if k < n_train else levels[d]
        e = v - target
        _lms_step(w, b, hist, x, top, e, mu_w, mu_b, b_limit)
        dec[k] = d
        v_out[k] = v
        _push(hist, nb, target)
    return dec, v_out


@njit(cache=True)
def _place(corr, lo, c, lags, n_acc, level_power):
    """Put the K taps at the lags lo..len(corr)-1 of largest |corr| (ascending lags)."""
    k_taps = c.shape[0]
    used = np.zeros(corr.shape[0], dtype=np.bool_)
    for i in range(k_taps):
        best = -1.0
        arg = lo
        for j in range(lo, corr.shape[0]):
            if not used[j] and abs(corr[j]) > best:
                best = abs(corr[j])
                arg = j
        used[arg] = True
    i = 0
    for j in range(corr.shape[0]):
        if used[j]:
            lags[i] = j
            c[i] = corr[j] / (n_acc * level_power)
            i += 1


@njit(cache=True)
def _ffe_dfe_rc(x, ref, eq, rc, sl, p):
    """FFE, DFE and reflection canceller with a slicer, sample by sample.

    x    ADC samples with len(eq.w) - 1 of history in front
    ref  known levels for the first p.n_train outputs (training), else decisions
    eq, rc are state (EqState, RcState), updated in place; sl a Slicer; p an Adapt.
    Returns (decisions as level indices, slicer inputs).
    """
    w, b, hist = eq.w, eq.b, eq.hist
    c, lags, ring, st, corr = rc.c, rc.lags, rc.ring, rc.st, rc.corr
    levels, thresholds = sl.levels, sl.thresholds
    n_train, mu_w, mu_b, mu_c, b_limit = p.n_train, p.mu_w, p.mu_b, p.mu_c, p.b_limit
    adapt_eq = p.adapt_eq
    nw = w.shape[0]
    nb = b.shape[0]
    nc = c.shape[0]
    mask = ring.shape[0] - 1
    n = x.shape[0] - nw + 1
    dec = np.empty(n, dtype=np.uint8)
    v_out = np.empty(n, dtype=np.float64)
    cnt = st[0]
    for k in range(n):
        top = k + nw - 1
        v = _ffe_dfe_out(w, b, hist, x, top)
        for i in range(nc):
            v -= c[i] * ring[(cnt - lags[i]) & mask]
        d = _slice_one(v, thresholds)
        target = ref[k] if k < n_train else levels[d]
        e = v - target
        if adapt_eq:
            _lms_step(w, b, hist, x, top, e, mu_w, mu_b, b_limit)
        if st[1] == 1:
            if cnt >= p.search_start:
                for j in range(p.search_lo, corr.shape[0]):
                    corr[j] += e * ring[(cnt - j) & mask]
                st[2] += 1
                if st[2] == p.search_n:
                    _place(corr, p.search_lo, c, lags, st[2], p.level_power)
                    st[1] = 0
        elif mu_c > 0.0:
            for i in range(nc):
                c[i] += mu_c * e * ring[(cnt - lags[i]) & mask]
        dec[k] = d
        v_out[k] = v
        _push(hist, nb, target)
        ring[cnt & mask] = target
        cnt += 1
    st[0] = cnt
    return dec, v_out


# ------------------------------------------------------------------ public wrappers
def slicer(levels, thresholds=None) -> Slicer:
    """A checked Slicer; thresholds default to the midpoints of the levels."""
    levels = args.array("levels", levels, finite=True, min_len=2)
    if thresholds is None:
        thresholds = (levels[1:] + levels[:-1]) / 2.0
    thresholds = args.array("thresholds", thresholds, finite=True)
    if thresholds.shape[0] != levels.shape[0] - 1:
        raise ConfigError(f"thresholds: need {levels.shape[0] - 1} for {levels.shape[0]} "
                          f"levels, got {thresholds.shape[0]}")
    return Slicer(levels, thresholds)


def _checked_slicer(sl) -> Slicer:
    if isinstance(sl, Slicer) and all(type(a) is np.ndarray and a.dtype == np.float64
                                      and a.flags.c_contiguous for a in sl) \
            and sl.thresholds.shape[0] == sl.levels.shape[0] - 1:
        return sl
    if isinstance(sl, tuple) and len(sl) == 2:
        return slicer(*sl)
    raise ConfigError(f"slicer: expected Slicer(levels, thresholds), got {type(sl).__name__}")


def dfe_run(z, taps, levels, thresholds, hist):
    """DFE + slicer over z; ``hist`` (len(taps) floats, newest first) is updated in place.
    Returns (decisions as level indices, slicer inputs)."""
    taps = args.array("taps", taps, finite=True)
    sl = slicer(levels, thresholds)
    hist = args.state("hist", hist, size=taps.shape[0])
    return _dfe_run(args.array("z", z), taps, sl.levels, sl.thresholds, hist)


def eq_state(w, b, hist=None) -> EqState:
    """An EqState of copies of the taps (and a zero history unless given)."""
    w = args.array("w", w, finite=True, min_len=1).copy()
    b = args.array("b", b, finite=True).copy()
    hist = np.zeros(b.shape[0]) if hist is None else args.array("hist", hist).copy()
    if hist.shape[0] != b.shape[0]:
        raise ConfigError(f"hist: needs {b.shape[0]} values (one per DFE tap), "
                          f"got {hist.shape[0]}")
    return EqState(w, b, hist)


def rc_state(c, lags, ring_len: int, span: int, searching: bool) -> RcState:
    """A fresh RcState: taps c at lags, a zero ring of ring_len (a power of two > every
    lag and > span) and correlations for lags 0..span."""
    c = args.array("rc taps", c, finite=True).copy()
    lags = args.array("rc lags", lags, dtype=np.int64).copy()
    ring_len = args.integer("ring length", ring_len, lo=1)
    span = args.integer("rc span", span, lo=0)
    if ring_len & (ring_len - 1) or ring_len <= span:
        raise ConfigError(f"ring length: must be a power of two above the span {span}, "
                          f"got {ring_len}")
    if lags.shape[0] != c.shape[0]:
        raise ConfigError(f"rc lags: need one per tap ({c.shape[0]}), got {lags.shape[0]}")
    if lags.size and (lags.min() < 1 or lags.max() >= ring_len):
        raise ConfigError(f"rc lags: must be in 1..{ring_len - 1}, got {lags.tolist()}")
    st = np.array([0, 1 if searching else 0, 0], dtype=np.int64)
    return RcState(c, lags, np.zeros(ring_len), st, np.zeros(span + 1))


def _check_state(eq, rc) -> None:
    if not isinstance(eq, EqState):
        raise ConfigError(f"eq: expected EqState(w, b, hist), got {type(eq).__name__}")
    if not isinstance(rc, RcState):
        raise ConfigError(f"rc: expected RcState(c, lags, ring, st, corr), got "
                          f"{type(rc).__name__}")
    for name, a in zip(eq._fields, eq):
        args.state(name, a)
    args.state("hist", eq.hist, size=eq.b.shape[0])
    args.state("c", rc.c)
    args.state("lags", rc.lags, dtype=np.int64, size=rc.c.shape[0])
    args.state("ring", rc.ring)
    args.state("st", rc.st, dtype=np.int64, size=3)
    args.state("corr", rc.corr)
    if eq.w.shape[0] < 1:
        raise ConfigError("w: the FFE needs at least one tap")
    n = rc.ring.shape[0]
    if n & (n - 1):
        raise ConfigError(f"ring: length must be a power of two, got {n}")


def ffe_dfe_rc(x, ref, eq: EqState, rc: RcState, sl: Slicer, p: Adapt):
    """FFE + DFE + reflection canceller (see :func:`_ffe_dfe_rc`); eq and rc are updated
    in place. Returns (decisions as level indices, slicer inputs)."""
    _check_state(eq, rc)
    sl = _checked_slicer(sl)
    if not isinstance(p, Adapt):
        raise ConfigError(f"adapt: expected Adapt(...), got {type(p).__name__}")
    x = args.array("x", x)
    ref, n_train = _ref(ref, p.n_train, max(x.shape[0] - eq.w.shape[0] + 1, 0))
    if p.search_n < 1 or not 0 <= p.search_lo < rc.corr.shape[0] <= rc.ring.shape[0]:
        raise ConfigError(f"rc search: lags {p.search_lo}..{rc.corr.shape[0] - 1} do not fit "
                          f"a ring of {rc.ring.shape[0]} (or search_n {p.search_n} < 1)")
    p = Adapt(n_train, args.real("mu_w", p.mu_w), args.real("mu_b", p.mu_b),
              args.real("mu_c", p.mu_c), args.real("b_limit", p.b_limit, nonneg=True),
              bool(p.adapt_eq), int(p.search_lo), int(p.search_start), int(p.search_n),
              args.real("level_power", p.level_power, positive=True))
    return _ffe_dfe_rc(x, ref, eq, rc, sl, p)


def _ref(ref, n_train, n_out: int):
    n_train = args.integer("n_train", n_train, lo=0)
    ref = args.array("ref", np.zeros(0) if ref is None else ref)
    if ref.shape[0] < min(n_train, n_out):
        raise ConfigError(f"ref: needs {min(n_train, n_out)} training levels, "
                          f"got {ref.shape[0]}")
    return ref, n_train


def ffe_dfe_lms(x, w, b, levels, thresholds, hist, ref, n_train, mu_w, mu_b, b_limit):
    """FFE + DFE adapted by LMS, sample by sample. w, b and hist (state) are updated in
    place; ``ref`` holds the known levels of the first n_train outputs.
    Returns (decisions, slicer inputs)."""
    eq = EqState(w, b, hist)
    for name, a in zip(eq._fields, eq):
        args.state(name, a)
    args.state("hist", hist, size=b.shape[0])
    if w.shape[0] < 1:
        raise ConfigError("w: the FFE needs at least one tap")
    sl = slicer(levels, thresholds)
    x = args.array("x", x)
    ref, n_train = _ref(ref, n_train, max(x.shape[0] - w.shape[0] + 1, 0))
    return _ffe_dfe_lms(x, w, b, sl.levels, sl.thresholds, hist, ref, n_train,
                        args.real("mu_w", mu_w), args.real("mu_b", mu_b),
                        args.real("b_limit", b_limit, nonneg=True))
