"""Reflection canceller: kernel against a slow reference, chunk invariance, placement,
and the counted-BER demonstration on a channel with a -20 dB echo at 60 UI.

The BER claims are checked with 95% Clopper-Pearson intervals of each run: "within 2x"
means the upper bound with the canceller is below twice the lower bound without the
echo; "cannot" means the lower bound with a dense FFE of the same tap count is above
twice the upper bound without the echo.
"""

import numpy as np
import pytest

from serdes.config import Config
from serdes.dsp.design import design_receiver, select_rc_lags
from serdes.dsp.rc import RcSettings, ReflectionCanceller, ring_size
from serdes.engines.run import design_equalizer, simulate
from serdes.kernels.rc import ffe_dfe_rc
from serdes.build import build, build_link, build_receiver

LEVELS = np.array([-1.0, -1 / 3, 1 / 3, 1.0])
THRESH = np.array([-2 / 3, 0.0, 2 / 3])
S2 = float(np.mean(LEVELS ** 2))


# ----------------------------------------------------------------- slow reference
def rc_reference(x, w, b, c, lags, ref, n_train, mu_w, mu_b, mu_c, b_limit, adapt_eq,
                 search, search_lo, span, search_start, search_n):
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
        d = int(np.sum(v > THRESH))
        target = ref[k] if k < n_train else LEVELS[d]
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
                    c = corr[pick] / (n_acc * S2)
                    search = False
        elif mu_c > 0:
            c = c + mu_c * e * np.array([level(cnt - j) for j in lags])
        past.append(target)
        dec.append(d)
        vs.append(v)
    return np.array(dec, np.uint8), np.array(vs), w, b, np.asarray(c), np.array(lags)


def _echo_signal(n, seed, lag=37, amp=0.25, sigma=0.05):
    rng = np.random.default_rng(seed)
    a = LEVELS[rng.integers(0, 4, n)]
    x = a.copy()
    x[lag:] += amp * a[:-lag]
    x[1:] += 0.3 * a[:-1]          # a post-cursor for the DFE
    return a, x + sigma * rng.normal(size=n)


@pytest.mark.parametrize("adaptive,adapt_eq", [(False, False), (False, True), (True, False),
                                               (True, True)])
def test_kernel_matches_reference_in_chunks(adaptive, adapt_eq):
    n, span = 6000, 50
    a, x = _echo_signal(n, seed=7)
    w0 = np.array([0.02, 1.0, -0.01])          # FFE with one pre-cursor tap
    x = np.concatenate([np.zeros(len(w0) - 1), x])
    b0 = np.array([0.25])
    lags0 = np.array([36, 37, 38]) if not adaptive else np.array([2, 3, 4])
    c0 = np.array([0.0, 0.2, 0.0]) if not adaptive else np.zeros(3)
    ref = np.concatenate([a[-1:], a[:-1]])  # decision k is about a[k - 1]
    n_train, mu_w, mu_b, mu_c = 1500, 2e-3, 2e-3, 1e-3
    search_start, search_n, lo = 80, 2000, 2
    want = rc_reference(x, w0, b0, c0, lags0, ref, n_train, mu_w, mu_b, mu_c, 1.0, adapt_eq,
                        adaptive, lo, span, search_start, search_n)

    w, b, c, lags = w0.copy(), b0.copy(), c0.copy(), lags0.astype(np.int64)
    hist = np.zeros(1)
    ring = np.zeros(ring_size(span))
    st = np.array([0, int(adaptive), 0], dtype=np.int64)
    corr = np.zeros(span + 1)
    outs, pos = [], 0
    for size in (1, 999, 2500, 2502):  # chunks of ADC samples, with FFE history in front
        xe = x[pos:pos + size + len(w0) - 1]
        r = ref[pos:pos + size]
        outs.append(ffe_dfe_rc(xe, w, b, hist, c, lags, ring, st, corr, LEVELS, THRESH, r,
                               max(0, min(size, n_train - pos)), mu_w, mu_b, mu_c, 1.0,
                               adapt_eq, lo, search_start, search_n, S2))
        pos += size
    dec = np.concatenate([o[0] for o in outs])
    v = np.concatenate([o[1] for o in outs])
    np.testing.assert_array_equal(dec, want[0])
    np.testing.assert_allclose(v, want[1], rtol=1e-9, atol=1e-12)
    np.testing.assert_allclose(w, want[2], rtol=1e-9)
    np.testing.assert_allclose(b, want[3], rtol=1e-9)
    np.testing.assert_allclose(c, want[4], rtol=1e-9, atol=1e-12)
    np.testing.assert_array_equal(lags, want[5])
    if adaptive:
        assert 37 in lags and abs(c[list(lags).index(37)] - 0.25) < 0.02


