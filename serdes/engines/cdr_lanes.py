"""Clock recovery and TX jitter with a time-interleaved ADC (pulse engine).

:class:`TiCdrFrontEnd` is :class:`serdes.engines.cdr.CdrFrontEnd` whose samples are
taken by the converter's lanes: the ADC stream's sample j belongs to lane j mod N (the
index the receiver's converter uses, :meth:`serdes.tiadc.model.TiAdc.convert`), and is
taken at

    recovered phase + RX jitter + skew_l - trim_l + aperture jitter + supply delay - tau

(tau: the TX jitter of its symbol) through lane l's own track-and-hold (per-lane pulse
tables when the lanes' bandwidths differ, :func:`serdes.tiadc.lanes.lane_fine_pulses`).
The phase detector sees the lane's sample after its gain (and the supply's gain
modulation) and offset (:mod:`serdes.kernels.cdr_ti`), so skew, gain and offset
mismatch reach the loop as a pattern of period N in the detector's output; the loop's
bandwidth (MHz) is far below the pattern's frequency (the symbol rate / N), so what
remains is its mean: the loop locks where the lanes' mean instant sits at the
single-converter lock point, i.e. the recovered phase moves by minus the lanes' mean
skew. The detector gain and bias are calibrated on the common pulse (the lanes' skew
spread flattens the S-curve only to second order in the skews). The data samples go to
the receiver's converter as today (gain, offset, ENOB noise, quantization per lane).

With the background calibration (``adc_cal.enabled``, :mod:`serdes.dsp.ti_cal`) the
two loops run chunk by chunk, as the pipeline streams: the front end samples a chunk
with the lanes' delay trims as they are at its start (instant skew_l - trim_l, read
live from :attr:`TiAdc.skew_trim_s`) and its detector sees the calibration's corrected
lanes, ``c_l (g_l x + o_l - o^_l)`` with the gain factors c_l and offset estimates o^_l
as they are at the chunk's start (:attr:`TiAdc.cal_gains`, :attr:`TiAdc.cal_offsets_v`);
then the receiver's calibration block updates the estimates and the trims from that
chunk's converted samples; then the next chunk. The loops do not fight: the skew trims
are kept zero-mean over the lanes (the calibration solves for the lane differences with
the common DFT bin left at zero and brings the trims back within range at the nearest
zero-mean point), so they never move the lanes' mean instant, which is all the CDR
follows; the CDR moves every lane alike, which the calibration's skew detector (a lane
difference) does not see. What holds: for the same seed and chunk size the run is
reproducible bit for bit; it is not chunk-size invariant (the trims move once per chunk
and the detector's corrections are the chunk's start values: the chunk is the
calibration's loop period, ``link.chunk_symbols``, as without the CDR).

``cdr.mode = "bb"`` (2x sampling, the bang-bang detector): the edge sample half a UI
before data sample j is taken by lane j mod N's own edge sampler, which shares the
lane's clock (skew, trim, aperture and supply jitter of the instant), its T/H and its
gain and offset (:mod:`serdes.kernels.cdr_ti`, mode 3), with the edge noise of
:class:`~serdes.engines.cdr.CdrFrontEnd` (its own stream). This is one design choice:
an ADC whose edge samples come from separate lanes (2N lanes, their own skews) is not
modelled. The detector is calibrated on the common pulse, as the MM detector.
"""

from __future__ import annotations

from types import SimpleNamespace

import numpy as np

from serdes import rng
from serdes.engines.cdr import LOOKAHEAD, TABLE_Q, CdrFrontEnd, pulse_tables
from serdes.kernels import cdr_ti as kt
from serdes.tiadc.lanes import lane_fine_pulses
from serdes.tiadc.model import APERTURE_STREAM


