"""What the statistical engine sees of a clock-recovery loop: the link with the jitter
that reaches the sampler.

The linear loop model (:mod:`serdes.cdr`) takes the phase detector as a gain Kpd and its
noise as white. Against counted runs on the default link that was optimistic by ~1.3x in
JTOL amplitude at 10 MHz (10x in BER at 0.09 UI), for three reasons, each measured:

1. The detector is nonlinear. Its mean output S(phi) (the S-curve) is not odd about
   the lock point, so a large untracked phase swing u sin(theta) has a mean output of
   its own: the integrator then moves the mean phase to mu where
   ``E_theta E_n S(mu + u sin theta + n) = 0`` (n: the dither). On the default link
   mu = -0.0075 UI at u = 0.09 UI and -0.037 UI at u = 0.11 (counted), which costs far
   more than the swing's rms suggests.
2. The same swing lowers the detector's gain for the loop: its describing-function
   gain ``N(u) = (1 / (pi u)) int S(mu + u sin theta) sin theta dtheta`` replaces Kpd
   in H, so the loop follows less, and |1 - H| is taken with N(u) (solved by
   fixed-point steps together with mu).
3. The dither: the detector's noise is not white (the MM product of neighbouring
   samples is correlated), and the RX sampling jitter and the TX per-symbol jitter add
   to it; its low-frequency density (the long-run variance: the autocovariance summed
   over lags, :data:`NOISE_LAGS`) is what the narrow loop passes, and the resulting phase
   wander is Gaussian (a sum over many symbols), not a dual-Dirac: it enters the
   engine as ``impairments.wander_ui`` (a Gauss-Hermite rule).
4. The wander under a swing. The detector's noise and its local slope both depend on
   the phase error (noise 0.30-0.40, slope 0.32-0.73 over +-0.08 UI on the default
   link), and a swing spends time where the noise is larger and the slope smaller.
   The wander is taken quasi-statically: its variance is the average over the SJ phase
   of ``lr(p) g2(k(p)) / k(p)^2`` (p = mu + u sin theta, k: the local slope of the
   S-curve smoothed by the dither, g2: :func:`serdes.cdr.noise_gain`, lr: the long-run
   variance at p, :data:`NOISE_SYMBOLS` samples, :data:`NOISE_LAGS` lags on
   :data:`NOISE_STEP`). Measured on the default link (closed loop, 4 M UI after
   lock, the fundamental and the mean fitted out): without SJ 0.0134 UI rms against
   0.0130 (before: 0.0126; the long-run variance from 2^17 samples and 256 plain lags
   was 7 % low and noisy); TX SJ 0.25 UI at 1 MHz 0.0161 against 0.0153 (before
   0.0135); 0.08 UI at 10 MHz 0.0164 against 0.0162 (before 0.0137). What is left:
   the wander is not Gaussian, its tail is heavier (beyond 4 sigma 6-12x the Gaussian
   share under 0.08 UI of untracked SJ: excursions into the flatter part of the
   S-curve, where the loop pulls back more weakly), which the engine's Gaussian
   wander leaves out; below the loop bandwidth the jitter tolerance takes the
   simulated tracking error instead (:mod:`serdes.engines.cdr_track`).

5. Where the loop settles. The detector sees the symbols as sent, with the TX noise
   (``tx.snr_db``), which passes the channel into both samples of the MM product and
   shifts its mean (``cal.bias`` is measured without it). The loop settles where the
   detector's true mean equals that bias; the 2^17-symbol common-random-number record
   gives the S-curve's shape, but its level is off by its sampling error (~0.003 UI
   on a noisy link; on the calibration's own data it reads zero at the lock point by
   construction), so the level comes from the noise grid's long independent record
   (its means within :data:`LEVEL_SPAN`). On the 30 dB link of
   tests/test_cdr_lanes_cal.py (SNR_TX 21 dB, CTLE -19/-2 dB, one converter) the
   static phase moved from -0.0005 UI to -0.0041 (TX noise) and -0.0073 (level), the
   closed loop's mean is -0.0058..-0.0063 (PRBS31, 3 seeds x 6 M UI) and -0.0072
   (random data, 2 seeds); the statistical BER 1.72e-5 -> 2.11e-5. What is left
   (``benchmarks/cdr_gap_noisy.py``): random data count 2.18-2.29e-5 (1.03-1.09x),
   the default PRBS31 2.65-3.08e-5 (1.26-1.46x; 3.90e-5 in seed 1's first 3 M UI,
   which hold one excursion to -0.14 UI for ~16 k UI). The engine's BER averaged over
   the loop's own recorded phase matches each count (0.97-1.15x) and the loop opened
   at the peak agrees (0.92x [0.71, 1.18]), so the rest is the recorded phase's early
   tail under PRBS31 (beyond 4.5 sigma 8.7-9.4e-4 of the time, 0-1.7e-4 with random
   data, 3.4e-6 Gaussian), which the Gaussian wander leaves out. Part of it: the MM
   detector's noise over PRBS31 is heavier-tailed on the loop's time scale (sums over
   256-4096 UI: excess kurtosis 0.18-0.22, random data 0.00-0.03); the phase-domain
   loop driven by that noise at the static phase instead of white noise spends 9.4e-4
   of the time below -0.08 UI (random data 2.6e-4, white 5.4e-5), BER 2.32e-5 (2.26e-5,
   2.12e-5). The closed loop's further tail is not reproduced yet.

6. The S-curve away from the lock point. The short record's data decorrelate with the
   phase: on the default link its curve read 0.0034-0.0038 (6 %) high at -0.17..-0.13
   UI against four independent 2^20-symbol records (tests/test_cdr_stat.py), where the
   tracking error's early tail lies at 1-1.7 MHz of TX SJ (:mod:`serdes.engines.cdr_track`);
   so beyond +-LEVEL_SPAN / 2 the long record's means replace it (blended in up to
   LEVEL_SPAN); nearer the lock point it is as before (its slope is the calibration's Kpd).

The S-curve and the noise are measured once per front end on the calibration's data
(common random numbers), with the sampling jitter added as white noise of its
first-order variance at the ADC sample.
"""

