"""Crosstalk aggressors: their pulses at the victim's ADC input, their statistics at the
slicer and the IEEE 802.3 integrated crosstalk noise (ICN).

An :class:`Aggressor` is a transmitter of its own (swing, edge, TX FFE, data pattern and
seed) driving a coupling path (a Touchstone file with the thru's port layout, or a
scaled, delayed copy of the thru for tests), with the device packages at both ends
(a NEXT aggressor is the local transmitter: its TX package is the victim receiver's
device). Its signal reaches the victim's ADC through the victim's RX front end (CTLE,
AFE, Butterworth) and the VGA of the victim (the VGA gain is set on the victim's signal
and noise alone).

Timing: the aggressor's symbols start ``phase_ui`` UI after the victim's (fixed, from
its seed unless given) and, with ``ppm``, the phase walks by ``ppm * 1e-6`` UI per UI.
At the victim's sampling instants the aggressor adds ``sum_i b_{n-s-i} c_i(phi)``:
``c(phi)`` is its pulse sampled at the victim's instants ``phi`` UI late, ``s`` the
whole UIs of the walked phase. The counted engines (``engines/crosstalk.py``) take the
taps per 1024-UI block at the block centre's phase; the victim's sampling jitter moves
the aggressor's samples too, to first order (``c + j c'``).

The statistical engine uses each aggressor at its fixed phase (the one the counted run
starts with); with a ppm offset it uses all phases instead: each cursor is the mixture
over :data:`STAT_PHASES` equally spaced phases (the cursors taken independent, which
keeps the variance exact and approximates the shape). COM instead takes one phase per
aggressor (the worst or a chosen one); neither is the worst case of a fixed-phase run.
The victim's SJ and dual-Dirac offsets move the aggressors' samples there as the
victim's (exactly, per FFE tap); its random jitter on their slopes (first order) and
their TX noise enter as Gaussian variance.

TX noise: an aggressor's symbol values carry white noise of the victim's SNR_TX
relative to the aggressor's own levels (its pulse carries its swing), from its own
seed's stream, in every engine.

TX jitter: each aggressor has its own clock, so its RJ, DCD (on its own symbol index),
BUJ and SJ (default: the victim's ``[tx_jitter]``; SJ of the victim's amplitude and
frequency, with its own start phase) come from its own seed's streams.
Symbol j leaving tau_j UI late adds ``c_i(phi + tau_j) ~ c_i - tau_j c'_i`` (first
order): the counted engines add the FIR of ``-tau_j b_j`` through the slope taps, the
budget its variance (white: the symbols b_j are independent of tau and of each other,
so even the slow SJ gives ``E[tau^2] E[b^2]`` at lag 0 only), the statistical engine
RJ and BUJ as Gaussian, DCD as the mixture of both parities' cursors, and SJ (bounded,
independent of the victim, slow against the pulse) by its arcsine law: the BER is the
average over :data:`SJ_POINTS` equally spaced SJ phases (:func:`sj_points`), all of an
aggressor's cursors moved by the same ``A sin(theta)``. Taken per cursor instead
(Gaussian of variance A^2 / 2, or a per-cursor mixture) it put the BER 2.3-2.7x above
the counted one at 0.35 UI; coherent, within the counted interval
(tests/test_xtalk_txjitter.py).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from serdes.errors import ConfigError
from serdes.icn import coupling_samples, icn_v, icn_weight  # noqa: F401  (re-exported)

STAT_PHASES = 16       # phases of the mixture of a walking aggressor (statistical engine)
XTALK_BLOCK = 1024     # UI per block of constant phase of a walking aggressor
KEEP_ENERGY = 1e-3     # energy fraction of an aggressor's sampled pulse that may be cut
SJ_POINTS = 8          # phases of an aggressor's TX SJ in the statistical engine's mixture


class ThruCopy:
    """A coupling path that is the thru's channel ``stages`` scaled by ``coupling_db`` and
    delayed by ``delay_s`` (an analytic aggressor with a known coupling, for tests)."""

    def __init__(self, stages, coupling_db: float, delay_s: float = 0.0):
        self.stages = tuple(stages)
        self.gain = 10.0 ** (coupling_db / 20.0)
        self.coupling_db = float(coupling_db)
        self.delay_s = float(delay_s)

    def response(self, f_hz) -> np.ndarray:
        from serdes.stage import cascade

        f = np.asarray(f_hz, dtype=np.float64)
        return self.gain * cascade(self.stages, f) * np.exp(-2j * np.pi * f * self.delay_s)

    def describe(self) -> str:
        return f"thru copy {self.coupling_db:g} dB, +{self.delay_s * 1e12:g} ps"


@dataclass(frozen=True)
class Aggressor:
    """One aggressor: ``channel`` the coupling stages (packages first and last), ``tx`` its
    transmitter stages (edge, FFE), ``swing_v`` (A_fe or A_ne), ``rise_time_s`` (for the
    ICN weight), its data ``pattern`` and ``seed``, ``phase_ui`` in [0, 1), ``ppm``."""

    kind: str
    channel: tuple
    tx: tuple
    swing_v: float
    rise_time_s: float
    pattern: str = "random"
    seed: int = 1
    phase_ui: float = 0.0
    ppm: float = 0.0
    label: str = ""
    tx_rj_ui: float = 0.0     # its own TX random jitter (rms UI), DCD (pk-pk UI) and
    tx_dcd_ui: float = 0.0    # bounded uncorrelated jitter (+- UI): see the module notes
    tx_buj_ui: float = 0.0
    tx_sj_ui: float = 0.0     # its TX SJ (peak UI) at tx_sj_hz, its own start phase
    tx_sj_hz: float = 0.0

    def __post_init__(self):
        if self.kind not in ("fext", "next"):
            raise ConfigError(f"aggressor kind = {self.kind!r}: expected 'fext' or 'next'")
        if not 0.0 <= self.phase_ui < 1.0:
            raise ConfigError(f"aggressor phase_ui = {self.phase_ui!r}: expected [0, 1)")
        for k in ("tx_rj_ui", "tx_dcd_ui", "tx_buj_ui", "tx_sj_ui"):
            v = getattr(self, k)
            if not (np.isfinite(v) and 0.0 <= v <= 0.5):
                raise ConfigError(f"aggressor {k} = {v!r}: expected 0 .. 0.5 UI")
        if self.tx_sj_ui > 0 and not (np.isfinite(self.tx_sj_hz) and self.tx_sj_hz > 0):
            raise ConfigError(f"aggressor tx_sj_hz = {self.tx_sj_hz!r}: expected > 0 Hz "
                              f"with tx_sj_ui > 0")

    @property
    def tx_jitter(self):
        """Its TX jitter as :class:`serdes.txjitter.TxJitter` (no ppm: that is ``ppm``)."""
        from serdes.txjitter import TxJitter

        return TxJitter(rj_ui=self.tx_rj_ui, dcd_ui=self.tx_dcd_ui, buj_ui=self.tx_buj_ui,
                        sj_ui=self.tx_sj_ui, sj_hz=self.tx_sj_hz if self.tx_sj_ui > 0 else 1e6)

    @property
    def tx_jitter_var(self) -> float:
        """E[tau^2] of its TX jitter (UI^2): RJ^2 + (DCD/2)^2 + BUJ^2 / 3 + SJ^2 / 2."""
        return (self.tx_rj_ui ** 2 + 0.25 * self.tx_dcd_ui ** 2 + self.tx_buj_ui ** 2 / 3.0
                + 0.5 * self.tx_sj_ui ** 2)

    @property
    def coupling(self):
        """The coupling stage without the packages."""
        core = [s for s in self.channel
                if not any(t is not None for t in (getattr(s, "terminations", None) or ()))]
        return core[0] if len(core) == 1 else core


@dataclass(frozen=True)
class Crosstalk:
    """The aggressors of a link and the ICN settings (f_r x f_b the reference receiver's
    -3 dB point, the integral from ``f1_hz`` to ``f2_hz``, 0: the symbol rate)."""

    aggressors: tuple = ()
    f_r: float = 0.75
    f1_hz: float = 0.05e9
    f2_hz: float = 0.0


class AggressorPulse:
    """An aggressor's pulse at the victim's ADC input (after the VGA) on the fine grid,
    and its taps at the victim's sampling instants for any phase."""

    def __init__(self, link, agg: Aggressor):
        from serdes.stage import cascade

        self.agg = agg
        m, n = link.m, link.n_fft
        f = link.f_hz
        h = (cascade(agg.tx, f) * cascade(agg.channel, f) * link.h_rx
             * np.exp(-2j * np.pi * f * link.bulk_delay_ui * link.ui_s))
        rect = np.zeros(n)
        rect[: m + 1] = agg.swing_v
        rect[0] = rect[m] = 0.5 * agg.swing_v
        full = np.fft.irfft(np.fft.rfft(rect) * h, n=n) * link.vga_gain
        if not np.all(np.isfinite(full)):
            raise ConfigError(f"aggressor {agg.label}: its pulse response is not finite")
        self.m = m
        # the victim samples at fine index ipk + j m of the same window
        self.start = int(np.argmax(link._pulse_window))
        w = n // m
        base = full[(self.start + m * np.arange(w)) % n]
        # the shortest circular span of the UI-sampled energy (all phases) holding
        # 1 - KEEP_ENERGY of it, so c_i(phi) = full(start + (j0 + i) m - phi m)
        cells = np.zeros(w)
        for r in range(m):
            cells += full[(self.start - r + m * np.arange(w)) % n] ** 2
        j0, length = _energy_span(cells, KEEP_ENERGY)
        self.j0, self.n_taps = j0 - 1, length + 2   # one UI of margin for the phase shift
        self._full = full
        self.peak_v = float(np.max(np.abs(base)))

    def taps(self, phase_ui: float) -> np.ndarray:
        """c_i(phi), i < n_taps: the pulse at the victim's instants ``phase_ui`` UI late."""
        from serdes.kernels.fir import interp_cubic

        n = self._full.shape[0]
        pos = self.start + self.m * (self.j0 + np.arange(self.n_taps)) - phase_ui * self.m
        pos = np.mod(pos, n)
        ext = np.concatenate([self._full[-2:], self._full, self._full[:3]])
        return interp_cubic(ext, pos + 2.0)

    def fine(self, phase_ui: float, victim_phase: int) -> np.ndarray:
        """The pulse on the victim's fine grid, ``phase_ui`` UI late: (n_taps + 1) m
        samples ``g`` with ``g[i m + victim_phase] = taps(phase_ui)[i]`` (the victim's
        sampling instants at fine sample ``victim_phase`` of each UI), so that the
        aggressor's waveform is ``sum_j b_{k-j} g[j m + r]`` as the victim's is. Only
        the half UI around each of the n_taps instants is kept (the span the counted
        engines use)."""
        from serdes.kernels.fir import interp_cubic

        n, m = self._full.shape[0], self.m
        x = np.arange((self.n_taps + 1) * m, dtype=np.float64)
        pos = np.mod(self.start + m * self.j0 - phase_ui * m - victim_phase + x, n)
        ext = np.concatenate([self._full[-2:], self._full, self._full[:3]])
        g = interp_cubic(ext, pos + 2.0)
        keep = (x >= victim_phase - m // 2) & (x < victim_phase + self.n_taps * m - m // 2)
        return np.where(keep, g, 0.0)

    def slope(self, phase_ui: float) -> np.ndarray:
        """d c_i / d(sampling offset) in volts per UI (central difference, one fine step)."""
        d = 0.5 / self.m
        return (self.taps(phase_ui - d) - self.taps(phase_ui + d)) * self.m

    def stat_phases(self) -> np.ndarray:
        """The phases the statistical engine uses: the fixed one, or all (walking)."""
        if self.agg.ppm == 0:
            return np.array([self.agg.phase_ui])
        return (np.arange(STAT_PHASES) + 0.5) / STAT_PHASES

    def autocorr(self, lags: int, level_power: float, tx_sigma: float = 0.0,
                 rj_ui: float = 0.0) -> np.ndarray:
        """R[k], k < lags, of this aggressor at the ADC input (V^2), averaged over the
        statistical phases: its symbols (power ``level_power``) plus its TX noise (white,
        ``tx_sigma`` per symbol value) through its taps, the victim's random sampling
        jitter (``rj_ui``, independent per sample) on its slope, to first order, and its
        own TX jitter (white ``-tau_j b_j`` through its slope, see the module notes)."""
        r = np.zeros(lags)
        power = level_power + tx_sigma ** 2
        tj = self.agg.tx_jitter_var * power
        for ph in self.stat_phases():
            c = self.taps(ph)
            ac = np.correlate(c, c, mode="full")[c.shape[0] - 1:]
            k = min(lags, ac.shape[0])
            r[:k] += power * ac[:k]
            if tj > 0:
                d = self.slope(ph)
                ad = np.correlate(d, d, mode="full")[d.shape[0] - 1:]
                k = min(lags, ad.shape[0])
                r[:k] += tj * ad[:k]
            if rj_ui > 0 and lags > 0:
                d = self.slope(ph)
                r[0] += rj_ui ** 2 * level_power * float(d @ d)
        return r / self.stat_phases().shape[0]


def _energy_span(cells: np.ndarray, tol: float) -> tuple[int, int]:
    """(first, length) of the shortest circular run of ``cells`` holding 1 - tol of the sum."""
    total = float(cells.sum())
    w = cells.shape[0]
    if total <= 0:
        return 0, 1
    ipk = int(np.argmax(cells))
    lo = hi = ipk
    acc = float(cells[ipk])
    while acc < total * (1 - tol) and hi - lo + 1 < w:
        left, right = cells[(lo - 1) % w], cells[(hi + 1) % w]
        if right >= left:
            hi += 1
            acc += float(right)
        else:
            lo -= 1
            acc += float(left)
    return lo, hi - lo + 1


def crosstalk_autocorr(link, lags: int) -> np.ndarray:
    """R[k] of the sum of all aggressors at the ADC input (V^2; independent aggressors)."""
    r = np.zeros(lags)
    for p in link.aggressor_pulses:
        r += p.autocorr(lags, link.level_power, link.tx_noise_sigma, link.impairments.rj_ui)
    return r


def _through_ffe(p, w: np.ndarray, phase: float, offsets) -> np.ndarray:
    """sum_n w_n c_{j-n}(phase - offset_n): the aggressor's cursors at the FFE output when
    the victim's sample n is taken offset_n UI late (one offset, or one per FFE tap)."""
    off = np.broadcast_to(np.asarray(offsets, dtype=np.float64), w.shape)
    if np.all(off == off[0]):
        return np.convolve(w, p.taps(phase - off[0]))
    g = np.zeros(w.shape[0] + p.n_taps - 1)
    for n in range(w.shape[0]):
        if w[n] != 0.0:
            g[n:n + p.n_taps] += w[n] * p.taps(phase - off[n])
    return g


def stat_components(link, w: np.ndarray, tiny: float, small: float = 0.0,
                    offsets=0.0, sj_theta=None) -> tuple[list, list, float, float]:
    """Rows of (values, probs) for the statistical engine's convolution: per aggressor
    cursor of ``conv(w, c(phi))`` the M levels (mixed over the phases of a walking
    aggressor), and their total variance; cursors below ``tiny`` are left out, those
    whose values all stay within ``small`` are returned as one variance (4th: for the
    Gaussian part). ``offsets``: the victim's sampling offset (UI; one, or one per FFE
    tap: SJ, dual-Dirac), which moves the aggressors' samples as the victim's. The
    Gaussian part also carries the aggressors' TX noise (the victim's SNR_TX relative to
    each aggressor's own swing), the victim's random jitter on their slopes (first
    order, independent per sample, averaged over the aggressors' data) and each
    aggressor's own RJ and BUJ (``E[tau^2] (E[b^2] + tx sigma^2)`` times its slope through
    the FFE, first order); its DCD moves its cursors by -+DCD/2 alternately, and the
    cursors become the mixture over both parities (taken independent, as the phases);
    its SJ moves them all by A sin(theta) at aggressor i's phase ``sj_theta[i]``
    (:func:`sj_points`), or without ``sj_theta`` mixed over SJ_POINTS phases per cursor
    (independent: the variance exact, the shape much too wide: eyes, bathtubs)."""
    vals, probs, var, gauss = [], [], 0.0, 0.0
    lv = link.levels
    es = float(np.mean(lv ** 2))
    tx2 = float(link.tx_noise_sigma) ** 2
    rj = float(link.impairments.rj_ui)
    ww, mean_off = float(w @ w), float(np.mean(offsets))
    for ai, p in enumerate(link.aggressor_pulses):
        phases = p.stat_phases()
        g = np.array([_through_ffe(p, w, ph, offsets) for ph in phases])  # (K, len)
        if rj > 0:
            d = [p.slope(ph - mean_off) for ph in phases]
            gauss += rj ** 2 * es * ww * float(np.mean([x @ x for x in d]))
        tj = p.agg.tx_jitter_var
        if tj > 0:
            gd = np.array([np.convolve(w, p.slope(ph - mean_off)) for ph in phases])
            h = 0.5 * p.agg.tx_dcd_ui
            a = p.agg.tx_sj_ui
            gauss += (tj - h * h - 0.5 * a * a) * (es + tx2) * float(
                np.mean(np.sum(gd ** 2, axis=1)))
            if h > 0:   # DCD: both parities of its symbols as a mixture, like the phases
                alt = h * (1.0 - 2.0 * (np.arange(g.shape[1]) % 2))
                g, gd = np.concatenate([g - alt * gd, g + alt * gd]), np.concatenate([gd, gd])
            if a > 0 and sj_theta is not None:   # SJ at one phase: all cursors alike
                g = g - a * np.sin(sj_theta[ai]) * gd
            elif a > 0:   # SJ alone: its arcsine law as a mixture, cursors independent
                u = a * np.sin(2 * np.pi * (np.arange(SJ_POINTS) + 0.5) / SJ_POINTS)
                g = np.concatenate([g - x * gd for x in u])
        gauss += tx2 * float(np.mean(np.sum(g ** 2, axis=1)))   # its TX noise
        peak = np.max(np.abs(g), axis=0) * float(np.max(np.abs(lv)))
        low = (peak <= small) & (peak > tiny)
        gauss += es * float(np.sum(np.mean(g[:, low] ** 2, axis=0)))
        g = g[:, peak > max(tiny, small)]
        if not g.size:
            continue
        v = (g.T[:, :, None] * lv[None, None, :]).reshape(g.shape[1], -1)
        vals.append(v)
        probs.append(np.full(v.shape, 1.0 / v.shape[1]))
        var += es * float(np.sum(np.mean(g ** 2, axis=0)))
    return vals, probs, var, gauss


def sj_points(link) -> np.ndarray | None:
    """(SJ_POINTS, aggressors) SJ phases at which the statistical engine's BER is averaged
    (None: no aggressor SJ): equally spaced for each aggressor, in its own fixed order
    (a Latin hypercube: each aggressor's average exact, their joint one approximate)."""
    aggs = [p.agg for p in link.aggressor_pulses]
    if not any(a.tx_sj_ui > 0 for a in aggs):
        return None
    q = np.arange(SJ_POINTS)
    cols = [q if i == 0 else np.random.default_rng(i).permutation(SJ_POINTS)
            for i in range(len(aggs))]
    return 2 * np.pi * (np.array(cols).T + 0.5) / SJ_POINTS


def summary(link, ffe=None, volts_per_unit: float = 1.0) -> list[dict]:
    """Per aggressor: kind, label, swing, phase, ppm, its peak and rms at the ADC input
    (V), and with ``ffe`` (slicer units) its rms at the slicer in volts (times
    ``volts_per_unit``)."""
    out = []
    for p in link.aggressor_pulses:
        a = p.agg
        c = p.taps(a.phase_ui)
        row = {"kind": a.kind, "label": a.label, "swing_v": a.swing_v,
               "phase_ui": a.phase_ui, "ppm": a.ppm, "taps": p.n_taps,
               "peak_v": float(np.sum(np.abs(c)) * np.max(np.abs(link.levels))),
               "rms_v": float(np.sqrt((link.level_power + link.tx_noise_sigma ** 2)
                                      * (float(c @ c) + a.tx_jitter_var
                                         * float(p.slope(a.phase_ui) @ p.slope(a.phase_ui)))))}
        if ffe is not None:
            r = p.autocorr(len(ffe), link.level_power, link.tx_noise_sigma,
                           link.impairments.rj_ui)
            from scipy.linalg import toeplitz

            row["slicer_rms_v"] = float(np.sqrt(max(np.asarray(ffe) @ toeplitz(r) @ np.asarray(ffe), 0.0))
                                        * volts_per_unit)
        out.append(row)
    return out
