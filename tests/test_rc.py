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
from naive import rc_reference
from serdes.kernels.slicer import Adapt, EqState, RcState, Slicer, ffe_dfe_rc
from serdes.build import build, build_link, build_receiver
from conftest import earlier_default

LEVELS = np.array([-1.0, -1 / 3, 1 / 3, 1.0])
THRESH = np.array([-2 / 3, 0.0, 2 / 3])
S2 = float(np.mean(LEVELS ** 2))


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
                        adaptive, lo, span, search_start, search_n, LEVELS, THRESH, S2)

    w, b, c, lags = w0.copy(), b0.copy(), c0.copy(), lags0.astype(np.int64)
    hist = np.zeros(1)
    ring = np.zeros(ring_size(span))
    st = np.array([0, int(adaptive), 0], dtype=np.int64)
    corr = np.zeros(span + 1)
    outs, pos = [], 0
    for size in (1, 999, 2500, 2502):  # chunks of ADC samples, with FFE history in front
        xe = x[pos:pos + size + len(w0) - 1]
        r = ref[pos:pos + size]
        p = Adapt(max(0, min(size, n_train - pos)), mu_w, mu_b, mu_c, 1.0, adapt_eq, lo,
                  search_start, search_n, S2)
        outs.append(ffe_dfe_rc(xe, r, EqState(w, b, hist), RcState(c, lags, ring, st, corr),
                               Slicer(LEVELS, THRESH), p))
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
    cfg = earlier_default(  # a link with errors to count
        "link.pulse_ui=96", "noise.rj_ui=0", "tx.snr_db=22", "link.target_errors=0", *extra)
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