from __future__ import annotations

import copy
from dataclasses import dataclass, replace

import numpy as np
from scipy.fft import next_fast_len

from serdes import cdr as loop
from serdes.kernels.fir import fir_valid

S_STEP = 0.01         # S-curve grid step (UI)
S_SPAN = 0.45         # S-curve grid half width (UI)
THETA = 64            # points over the SJ period
GH = 9                # Gauss-Hermite points over the dither in the S-curve average
# the nodes and normalised weights of GH points (computed once: the jitter tolerance with
# several lock points averaged the S-curve 5,500 times per point state, and computing
# the rule each time was three quarters of it)
_GH_X, _GH_W = np.polynomial.hermite_e.hermegauss(GH)
_GH_W = _GH_W / _GH_W.sum()
NOISE_SYMBOLS = 1 << 20  # detector noise: samples per phase
NOISE_LAGS = 1024     # its autocovariance lags (the MM noise is correlated over ~300)
NOISE_STEP = 0.02     # its phase grid step (UI), over +-NOISE_SPAN
NOISE_SPAN = 0.3
LEVEL_SPAN = 0.1      # the S-curve's level from the long record's means within this (UI)


@dataclass
class LoopResponse:
    """The measured detector: S-curve on ``grid`` (bias subtracted) and the long-run
    variance of its noise at the lock point (PD units^2 per UI)."""

    grid: np.ndarray
    s: np.ndarray
    noise_lr: float
    noise_grid: np.ndarray | None = None  # phases of noise_lr_grid (from the lock point)
    noise_lr_grid: np.ndarray | None = None  # long-run variance there

    def lr_at(self, p):
        """The long-run noise variance at phase errors ``p`` (the lock-point value when
        no grid was measured)."""
        if self.noise_grid is None:
            return np.full(np.shape(p), self.noise_lr)
        return np.interp(p, self.noise_grid, self.noise_lr_grid)


