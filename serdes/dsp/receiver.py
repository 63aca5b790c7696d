"""The digital receiver a :class:`~serdes.dsp.spec.ReceiverSpec` asks for, as a
:class:`~serdes.dsp.blocks.Chain` of blocks:

* MMSE taps, DFE detector:      ADC -> FFE -> DFE/slicer
* with a reflection canceller:  ADC -> FFE -> RC + DFE/slicer
* LMS adaptation:               ADC -> adaptive FFE + DFE (+ RC)
* MLSE detector:                ADC -> FFE -> whitening (+ RC) + Viterbi

Decision k is about the symbol ``chain.latency`` UIs before ADC sample k.
"""

from __future__ import annotations

import numpy as np

from serdes.dsp.blocks import (AdaptiveFfeDfe, AdcBlock, Chain, DfeSlicer, Ffe, Mlse,
                               RcDfe, thresholds_for)
from serdes.dsp.lms_monitor import LmsDivergedError, LmsMonitor
from serdes.dsp.rc import ReflectionCanceller
from serdes.dsp.spec import ReceiverSpec

__all__ = ["build_chain", "chain_taps", "thresholds_for", "LmsDivergedError"]


def lms_steps(link, taps, mu: float) -> tuple[float, float]:
    """Normalised LMS: the step of each tap relative to the power in its tap line."""
    x_power = link.level_power * float(link.pulse.taps @ link.pulse.taps) + link.noise.variance
    mu_w = mu / (len(taps.ffe) * x_power)
    mu_b = mu / (max(len(taps.dfe), 1) * link.level_power)
    return mu_w, mu_b


def build_chain(link, taps, spec: ReceiverSpec, *, seed: int, adapt: bool | None = None) -> Chain:
    """The receiver chain for ``taps`` (a :class:`serdes.dsp.design.ReceiverTaps`) on
    ``link``. ``adapt`` (default: ``spec.mode == 'lms'``) selects LMS adaptation."""
    adapt = spec.mode == "lms" if adapt is None else bool(adapt)
    levels = np.ascontiguousarray(link.levels, dtype=np.float64)
    blocks: list = [AdcBlock(link.adc, seed=seed)]
    extra = 0   # latency of the blocks between the ADC and the equalizer
    cal = getattr(link.adc, "calibration", None)
    if cal is not None:   # background calibration of an interleaved ADC (serdes.dsp.ti_cal)
        from serdes.dsp.ti_cal import TiCalibration

        blocks.append(TiCalibration(link.adc, cal, link.ui_s))
        extra = blocks[-1].latency
    rc = spec.rc
    if taps.detector == "mlse":
        from serdes.dsp.mlse import MlseDetector  # its Viterbi kernels only for MLSE

        det = MlseDetector(levels, target=taps.target, whitening=taps.whitening,
                           traceback=taps.traceback, rc_lags=taps.rc_lags, rc_taps=taps.rc_taps)
        blocks += [Ffe(taps.ffe), Mlse(det)]
        return Chain(blocks, latency=taps.latency + extra)
    use_rc = bool(rc.taps) and (rc.mode == "adaptive" or taps.rc_lags.size)
    if adapt:
        canceller = None
        if use_rc:
            canceller = ReflectionCanceller(rc, lags=taps.rc_lags, taps=taps.rc_taps,
                                            first_lag=len(taps.dfe) + 1,
                                            level_power=link.level_power,
                                            search_start=spec.train_symbols)
        mu_w, mu_b = lms_steps(link, taps, spec.mu)
        monitor = LmsMonitor(mu=spec.mu, train_symbols=spec.train_symbols,
                             level_power=link.level_power, levels=levels,
                             predicted_snr_db=taps.predicted_snr_db)
        blocks.append(AdaptiveFfeDfe(ffe=taps.ffe, dfe=taps.dfe, levels=levels, mu_w=mu_w,
                                     mu_b=mu_b, dfe_limit=spec.dfe_limit, rc=canceller,
                                     monitor=monitor))
    elif use_rc:
        blocks += [Ffe(taps.ffe),
                   RcDfe(rc, dfe_taps=taps.dfe, levels=levels, lags=taps.rc_lags,
                         taps=taps.rc_taps, first_lag=len(taps.dfe) + 1,
                         level_power=link.level_power, dfe_limit=spec.dfe_limit)]
    else:
        blocks += [Ffe(taps.ffe), DfeSlicer(taps.dfe, levels)]
    return Chain(blocks, latency=taps.latency + extra)


def chain_taps(chain: Chain) -> dict:
    """The taps a chain holds now (after adaptation): ffe, dfe, rc_lags, rc_taps."""
    out = {"ffe": np.zeros(0), "dfe": np.zeros(0), "rc_lags": np.zeros(0, dtype=np.int64),
           "rc_taps": np.zeros(0)}
    for b in chain.blocks:
        if isinstance(b, AdaptiveFfeDfe):
            out.update(ffe=b.ffe, dfe=b.dfe)
            if b.rc is not None:
                out.update(rc_lags=b.rc.lags, rc_taps=b.rc.taps)
        elif isinstance(b, Ffe):
            out["ffe"] = b.taps
        elif isinstance(b, DfeSlicer):
            out["dfe"] = b.taps
        elif isinstance(b, RcDfe):
            out.update(dfe=b.dfe, rc_lags=b.rc.lags, rc_taps=b.rc.taps)
        elif isinstance(b, Mlse):
            out.update(rc_lags=b.detector.rc_lags, rc_taps=b.detector.rc_taps)
    return out
