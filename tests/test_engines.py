"""Engine properties: chunk-size invariance, pulse vs waveform agreement, bounded
memory, LMS adaptation, precoding and the error-count stop."""

import tracemalloc

import numpy as np
import pytest

from serdes.config import Config
from serdes.engines import pulse as pulse_engine
from serdes.engines.pulse import PulseFrontEnd
from serdes.engines.run import simulate
from serdes.engines.waveform import WaveformFrontEnd
from serdes.build import build
from serdes.metrics.ber import clopper_pearson

from conftest import EARLIER_DEFAULT, earlier_default


def _noisy(extra=()):
    """A link with a BER near 1e-3 so that errors are plentiful (on the earlier default
    link: CTLE fixed at -8 dB, ENOB 5)."""
    return earlier_default().with_overrides(["channel.loss_db=32", "noise.eta0_v2_per_ghz=4e-8",
                                            "link.target_errors=0", *extra])


@pytest.mark.parametrize("extra", [
    (),
    ("noise.rj_ui=0.02", "noise.sj_ui=0.1", "noise.sj_hz=1e8", "noise.dd_ui=0.05"),
    ("noise.rj_ui=0.01", "noise.sj_ui=0.1", "noise.dd_ui=0.05"),  # Taylor path, slow blocks
    ("link.precoding=true", "dfe.taps=2"),
    ("eq.mode=lms", "eq.train_symbols=20000", "link.pattern=random"),
    ("link.pattern=qprbs13", "adc.enob=4.5"),
])
def test_results_do_not_depend_on_chunk_size(extra):
    system = build(_noisy(extra))
    runs = [simulate(system, symbols=150_000, chunk=c) for c in (150_000, 65_536, 7_777, 1_000)]
    first = runs[0]
    assert first.bit_errors > 0
    for r in runs[1:]:
        assert (r.bit_errors, r.symbol_errors, r.symbols, r.latency) == \
               (first.bit_errors, first.symbol_errors, first.symbols, first.latency)
        assert r.snr_db == pytest.approx(first.snr_db, rel=1e-12)
        assert r.bursts == first.bursts


def test_target_error_stop_is_chunk_invariant_and_on_a_block_boundary():
    system = build(_noisy())
    a = simulate(system, symbols=2_000_000, target_errors=300, chunk=65_536)
    b = simulate(system, symbols=2_000_000, target_errors=300, chunk=10_000)
    assert a.stopped_by == b.stopped_by == "target_errors"
    assert (a.bit_errors, a.symbols) == (b.bit_errors, b.symbols)
    assert a.bit_errors >= 300


def test_same_seed_same_result_other_seed_other_noise():
    system = build(_noisy())
    a = simulate(system, symbols=100_000, seed=3)
    b = simulate(system, symbols=100_000, seed=3)
    c = simulate(system, symbols=100_000, seed=4)
    assert a.bit_errors == b.bit_errors and a.snr_db == b.snr_db
    assert a.snr_db != c.snr_db


@pytest.mark.parametrize("jitter", [False, True])
def test_pulse_and_waveform_engines_give_the_same_samples(jitter):
    """Without noise the waveform engine's samples at the sampling phase equal the pulse
    engine's to 1e-9 relative; with jitter both interpolate at the same instants."""
    extra = ["noise.rj_ui=0.03", "noise.sj_ui=0.2", "noise.sj_hz=2e8", "noise.dd_ui=0.1"] \
        if jitter else \
            ["noise.rj_ui=0"]
    system = build(Config.default().with_overrides(EARLIER_DEFAULT).with_overrides(extra))
    link = system.link
    rng = np.random.default_rng(0)
    a = rng.choice(link.levels, size=5000)
    pulse = PulseFrontEnd(link, seed=5)
    pulse.noise_fir = np.zeros(1)
    wave = WaveformFrontEnd(link, seed=5, noise=False)
    xp = np.concatenate([pulse(a[:3000], 0), pulse(a[3000:], 3000)])
    xw = np.concatenate([wave(a[:2000], 0), wave(a[2000:], 2000)])
    g = wave.latency
    ref = xp[: len(a) - g]
    got = xw[g:]
    # the first pulse-length samples see the zero history identically in both
    scale = np.max(np.abs(ref))
    np.testing.assert_allclose(got, ref, rtol=0, atol=1e-9 * scale)


def test_waveform_noise_has_the_link_noise_statistics():
    """Fine-rate white noise through the front end, sampled at the symbol rate, has the
    variance and lag-1 correlation of the link's noise model (chi-square tolerance)."""
    system = build(Config.default().with_overrides(EARLIER_DEFAULT).with_overrides(["noise.rj_ui=0"]))
    link = system.link
    wave = WaveformFrontEnd(link, seed=2)
    n = 200_000
    x = wave(np.zeros(n), 0)[1000:]
    var = np.var(x)
    r = link.noise.autocorr
    # samples correlated over a few UI: effective N >= len/20, relative std sqrt(2/N)
    tol = 5 * np.sqrt(2 / (len(x) / 20))
    assert var == pytest.approx(r[0], rel=tol)
    rho = np.mean(x[1:] * x[:-1]) / var
    assert rho == pytest.approx(r[1] / r[0], abs=tol)