def measure(front, rx_rj_ui: float = 0.0, tx_rj_ui: float = 0.0) -> LoopResponse:
    """S-curve and long-run noise of ``front``'s detector (see the module notes)."""
    hit = getattr(front, "_loop_response", None)
    key = (round(rx_rj_ui, 12), round(tx_rj_ui, 12))
    if hit is not None and hit[0] == key:
        return hit[1]
    g = np.random.default_rng(12345)
    n = (1 << 17) + front.hist
    a = _with_tx_noise(front, front.levels[g.integers(0, front.levels.shape[0], n)], 13579)
    tau = np.zeros(n)
    w = fir_valid(np.concatenate([np.zeros(front.noise_fir.shape[0] - 1),
                                  g.standard_normal(n - front.hist)]), front.noise_fir)
    sd = 0.0
    if rx_rj_ui > 0 or tx_rj_ui > 0:
        # first order: sample noise (rj_rx^2 + rj_tx^2) E[a^2] sum p'^2 (white)
        p = front.pulse
        slope = (p.at_offset(1.0) - p.at_offset(-1.0)) * p.m / 2.0
        es = float(np.mean(front.levels ** 2))
        sd = np.sqrt((rx_rj_ui ** 2 + tx_rj_ui ** 2) * es * float(slope @ slope))
        w = w + sd * np.random.default_rng(54321).standard_normal(w.shape[0])
    we = _edge_noise(front, w.shape[0], rx_rj_ui, tx_rj_ui, 54322)
    c = front.cal
    sign = front.settings.mode == "ssmm"
    grid = c.lock_ui + np.arange(-S_SPAN, S_SPAN + S_STEP / 2, S_STEP)
    s = np.empty(grid.shape[0])
    for i, ph in enumerate(grid):
        e = front._open_loop(a, tau, w, float(ph), we=we) - c.bias
        s[i] = float(np.mean(np.sign(e))) if sign else float(np.mean(e))
    ngrid, nlr, nmean = _noise_grid(front, sd, sign, rx_rj_ui, tx_rj_ui)
    lr = float(np.interp(0.0, ngrid, nlr))  # at the lock point
    # the S-curve's level from the long independent record (module notes, 5): the
    # short common-random-number record gives its shape, its level is off by its own
    # sampling error; away from the lock point its shape too (note 6): there the long
    # record's means replace it, blended in over LEVEL_SPAN / 2 .. LEVEL_SPAN
    rel = grid - c.lock_ui
    d = nmean - np.interp(ngrid, rel, s)
    level = float(np.mean(d[np.abs(ngrid) <= LEVEL_SPAN]))
    blend = np.clip(2.0 * np.abs(rel) / LEVEL_SPAN - 1.0, 0.0, 1.0)
    s = s + level + blend * (np.interp(rel, ngrid, d) - level)
    out = LoopResponse(grid=grid - c.lock_ui, s=s, noise_lr=lr, noise_grid=ngrid,
                       noise_lr_grid=nlr)
    front._loop_response = (key, out)
    return out


def _with_tx_noise(front, a, seed: int):
    """The symbols ``a`` as sent: with the link's TX noise (``tx.snr_db``, white per
    symbol, its own fixed seed), which the loop's detector sees through the channel as
    the counted engines' transmitter gives it (module notes, 5)."""
    sigma = float(front.link.tx_noise_sigma)
    if sigma <= 0:
        return a
    return a + sigma * np.random.default_rng(seed).standard_normal(a.shape[0])


def _long_run(e, lags: int) -> float:
    """Long-run variance of ``e`` (mean removed): autocovariance summed over +-lags
    under a Parzen lag window (its variance is a quarter of the plain sum's: 3 % in
    variance at 1024 lags and 2^20 samples; the MM noise's correlation dies out in
    ~300 lags, so the window's bias is small)."""
    e = e - e.mean()
    n = e.shape[0]
    # zero-padded past n + lags, the circular autocovariance is the linear one at lags
    # 0..lags; a 5-smooth length (2 n = 2^21 - 2 took ~3x longer; the sum is the same
    # to rounding)
    m = next_fast_len(n + lags + 1, real=True)
    f = np.fft.rfft(e, m)
    ac = np.fft.irfft(np.abs(f) ** 2, m)[:lags + 1] / n
    x = np.arange(lags + 1) / (lags + 1)
    w = np.where(x <= 0.5, 1 - 6 * x ** 2 + 6 * x ** 3, 2 * (1 - x) ** 3)
    return max(float(ac[0] + 2 * (w[1:] * ac[1:]).sum()), float(ac[0]) * 0.1)


