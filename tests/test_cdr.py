"""Clock recovery and TX jitter (serdes/cdr.py, serdes/kernels/cdr.py, serdes/engines/cdr.py):
the kernel against a plain loop, the TX-jitter sample against the exact jittered pulse
sum, chunk and seed invariance, lock from random phases, frequency tracking, the
measured jitter transfer against the linear model, and the loop model's closed forms."""

import dataclasses
import json

import numpy as np
import pytest

import naive
from serdes import cdr as loop
from serdes.build import build
from serdes.config import Config
from serdes.engines.cdr import LOOKAHEAD, TABLE_Q, CdrFrontEnd
from serdes.engines.cdr_stat import stat_link
from serdes.engines.pulse import PulseFrontEnd
from serdes.engines.run import front_end
from serdes.errors import ConfigError
from serdes.kernels import cdr as kc
from serdes.txjitter import TxJitter

LEVELS = np.array([-1.0, -1 / 3, 1 / 3, 1.0])
# the CTLE gains the search picks for the default link, fixed to skip the search
FIXED_CTLE = ("--set", "ctle.auto=false", "--set", "ctle.g_dc_db=-18", "--set",
              "ctle.g_dc2_db=-1")


@pytest.fixture(scope="module")
def system():
    return build(Config.default().with_overrides(["cdr.mode=mm"]))


@pytest.fixture(scope="module")
def cal(system):
    return CdrFrontEnd(system.link, 1, system.cdr).cal


def _drive(fe, n, seed=3, chunk=None):
    g = np.random.default_rng(seed)
    a = fe.levels[g.integers(0, fe.levels.shape[0], n)]
    chunk = chunk or n
    out = [fe(a[k:k + chunk], k) for k in range(0, n, chunk)]
    return np.concatenate(out)


# ------------------------------------------------------------------ kernel
@pytest.mark.parametrize("mode", [1, 2])
def test_kernel_is_the_plain_loop(mode):
    rng = np.random.default_rng(mode)
    n_ui, q, big_p, lat = 6, 16, 2, 3
    table = rng.normal(size=(q + 3, n_ui))
    dtable = rng.normal(size=(q + 3, n_ui))
    d2table = rng.normal(size=(q + 3, n_ui))
    hist = n_ui - 1 + 2 * big_p
    a = rng.choice(LEVELS, size=400 + hist)
    tau = rng.normal(scale=0.3, size=a.shape[0])
    drx = rng.normal(scale=0.2, size=400)
    w = rng.normal(scale=0.05, size=400)
    args = (a, tau, drx, w, table, dtable, d2table, q, big_p, LEVELS, 1.3, mode, 0.01, 0.05, 0.002,
            8.0, 5)
    state = np.array([0.3, 0.0, 0.0, 0.0, 0.0])
    got = kc.cdr_sampler(*args, state, np.zeros(lat + 1))
    ref = naive.cdr_sampler(*args, 0.3, lat)
    for g, r in zip(got, ref):
        np.testing.assert_allclose(g, r, rtol=1e-12, atol=1e-12)


def test_kernel_refuses_bad_arguments():
    t = np.zeros((5, 3))
    with pytest.raises(ConfigError, match="tau/drx/w"):
        kc.cdr_sampler(np.zeros(20), np.zeros(3), np.zeros(13), np.zeros(13), t, t, t, 2, 2,
                       LEVELS, 1.0, 1, 0.0, 0.1, 0.0, 8, 0, np.zeros(5), np.zeros(1))
    with pytest.raises(ConfigError, match="state"):
        kc.cdr_sampler(np.zeros(20), np.zeros(20), np.zeros(14), np.zeros(14), t, t, t, 2, 2,
                       LEVELS, 1.0, 1, 0.0, 0.1, 0.0, 8, 0, [0.0] * 5, np.zeros(1))


def test_calibration_open_loop_is_the_kernel(system):
    """The calibration's vectorized open loop (one FIR of the interpolated row) gives the
    CDR kernel's raw MM outputs in mode 0 to rounding, at phases inside a UI, on its
    edge and past it (a slipped window)."""
    fe = CdrFrontEnd(system.link, 1, dataclasses.replace(system.cdr, mode="off"))
    g = np.random.default_rng(7)
    n = 20000 + fe.hist
    a = fe.levels[g.integers(0, 4, n)]
    w = g.normal(scale=1e-3, size=n - fe.hist)
    for ph in (0.0, -0.03, 0.2711, 0.49, -0.4999999999, 0.55, -0.7):
        got = fe._open_loop(a, np.zeros(n), w, ph)
        ref = fe._open_loop_kernel(a, np.zeros(n), w, ph)
        np.testing.assert_allclose(got, ref, rtol=0, atol=1e-12)


