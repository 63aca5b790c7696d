"""The clock-recovery loop as the statistical engine sees it (serdes/engines/cdr_stat.py):
the loop's static phase shift under a large untracked SJ, predicted from the detector's
S-curve, against the closed loop itself; the link handed to the engine."""

import dataclasses

import numpy as np
import pytest

from serdes import cdr as loop
from serdes.build import build
from serdes.config import Config
from serdes.engines.cdr import CdrFrontEnd
from serdes.engines.cdr_stat import stat_link
from serdes.engines.cdr_stat import loop_state, response_for
from serdes.txjitter import TxJitter

FIXED_CTLE = ["ctle.auto=false", "ctle.g_dc_db=-18", "ctle.g_dc2_db=-1"]


@pytest.fixture(scope="module")
def system():
    return build(Config.default().with_overrides(["cdr.mode=mm", *FIXED_CTLE]))


@pytest.fixture(scope="module")
def front(system):
    return CdrFrontEnd(system.link, 1, system.cdr)


def _trace(system, front, txj, n=1_200_000, skip=300_000):
    fe = CdrFrontEnd(system.link, 1, system.cdr, txj, calibration=front.cal)
    fe.trace = []
    g = np.random.default_rng(5)
    for k in range(0, n, 1 << 16):
        m = min(1 << 16, n - k)
        fe(fe.levels[g.integers(0, 4, m)], k)
    ph = np.concatenate(fe.trace)
    kn = np.arange(ph.shape[0]) - fe.latency
    return (ph - fe.tx_source.slow(int(kn[0]), ph.shape[0]))[skip:]


def test_loop_shift_under_sj_matches_the_closed_loop(system, front):
    """0.09 UI of TX SJ at 10 MHz (above the 4 MHz bandwidth: the loop follows little
    of it). The detector's S-curve is not odd about the lock point, so the swing has a
    mean output and the loop settles where it is zero: mu from the S-curve averaged
    over the swing and the wander. The closed loop's mean sampling offset agrees within
    4 standard errors (batch means over blocks of two SJ periods, 10625 UI, so the SJ
    averages out of each; far longer than the loop's correlation time ~1 / (2 pi 4 MHz)
    = 2100 UI), and the shift is real (the linear model says 0)."""
    off = _trace(system, front, TxJitter(sj_ui=0.09, sj_hz=1e7))
    lk = stat_link(dataclasses.replace(system, tx_jitter=TxJitter(sj_ui=0.09, sj_hz=1e7)),
                   front)
    mu = lk.impairments.offset_ui
    blk = 10625
    nb = off.shape[0] // blk
    blocks = off[:nb * blk].reshape(nb, blk).mean(axis=1)
    se = blocks.std(ddof=1) / np.sqrt(nb)
    print(f"\nshift: closed loop {off.mean():.5f} +- {se:.5f} UI, model {mu:.5f} UI")
    assert abs(off.mean() - mu) < 4 * se + 5e-4   # + the S-curve's 0.01 UI grid, interpolated
    assert off.mean() < -4 * se and mu < -0.003
    # the untracked swing: amplitude from the rms about the mean, less the wander
    amp = np.sqrt(2 * max(off.var() - lk.impairments.wander_ui ** 2, 0.0))
    assert amp == pytest.approx(lk.impairments.sj_ui, rel=0.05)


def test_small_swing_keeps_the_linear_loop(system, front):
    """Without SJ the operating point is the lock point and the detector gain the
    calibrated slope (within the S-curve's grid interpolation), so H is the linear
    model's."""
    resp = response_for(system, front)
    mu, dither, kpd = loop_state(front, resp, 0.0)
    assert abs(mu) < 2e-3
    assert kpd == pytest.approx(front.cal.kpd, rel=0.1)
    assert dither >= 1 / (np.sqrt(12) * system.cdr.pi_steps)
    f = 1e5
    keep = loop.untracked(f, kpd, front.kp, front.ki, system.cdr.latency_ui,
                          system.link.ui_s)
    lk = stat_link(dataclasses.replace(system, tx_jitter=TxJitter(sj_ui=2.0, sj_hz=f)),
                   front)
    assert lk.impairments.sj_ui == pytest.approx(2.0 * keep, rel=0.1)
    assert lk.pulse is system.link.pulse