def _edge_noise(front, n: int, rx_rj_ui: float, tx_rj_ui: float, seed: int):
    """The bang-bang detector's edge-sample noise (None for the other detectors): the
    front end's fixed-seed edge noise plus the sampling jitter to first order with the
    pulse's slope at the edge, half a UI before the peak."""
    if front.mode != 3:
        return None
    we = front.edge_noise(n)
    if rx_rj_ui > 0 or tx_rj_ui > 0:
        slope = front.pulse.slope(-0.5)
        sde = np.sqrt((rx_rj_ui ** 2 + tx_rj_ui ** 2) * float(np.mean(front.levels ** 2))
                      * float(slope @ slope))
        we = we + sde * np.random.default_rng(seed).standard_normal(n)
    return we


def _noise_grid(front, sd: float, sign: bool, rx_rj_ui: float = 0.0, tx_rj_ui: float = 0.0):
    """(phases about the lock point, the detector's long-run noise variance there, its
    mean output there) from one long record (its own fixed seed: common random numbers
    across phases)."""
    g = np.random.default_rng(24680)
    n = NOISE_SYMBOLS + front.hist
    a = _with_tx_noise(front, front.levels[g.integers(0, front.levels.shape[0], n)], 24682)
    w = fir_valid(np.concatenate([np.zeros(front.noise_fir.shape[0] - 1),
                                  g.standard_normal(n - front.hist)]), front.noise_fir)
    if sd > 0:
        w = w + sd * g.standard_normal(w.shape[0])
    we = _edge_noise(front, w.shape[0], rx_rj_ui, tx_rj_ui, 24681)
    c = front.cal
    grid = np.arange(-NOISE_SPAN, NOISE_SPAN + NOISE_STEP / 2, NOISE_STEP)
    lr, mean = np.empty(grid.shape[0]), np.empty(grid.shape[0])
    for i, ph in enumerate(grid):
        e = front._open_loop(a, np.zeros(n), w, float(c.lock_ui + ph), we=we) - c.bias
        v = np.sign(e) if sign else e
        lr[i], mean[i] = _long_run(v, NOISE_LAGS), float(np.mean(v))
    return grid, lr, mean


def _avg_s(resp: LoopResponse, mu: float, u: float, dither: float):
    """E over the SJ phase and the Gaussian dither of S, and the fundamental's gain."""
    th = 2 * np.pi * (np.arange(THETA) + 0.5) / THETA
    x, wq = _GH_X, _GH_W
    ph = mu + u * np.sin(th)[:, None] + dither * x[None, :]
    sv = np.interp(ph, resp.grid, resp.s) @ wq          # (THETA,)
    mean = float(sv.mean())
    gain = float(2 * np.mean(sv * np.sin(th)) / u) if u > 0 else float("nan")
    return mean, gain


def operating_point(front, resp: LoopResponse, u: float, dither: float,
                    lo: float = -0.2, hi: float = 0.2, mu0: float = 0.0):
    """(mu, N): the static phase shift where the mean detector output is zero under an
    untracked swing of amplitude ``u`` plus the dither, and the detector's gain there
    (describing function; the local slope when u = 0). The zero is searched in
    (``lo``, ``hi``); ``mu0`` when the mean output does not fall through zero there."""
    f_lo, f_hi = _avg_s(resp, lo, u, dither)[0], _avg_s(resp, hi, u, dither)[0]
    mu = mu0
    if f_lo > 0 > f_hi:  # S falls through zero (the loop's stable point)
        for _ in range(40):
            mu = 0.5 * (lo + hi)
            fm = _avg_s(resp, mu, u, dither)[0]
            if fm > 0:
                lo = mu
            else:
                hi = mu
            if hi - lo < 1e-5:
                break
    if u > 1e-4:
        gain = -_avg_s(resp, mu, u, dither)[1]
    else:
        d = 0.005
        gain = (_avg_s(resp, mu - d, 0.0, dither)[0] - _avg_s(resp, mu + d, 0.0, dither)[0]) \
            / (2 * d)
    return mu, max(gain, 1e-3 * front.cal.kpd)