def test_select_lags_and_design_find_the_echo():
    f = np.zeros(200)
    f[10] = 1.0
    f[11], f[12] = 0.5, 0.01           # DFE range
    f[70], f[71], f[72] = 0.1, 0.06, -0.02
    assert select_rc_lags(f, 10, taps=2, first=2, span=150).tolist() == [60, 61]
    assert select_rc_lags(f, 10, taps=3, first=2, span=61).tolist() == [2, 60, 61]
    assert select_rc_lags(f, 10, taps=2, first=2, span=1).size == 0

    cfg = Config.default().with_overrides(["link.pulse_ui=96", "reflections.echo_delay_ui=60",
                                           "rc.taps=4"])
    t = design_receiver(build_link(cfg), build_receiver(cfg))
    assert 60 in t.rc_lags
    assert t.rc_taps[list(t.rc_lags).index(60)] == pytest.approx(0.1, abs=0.005)
    # the residual no longer holds the echo, and matches the predicted SNR
    assert np.max(np.abs(t.residual()[t.delay + 55:])) < 0.02


def _run(*extra, symbols=1_000_000):
    cfg = Config.default().with_overrides(
        ["link.pulse_ui=96", "noise.rj_ui=0", "tx.snr_db=22", "link.target_errors=0"]
        + list(extra))
    return simulate(build(cfg), symbols=symbols)


ECHO = ("reflections.echo_delay_ui=60", "reflections.echo_db=-20")


@pytest.fixture(scope="module")
def ber_runs():
    return {
        "no echo": _run(),
        "echo, FFE 24 + RC 4 (pulse)": _run(*ECHO, "rc.taps=4"),
        "echo, FFE 24 + RC 4 (adaptive)": _run(*ECHO, "rc.taps=4", "rc.mode=adaptive"),
        "echo, dense FFE 28": _run(*ECHO, "ffe.taps=28"),
    }


def test_rc_restores_ber_where_a_dense_ffe_cannot(ber_runs):
    r0 = ber_runs["no echo"]
    print()
    for name, r in ber_runs.items():
        print(f"{name:32s} BER {r.ber:.3e} 95% CI [{r.ber_ci[0]:.3e}, {r.ber_ci[1]:.3e}] "
              f"({r.bit_errors} errors) rc {r.rc_lags}")
    assert r0.bit_errors >= 300
    for name in ("echo, FFE 24 + RC 4 (pulse)", "echo, FFE 24 + RC 4 (adaptive)"):
        r = ber_runs[name]
        assert r.ber_ci[1] < 2 * r0.ber_ci[0], name
        assert 60 in r.rc_lags
    dense = ber_runs["echo, dense FFE 28"]
    assert dense.ber_ci[0] > 2 * r0.ber_ci[1]
    assert len(dense.ffe_taps) == 28 and not dense.rc_lags


def test_adaptive_rc_with_lms_is_chunk_invariant():
    cfg = Config.default().with_overrides(
        ["link.pulse_ui=96", "tx.snr_db=22", "link.target_errors=0", *ECHO, "rc.taps=3",
         "rc.mode=adaptive", "rc.search_symbols=4000", "eq.mode=lms", "eq.train_symbols=6000"])
    system = build(cfg)
    a = simulate(system, symbols=40_000, chunk=1 << 16).to_dict()
    b = simulate(system, symbols=40_000, chunk=3001).to_dict()
    for d in (a, b):
        d.pop("elapsed_s"), d.pop("symbols_per_s")
    assert b.pop("snr_db") == pytest.approx(a.pop("snr_db"), rel=1e-12)  # summed per chunk
    assert a == b
    assert a["symbols"] > 10_000 and 60 in a["rc_lags"]


def test_receiver_wiring_and_defaults():
    system = build(Config.default().with_overrides(["rc.taps=2", "rc.span_ui=40"]))
    taps = design_equalizer(system)
    assert len(taps.rc_lags) == 2 and all(2 <= j <= 40 for j in taps.rc_lags)
    rc = ReflectionCanceller(RcSettings(taps=2, span_ui=40, mode="adaptive"), lags=(),
                             taps=(), first_lag=2, level_power=S2, search_start=100)
    assert rc.warmup_symbols == 100 + 64 + 16384 and not rc.placed
    # without rc.taps the default link keeps the plain FFE -> DFE chain (no canceller)
    from serdes.dsp.blocks import DfeSlicer, RcDfe
    from serdes.dsp.receiver import build_chain

    plain = build(Config.default())
    taps = design_equalizer(plain)
    assert taps.rc_lags.size == 0 and taps.detector == "dfe"
    chain = build_chain(plain.link, taps, plain.receiver, seed=1)
    assert chain.find(DfeSlicer) is not None and chain.find(RcDfe) is None