def test_mm_open_loop_is_the_numpy_detector_bit_for_bit():
    """The calibration's compiled slicer + MM detector equals the NumPy expression it
    replaced (searchsorted decisions, then (x_{k+1} d_k - x_k d_{k+1}) / h0) to the last
    bit, also for samples exactly on a threshold and for 2 to 8 levels: the calibrated
    lock points and gains, and every result built on them, stay the same."""
    g = np.random.default_rng(11)
    for _ in range(300):
        n = int(g.integers(1, 3000))
        lv = np.sort(g.standard_normal(int(g.integers(2, 9))))
        h0 = float(g.uniform(0.1, 2.0))
        x = g.standard_normal(n) * g.uniform(0.1, 3.0)
        mids = 0.5 * (lv[:-1] + lv[1:])
        k = min(n, mids.shape[0])
        x[:k] = mids[:k] * h0                          # on the thresholds
        d = lv[np.searchsorted(mids, x / h0, side="left")]
        ref = (x[1:] * d[:-1] - x[:-1] * d[1:]) / h0
        got = kc.mm_open_loop(x, lv, h0)
        assert got.shape == ref.shape and np.array_equal(got, ref)


def test_tx_jitter_sample_is_the_jittered_pulse_sum(system):
    """With the loop open at a fixed phase, every sample equals sum_j a_{k-j}
    p(jT - tau_{k-j}) from the fine pulse (4-point Lagrange, an independent evaluation)
    within the bound of what the kernel leaves out, per sample: the third-order
    remainder |D|^3 / 6 max|p'''| of the expansion in D = tau_k - tau_{k-j}, the linear
    interpolation between table rows max|p''| / (8 Q^2), the nearest-row derivatives
    (|D| max|p''| + D^2 / 2 max|p'''|) / (2 Q), each times |a_{k-j}|."""
    link = system.link
    txj = TxJitter(rj_ui=0.02, sj_ui=0.3, sj_hz=2e6, dcd_ui=0.02, buj_ui=0.01)
    fe = CdrFrontEnd(link, 5, dataclasses.replace(system.cdr, mode="off"), txj)
    fe.noise_fir = np.zeros(1)
    fe.rx_jitter.rj_ui = 0.0
    n = 600
    g = np.random.default_rng(1)
    a = fe.levels[g.integers(0, 4, n)]
    x = fe(a, 0)
    tau = fe.tx_source.offsets(0, n)
    p, m = link.pulse, link.pulse.m
    ref = np.zeros(n)
    for i in range(n):
        k = i - LOOKAHEAD  # nominal symbol of output i
        if k < 0:
            continue
        for j in range(p.n_ui):
            s = k - j
            if 0 <= s < n:
                pos = p.phase + j * m + (0.0 - tau[s]) * m + tau[k] * m - tau[k] * m
                ref[i] += a[s] * naive.lagrange4(p.fine, pos)
    # the sampler's offset c = -tau_k (phase 0); the pulse of symbol s is at jT - tau_s
    # relative to the sampler, so the reference above is the exact sum at that instant
    mx = {r: float(np.max(np.abs(np.diff(p.fine, r)))) * m ** r for r in (2, 3)}
    bound = np.zeros(n)
    for i in range(LOOKAHEAD + p.n_ui, n):
        k = i - LOOKAHEAD
        s = k - np.arange(p.n_ui)
        d = np.abs(tau[k] - tau[s])
        bound[i] = np.sum(np.abs(a[s]) * (d ** 3 / 6 * mx[3] + mx[2] / (8 * TABLE_Q ** 2)
                                          + (d * mx[2] + d * d / 2 * mx[3]) / (2 * TABLE_Q)))
    sel = slice(LOOKAHEAD + p.n_ui, n)
    err = np.abs(x[sel] - ref[sel])
    assert np.all(err <= bound[sel]), np.max(err / bound[sel])
    # the bound takes global maxima (loose); the error itself must stay small against
    # the RX noise alone, the smallest noise at the ADC input
    assert np.max(err) < 0.1 * np.sqrt(link.noise.variance), np.max(err)