def dither_rms(front, resp: LoopResponse, kpd: float) -> float:
    """The loop's phase wander (rms UI): the detector noise's long-run variance
    through the loop of detector gain ``kpd`` plus the interpolator's rounding."""
    s = front.settings
    g2 = loop.noise_gain(kpd, front.kp, front.ki, s.latency_ui)
    return float(np.sqrt(resp.noise_lr * g2 / kpd ** 2 + 1.0 / (12 * s.pi_steps ** 2)))


def _noise_per_gain(front, k):
    """g2(k) / k^2 (phase variance per unit of long-run detector noise) of the loop with
    detector gain ``k``, interpolated in log k from a table made once per front end."""
    kpd = front.cal.kpd
    tab = getattr(front, "_g2_table", None)
    if tab is None:
        s = front.settings
        kg = kpd * np.logspace(-2, np.log10(3.0), 81)
        v = np.array([loop.noise_gain(x, front.kp, front.ki, s.latency_ui) / x ** 2
                      for x in kg])
        tab = front._g2_table = (np.log(kg), np.log(v))
    k = np.clip(np.asarray(k, dtype=np.float64), 1e-2 * kpd, 3.0 * kpd)
    return np.exp(np.interp(np.log(k), tab[0], tab[1]))


def wander(front, resp: LoopResponse, mu: float, u: float, dither: float) -> float:
    """The loop's phase wander (rms UI) under an untracked swing ``u`` about ``mu``,
    quasi-static (module notes, 4): the mean over the SJ phase of the detector's
    long-run noise through the loop of its local gain there, plus the interpolator's
    rounding. ``dither``: the wander that smooths the S-curve (the fixed point's last)."""
    th = 2 * np.pi * (np.arange(THETA) + 0.5) / THETA
    x, wq = _GH_X, _GH_W
    p = mu + u * np.sin(th)
    d = 0.005
    k = (np.interp(p[:, None] - d + dither * x, resp.grid, resp.s)
         - np.interp(p[:, None] + d + dither * x, resp.grid, resp.s)) @ wq / (2 * d)
    var = float(np.mean(resp.lr_at(p) * _noise_per_gain(front, k)))
    return float(np.sqrt(var + 1.0 / (12 * front.settings.pi_steps ** 2)))


def untracked_amplitude(front, resp, amp: float, f_hz: float, iters: int = 6):
    """(u, mu, dither, kpd_eff): the untracked amplitude of an SJ ``amp`` at ``f_hz``
    with the detector's describing-function gain, the static shift and the dither,
    by fixed-point steps (u = amp |1 - H(f; N(u))|)."""
    s, ui = front.settings, front.ui_s
    kpd = front.cal.kpd
    dither = dither_rms(front, resp, kpd)
    u = amp * float(loop.untracked(f_hz, kpd, front.kp, front.ki, s.latency_ui, ui))
    mu = 0.0
    for _ in range(iters):
        mu, kpd_eff = operating_point(front, resp, u, dither)
        dither = wander(front, resp, mu, u, dither)
        u_new = amp * float(loop.untracked(f_hz, kpd_eff, front.kp, front.ki,
                                           s.latency_ui, ui))
        done = abs(u_new - u) < 1e-4 * max(u, 1e-6)
        u = 0.5 * (u + u_new)
        if done:
            break
    return u, mu, dither, kpd_eff


def loop_state(front, resp: LoopResponse, u: float):
    """(mu, dither, kpd_eff) of the loop under an untracked swing ``u`` (UI)."""
    dither = dither_rms(front, resp, front.cal.kpd)
    kpd_eff = front.cal.kpd
    for _ in range(3):
        mu, kpd_eff = operating_point(front, resp, u, dither)
        dither = wander(front, resp, mu, u, dither)
    return mu, dither, kpd_eff


def response_for(system, front):
    """The measured detector of ``front`` with ``system``'s sampling and TX jitter."""
    imp, txj = system.link.impairments, system.tx_jitter
    return measure(front, imp.rj_ui, float(np.hypot(txj.rj_ui, txj.buj_ui / np.sqrt(3))))


