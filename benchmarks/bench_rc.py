"""Reflection canceller: kernel speed beside the plain FFE + DFE kernels and a Python
baseline, the pulse-engine cost of the longer pulse an echo needs, and the counted BER
with a -20 dB echo at 60 UI (RC vs a dense FFE with the same number of taps).

Run: pytest benchmarks/bench_rc.py --benchmark-only -s
"""

import numpy as np
import pytest

from conftest import LEVELS, THRESH, best_time, compare_links
from serdes.config import Config
from serdes.engines.run import simulate
from serdes.kernels.fir import fir_valid
from serdes.dsp.rc import RcSettings, ReflectionCanceller
from serdes.kernels.slicer import dfe_run, ffe_dfe_lms
from serdes.build import build

N = 1_000_000


@pytest.fixture(scope="module")
def signal():
    rng = np.random.default_rng(0)
    a = LEVELS[rng.integers(0, 4, N + 23)]
    x = a + 0.4 * np.roll(a, 1) + 0.1 * np.roll(a, 60) + 0.05 * rng.normal(size=a.shape[0])
    return x


def _rc_fixed(x, w, lags, c):
    """The receiver's path with fixed taps: FFE block filter, then DFE + RC kernel."""
    rc = ReflectionCanceller(RcSettings(taps=len(c), span_ui=100), lags=lags, taps=c,
                             first_lag=2, level_power=5 / 9)
    return rc.run(x, w, np.array([0.4]), np.zeros(1), LEVELS, THRESH, None, 0, 0.0, 0.0, 1.0,
                  False)


def _rc_lms(x, w, lags, c):
    """The LMS path: FFE, DFE and RC taps all adapted sample by sample."""
    rc = ReflectionCanceller(RcSettings(taps=len(c), span_ui=100), lags=lags, taps=c,
                             first_lag=2, level_power=5 / 9)
    return rc.run(x, w.copy(), np.array([0.4]), np.zeros(1), LEVELS, THRESH, None, 0, 1e-5,
                  1e-5, 1.0, True)


def _rc_python(x, w, lags, c, n):
    past, out = [], []
    nw = len(w)
    for k in range(n):
        v = float(np.dot(w, x[k:k + nw][::-1]))
        cnt = len(past)
        v -= 0.4 * (past[-1] if past else 0.0)
        for j, cj in zip(lags, c):
            if cnt - j >= 0:
                v -= cj * past[cnt - j]
        d = int(np.sum(v > THRESH))
        past.append(LEVELS[d])
        out.append(d)
    return out


def test_rc_kernel(benchmark, signal):
    w = np.zeros(24)
    w[0] = 1.0
    lags = np.array([59, 60, 61, 62], dtype=np.int64)
    c = np.array([0.0, 0.1, 0.0, 0.0])
    _rc_fixed(signal[:1000], w, lags, c)
    _rc_lms(signal[:1000], w, lags, c)
    benchmark(lambda: _rc_fixed(signal, w, lags, c))
    t_rc = benchmark.stats.stats.min / N
    t_lms = best_time(lambda: _rc_lms(signal, w, lags, c), repeat=3) / N
    t_plain = best_time(lambda: dfe_run(fir_valid(signal, w), np.array([0.4]), LEVELS, THRESH,
                                        np.zeros(1))) / N
    n_py = 20_000
    t_py = best_time(lambda: _rc_python(signal, w, lags, c, n_py), repeat=2) / n_py
    benchmark.extra_info.update(symbols_per_s=1 / t_rc, lms_symbols_per_s=1 / t_lms,
                                ffe_dfe_symbols_per_s=1 / t_plain,
                                python_symbols_per_s=1 / t_py, speedup_vs_python=t_py / t_rc)
    print(f"\nFFE 24 + DFE 1 + RC 4: numba {1 / t_rc / 1e6:.1f} M/s fixed, {1 / t_lms / 1e6:.1f} "
          f"M/s all taps LMS (FFE + DFE kernels without RC {1 / t_plain / 1e6:.1f} M/s), "
          f"Python loop {1 / t_py / 1e3:.0f} k/s, ratio {t_py / t_rc:.0f}x")


def test_lms_kernel(benchmark, signal):
    """FFE 24 + DFE 1 adapted by LMS without a canceller (eq.mode = lms, rc.taps = 0)."""
    w0 = np.zeros(24)
    w0[0] = 1.0
    n = signal.shape[0] - 23
    ref = np.zeros(n)

    def run():
        return ffe_dfe_lms(signal, w0.copy(), np.array([0.4]), LEVELS, THRESH, np.zeros(1),
                           ref, 0, 1e-5, 1e-5, 1.0)

    run()
    benchmark.pedantic(run, rounds=5, iterations=1)
    sps = n / benchmark.stats.stats.min
    benchmark.extra_info.update(symbols_per_s=sps)
    print(f"\nLMS FFE 24 + DFE 1 (no RC): {sps / 1e6:.2f} M symbols/s")


@pytest.mark.parametrize("pulse_ui,echo", [(64, False), (96, True), (128, True), (256, True)])
def test_pulse_engine_cost_of_a_long_pulse(benchmark, pulse_ui, echo):
    extra = ["reflections.echo_delay_ui=60", "rc.taps=4"] if echo else []
    system = build(Config.default().with_overrides(
        [f"link.pulse_ui={pulse_ui}", "noise.rj_ui=0", "link.target_errors=0"] + extra))
    link = system.link
    n = 1_000_000
    simulate(system, symbols=20_000)
    benchmark.pedantic(lambda: simulate(system, symbols=n), rounds=2, iterations=1)
    sps = n / benchmark.stats.stats.min
    benchmark.extra_info.update(pulse_ui_kept=link.pulse.n_ui, symbols_per_s=sps)
    print(f"\npulse_ui {pulse_ui} (kept {link.pulse.n_ui} UI){' + echo + RC 4' if echo else ''}:"
          f" {sps / 1e6:.2f} M symbols/s")


def test_rc_vs_dense_ffe_ber(benchmark):
    base = ["link.pulse_ui=96", "noise.rj_ui=0", "tx.snr_db=22", "link.target_errors=0"]
    echo = ["reflections.echo_delay_ui=60", "reflections.echo_db=-20"]
    cases = {"no echo, FFE 24 + DFE 1": [],
             "echo, FFE 24 + DFE 1": echo,
             "echo, FFE 24 + DFE 1 + RC 4 (pulse)": echo + ["rc.taps=4"],
             "echo, FFE 24 + DFE 1 + RC 4 (adaptive)": echo + ["rc.taps=4", "rc.mode=adaptive"],
             "echo, LMS FFE 24 + DFE 1 + RC 4 (adaptive)": echo + ["rc.taps=4",
                                                                  "rc.mode=adaptive",
                                                                  "eq.mode=lms"],
             "echo, dense FFE 28 + DFE 1": echo + ["ffe.taps=28"],
             "echo, FFE 24 + dense DFE 5": echo + ["dfe.taps=5"]}
    compare_links(benchmark, base, cases, 3_000_000, extra=lambda r: f", rc lags {r.rc_lags}")