# ------------------------------------------------------------------ invariance
def test_chunks_and_seed(system, cal):
    sys_ = dataclasses.replace(system, tx_jitter=TxJitter(rj_ui=0.01, sj_ui=0.5, sj_hz=1e6,
                                                          ppm=50))
    runs = []
    for chunk in (70000, 4093):
        fe = CdrFrontEnd(sys_.link, 9, sys_.cdr, sys_.tx_jitter, calibration=cal)
        runs.append(_drive(fe, 70000, chunk=chunk))
    np.testing.assert_array_equal(runs[0], runs[1])
    other = _drive(CdrFrontEnd(sys_.link, 10, sys_.cdr, sys_.tx_jitter, calibration=cal),
                   70000)
    assert not np.array_equal(runs[0], other)


def test_off_keeps_the_fixed_phase_front_end():
    s = build(Config.default())
    assert isinstance(front_end(s, "pulse", 1), PulseFrontEnd)
    s2 = build(Config.default().with_overrides(["tx_jitter.rj_ui=0.01"]))
    assert isinstance(front_end(s2, "pulse", 1), CdrFrontEnd)
    with pytest.raises(ConfigError, match="pulse engine"):
        front_end(s2, "waveform", 1)


# ------------------------------------------------------------------ lock and tracking
LOCK_SYMBOLS = 32768  # the default loop (4 MHz, damping 0.7, 32 UI latency) locks within


def test_lock_from_20_random_phases(system, cal):
    """From 20 random starting phases in [-0.5, 0.5) UI the phase settles within
    LOCK_SYMBOLS on a lock point: the peak, or the peak one UI away (a cycle slip during
    acquisition, which only relabels the symbols)."""
    rng = np.random.default_rng(2024)
    # the mean of 8192 phases: the dither (model rms) is correlated over about
    # 1 / (2 pi B T) UI, so the mean has ~8192 / that independent samples; 5 sigma
    fe0 = CdrFrontEnd(system.link, 1, system.cdr, calibration=cal)
    corr = 1 / (2 * np.pi * system.cdr.bandwidth_hz * system.link.ui_s)
    tol = 5 * fe0.model()["dither_rms_ui"] / np.sqrt(8192 / corr)
    for phase in rng.uniform(-0.5, 0.5, 20):
        # the tracking loop itself (no acquisition gear)
        s = dataclasses.replace(system.cdr, initial_phase_ui=float(phase), acquire_gear=1.0)
        fe = CdrFrontEnd(system.link, 1, s, calibration=cal)
        fe.trace = []
        _drive(fe, LOCK_SYMBOLS + 8192, seed=int(phase * 1e6) % 1000)
        ph = np.concatenate(fe.trace)[LOCK_SYMBOLS:]
        dist = ph - np.round(ph)
        assert np.all(np.abs(dist) < 0.1), (phase, np.abs(dist).max())
        assert abs(np.mean(dist)) < tol, (phase, np.mean(dist), tol)


@pytest.mark.parametrize("ppm", [200.0, -200.0])
def test_tracks_200_ppm(system, ppm):
    """A +-200 ppm TX-RX offset is tracked by the integral path: no errors in the counted
    symbols, the integrator holds the offset, and the mean phase stays on the peak (a
    type-II loop has no static phase error)."""
    from serdes.engines.run import simulate

    s = dataclasses.replace(system, tx_jitter=TxJitter(ppm=ppm))
    r = simulate(s, symbols=250_000, target_errors=0)
    c = r.cdr
    assert r.bit_errors == 0 and r.symbols > 100_000
    assert c["lock_symbols"] is not None
    assert abs(c["tracked_ppm"] - ppm) < 0.03 * abs(ppm), c["tracked_ppm"]
    assert abs(c["phase_mean_ui"]) < 0.02 and c["cycle_slips"] == 0


def test_fixed_phase_runs_away_with_ppm():
    from serdes.engines.run import simulate

    s = build(Config.default().with_overrides(["tx_jitter.ppm=200"]))
    r = simulate(s, symbols=100_000, target_errors=0)
    assert r.cdr is None and r.ser > 0.1