def test_engines_count_the_same_ber():
    """The rate of error events counted with the waveform engine lies in the pulse
    engine's 99 % interval (and vice versa) on a link with about 1e-3 BER: the same model
    seen two ways. Error events (bursts), not bit errors: with the DFE's error
    propagation an event holds 3.5 symbol errors on average, so bit errors are far from
    independent and a binomial interval on them is about twice too narrow."""
    system = build(_noisy())
    link = system.link
    p = simulate(system, symbols=200_000, engine="pulse")
    w = simulate(system, symbols=200_000, engine="waveform")
    ep, ew = sum(p.bursts.values()), sum(w.bursts.values())
    lo, hi = clopper_pearson(ep, p.symbols, 0.99)
    lo2, hi2 = clopper_pearson(ew, w.symbols, 0.99)
    assert max(lo, lo2) <= min(hi, hi2), (p.ber, w.ber, ep, ew)
    assert w.latency == p.latency + WaveformFrontEnd(link, 0).latency


def test_memory_is_bounded_by_the_chunk_not_the_run_length():
    system = build(_noisy(["noise.rj_ui=0.01"]))
    simulate(system, symbols=20_000)
    peaks = []
    for n in (300_000, 1_200_000):
        tracemalloc.start()
        simulate(system, symbols=n, chunk=65_536)
        peaks.append(tracemalloc.get_traced_memory()[1])
        tracemalloc.stop()
    assert peaks[1] < 1.3 * peaks[0] + 1e6, peaks
    assert peaks[1] < 200e6


def test_lms_reaches_the_mmse_ber():
    """LMS adaptation from a one-tap start reaches a BER whose 99 % interval overlaps
    that of the MMSE design on the same link."""
    mmse = simulate(build(_noisy()), symbols=400_000)
    lms = simulate(build(_noisy(["eq.mode=lms", "eq.train_symbols=100000"])),
                   symbols=500_000)
    lo, hi = clopper_pearson(mmse.bit_errors, mmse.bits, 0.99)
    lo2, hi2 = clopper_pearson(lms.bit_errors, lms.bits, 0.99)
    assert lo2 <= hi * 1.3 and lo <= hi2, (mmse.ber, lms.ber)
    assert lms.snr_db == pytest.approx(mmse.snr_db, abs=0.5)


def test_precoding_doubles_independent_symbol_errors():
    """With 1/(1+D) precoding a single line-symbol error corrupts two decoded symbols;
    two adjacent line errors corrupt two or three. On an FFE-only receiver the decoded
    SER is therefore between 1.5x and 2x the SER without precoding (99 % intervals)."""
    plain = simulate(build(_noisy(["dfe.taps=0", "channel.loss_db=28"])), symbols=300_000)
    pre = simulate(build(_noisy(["dfe.taps=0", "channel.loss_db=28", "link.precoding=true"])),
                   symbols=300_000)
    assert plain.symbol_errors > 200
    lo, hi = clopper_pearson(plain.symbol_errors, plain.symbols, 0.99)
    lo2, hi2 = clopper_pearson(pre.symbol_errors, pre.symbols, 0.99)
    assert 1.5 * lo <= hi2 and lo2 <= 2.0 * hi, (plain.ser, pre.ser)


@pytest.mark.parametrize("extra,path", [
    ((), "taylor"),                                    # default: RJ 0.01 UI
    (("noise.sj_ui=0.1", "noise.dd_ui=0.05"), "taylor"),
    (("noise.rj_ui=0.04",), "exact"),
    (("noise.sj_ui=0.1", "noise.sj_hz=1e8"), "exact"),  # SJ moves too much within a block
    (("noise.rj_ui=0",), "fir"),
])
def test_the_jitter_path_follows_the_taylor_error_bound(extra, path, monkeypatch):
    fe = PulseFrontEnd(build(Config.default().with_overrides(EARLIER_DEFAULT).with_overrides(list(extra))).link, seed=1)
    assert fe.path == path
    if path == "taylor":
        assert fe.taylor_bound <= fe.taylor_tol
        monkeypatch.setattr(pulse_engine, "TAYLOR_TOL", fe.taylor_bound / fe.taylor_tol
                            * pulse_engine.TAYLOR_TOL * 0.99)
        link = build(Config.default().with_overrides(EARLIER_DEFAULT).with_overrides(list(extra))).link
        assert PulseFrontEnd(link, seed=1).path == "exact"
    elif path == "exact":
        assert fe.taylor_bound > fe.taylor_tol


@pytest.mark.parametrize("extra", [("noise.rj_ui=0.01",),
                                   ("noise.rj_ui=0.01", "noise.sj_ui=0.1", "noise.dd_ui=0.05")])
def test_taylor_and_exact_paths_count_the_same_errors(extra, monkeypatch):
    """Same seed, same link: the Taylor-2 path and the exact kernel make (nearly) the same
    decisions; each count lies in the other's 99 % interval and they differ by a few."""
    system = build(_noisy(extra))
    assert PulseFrontEnd(system.link, 0).path == "taylor"
    fast = simulate(system, symbols=300_000)
    monkeypatch.setattr(pulse_engine, "TAYLOR_TOL", 0.0)
    assert PulseFrontEnd(system.link, 0).path == "exact"
    exact = simulate(system, symbols=300_000)
    assert exact.bit_errors > 300
    for x, y in ((fast, exact), (exact, fast)):
        lo, hi = clopper_pearson(x.bit_errors, x.bits, 0.99)
        assert lo <= y.ber <= hi
    assert abs(fast.bit_errors - exact.bit_errors) <= 0.01 * exact.bit_errors + 3
