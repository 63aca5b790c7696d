"""The clock-recovery loop's tracking error as a distribution, for the statistical
jitter tolerance below the loop bandwidth.

:mod:`serdes.engines.cdr_stat` hands the statistical engine an untracked sine plus a
Gaussian wander independent of the SJ phase. Below the loop bandwidth that was
optimistic (BER 1e-6 on the default link with the MM loop: 0.755 UI at 0.6 MHz against
counted 0.560 pass / 0.589 fail, 0.118 at 1.67 MHz against 0.0765 / 0.0834), and the
closed loop shows why (0.083 UI at 1.67 MHz, 40 M UI after lock, 32 bins of the SJ
phase): the tracking error's spread depends on the SJ phase (0.013-0.018 UI rms; the
largest at the early extreme, where the S-curve is flat: it saturates near +0.05 for
early phases but falls to -0.07..-0.12 for late ones), and about the phase-conditional
mean it is skewed, its early tail heavier than a Gaussian (beyond 3.5 sigma 3x the
Gaussian share early, 0.6x late).

Here the loop runs in the phase domain (:func:`serdes.kernels.cdr_phase.phase_loop`):
the detector is its measured S-curve plus white Gaussian noise of the measured
long-run variance at the current phase error (both from :mod:`serdes.engines.cdr_stat`;
the narrow loop passes only the noise's low-frequency density, which the long-run
variance is), through the same PI filter, latency and interpolator rounding. That
reproduces the closed loop's phase-conditional means within 0.002 UI and its heavy
early tail (test: tests/test_cdr_track.py). The BER is the average over the simulated
tracking errors c of the statistical engine's BER at a fixed sampling offset c
(:class:`OffsetBer`): exact while the tracking error is quasi-static across the
equalizer and pulse span, which :func:`applies` checks.

The simulated run has :data:`TRACK_SYMBOLS` UI, at least :data:`PERIODS` SJ periods,
after :data:`WARMUP` (common random numbers: the same noise at every amplitude, so the
BER is smooth in the amplitude for the solver). The loop starts in the SJ's steady state
(:func:`serdes.cdr.sj_integrator`), as the closed loop does, so far below the bandwidth
(10 kHz: thousands of UI of SJ, a phase slope of ~2500 ppm) it runs without a lock
transient; the phase domain needs only the SJ relative to the loop. Before, this model
started at 250 kHz and the linear wander model answered below, 1.2-1.4x above the
counted tolerance (BER 1e-6, default link, MM loop): 10 kHz 2735 UI against counted
1949 pass / 1999 fail, 100 kHz 27.3 against 22.3 / 23.5; this model gives 2256 (1.13x
the fail amplitude) and 21.7 (0.92x). The tracking error at 10 kHz, 2123 UI, recorded
in the closed loop (one SJ period) and in this model (1.5 periods), in 16 bins of the
SJ phase: the means at the two extremes agree within 0.006 UI (closed +0.059 / -0.068,
model +0.053 / -0.068), the spread per bin within 23 % (closed 0.013-0.022 UI rms,
model 0.012-0.021, mostly the smaller; the largest a quarter period around the early
extreme), but the closed loop's mean is shifted against the SJ's slope (-0.008 UI at
+2800 ppm, +0.009 at -2800 ppm: the detector's bias under a frequency offset, 3.1e-6
UI per ppm), which this model, run on the S-curve measured without one, leaves out; it
is largest where the untracked error is smallest (at the SJ's zero crossings).
The BER averaged over the closed loop's own tracking error is 1.4e-6 there, over this
model's 3.3e-7, counted 9e-6 (27 errors in the first 2.9 M bits, where the stopping
rule ended the run); at 1 MHz, 0.203 UI: closed loop 1.5e-7, model 2.0e-8, counted
3.2e-6 (16 errors in the first 5.0 M bits, the same way).
Those counted BERs came from runs the stopping rule ended right after an error cluster
(biased high); long runs split the gap (``benchmarks/cdr_gap_split.py``, 1 MHz, 0.246
UI, 24 M UI per seed): (a) the engine's BER averaged over the closed loop's own
tracking error is 1.27-1.49x below the same run's count (5 seeds). The genie (loop
opened, fixed phase -+0.125 UI, no SJ) puts it in the fixed-offset BER with the RX RJ:
counted / statistical 1.60 / 2.61 on the default link, 1.39 / 1.44 without the DFE,
1.00 / 1.57 with no RX RJ, 1.04 / 1.01 with neither. So the RX RJ at an offset is 1.4x
low: the RJ mixture of :mod:`serdes.engines.stat.rj` takes the jitter noise's variance
V as independent of the ISI given the decided level, but away from the peak the
cursor's own slope gives V a term odd in the other symbols, correlated with the ISI
(``cdr_gap_split.py rjcorr``: in the patterns whose ISI leans furthest toward a
threshold, top 1e-2..1e-4, V is 3.6-4.3x its level mean at -+0.125 UI, 0.35-0.66x at
the peak: there the engine's V is the larger); on the late side the DFE's error
propagation (30-37 % of the errors follow one; not in the engine's BER) adds the rest.
With the RJ classes joint with the ISI (:mod:`serdes.engines.stat.rj_joint`) the same
runs read counted / statistical 1.01 / 1.47 on the default link, 1.02 / 1.03 without
the DFE (4 M symbols; the late side's 1.03 is 0.3 % below the count's 95 % interval).
(b) this model's tracking error: over 5 noise seeds its BER is 1.0-2.1e-6 (the fixed
seed's draw the lowest), over the closed loop's 3.5-7.2e-6; the phase-conditional means
agree within 0.0025 UI, the spread within 5 %, the residual's spectrum within 10 % in every band,
but the early tail was heavier in the loop (share below -0.13 UI 1.5-2.4e-3 against
0.7-1.5e-3; 2x also with no RJ). Not the data pattern (which is on the noisy
link of :mod:`serdes.engines.cdr_stat`, note 5): with random data the loop's share is the
same (6 M UI, seed 1: 2.69e-3 against PRBS31's 2.74e-3; this model 0.38-1.02e-3 over 3
noise seeds with the detector measured on the TX noise and the long record's level).
The S-curve's early side (:mod:`serdes.engines.cdr_stat`, note 6): 6 % high at
-0.17..-0.13 UI, a restoring force too strong where the tail lies. With it from the
long record (``benchmarks/cdr_tail_split.py tail``, the closed loop driven by i.i.d.
levels with the TX noise, 6 seeds x 7.6 M UI, this model over 12 noise seeds): 1 MHz,
0.246 UI, share below -0.13 / -0.11 UI 1.0e-3 / 8.3e-3 -> 1.9e-3 / 1.06e-2, closed
loop 2.35e-3 / 1.18e-2 (seed-to-seed sd 1.5e-3 / 2.5e-3); 1.67 MHz, 0.11 UI
8.6e-4 / 7.3e-3 -> 1.36e-3 / 8.9e-3, closed loop 1.44e-3 / 1.03e-2
(sd 0.55e-3 / 1.9e-3). The BER over the tracking error follows: see docs/cdr.md's JTOL
numbers (1 MHz 0.239 -> 0.234 UI, 1.67 MHz 0.107 -> 0.105).
Tracking errors beyond :data:`LOST` UI (a slip: the loop lost the symbol) count at BER
0.5.
"""