def test_jtol_template_values():
    """The mask's published values (serdes/jtol.py names the source): 5 fb / (664000 f)
    UI pp from fb/664000 to fb/6640 (0.05 UI pp at the corner: continuous), 0.05 UI pp
    to 10 fb/6640, unspecified outside; returned as peak (half)."""
    from serdes.jtol import template_ui

    fb = 53.125e9
    f = np.array([fb / 664000 * 0.99, fb / 664000, 1e6, fb / 6640, 2e7, 10 * fb / 6640,
                  10 * fb / 6640 * 1.01])
    t = template_ui(f, fb)
    assert np.isnan(t[0]) and np.isnan(t[-1])
    np.testing.assert_allclose(t[1:-1], [2.5, 5 * fb / (664000 * 1e6) / 2, 0.025, 0.025,
                                         0.025], rtol=1e-12)


def test_jtol_points_local_and_dask_agree():
    """`serdes jtol` runs its frequencies on the sweep machinery: in this process, in a
    local worker process (spawn, one BLAS thread) and on a Dask cluster (a LocalCluster
    in this process) the rows are the same (a cheap setting: fixed phase, BER 1e-3,
    counted runs of 20 000 symbols)."""
    pytest.importorskip("distributed", reason="Dask is an optional extra: pip install "
                        "'serdes[dask]'")
    from distributed import LocalCluster

    from serdes.jtol_sweep import run_jtol

    cfg = Config.default().with_overrides([*FIXED_CTLE, "dfe.taps=0", "link.precoding=false",
                                           "noise.eta0_v2_per_ghz=1e-7"])
    kw = dict(target=1e-3, method="both", symbols=20_000)
    freqs = [1e5, 3e5]  # below f_floor: quasi-static SJ, one statistical solve

    def strip(rows):
        return [{k: v for k, v in r.items() if k != "elapsed_s"} for r in rows]

    here = strip(run_jtol(cfg, freqs, workers=0, **kw))
    assert all(r["status"] == "ok" for r in here), here
    assert all(r["counted_sj_ui"] > 0 and r["stat_sj_ui"] > 0 for r in here)
    local = strip(run_jtol(cfg, freqs, workers=1, **kw))
    with LocalCluster(n_workers=1, threads_per_worker=1, processes=False,
                      dashboard_address=None) as cluster:
        remote = strip(run_jtol(cfg, freqs, scheduler=cluster.scheduler_address, **kw))
    assert remote == local
    assert [r["counted_runs"] for r in here] == [r["counted_runs"] for r in local]


@pytest.mark.parametrize("sj_ui, sj_hz", [(0.0, 1e6), (0.25, 1e6)])
def test_wander_matches_the_closed_loop(system, front, sj_ui, sj_hz):
    """The loop's wander (rms about the SJ's fitted fundamental and the mean) against
    the model handed to the engine: the detector's long-run noise and local gain averaged
    over the swing (serdes/engines/cdr_stat.py, note 4). 0.25 UI at 1 MHz leaves ~0.07 UI
    untracked, where the noise is larger and the slope smaller than at lock: the model
    from the lock point alone was 16 % low there. Tolerance: 4 standard errors of the
    mean square from batch means over blocks of 16384 UI (8x the loop's correlation
    time ~2100 UI)."""
    txj = TxJitter(sj_ui=sj_ui, sj_hz=sj_hz)
    off = _trace(system, front, txj, n=4_300_000, skip=300_000)
    t = np.arange(off.shape[0]) * 2 * np.pi * sj_hz * system.link.ui_s
    x = np.vstack([np.ones_like(t), np.sin(t), np.cos(t)]).T
    r = off - x @ np.linalg.lstsq(x, off, rcond=None)[0]
    blk = 16384
    nb = r.shape[0] // blk
    ms = (r[:nb * blk] ** 2).reshape(nb, blk).mean(axis=1)
    se = ms.std(ddof=1) / np.sqrt(nb)
    lk = stat_link(dataclasses.replace(system, tx_jitter=txj), front)
    w2 = lk.impairments.wander_ui ** 2
    print(f"\nwander: closed loop {np.sqrt(ms.mean()):.5f} UI rms (+-{se / ms.mean() / 2:.1%}), "
          f"model {np.sqrt(w2):.5f}")
    assert abs(ms.mean() - w2) < 4 * se