# ------------------------------------------------------------------ jitter transfer
def test_measured_jitter_transfer_matches_the_model():
    """|H| measured with 0.03 UI TX SJ on a 16 MHz loop against the sampled-loop model:
    -3 dB frequency within 10 %, peaking within 0.5 dB (both read off the same
    frequency grid, the crossing interpolated in log f)."""
    from serdes.jtol import Jtol

    s = build(Config.default().with_overrides(["cdr.mode=mm", "cdr.bandwidth_hz=16e6",
                                               "cdr.warmup_symbols=20000"]))
    jt = Jtol(s)
    f = np.array([2.5, 4, 5, 6, 8, 11, 14, 17, 20, 25]) * 1e6
    meas = np.array([20 * np.log10(abs(jt.measure_jtf(fi, min_symbols=1 << 19))) for fi in f])
    model = 20 * np.log10(np.abs(jt.model_jtf(f)))

    def crossing(db):
        i = int(np.nonzero(db < -3)[0][0])
        t = (-3 - db[i - 1]) / (db[i] - db[i - 1])
        return 10 ** (np.log10(f[i - 1]) + t * np.log10(f[i] / f[i - 1]))

    assert abs(crossing(meas) / crossing(model) - 1) < 0.10, (meas, model)
    assert abs(meas.max() - model.max()) < 0.5, (meas, model)


def test_gains_give_the_bandwidth():
    """The continuous-time gains put the sampled model's -3 dB point within 3 % of the
    bandwidth asked for without latency, and its damping sets the peaking (type-II:
    1 + 2 zeta^2 ... ; zeta = 0.7 peaks at about 2.1 dB)."""
    ui = 1 / 53.125e9
    s = loop.CdrSettings(mode="mm", bandwidth_hz=4e6, damping=0.7, latency_ui=0)
    kp, ki = loop.gains(s, 0.5, ui)
    bw, peak = loop.bandwidth_and_peaking(0.5, kp, ki, 0, ui)
    assert abs(bw / 4e6 - 1) < 0.03
    # closed form peaking of the continuous type-II loop at zeta = 0.7
    w = np.logspace(-2, 2, 20001)
    h = np.abs((2j * 0.7 * w + 1) / (-(w ** 2) + 2j * 0.7 * w + 1))
    assert abs(peak - 20 * np.log10(h.max())) < 0.05


@pytest.mark.parametrize("bw,zeta,lat", [(4e6, 0.7, 32), (1e6, 1.5, 8), (4e6, 0.3, 0),
                                          (20e6, 0.7, 64)])
def test_noise_gain_is_parseval(bw, zeta, lat):
    """sum h^2 of the loop run in the time domain equals Parseval's mean of |H|^2 over
    2^22 equally spaced frequencies of the sampled-loop model (the frequency grid's
    aliasing error is far below 1e-9 for loops of these bandwidths)."""
    ui = 1 / 53.125e9
    kp, ki = loop.gains(loop.CdrSettings(mode="mm", bandwidth_hz=bw, damping=zeta,
                                         latency_ui=lat), 0.4, ui)
    n = 1 << 22
    f = (np.arange(n) + 0.5) / n - 0.5
    ref = float(np.mean(np.abs(loop.jitter_transfer(f, 0.4, kp, ki, lat, 1.0)) ** 2))
    assert loop.noise_gain(0.4, kp, ki, lat) == pytest.approx(ref, rel=1e-9)
    # a first-order loop too, and an unstable one stays finite (the old stand-in)
    first = float(np.mean(np.abs(loop.jitter_transfer(f, 0.4, 2e-3, 0.0, 8, 1.0)) ** 2))
    assert loop.noise_gain(0.4, 2e-3, 0.0, 8) == pytest.approx(first, rel=1e-9)
    assert np.isfinite(loop.noise_gain(0.4, 50.0, 10.0, lat))


def test_first_order_jtol_slope():
    """A first-order loop (ki = 0): 1 / |1 - H| falls 20 dB per decade well below the
    bandwidth and is flat (1) well above it."""
    ui = 1 / 53.125e9
    kpd, kp = 0.5, 2e-3
    f = np.array([1e4, 1e5, 1e9, 3e9])
    u = loop.untracked(f, kpd, kp, 0.0, 8, ui)
    assert abs(20 * np.log10(u[1] / u[0]) - 20) < 0.1
    assert abs(u[3] - 1) < 0.05 and abs(u[2] - 1) < 0.1