from __future__ import annotations

import copy
import math
from dataclasses import dataclass, replace

import numpy as np

from serdes import cdr as loop

TRACK_SYMBOLS = 1 << 24   # simulated UI per evaluation, after the warm-up
WARMUP = 1 << 18          # UI before the statistics (the loop settles in ~10^4 UI)
CHUNK = 1 << 20
SEED = 97531              # the detector noise's fixed seed (common random numbers)
FINE = 0.001              # histogram bin of the tracking error (UI)
STEP = 0.005              # grid of the fixed-offset BER table (UI), log-linear between
SPAN_STEP = 0.005         # quasi-static: SJ change across the FFE + pulse span below this
F_MIN = 10e3              # below: the simulated run (PERIODS SJ periods) grows as 1 / f
PERIODS = 4               # the run covers at least this many SJ periods
LOST = 0.5                # |offset| beyond this (UI): the loop has slipped, BER 0.5
EDGE_BIN = int(math.ceil(LOST / FINE)) + 1   # the histogram's last bin each side (past LOST)


@dataclass
class Tracking:
    """The simulated tracking error of one (amplitude, frequency): histogram of the
    sampling offset c (UI from the pulse peak) on bins of FINE, its mean, the SJ
    fundamental's amplitude in it (the untracked part) and the rest's rms (wander)."""

    lo: int               # index of the first bin (c = (lo + i) FINE)
    counts: np.ndarray
    mean: float
    untracked: float
    wander: float

    @property
    def centers(self) -> np.ndarray:
        return (self.lo + np.arange(self.counts.shape[0])) * FINE


