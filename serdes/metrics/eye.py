"""Eye measurements: the taps and system an eye is drawn for, counted eyes from slicer
samples, RLM, SNDR, and the analog eye density of the waveform engine (an opening read
from a bathtub: :mod:`serdes.metrics.opening`)."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from serdes.metrics.opening import opening_from_bathtub


# ======================================================================= which taps
def taps_of_result(design, res):
    """``design`` (the designed taps) with the FFE, DFE and RC taps a counted run
    (:class:`serdes.engines.run.RunResult`) ended with: the adapted ones with LMS."""
    import dataclasses

    changes = dict(ffe=np.asarray(res.ffe_taps, dtype=np.float64),
                   dfe=np.asarray(res.dfe_taps, dtype=np.float64))
    if res.rc_lags or design.rc_lags.size:
        changes.update(rc_lags=np.asarray(res.rc_lags, dtype=np.int64),
                       rc_taps=np.asarray(res.rc_taps, dtype=np.float64))
    return dataclasses.replace(design, **changes)


def receiver_taps(system, *, seed: int | None = None):
    """The taps the receiver works with, and a few words saying where they come from.

    ``eq.mode = 'mmse'``: the designed taps. ``'lms'``: the taps the LMS adaptation
    reaches, from a run of the pulse engine over the training block and one more
    65536-symbol block of decision-directed adaptation (not the starting point of the
    adaptation, a 1-tap FFE that would draw a closed eye)."""
    from serdes.engines.run import design_equalizer, simulate
    from serdes.pipeline import STOP_BLOCK

    design = design_equalizer(system)
    if system.receiver.mode != "lms":
        return design, "MMSE taps"
    n = system.receiver.train_symbols + STOP_BLOCK
    res = simulate(system, symbols=n, target_errors=0, seed=seed)
    return taps_of_result(design, res), f"LMS taps adapted over {n:,} symbols"


def stat_view(system, taps):
    """The system the statistical engine runs on for ``system`` with ``taps``, as
    ``serdes run``'s statistical sections take it: with clock recovery or TX jitter, the
    phase the loop holds (its lock point and static shift), its wander and the SJ it
    leaves (:func:`serdes.engines.cdr_stat_model.stat_system`); else ``system``. The eye
    and bathtub commands took the link at the pulse peak with every SJ untracked: with
    ``cdr.lock = 'mm'`` they measured the eye 0.13 UI from where the loop samples."""
    if not (system.cdr.active or system.tx_jitter.active):
        return system
    from serdes.engines.cdr_stat_model import stat_system

    return stat_system(system, taps)[0]


class RowMixture:
    """The slicer-input density of a statistical engine over its jitter rows (the loop's
    lock point, wander and SJ, the dual-Dirac points), as :meth:`ber` weighs them; the
    ``pdf(level, x)`` and ``m`` the equalized eye's overlay reads."""

    def __init__(self, rows):
        self.rows = list(rows)
        self.m = self.rows[0][1].m

    def pdf(self, level: int, x) -> np.ndarray:
        return sum(w * d.pdf(level, x) for w, d in self.rows)


def stat_density(eng):
    """The density to draw beside the counted equalized eye: the engine's distribution,
    or its rows' mixture where the sampling phase is spread over jitter rows (a single
    :meth:`distribution` sits at the nominal phase, the pulse peak, not at the CDR's lock
    point)."""
    rows = eng.row_distributions(0.0)
    return rows[0][1] if len(rows) == 1 else RowMixture(rows)


# ====================================================================== counted eyes
@dataclass
class SlicerSamples:
    """Slicer inputs v (normalised units) with the level index of the symbol each one
    decides, from the pulse or waveform engine and the digital receiver."""

    sent: np.ndarray     # uint8 level indices
    v: np.ndarray
    levels: np.ndarray
    volts_per_unit: float


def slicer_samples(system, taps=None, *, symbols: int = 1 << 17, seed: int | None = None,
                   engine: str = "pulse") -> SlicerSamples:
    """``symbols`` aligned slicer inputs from the pipeline (front end and receiver chain
    with fixed ``taps``, decisions fed back as in a real DFE), after its warm-up."""
    from serdes.dsp.receiver import build_chain
    from serdes.engines.run import design_equalizer, pipeline
    from serdes.pipeline import SlicerCapture

    link = system.link
    seed = system.run.seed if seed is None else int(seed)
    taps = taps if taps is not None else design_equalizer(system)
    chain = build_chain(link, taps, system.receiver, seed=seed, adapt=False)
    pipe = pipeline(system, taps, engine=engine, seed=seed, receiver=chain)
    cap = SlicerCapture(int(symbols))
    total = int(symbols) + pipe.warm + 4096
    pipe.run(total, chunk=min(total, 1 << 16), observers=[cap])
    return capture_samples(cap, link)


