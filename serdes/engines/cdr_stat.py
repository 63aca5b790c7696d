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
   over lags, :data:`LAGS`) is what the narrow loop passes, and the resulting phase
   wander is Gaussian (a sum over many symbols), not a dual-Dirac: it enters the
   engine as ``impairments.wander_ui`` (a Gauss-Hermite rule).

The S-curve and the noise are measured once per front end on the calibration's data
(common random numbers), with the sampling jitter added as white noise of its
first-order variance at the ADC sample.
"""

from __future__ import annotations

import copy
from dataclasses import dataclass, replace

import numpy as np

from serdes import cdr as loop
from serdes.kernels.fir import fir_valid

S_STEP = 0.01         # S-curve grid step (UI)
S_SPAN = 0.45         # S-curve grid half width (UI)
LAGS = 256            # autocovariance lags of the long-run variance
THETA = 64            # points over the SJ period
GH = 9                # Gauss-Hermite points over the dither in the S-curve average


@dataclass
class LoopResponse:
    """The measured detector: S-curve on ``grid`` (bias subtracted) and the long-run
    variance of its noise at the lock point (PD units^2 per UI)."""

    grid: np.ndarray
    s: np.ndarray
    noise_lr: float


def measure(front, rx_rj_ui: float = 0.0, tx_rj_ui: float = 0.0) -> LoopResponse:
    """S-curve and long-run noise of ``front``'s detector (see the module notes)."""
    hit = getattr(front, "_loop_response", None)
    key = (round(rx_rj_ui, 12), round(tx_rj_ui, 12))
    if hit is not None and hit[0] == key:
        return hit[1]
    g = np.random.default_rng(12345)
    n = (1 << 17) + front.hist
    a = front.levels[g.integers(0, front.levels.shape[0], n)]
    tau = np.zeros(n)
    w = fir_valid(np.concatenate([np.zeros(front.noise_fir.shape[0] - 1),
                                  g.standard_normal(n - front.hist)]), front.noise_fir)
    if rx_rj_ui > 0 or tx_rj_ui > 0:
        # first order: sample noise (rj_rx^2 + rj_tx^2) E[a^2] sum p'^2 (white)
        p = front.pulse
        slope = (p.at_offset(1.0) - p.at_offset(-1.0)) * p.m / 2.0
        es = float(np.mean(front.levels ** 2))
        sd = np.sqrt((rx_rj_ui ** 2 + tx_rj_ui ** 2) * es * float(slope @ slope))
        w = w + sd * np.random.default_rng(54321).standard_normal(w.shape[0])
    c = front.cal
    sign = front.settings.mode == "ssmm"
    grid = c.lock_ui + np.arange(-S_SPAN, S_SPAN + S_STEP / 2, S_STEP)
    s = np.empty(grid.shape[0])
    for i, ph in enumerate(grid):
        e = front._open_loop(a, tau, w, float(ph)) - c.bias
        s[i] = float(np.mean(np.sign(e))) if sign else float(np.mean(e))
        if abs(ph - c.lock_ui) < S_STEP / 2:
            e0 = (np.sign(e) if sign else e)
            e0 = e0 - e0.mean()
    N = e0.shape[0]
    f = np.fft.rfft(e0, 2 * N)
    ac = np.fft.irfft(np.abs(f) ** 2)[:LAGS + 1] / N
    lr = float(ac[0] + 2 * ac[1:].sum())
    out = LoopResponse(grid=grid - c.lock_ui, s=s, noise_lr=max(lr, float(ac[0]) * 0.1))
    front._loop_response = (key, out)
    return out


def _avg_s(resp: LoopResponse, mu: float, u: float, dither: float):
    """E over the SJ phase and the Gaussian dither of S, and the fundamental's gain."""
    th = 2 * np.pi * (np.arange(THETA) + 0.5) / THETA
    x, wq = np.polynomial.hermite_e.hermegauss(GH)
    wq = wq / wq.sum()
    ph = mu + u * np.sin(th)[:, None] + dither * x[None, :]
    sv = np.interp(ph, resp.grid, resp.s) @ wq          # (THETA,)
    mean = float(sv.mean())
    gain = float(2 * np.mean(sv * np.sin(th)) / u) if u > 0 else float("nan")
    return mean, gain


def operating_point(front, resp: LoopResponse, u: float, dither: float):
    """(mu, N): the static phase shift where the mean detector output is zero under an
    untracked swing of amplitude ``u`` plus the dither, and the detector's gain there
    (describing function; the local slope when u = 0)."""
    lo, hi = -0.2, 0.2
    f_lo, f_hi = _avg_s(resp, lo, u, dither)[0], _avg_s(resp, hi, u, dither)[0]
    mu = 0.0
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
        dither = dither_rms(front, resp, kpd_eff)
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
        dither = dither_rms(front, resp, kpd_eff)
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