def test_slow_sj_costs_almost_nothing(system):
    """1 UI of TX SJ at 100 kHz (40x below the loop bandwidth) is followed: the slicer
    SNR moves by less than 0.1 dB against no SJ on the same data and noise."""
    from serdes.engines.run import simulate

    base = simulate(system, symbols=200_000, target_errors=0)
    sj = simulate(dataclasses.replace(system, tx_jitter=TxJitter(sj_ui=1.0, sj_hz=1e5)),
                  symbols=200_000, target_errors=0)
    assert sj.bit_errors == 0
    assert abs(sj.snr_db - base.snr_db) < 0.1, (sj.snr_db, base.snr_db)


def test_stat_sees_the_untracked_sj(system, cal):
    fe = CdrFrontEnd(system.link, 1, system.cdr, calibration=cal)
    s = dataclasses.replace(system, tx_jitter=TxJitter(sj_ui=2.0, sj_hz=1e5))
    link = stat_link(s, fe)
    keep = loop.untracked(1e5, cal.kpd, fe.kp, fe.ki, system.cdr.latency_ui, system.link.ui_s)
    # the detector's describing-function gain at this small swing is within 10 % of
    # the calibrated slope (tests/test_cdr_stat.py), so is |1 - H|
    assert link.impairments.sj_ui == pytest.approx(2.0 * keep, rel=0.1)
    assert link.impairments.dd_ui == system.link.impairments.dd_ui
    assert link.impairments.wander_ui >= fe.model()["dither_rms_ui"] * 0.9
    assert link.pulse is system.link.pulse


def test_config_errors():
    with pytest.raises(ConfigError, match="cdr.mode"):
        Config.default().with_overrides(["cdr.mode=bangbang"])
    with pytest.raises(ConfigError, match="cdr.ki"):
        build(Config.default().with_overrides(["cdr.mode=mm", "cdr.ki=1e-6"]))