def capture_samples(cap, link) -> SlicerSamples:
    """The :class:`SlicerSamples` of a :class:`~serdes.pipeline.SlicerCapture`."""
    return SlicerSamples(sent=cap.sent, v=cap.v, levels=np.asarray(link.levels, dtype=np.float64),
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


ANALOG_EYE_CHUNK = 2048      # symbols per streamed chunk of the analog eye
ANALOG_EYE_PILOT = 1 << 14   # symbols whose waveform sets the analog eye's voltage range
N_UI_WINDOW = 2              # UIs per analog eye window


def analog_tx_jitter(system):
    """The TX jitter the analog eye draws (each symbol's pulse moved by its own offset,
    the same draws as the pulse engine's for the seed), or None; refused where the
    offsets are not bounded (a ppm offset walks away from the eye's ideal clock) or
    reach past txjitter.MAX_DRAWN_UI (the pulse's last UIs would be cut)."""
    tj = system.tx_jitter
    if not tj.active:
        return None
    from serdes.errors import ConfigError
    from serdes.txjitter import MAX_DRAWN_UI, reach_ui

    if tj.ppm != 0:
        raise ConfigError(f"tx_jitter.ppm = {tj.ppm:g}: the analog eye is drawn on the "
                          "ideal clock, which a frequency offset walks away from; set it to "
                          "0 for the eye (the statistical and equalized eyes take it)")
    reach = reach_ui(tj)
    if reach > MAX_DRAWN_UI:
        raise ConfigError(
            f"TX jitter reaching {reach:g} UI (tx_jitter.sj_ui + 8 rj_ui + dcd_ui/2 + "
            f"buj_ui): the analog eye draws at most {MAX_DRAWN_UI:g} UI on its "
            "ideal clock; the statistical and equalized eyes take it")
    return tj


def _analog_windows(system, seed: int, symbols: int, chunk: int, up: int, scale: float):
    """Stream the waveform engine's output in chunks of ``chunk`` symbols and yield
    (windows, symbols decided at their sampling instants): each window is two UI of the
    waveform, linearly interpolated ``up`` times, starting half a UI before a sampling
    instant. The front end carries its filter state across chunks and a few UIs of
    waveform are kept for windows that straddle chunks, so the windows do not depend on
    ``chunk``; memory is bounded by ``chunk``, not by ``symbols``."""
    from serdes.engines.crosstalk import AggressorWaveform
    from serdes.engines.waveform import WaveformFrontEnd
    from serdes.signal.source import Transmitter

    link = system.link
    m, p = link.m, link.pulse
    cols = N_UI_WINDOW * m * up
    c = np.arange(cols)
    ci, frac = c // up, (c % up) / up
    reach = int(ci[-1]) + 1                    # fine samples a window needs past its start
    tx = Transmitter(link, system.source, seed)
    front = WaveformFrontEnd(link, seed, tx_jitter=analog_tx_jitter(system))
    xwave = AggressorWaveform(link) if link.aggressor_pulses else None
    skip = p.n_ui + 2                          # let the pulse sum fill up
    j, j_end = skip, symbols - N_UI_WINDOW - 1
    buf, b0 = np.zeros(0), 0                   # waveform kept, fine index of buf[0]
    lines, l0 = np.zeros(0, dtype=np.uint8), 0  # symbols kept, index of lines[0]
    k0 = 0
    while j < j_end and k0 < symbols:
        n = min(chunk, symbols - k0)
        line, _, a = tx.next(n)
        w = front.waveform(a, k0)
        if xwave is not None:   # the aggressors, through the same front end
            w += xwave(k0, n)
        buf = np.concatenate([buf, w * scale])
        lines = np.concatenate([lines, line])
        k0 += n
        start0 = p.phase - m // 2                 # fine index of window j: j m + start0
        last = b0 + buf.shape[0] - 1 - reach - start0
        j_hi = min(j_end, last // m + 1 if last >= 0 else 0)
        if j_hi > j:
            jj = np.arange(j, j_hi)
            i = (jj * m + start0 - b0)[:, None] + ci[None, :]
            lo = buf[i]
            seg = lo + frac * (buf[i + 1] - lo)
            yield seg, lines[jj - p.cursor - l0], k0
            j = j_hi
        drop = min(max(0, j * m + start0 - b0), buf.shape[0])
        buf, b0 = buf[drop:], b0 + drop
        ldrop = min(max(0, j - p.cursor - l0), lines.shape[0])
        lines, l0 = lines[ldrop:], l0 + ldrop


def analog_eye(system, *, symbols: int = 20_000, seed: int | None = None, n_t: int = 256,
               n_v: int = 256, reference: str = "afe", chunk: int = ANALOG_EYE_CHUNK,
               progress=None) -> AnalogEye:
    """2-D histogram of the waveform engine's output over two UI (windows start half a
    UI before a sampling instant). ``reference="afe"`` divides out the VGA gain (the
    CTLE/AFE output); ``"adc"`` is the ADC input. Crosstalk aggressors are added on the
    same fine grid (:class:`serdes.engines.crosstalk.AggressorWaveform`).

    The waveform streams through the histogram in chunks of ``chunk`` symbols, so
    memory does not grow with ``symbols`` and the histogram does not depend on
    ``chunk``. The voltage range comes from the first ANALOG_EYE_PILOT symbols (plus a
    10% margin; the rare sample beyond it counts in the edge bin). ``progress``: called
    as progress(symbols done, symbols) after each chunk."""
    link = system.link
    seed = system.run.seed if seed is None else int(seed)
    symbols, chunk = int(symbols), int(chunk)
    if chunk < 1:
        raise ValueError(f"chunk = {chunk}: expected an integer >= 1")
    m = link.m
    need = link.pulse.n_ui + N_UI_WINDOW + 4
    if symbols < need:
        raise ValueError(f"symbols = {symbols}: need at least {need} for one eye window")
    scale = 1.0 / link.vga_gain if reference == "afe" else 1.0
    up = max(1, n_t // (N_UI_WINDOW * m))        # interpolation factor of the fine grid
    per_ui = m * up
    cols = N_UI_WINDOW * per_ui
    lo, hi = np.inf, -np.inf
    for seg, _, _ in _analog_windows(system, seed, min(symbols, ANALOG_EYE_PILOT), chunk,
                                     up, scale):
        lo, hi = min(lo, float(seg.min())), max(hi, float(seg.max()))
    pad = 0.1 * (hi - lo)
    edges = np.linspace(lo - pad, hi + pad, n_v + 1)
    ti = (np.arange(cols) * n_t // cols)[None, :] * n_v
    density = np.zeros(n_t * n_v, dtype=np.int64)
    nl = link.levels.shape[0]
    v_sum, v_n = np.zeros(nl), np.zeros(nl, dtype=np.int64)
    v_min, v_max = np.full(nl, np.inf), np.full(nl, -np.inf)
    for seg, sym, done in _analog_windows(system, seed, symbols, chunk, up, scale):
        vi = np.clip(np.searchsorted(edges, seg, side="right") - 1, 0, n_v - 1)
        density += np.bincount((ti + vi).ravel(), minlength=n_t * n_v)
        inst = seg[:, per_ui // 2]            # the sampling instant of each window
        for i in range(nl):
            x = inst[sym == i]
            if x.size:
                v_sum[i] += float(np.sum(x))
                v_n[i] += x.size
                v_min[i], v_max[i] = min(v_min[i], x.min()), max(v_max[i], x.max())
        if progress is not None:
            progress(done, symbols)
    t = (np.arange(n_t) + 0.5) * N_UI_WINDOW * link.ui_s / n_t
    v = 0.5 * (edges[1:] + edges[:-1])
    with np.errstate(invalid="ignore", divide="ignore"):
        level_v = v_sum / v_n
    heights = np.array([max(v_min[i + 1] - v_max[i], 0.0) for i in range(nl - 1)])
    return AnalogEye(density=density.reshape(n_t, n_v).astype(np.float64), t_s=t, v_v=v,
                     ui_s=link.ui_s, level_v=level_v, heights_v=heights, reference=reference)