def test_illinois_solves_both_ways():
    """The one regula falsi of serdes/jtol.py, on a known root: log10 BER / target =
    3 log10(x / r) (BER up 10x per 10^(1/3) in amplitude). In the amplitude and in its
    logarithm it returns a point with |g| < 0.05 (within 10^(0.05 / 3) of r) or the
    bracket's passing end, never one failing by more than that tolerance."""
    import math

    from serdes.rootfind import illinois

    for r in (0.07, 2.3, 2100.0):
        calls = []

        def g(x):
            calls.append(x)
            return 3 * math.log10(x / r)

        for log in (False, True):
            lo, hi = r / 3, r * 2
            x = illinois(g, lo, g(lo), hi, g(hi), log=log)
            assert g(x) < 0.05 and x > r * 10 ** (-0.05 / 3) * 0.99
            assert len(calls) < 40


def test_long_run_variance_is_the_plain_lag_sum():
    """The detector noise's long-run variance (an FFT of a 5-smooth padded length) equals
    the autocovariance summed over the lags under the Parzen window, computed plainly."""
    from serdes.engines.cdr_stat import _long_run

    g = np.random.default_rng(3)
    n, lags = 5003, 64   # an odd length: the padded FFT is not 2 n
    e = np.convolve(g.standard_normal(n + 7), [1.0, 0.6, -0.3, 0.2], mode="valid")[:n]
    d = e - e.mean()
    ac = np.array([d[: n - k] @ d[k:] / n for k in range(lags + 1)])
    x = np.arange(lags + 1) / (lags + 1)
    w = np.where(x <= 0.5, 1 - 6 * x ** 2 + 6 * x ** 3, 2 * (1 - x) ** 3)
    plain = ac[0] + 2 * (w[1:] * ac[1:]).sum()
    assert _long_run(e, lags) == pytest.approx(plain, rel=1e-12)


def test_s_curve_far_side_matches_a_long_independent_record():
    """The S-curve the statistical loop models run on (``measure``), beyond the lock
    point's neighbourhood on the default link with the MM loop (-0.17..-0.11 UI: where
    the tracking error's early tail lies at 1-1.7 MHz of TX SJ), against the detector's
    mean output over four independent 2^20-symbol records (their own seeds; the TX
    noise, RX noise and first-order RX RJ as ``measure`` puts them). Tolerance: 4
    standard errors of the difference, each mean's from the detector noise's long-run
    variance there (the reference's four records and ``measure``'s one long record).
    The S-curve's shape came from a 2^17-symbol record and only its level from the long
    one: it read 0.0034-0.0038 high at -0.17..-0.13 UI (6 % of S there), which made the
    restoring force at the early extreme too strong and the modelled tail too light."""
    from serdes.engines.cdr_stat import NOISE_SYMBOLS, _with_tx_noise
    from serdes.kernels.fir import fir_valid

    sys_ = build(Config.default().with_overrides(["cdr.mode=mm"]))
    fe = CdrFrontEnd(sys_.link, 1, sys_.cdr)
    resp = response_for(sys_, fe)
    p = fe.pulse
    slope = (p.at_offset(1.0) - p.at_offset(-1.0)) * p.m / 2.0
    sd = np.sqrt(sys_.link.impairments.rj_ui ** 2 * float(np.mean(fe.levels ** 2))
                 * float(slope @ slope))
    phases = np.array([-0.17, -0.15, -0.13, -0.11])
    reps, n = 4, 1 << 20
    ref = np.zeros(phases.shape[0])
    for rep in range(reps):
        g = np.random.default_rng(777 + rep)
        m = n + fe.hist
        a = _with_tx_noise(fe, fe.levels[g.integers(0, 4, m)], 888 + rep)
        w = fir_valid(np.concatenate([np.zeros(fe.noise_fir.shape[0] - 1),
                                      g.standard_normal(n)]), fe.noise_fir)
        w = w + sd * g.standard_normal(w.shape[0])
        ref += [float(np.mean(fe._open_loop(a, np.zeros(m), w, fe.cal.lock_ui + x)
                              - fe.cal.bias)) for x in phases] / np.float64(reps)
    model = np.interp(phases, resp.grid, resp.s)
    se = np.sqrt(resp.lr_at(phases) * (1.0 / (reps * n) + 1.0 / NOISE_SYMBOLS))
    assert np.all(np.abs(model - ref) < 4 * se), (model - ref, se)
