"""The bang-bang (Alexander) detector with 2x sampling (cdr.mode = "bb"): the kernel
against the plain loop, the calibration's open loop against the kernel, chunk and seed
invariance, lock from 20 random phases, +-200 ppm tracking, and the statistical model's
S-curve against the counted detector."""

import dataclasses

import numpy as np
import pytest

import naive
from serdes.build import build
from serdes.config import Config
from serdes.engines import cdr_stat
from serdes.engines.cdr import CdrFrontEnd
from serdes.kernels import cdr as kc
from serdes.txjitter import TxJitter

LEVELS = np.array([-1.0, -1 / 3, 1 / 3, 1.0])


@pytest.fixture(scope="module")
def system():
    return build(Config.default().with_overrides(["cdr.mode=bb"]))


@pytest.fixture(scope="module")
def front(system):
    return CdrFrontEnd(system.link, 1, system.cdr)


def _drive(fe, n, seed=3, chunk=None):
    g = np.random.default_rng(seed)
    a = fe.levels[g.integers(0, fe.levels.shape[0], n)]
    chunk = chunk or n
    return np.concatenate([fe(a[k:k + chunk], k) for k in range(0, n, chunk)])


@pytest.mark.parametrize("aggressors", [False, True])
def test_kernel_is_the_plain_loop(aggressors):
    rng = np.random.default_rng(11)
    n_ui, q, big_p, lat, n = 6, 16, 2, 3, 400
    table, dtable, d2table = (rng.normal(size=(q + 3, n_ui)) for _ in range(3))
    hist = n_ui - 1 + 2 * big_p
    a = rng.choice(LEVELS, size=n + hist)
    tau = rng.normal(scale=0.3, size=a.shape[0])
    drx = rng.normal(scale=0.2, size=n)
    w, we = rng.normal(scale=0.05, size=n), rng.normal(scale=0.05, size=n)
    agg = {}
    if aggressors:
        agg = {"xv": rng.normal(size=n + 2 * big_p), "xs": rng.normal(size=n + 2 * big_p)}
    args = (a, tau, drx, w, table, dtable, d2table, q, big_p, np.array([-1.0, 1.0]), 1.3, 3,
            0.01, 0.05, 0.002, 8.0, 5)
    got = kc.cdr_sampler(*args, np.array([0.3, 0.0, 0.0, 0.0, 0.0]), np.zeros(lat + 1),
                         we=we, **agg)
    ref = naive.cdr_sampler(*args, 0.3, lat, agg.get("xv"), agg.get("xs"), we=we)
    assert np.any(got[2] != 0) and np.any(got[2] == 0)  # transitions and none
    for g, r in zip(got, ref):
        np.testing.assert_allclose(g, r, rtol=1e-12, atol=1e-12)


def test_open_loop_is_the_kernel(front):
    """The vectorized open loop of the calibration and of cdr_stat gives the kernel's raw
    Alexander outputs at fixed phases (with the edge on either side of a UI border)."""
    g = np.random.default_rng(7)
    n = 20000 + front.hist
    a = front.levels[g.integers(0, 4, n)]
    w = g.normal(scale=1e-3, size=n - front.hist)
    for ph in (0.0, -0.03, 0.2711, 0.49, -0.4999999999, -0.7):
        got = front._open_loop(a, np.zeros(n), w, ph)
        ref = front._open_loop_kernel(a, np.zeros(n), w, ph)
        np.testing.assert_array_equal(got, ref)


def test_chunks_and_seed(system, front):
    sys_ = dataclasses.replace(system, tx_jitter=TxJitter(rj_ui=0.01, sj_ui=0.5, sj_hz=1e6,
                                                          ppm=50))
    runs = []
    for chunk in (40000, 4093):
        fe = CdrFrontEnd(sys_.link, 9, sys_.cdr, sys_.tx_jitter, calibration=front.cal)
        runs.append(_drive(fe, 40000, chunk=chunk))
    np.testing.assert_array_equal(runs[0], runs[1])
    other = _drive(CdrFrontEnd(sys_.link, 10, sys_.cdr, sys_.tx_jitter,
                               calibration=front.cal), 40000)
    assert not np.array_equal(runs[0], other)


LOCK_SYMBOLS = 32768  # the default loop (4 MHz, damping 0.7, 32 UI latency) locks within


def _tol(system, fe, n):
    # 5 sigma of the mean of n phases: the dither (model rms) is correlated over about
    # 1 / (2 pi B T) UI, so the mean has ~ n / that independent samples
    corr = 1 / (2 * np.pi * system.cdr.bandwidth_hz * system.link.ui_s)
    return 5 * fe.model()["dither_rms_ui"] / np.sqrt(n / corr), corr