def test_tx_and_rx_jitter_differ_as_the_channel_says(system):
    """0.02 UI rms of random jitter at the TX or at the RX sampler, same data and noise
    (common random numbers, one front end, CDR off). First order, with independent
    symbols: an RX offset d_k moves sample k by d_k sum_j a_{k-j} p'_j, so the slicer
    sees sigma^2 E[a^2] sum_i w_i^2 sum_j p'_j^2; a TX offset tau_s moves symbol s's
    whole pulse, sigma^2 E[a^2] sum_l ((w * p')_l)^2: the channel and the FFE filter it.
    The measured ratio of the two added slicer MSEs matches the ratio of the closed
    forms within 4 standard errors (plus 5 % for the second-order terms)."""
    from serdes.engines.run import design_equalizer, simulate
    from serdes.pipeline import SlicerCapture

    link = system.link
    off = dataclasses.replace(system.cdr, mode="off")
    base_link = dataclasses.replace(link.impairments, rj_ui=0.0)
    import copy

    lk = copy.copy(link)
    lk.impairments = base_link
    sys0 = dataclasses.replace(system, cdr=off, link=lk, tx_jitter=TxJitter(ppm=1e-12))
    lk_rx = copy.copy(link)
    lk_rx.impairments = dataclasses.replace(base_link, rj_ui=0.02)
    runs = {}
    for name, s in (("none", sys0), ("rx", dataclasses.replace(sys0, link=lk_rx)),
                    ("tx", dataclasses.replace(sys0, tx_jitter=TxJitter(rj_ui=0.02)))):
        cap = SlicerCapture(150_000)
        simulate(s, symbols=170_000, target_errors=0, observers=[cap])
        runs[name] = cap.v - link.levels[cap.sent]
    e0 = runs["none"]
    d_rx = runs["rx"] ** 2 - e0 ** 2
    d_tx = runs["tx"] ** 2 - e0 ** 2
    ratio = d_tx.mean() / d_rx.mean()
    # standard error from batch means (blocks of 1000: far longer than the FFE and pulse
    # span that correlates neighbouring samples), delta method, covariance left out
    bt, br = (d[: d.shape[0] // 1000 * 1000].reshape(-1, 1000).mean(1) for d in (d_tx, d_rx))
    se = ratio * np.sqrt((bt.std() / bt.mean()) ** 2 + (br.std() / br.mean()) ** 2) \
        / np.sqrt(bt.shape[0])
    w = design_equalizer(system).ffe
    fe = CdrFrontEnd(link, 1, off, TxJitter(rj_ui=0.02))
    dp = fe.dtable[TABLE_Q // 2 + 1][::-1]  # p' at the peak: row f = (r - 1) / Q - 1/2 = 0
    pred = np.sum(np.convolve(w, dp) ** 2) / (np.sum(w ** 2) * np.sum(dp ** 2))
    print(f"TX/RX added slicer MSE: measured {ratio:.4f} +- {se:.4f}, first order {pred:.4f}")
    assert abs(ratio - pred) < 4 * se + 0.05 * pred, (ratio, pred, se)
    # the difference is real: TX jitter costs measurably less at the slicer on this link
    assert ratio + 4 * se < 1.0, (ratio, se)


# ------------------------------------------------------------------ commands
def test_run_json_has_cdr(capsys):
    from serdes.cli import main as cli_main

    assert cli_main(["run", "--json", "--no-stat", "--no-progress", "--set",
                     "link.symbols=20000", *FIXED_CTLE]) == 0
    assert json.loads(capsys.readouterr().out)["cdr"] is None
    assert cli_main(["run", "--json", "--no-stat", "--no-progress", "--set",
                     "link.symbols=150000", "--set", "cdr.mode=mm", "--set",
                     "cdr.warmup_symbols=65536", *FIXED_CTLE,
                     "--threads", "2"]) == 0
    out = json.loads(capsys.readouterr().out)
    c = out["cdr"]
    assert c["mode"] == "mm" and c["lock_symbols"] is not None
    assert abs(c["phase_mean_ui"]) < 0.05 and c["phase_rms_ui"] < 0.05
    assert out["threads"] == 1 and "CDR loop is sequential" in out["threads_note"]


def test_jtol_json(capsys):
    """The interface: one object with target_ber and points [{sj_hz, sj_ui}], the
    tolerated amplitude the untracked one over |1 - H|, and a BER at that amplitude
    that meets the target."""
    from serdes.cli import main as cli_main

    assert cli_main(["jtol", "--json", "--freqs", "2e5", "--set", "cdr.mode=mm",
                     *FIXED_CTLE, "--target-ber", "1e-6"]) == 0
    out = json.loads(capsys.readouterr().out)
    assert out["target_ber"] == 1e-6
    (p,) = out["points"]
    assert p["sj_hz"] == 2e5 and p["sj_ui"] > 30 * p["untracked_ui"] > 0
    assert p["sj_ui"] == pytest.approx(p["untracked_ui"] / p["one_minus_h"])
    assert p["template_ui"] == pytest.approx(5 * 53.125e9 / (664000 * 2e5) / 2)


def test_jtol_refuses_bad_frequencies(capsys):
    from serdes.cli import main as cli_main

    assert cli_main(["jtol", "--freqs", "3e10", "--set", "cdr.mode=mm"]) == 2
    assert "symbol rate / 4" in capsys.readouterr().err


def test_jtol_refuses_a_tx_offset_without_clock_recovery(capsys):
    """Without a loop a TX ppm offset walks the sampling phase through every UI (a
    counted run fails at any SJ); the statistical engine leaves the offset out, and jtol
    had answered the tolerance of the link without it (0.10 UI on the default link)."""
    from serdes.cli import main as cli_main

    assert cli_main(["jtol", "--freqs", "1e6", "--set", "tx_jitter.ppm=100",
                     *FIXED_CTLE]) == 2
    err = capsys.readouterr().err.strip()
    assert len(err.splitlines()) == 1 and "tx_jitter.ppm = 100 without clock recovery" in err


@pytest.mark.parametrize("extra, message", [
    (["--timeout", "nan"], "--timeout applies to --scheduler only"),
    (["--timeout", "nan", "--scheduler", "tcp://127.0.0.1:1"], "--timeout nan: expected"),
    (["--workers", "-1"], "--workers -1: expected 0"),
    (["--workers", "1", "--scheduler", "tcp://127.0.0.1:1"], "exclude each other"),
])
def test_jtol_refuses_bad_executor_options(capsys, extra, message):
    from serdes.cli import main as cli_main

    assert cli_main(["jtol", "--freqs", "1e6", "--set", "cdr.mode=mm"] + extra) == 2
    err = capsys.readouterr().err.strip()
    assert message in err and len(err.splitlines()) == 1


@pytest.mark.parametrize("symbols", ["10", "0", "-5", "499999"])
def test_jtol_refuses_counted_runs_too_short_for_the_target(capsys, symbols):
    """A counted run passes with at most target x bits errors; --symbols below one
    allowed error at the target (here 500,000 PAM4 symbols at 1e-6) cannot tell a pass
    from a BER 1/bits times higher (10 symbols had counted no bit at all and 'passed' up
    to 9948 UI): one line, exit 2."""
    from serdes.cli import main as cli_main

    assert cli_main(["jtol", "--method", "counted", "--freqs", "1e6", "--symbols", symbols,
                     *FIXED_CTLE]) == 2
    err = capsys.readouterr().err.strip()
    assert "needs at least 500,000 symbols" in err and len(err.splitlines()) == 1


@pytest.mark.parametrize("method", ["counted", "both"])
@pytest.mark.parametrize("target", ["1e-14", "1e-300", "1e-320"])
def test_jtol_refuses_a_target_no_counted_run_can_reach(capsys, monkeypatch, method, target):
    """Below BER 1e-13 one allowed PAM4 bit error needs more symbols than a run's 1e13:
    the default's 5e15 at 1e-15 started, warned of 19,000 days, and then failed at the
    first frequency with 'symbols = 5000000000000000: expected a whole number'. It is
    refused in one line before any run (no link is counted), big counts printed
    readably (5e+299, not 300 digits); below BER ~1e-308 the count is infinite in floats
    (an OverflowError traceback)."""
    from serdes import jtol_sweep
    from serdes.cli import main as cli_main

    def no_run(*a, **k):
        raise AssertionError("a counted run started")

    monkeypatch.setattr(jtol_sweep, "run_jtol", no_run)
    assert cli_main(["jtol", "--method", method, "--freqs", "1e6", "--target-ber", target,
                     *FIXED_CTLE]) == 2
    err = capsys.readouterr().err.strip()
    assert len(err.splitlines()) == 1 and "more than a run's 10,000,000,000,000" in err
    assert len(err) < 300


def test_the_default_counted_run_fits_a_run_s_limit():
    """At BER 1e-13 ten allowed errors would be 5e13 symbols (beyond the limit): the
    default is the limit, 1e13 (two allowed errors), which a run accepts."""
    from serdes.jtol_sweep import MAX_SYMBOLS, default_symbols

    assert default_symbols(1e-6, 2) == 5_000_000
    assert default_symbols(1e-12, 2) == 5 * 10**12
    assert default_symbols(1e-13, 2) == MAX_SYMBOLS == 10**13
    assert default_symbols(1e-320, 2) == MAX_SYMBOLS         # (10 / target is inf)
    Config.default().with_overrides([f"link.symbols={MAX_SYMBOLS}"])


def test_jtol_draws_its_progress_per_frequency(capsys):
    """--progress: a line of frequencies done (a counted JTOL ran 8 minutes silent)."""
    from serdes.cli import main as cli_main

    assert cli_main(["jtol", "--freqs", "1e6,1e7", "--progress", "--json", *FIXED_CTLE]) == 0
    cap = capsys.readouterr()
    assert "0/2 frequencies" in cap.err and "2/2 frequencies" in cap.err
    assert cap.err.endswith("\r\x1b[K") and json.loads(cap.out)["points"]


def test_a_counted_run_without_bits_does_not_pass():
    from serdes.jtol import Jtol

    jt = Jtol(build(Config.default().with_overrides(["ctle.auto=false"])))
    ok, errors, bits = jt.counted_pass(0.05, 1e6, 1e-6, 10)
    assert bits == 0 and errors == 0 and not ok


def test_jtol_warns_when_a_counted_run_takes_hours():
    """--method counted/both at BER 1e-12 ran 5e12-symbol runs (weeks each) without a
    word; now one warning says how long and what to give instead. The default target's
    1e6-symbol runs say nothing."""
    import warnings

    from serdes.commands.jtol import _warn_long_runs

    with pytest.warns(UserWarning, match=r"5e\+12 symbols, about 19.3 days.*at least 5e\+11"):
        _warn_long_runs(5_000_000_000_000, 1e-12, 2)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        _warn_long_runs(5_000_000, 1e-6, 2)
