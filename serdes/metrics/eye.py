"""Eye measurements: openings from bathtubs, counted eyes from slicer samples, RLM,
SNDR, and the analog eye density of the waveform engine."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np


def opening_from_bathtub(x: np.ndarray, ber: np.ndarray, target: float,
                         centre: float = 0.0) -> float:
    """Width of the contiguous interval around ``centre`` where ber <= target.

    The crossings are interpolated linearly in log(ber). 0 if the eye is closed at
    the centre; an interval reaching the end of ``x`` stops there.
    """
    x = np.asarray(x, dtype=np.float64)
    b = np.log(np.maximum(np.asarray(ber, dtype=np.float64), 1e-300))
    lt = np.log(target)
    i0 = int(np.argmin(np.abs(x - centre)))
    if b[i0] > lt:
        return 0.0
    n = x.shape[0]
    r = i0
    while r + 1 < n and b[r + 1] <= lt:
        r += 1
    hi = x[r] if r + 1 == n else x[r] + (x[r + 1] - x[r]) * (lt - b[r]) / (b[r + 1] - b[r])
    left = i0
    while left - 1 >= 0 and b[left - 1] <= lt:
        left -= 1
    lo = (x[left] if left == 0
          else x[left] - (x[left] - x[left - 1]) * (lt - b[left]) / (b[left - 1] - b[left]))
    return float(hi - lo)


# ======================================================================= which taps
def taps_of_result(design, res):
    """``design`` (the designed taps) with the FFE, DFE and RC taps a counted run
    (:class:`serdes.engines.run.RunResult`) ended with: the adapted ones with LMS."""
    import dataclasses

    changes = dict(ffe=np.asarray(res.ffe_taps, dtype=np.float64),
                   dfe=np.asarray(res.dfe_taps, dtype=np.float64))
    if hasattr(design, "rc_lags"):
        changes.update(rc_lags=np.asarray(res.rc_lags, dtype=np.int64),
                       rc_taps=np.asarray(res.rc_taps, dtype=np.float64))
    return dataclasses.replace(design, **changes)


def receiver_taps(link, *, seed: int | None = None):
    """The taps the receiver works with, and a few words saying where they come from.

    ``eq.mode = 'mmse'``: the designed taps. ``'lms'``: the taps the LMS adaptation
    reaches, from a run of the pulse engine over the training block and one more
    65536-symbol block of decision-directed adaptation (not the starting point of the
    adaptation, a 1-tap FFE that would draw a closed eye)."""
    from serdes.engines.run import STOP_BLOCK, design_equalizer, simulate

    design = design_equalizer(link)
    c = link.config
    if c["eq"]["mode"] != "lms":
        return design, "MMSE taps"
    n = c["eq"]["train_symbols"] + STOP_BLOCK
    res = simulate(link, symbols=n, target_errors=0, seed=seed)
    return taps_of_result(design, res), f"LMS taps adapted over {n:,} symbols"


# ====================================================================== counted eyes
@dataclass
class SlicerSamples:
    """Slicer inputs v (normalised units) with the level index of the symbol each one
    decides, from the pulse or waveform engine and the digital receiver."""

    sent: np.ndarray     # uint8 level indices
    v: np.ndarray
    levels: np.ndarray
    volts_per_unit: float


def slicer_samples(link, taps=None, *, symbols: int = 1 << 17, seed: int | None = None,
                   engine: str = "pulse") -> SlicerSamples:
    """Run ``symbols`` symbols through the front end and the receiver (fixed taps,
    decisions fed back as in a real DFE) and return the aligned slicer inputs."""
    from serdes.dsp.receiver import DigitalReceiver
    from serdes.engines.pulse import PulseFrontEnd
    from serdes.engines.run import design_equalizer
    from serdes.engines.waveform import WaveformFrontEnd
    from serdes.signal.source import Transmitter

    c = link.config
    seed = c["link"]["seed"] if seed is None else int(seed)
    taps = taps if taps is not None else design_equalizer(link)
    front = PulseFrontEnd(link, seed) if engine == "pulse" else WaveformFrontEnd(link, seed)
    rx = DigitalReceiver(link, taps, mode="mmse", seed=seed)
    line, _, a = Transmitter(link, seed).next(int(symbols))
    _, v = rx.process(front(a, 0), 0)
    delay = int(getattr(rx, "latency", taps.delay)) + int(front.latency)
    warm = link.pulse.n_ui + len(taps.ffe) + delay
    if warm >= symbols:
        raise ValueError(f"symbols = {symbols}: need more than {warm} to fill the equalizer")
    return SlicerSamples(sent=line[warm - delay:symbols - delay], v=v[warm:],
                         levels=np.asarray(link.levels, dtype=np.float64),
                         volts_per_unit=float(link.pulse.taps[link.pulse.cursor]))


def wrong_side_counted(s: SlicerSamples, y: np.ndarray) -> np.ndarray:
    """Counted eye map at voltages y: the fraction of symbols on the other side of y
    than their level, per bit (the counted twin of the statistical eye map)."""
    y = np.asarray(y, dtype=np.float64)
    m = s.levels.shape[0]
    bps = 1 if m == 2 else 2
    out = np.zeros(y.shape[0])
    for i in range(m):
        vi = np.sort(s.v[s.sent == i])
        above = y > s.levels[i]
        out[above] += vi.shape[0] - np.searchsorted(vi, y[above], side="right")
        out[~above] += np.searchsorted(vi, y[~above], side="left")
    return out / (s.v.shape[0] * bps)


def counted_eye_heights(s: SlicerSamples, target: float = 1e-3, n_points: int = 801
                        ) -> np.ndarray:
    """Height of each eye (normalised) at the counted per-eye error rate ``target``,
    around its slicer threshold."""
    lv = s.levels
    out = []
    for e in range(lv.shape[0] - 1):
        t = 0.5 * (lv[e] + lv[e + 1])
        half = 0.5 * (lv[e + 1] - lv[e])
        dy = np.linspace(-half, half, n_points)
        out.append(opening_from_bathtub(dy, wrong_side_counted(s, t + dy), target, 0.0))
    return np.array(out)


def rlm(level_means) -> float:
    """Ratio of level mismatch of four PAM4 levels (IEEE 802.3 120D.3.1.2)."""
    v = np.sort(np.asarray(level_means, dtype=np.float64))
    if v.shape[0] != 4:
        return 1.0
    mid = 0.5 * (v[0] + v[3])
    es1 = (v[1] - mid) / (v[0] - mid)
    es2 = (v[2] - mid) / (v[3] - mid)
    return float(min(3 * es1, 3 * es2, 2 - 3 * es1, 2 - 3 * es2))


def sndr_db(s: SlicerSamples) -> float:
    """10 log10(E[a^2] / E[(v - a)^2]) at the slicer."""
    a = s.levels[s.sent]
    e = s.v - a
    return float(10 * np.log10(np.mean(a * a) / np.mean(e * e)))


def counted_eye_report(s: SlicerSamples, target: float = 1e-3) -> dict:
    names = ("lower", "middle", "upper") if s.levels.shape[0] == 4 else ("eye",)
    h = counted_eye_heights(s, target)
    means = [float(np.mean(s.v[s.sent == i])) for i in range(s.levels.shape[0])]
    return {
        "symbols": int(s.v.shape[0]), "target": target,
        "eyes": {n: {"height": float(x), "height_mv": float(x * s.volts_per_unit * 1e3)}
                 for n, x in zip(names, h)},
        "vertical_eye_opening": float(h.min()),
        "vertical_eye_opening_mv": float(h.min() * s.volts_per_unit * 1e3),
        "level_means": means, "rlm": rlm(means), "sndr_db": sndr_db(s),
    }


# ========================================================================= analog eye
@dataclass
class AnalogEye:
    """Persistence image of the ADC-input (or AFE-output) waveform over two UI."""

    density: np.ndarray      # (n_t, n_v) hit counts
    t_s: np.ndarray          # bin centres (s), 0 at a crossing: eye centres at T/2, 3T/2
    v_v: np.ndarray          # bin centres (V)
    ui_s: float
    level_v: np.ndarray      # mean of each level at the sampling instant (V)
    heights_v: np.ndarray    # inner opening of each eye at the sampling instant (V)
    reference: str           # "afe" or "adc"

    @property
    def n_ui(self) -> int:
        return int(round((self.t_s[-1] - self.t_s[0] + self.t_s[1] - self.t_s[0]) / self.ui_s))


def analog_eye(link, *, symbols: int = 20_000, seed: int | None = None, n_t: int = 256,
               n_v: int = 256, reference: str = "afe") -> AnalogEye:
    """2-D histogram of the waveform engine's output over two UI (windows start half a
    UI before a sampling instant). ``reference="afe"`` divides out the VGA gain (the
    CTLE/AFE output); ``"adc"`` is the ADC input."""
    from serdes.engines.waveform import WaveformFrontEnd
    from serdes.signal.source import Transmitter

    c = link.config
    seed = c["link"]["seed"] if seed is None else int(seed)
    m = link.m
    line, _, a = Transmitter(link, seed).next(int(symbols))
    w = WaveformFrontEnd(link, seed).waveform(a, 0)
    if reference == "afe":
        w = w / link.vga_gain
    n_ui_win = 2
    up = max(1, n_t // (n_ui_win * m))           # interpolation factor of the fine grid
    per_ui = m * up
    fine = np.interp(np.arange(w.shape[0] * up) / up, np.arange(w.shape[0]), w)
    p = link.pulse
    skip = p.n_ui + 2                              # let the pulse sum fill up
    starts = (np.arange(skip, symbols - n_ui_win - 1) * m + p.phase - m // 2) * up
    cols = n_ui_win * per_ui
    idx = starts[:, None] + np.arange(cols)[None, :]
    seg = fine[idx]                                # (n_windows, cols)
    lo, hi = float(seg.min()), float(seg.max())
    pad = 0.05 * (hi - lo)
    edges = np.linspace(lo - pad, hi + pad, n_v + 1)
    vi = np.clip(np.searchsorted(edges, seg, side="right") - 1, 0, n_v - 1)
    ti = np.broadcast_to(np.arange(cols) * n_t // cols, seg.shape)
    density = np.bincount((ti * n_v + vi).ravel(), minlength=n_t * n_v).reshape(n_t, n_v)
    t = (np.arange(n_t) + 0.5) * n_ui_win * link.ui_s / n_t
    v = 0.5 * (edges[1:] + edges[:-1])
    # the sampling instant of window k decides symbol (k + 0) - cursor
    inst = seg[:, per_ui // 2]
    sym = line[np.arange(skip, symbols - n_ui_win - 1) - p.cursor]
    nl = link.levels.shape[0]
    level_v = np.array([inst[sym == i].mean() for i in range(nl)])
    heights = np.array([max(inst[sym == i + 1].min() - inst[sym == i].max(), 0.0)
                        for i in range(nl - 1)])
    return AnalogEye(density=density.astype(np.float64), t_s=t, v_v=v, ui_s=link.ui_s,
                     level_v=level_v, heights_v=heights, reference=reference)