class TiCdrFrontEnd(CdrFrontEnd):
    """:class:`~serdes.engines.cdr.CdrFrontEnd` sampling through ``link.adc``'s lanes
    (a :class:`serdes.tiadc.model.TiAdc`); see the module notes."""

    def __init__(self, link, seed: int, settings, tx_jitter=None, calibration=None):
        super().__init__(link, seed, settings, tx_jitter, calibration)
        adc = link.adc
        self.adc = adc
        self.calibrated = getattr(adc, "calibration", None) is not None
        self.n_lanes = int(adc.lanes)
        self.skew_ui = np.asarray(adc.skews_s, dtype=np.float64) / self.ui_s
        self.aperture_ui = float(adc.aperture_jitter_s) / self.ui_s
        self.supply = adc.supply if adc.supply is not None else None
        self._aperture = rng.BlockRNG(seed, APERTURE_STREAM)
        if adc.bw_mismatch:
            p = self.pulse
            fines = lane_fine_pulses(adc, p.fine, p.m, self.ui_s / p.m)
            sets = [pulse_tables(SimpleNamespace(fine=fl, phase=p.phase, m=p.m, n_ui=p.n_ui),
                                 TABLE_Q) for fl in fines]
            self.tables = np.ascontiguousarray(np.stack([s[0] for s in sets]))
            if self.txj.active:
                self.dtables = np.ascontiguousarray(np.stack([s[1] for s in sets]))
                self.d2tables = np.ascontiguousarray(np.stack([s[2] for s in sets]))
        else:
            self.tables = self.table[None]
            if self.txj.active:
                self.dtables, self.d2tables = self.dtable[None], self.d2table[None]
        if not self.txj.active:
            self.dtables = self.d2tables = np.zeros((self.tables.shape[0], 0, self.n_ui))

    def lane_offsets_ui(self, j0: int, n: int) -> np.ndarray:
        """What moves the instants of ADC samples j0 .. j0 + n - 1 beyond the recovered
        phase and the link's jitter (UI): lane skew, aperture jitter (clipped at 8
        sigma), supply-induced clock delay; with the calibration, minus the lane's delay
        trim as it is now."""
        l0 = j0 % self.n_lanes
        lane = self.skew_ui
        if self.calibrated:  # the delay trims as the calibration left them
            lane = lane - self.adc.skew_trim_s / self.ui_s
        off = np.tile(lane, (l0 + n) // self.n_lanes + 1)[l0:l0 + n]
        if self.aperture_ui > 0:
            s = self.aperture_ui
            off = off + np.clip(s * self._aperture.normal(j0, n), -8 * s, 8 * s)
        if self.supply is not None and self.supply.jitter_active:
            off = off + self.supply.delay_s(j0, n) / self.ui_s
        return off

    def _detector_gain_offset(self, j0: int, n: int):
        l0 = j0 % self.n_lanes
        reps = (l0 + n) // self.n_lanes + 1
        g, o = self.adc.gains, self.adc.offsets_v
        if self.calibrated:  # the corrected lane: c_l (g_l x + o_l - o^_l)
            c = self.adc.cal_gains
            g, o = c * g, c * (o - self.adc.cal_offsets_v)
        gd = np.tile(g, reps)[l0:l0 + n]
        od = np.tile(o, reps)[l0:l0 + n]
        if self.supply is not None and self.supply.gain_active:
            gd = gd * (1.0 + self.supply.gain_mod(j0, n))
        return np.ascontiguousarray(gd), np.ascontiguousarray(od)

    # ------------------------------------------------------------------ streaming
    def __call__(self, a: np.ndarray, k0: int) -> np.ndarray:
        # CdrFrontEnd's streaming (same random streams, same history), with the lanes'
        # instants in the sampler's offsets and the lanes' detector
        n, a_ext, t_ext, kn, drx, w, we = self._stream_in(a, k0)
        # ADC sample k0 is taken by lane k0 mod N
        d_all = drx + self.lane_offsets_ui(k0, n)
        gd, od = self._detector_gain_offset(k0, n)
        integ0 = self.state[1]
        parts = [kt.cdr_ti_sampler(
            a_ext[lo:hi + self.hist], t_ext[lo:hi + self.hist], d_all[lo:hi], w[lo:hi],
            self.tables, self.dtables, self.d2tables, (k0 + lo) % self.tables.shape[0],
            TABLE_Q, LOOKAHEAD, self.pd_levels, self.h0, self.mode, self.bias,
            self.kp * g, self.ki * g * g, self.settings.pi_steps, max(0, -kn - lo), self.state,
            self.ring, gd[lo:hi], od[lo:hi], **agg) for lo, hi, g, agg in self._segments(kn, n, we)]
        x, ph, _ = parts[0] if len(parts) == 1 else (np.concatenate(v) for v in zip(*parts))
        self._stream_out(ph, d_all, t_ext, kn, n, integ0)
        return x



def loop_skews_ui(adc, ui_s: float) -> np.ndarray:
    """The lanes' static instants (UI) the loop sees: their skews, or with the skew
    calibration on (``adc_cal.skew_gain`` > 0, two lanes or more) the skews' common
    mean alone, since the zero-mean trims remove the differences and never the mean
    (the residual the trims leave is the statistical engine's calibration term,
    :class:`serdes.tiadc.stat.InterleavedStatistics`)."""
    skew = np.asarray(adc.skews_s, dtype=np.float64) / ui_s
    cal = getattr(adc, "calibration", None)
    if cal is not None and cal.skew_gain > 0 and skew.shape[0] > 1:
        return np.full(skew.shape[0], float(np.mean(skew)))
    return skew


def lanes_response(resp, skew_ui):
    """The detector as the loop sees it through the lanes, for the statistical engine
    (:func:`serdes.engines.cdr_stat.stat_link`): at recovered phase p lane l samples at
    p + skew_l, so the loop's S-curve is the lanes' mean ``mean_l S(p + skew_l)`` and its
    noise's long-run variance the lanes' mean ``mean_l lr(p + skew_l)`` (the lanes' noises
    taken as uncorrelated across lanes: the detector noise is correlated over ~300 UI, so
    neighbours in time, which are neighbouring lanes, share it; the mean over lanes of
    the variance is then the first-order value). ``resp``: a
    :class:`serdes.engines.cdr_stat.LoopResponse` measured on the common pulse. The loop's
    operating point on it is the shift of the recovered phase: -mean(skew) to first
    order, plus the S-curve's curvature times the skews' variance."""
    from dataclasses import replace

    skew = np.asarray(skew_ui, dtype=np.float64)
    s = np.mean([np.interp(resp.grid + t, resp.grid, resp.s) for t in skew], axis=0)
    out = replace(resp, s=s)
    if resp.noise_grid is not None:
        lr = np.mean([np.interp(resp.noise_grid + t, resp.noise_grid, resp.noise_lr_grid)
                      for t in skew], axis=0)
        out = replace(out, noise_lr=float(np.interp(0.0, resp.noise_grid, lr)),
                      noise_lr_grid=lr)
    return out