def link_with_untracked(system, front, u: float, sj_hz: float):
    """The statistical engine's link for an untracked swing ``u`` (UI) at ``sj_hz``
    (jitter tolerance solves in u), and the loop's detector gain there."""
    resp = response_for(system, front)
    mu, dither, kpd_eff = loop_state(front, resp, u)
    out = copy.copy(system.link)
    out.impairments = replace(system.link.impairments, sj_ui=float(u), sj_hz=float(sj_hz),
                              offset_ui=front.cal.lock_ui + mu, wander_ui=dither)
    return out, kpd_eff


def stat_link(system, front=None):
    """The link as the statistical engine should see it with clock recovery and TX
    jitter: a copy whose sampling jitter is what reaches the sampler.

    - SJ (RX ``noise.sj_ui`` and TX ``tx_jitter.sj_ui``) through the loop: amplitude
      times |1 - H(f)| with the detector's describing-function gain (1 with the CDR
      off). Below the symbol rate / 64 a TX SJ shifts the whole pulse, so it acts at
      the sampler like an RX SJ. With both present the two untracked amplitudes are
      added at the TX frequency (a bound: the engine holds one SJ).
    - The loop's lock point plus its static shift under that swing
      (``impairments.offset_ui``, from the pulse peak) and its Gaussian wander
      (``impairments.wander_ui``), see the module notes.
    - Per-symbol TX jitter (RJ, DCD, BUJ) stays in ``system.tx_jitter``: the engine
      moves each symbol's pulse (:mod:`serdes.engines.stat.txjitter`); it is white (or
      at half the symbol rate, DCD), so the loop follows none of it.
    - The frequency offset: the type-II loop's integrator takes it up, so its static
      phase error is zero in steady state (the phase ramp's steps are the
      interpolator's rounding, already in the wander); modelled as no residual. With
      the CDR off the sampling walks through the whole UI: not modelled
      (:func:`stat_note`).
    """
    from serdes.engines.cdr import CdrFrontEnd

    link, s, txj = system.link, system.cdr, system.tx_jitter
    imp = link.impairments
    out = copy.copy(link)  # shares the computed pulse and noise (they do not use jitter)
    if not s.active:
        out.impairments = replace(imp, sj_ui=imp.sj_ui + txj.sj_ui,
                                  sj_hz=txj.sj_hz if txj.sj_ui > 0 else imp.sj_hz)
        return out
    front = front or CdrFrontEnd(link, system.run.seed, s, txj)
    resp = response_for(system, front)
    if np.any(getattr(link.adc, "skews_s", 0.0)):  # lanes sample at phase + skew
        from serdes.engines.cdr_lanes import lanes_response, loop_skews_ui

        resp = lanes_response(resp, loop_skews_ui(link.adc, link.ui_s))
    if imp.sj_ui > 0 or txj.sj_ui > 0:
        # one swing: the larger source at its frequency, the other's untracked part added
        main_tx = txj.sj_ui >= imp.sj_ui
        amp, f = (txj.sj_ui, txj.sj_hz) if main_tx else (imp.sj_ui, imp.sj_hz)
        u, mu, dither, kpd_eff = untracked_amplitude(front, resp, amp, f)
        other_amp, other_f = (imp.sj_ui, imp.sj_hz) if main_tx else (txj.sj_ui, txj.sj_hz)
        other = other_amp * float(loop.untracked(other_f, kpd_eff, front.kp, front.ki,
                                                 s.latency_ui, link.ui_s)) \
            if other_amp > 0 else 0.0
        total, sj_hz = u + other, f
    else:
        mu, dither, kpd_eff = loop_state(front, resp, 0.0)
        total, sj_hz = 0.0, imp.sj_hz
    out.impairments = replace(imp, sj_ui=total, sj_hz=sj_hz,
                              offset_ui=front.cal.lock_ui + mu, wander_ui=dither)
    return out


def stat_note(system) -> str | None:
    """What the statistical engine leaves out of this system's jitter (None: nothing)."""
    t = system.tx_jitter
    if not t.ppm or system.cdr.active:
        return None
    return ("the statistical engine leaves out the frequency offset with cdr.mode = off "
            "(the sampling phase walks through the whole UI; counted only)")