def test_lock_from_20_random_phases(system, front):
    """From 20 random starting phases in [-0.5, 0.5) UI the bang-bang loop (tracking
    gains, no acquisition gear) settles within LOCK_SYMBOLS on the peak (the lock
    point of lock = "peak") or the peak one UI away (a slip while acquiring: only the
    symbols' labels move)."""
    rng = np.random.default_rng(2024)
    tol, _ = _tol(system, front, 8192)
    for phase in rng.uniform(-0.5, 0.5, 20):
        s = dataclasses.replace(system.cdr, initial_phase_ui=float(phase), acquire_gear=1.0)
        fe = CdrFrontEnd(system.link, 1, s, calibration=front.cal)
        fe.trace = []
        _drive(fe, LOCK_SYMBOLS + 8192, seed=int(phase * 1e6) % 1000)
        ph = np.concatenate(fe.trace)[LOCK_SYMBOLS:]
        dist = ph - np.round(ph)
        assert np.all(np.abs(dist) < 0.1), (phase, np.abs(dist).max())
        assert abs(np.mean(dist)) < tol, (phase, np.mean(dist), tol)


@pytest.mark.parametrize("ppm", [200.0, -200.0])
def test_tracks_200_ppm(system, front, ppm):
    """A +-200 ppm TX-RX offset: after lock the sampling phase follows the TX clock's
    ramp. The tracked rate is the least-squares slope of the phase's offset from the
    ramp over 32 blocks of 8192 UI after lock (block means: the wander is correlated
    over ~1 / (2 pi B T) = 2100 UI, far less than a block, so they are nearly
    independent); the tolerance is 5 standard errors of that slope from the blocks'
    own scatter (~0.05 ppm). No cycle slip, lock before the fit starts."""
    fe = CdrFrontEnd(system.link, 4, system.cdr, TxJitter(ppm=ppm), calibration=front.cal)
    fe.trace = []
    start, blocks, blk = 98304, 32, 8192  # acquisition (gear) ends at 65536
    n = start + blocks * blk
    _drive(fe, n, chunk=8192)
    ph = np.concatenate(fe.trace)[start:]
    k = np.arange(start, n) - fe.latency  # nominal symbol of each output
    ramp = fe.tx_source.slow(k[0], k.shape[0])  # the TX clock's phase (UI)
    assert abs(abs(ramp[-1] - ramp[0]) / (k[-1] - k[0]) - abs(ppm) * 1e-6) < 1e-12
    off = (ph - ramp).reshape(blocks, blk).mean(axis=1)
    kb = k.reshape(blocks, blk).mean(axis=1)
    (slope, icpt), res, *_ = np.polyfit(kb, off, 1, full=True)
    se = np.sqrt(res[0] / (blocks - 2) / np.sum((kb - kb.mean()) ** 2))
    assert abs(slope) < 5 * se, (slope * 1e6, 5 * se * 1e6)
    assert 5 * se < 0.005 * abs(ppm) * 1e-6  # the check resolves 0.5 % of the offset
    # a type-II loop has no static phase error: the mean offset is the lock point (the
    # peak, or one UI away) within 5 standard errors of the block means
    m = np.mean(off)
    assert abs(m - np.round(m)) < 5 * np.std(off, ddof=1) / np.sqrt(blocks), m
    summ = fe.summary()
    assert summ["lock_symbols"] is not None and summ["lock_symbols"] < start
    assert summ["cycle_slips"] == 0


def test_stat_s_curve_is_the_counted_detector(system, front, monkeypatch):
    """cdr_stat.measure gives the bang-bang S-curve: its slope at the lock point is the
    calibration's gain (its shape from the calibration's records: to rounding of the
    means, with the TX noise left out as the calibration leaves it), and its level at
    the peak, from the long record, is within 4 sampling sigmas of zero."""
    monkeypatch.setattr(cdr_stat, "NOISE_SYMBOLS", 1 << 16)  # the long record, short here
    monkeypatch.setattr(cdr_stat, "_with_tx_noise", lambda fe, a, seed: a)
    resp = cdr_stat.measure(front)
    c = front.cal
    assert c.kpd > 0
    i0 = int(np.argmin(np.abs(resp.grid)))
    # bias subtracted at the peak; the level is the long record's (module notes, 5)
    assert abs(resp.s[i0]) < 4 * np.sqrt(resp.noise_lr * (2.0 ** -16 + 2.0 ** -17))
    # falls through zero at the lock point: early -> positive, late -> negative
    assert resp.s[i0 - 5] > 0 > resp.s[i0 + 5]
    slope = -(np.interp(0.03, resp.grid, resp.s) - np.interp(-0.03, resp.grid, resp.s)) / 0.06
    assert abs(slope - c.kpd) < 1e-6 * c.kpd, (slope, c.kpd)
    assert resp.noise_lr > 0