def simulate(front, resp, amp: float, f_hz: float, symbols: int = TRACK_SYMBOLS) -> Tracking:
    """Run the phase-domain loop under a TX SJ ``amp`` (UI) at ``f_hz`` (module notes)."""
    from serdes.kernels.cdr_phase import phase_loop

    s = front.settings
    lock = front.cal.lock_ui
    grid = resp.grid
    v = resp.lr_at(grid)
    w = 2 * np.pi * f_hz * front.ui_s
    g = np.random.default_rng(SEED)
    # the loop starts in the SJ's steady state, as the closed loop does (cdr.sj_integrator)
    state = np.array([lock, loop.sj_integrator(amp, w, 0.0, front.cal.kpd, front.kp,
                                                 front.ki, s.latency_ui), 0.0])
    ring = np.zeros(s.latency_ui + 1)
    period = 1.0 / (f_hz * front.ui_s)
    symbols = max(int(symbols), int(math.ceil(PERIODS * period)))
    total = WARMUP + symbols
    acc = np.zeros(5)  # n, sum c, sum c^2, sum c sin, sum c cos (after the warm-up)
    lo_all = hi_all = None
    bins = []
    for k0 in range(0, total, CHUNK):
        n = min(CHUNK, total - k0)
        k = np.arange(k0, k0 + n, dtype=np.float64)
        sn = np.sin(w * k)
        c = phase_loop(amp * sn, g.standard_normal(n), resp.s, v, grid[0] + lock,
                       grid[1] - grid[0], front.kp, front.ki, s.pi_steps, state, ring)
        if k0 + n <= WARMUP:
            continue
        if k0 < WARMUP:  # the chunk holding the warm-up's end (the others are kept whole)
            keep = k >= WARMUP
            c, k, sn = c[keep], k[keep], sn[keep]
        acc[0] += c.shape[0]
        acc[1] += c.sum()
        acc[2] += (c * c).sum()
        acc[3] += (c * sn).sum()
        acc[4] += (c * np.cos(w * k)).sum()
        # beyond +-LOST every offset counts alike (a slip, BER 0.5): one bin past each
        # end holds them, so a loop that runs away cannot ask for a bin per FINE of it
        b = np.clip(np.floor(c / FINE + 0.5), -EDGE_BIN, EDGE_BIN).astype(np.int64)
        blo = int(b.min())
        bins.append((blo, np.bincount(b - blo)))
        lo_all = blo if lo_all is None else min(lo_all, blo)
        hi = blo + bins[-1][1].shape[0]
        hi_all = hi if hi_all is None else max(hi_all, hi)
    out = np.zeros(hi_all - lo_all)
    for blo, cnt in bins:
        out[blo - lo_all:blo - lo_all + cnt.shape[0]] += cnt
    n = acc[0]
    mean = acc[1] / n
    a_s, a_c = 2 * acc[3] / n, 2 * acc[4] / n
    u = float(np.hypot(a_s, a_c))
    var = max(acc[2] / n - mean ** 2 - u * u / 2, 0.0)
    return Tracking(lo=lo_all, counts=out, mean=float(mean), untracked=u,
                    wander=float(math.sqrt(var)))


class OffsetBer:
    """The statistical engine's BER at a fixed sampling offset c (no SJ, no wander; the
    rest of the link's jitter and noise as configured), on a grid of STEP, computed as
    needed and kept."""

    def __init__(self, system, taps):
        self.system = system
        self.taps = taps
        self._tab: dict[int, float] = {}

    def at_index(self, i: int) -> float:
        hit = self._tab.get(i)
        if hit is None:
            from serdes.engines.stat import StatisticalEngine

            lk = copy.copy(self.system.link)
            lk.impairments = replace(lk.impairments, sj_ui=0.0, offset_ui=i * STEP,
                                     wander_ui=0.0)
            txj = replace(self.system.tx_jitter, sj_ui=0.0)
            sys_ = replace(self.system, link=lk, tx_jitter=txj)
            hit = self._tab[i] = float(StatisticalEngine(sys_, self.taps).ber(0.0).ber)
        return hit

    def mean_ber(self, tr: Tracking, floor: float) -> float:
        """The BER averaged over the tracking error's histogram. Grid points are
        computed from each end of the histogram inwards until the BER falls below
        ``floor`` (the BER is smallest near the pulse peak); the points inside are
        given ``floor`` (an upper bound there, negligible against the target).
        Offsets beyond +-LOST UI (the sampler nearer a neighbouring symbol than its
        own: the loop slipped) count at BER 0.5."""
        c = tr.centers
        keep = np.abs(c) <= LOST
        total = tr.counts.sum()
        lost = float(tr.counts[~keep].sum())
        if not keep.any():
            return 0.5
        c, counts = c[keep], tr.counts[keep]
        i_lo = int(math.floor(c[0] / STEP))
        i_hi = int(math.ceil(c[-1] / STEP))
        vals = {}
        i = i_lo
        while i <= i_hi:
            vals[i] = self.at_index(i)
            if vals[i] < floor or i * STEP > 0:
                break
            i += 1
        left_stop = i
        j = i_hi
        while j > left_stop:
            vals[j] = self.at_index(j)
            if vals[j] < floor or j * STEP < 0:
                break
            j -= 1
        for m in range(left_stop + 1, j):
            vals[m] = floor
        idx = np.array(sorted(vals))
        lb = np.log(np.maximum([vals[m] for m in idx], 1e-300))
        b = np.exp(np.interp(c, idx * STEP, lb))
        return float((b @ counts + 0.5 * lost) / total)


def applies(system, front, taps, f_hz: float, untracked_ui: float) -> bool:
    """Whether the tracking-error model holds at ``f_hz``: the CDR on, TX SJ only (no
    RX SJ), between F_MIN and the loop's -3 dB bandwidth, and the untracked swing
    quasi-static across the FFE and pulse span (it moves by less than SPAN_STEP there,
    so the BER at a fixed offset applies to each sample)."""
    if front is None or system.link.impairments.sj_ui > 0:
        return False
    bw = loop.bandwidth_and_peaking(front.cal.kpd, front.kp, front.ki,
                                    system.cdr.latency_ui, front.ui_s)[0]
    span = len(taps.ffe) + system.link.pulse.n_ui
    return (F_MIN <= f_hz <= bw
            and span * 2 * np.pi * f_hz * front.ui_s * untracked_ui < SPAN_STEP)
