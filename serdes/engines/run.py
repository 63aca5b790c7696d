"""Counted BER of a :class:`~serdes.system.System`: the equalizer design and
:func:`simulate`, which runs the one streaming :class:`~serdes.pipeline.Pipeline`
(source -> pulse or waveform front end -> receiver chain) with the error counter, burst
histogram, SNR meter and any extra observers attached to the same run.
"""

from __future__ import annotations

import copy
import time
import weakref
from dataclasses import asdict, dataclass, field, replace

import numpy as np

from serdes.dsp.design import ReceiverTaps
from serdes.dsp.mmse import EqualizerTaps, mmse_ffe_dfe
from serdes.dsp.receiver import build_chain, chain_taps
from serdes.metrics.ber import ErrorCounter
from serdes.pipeline import Bursts, Pipeline, SnrMeter
from serdes.signal.source import Transmitter
from serdes.validate import whole_number


@dataclass
class RunResult:
    symbols: int
    bits: int
    bit_errors: int
    symbol_errors: int
    ber: float
    ber_ci: tuple[float, float]
    ser: float
    snr_db: float
    predicted_snr_db: float
    latency: int
    ffe_taps: list[float]
    dfe_taps: list[float]
    elapsed_s: float
    symbols_per_s: float
    stopped_by: str
    bursts: dict[int, int] = field(default_factory=dict)
    detector: str = "dfe"
    rc_lags: list[int] = field(default_factory=list)
    rc_taps: list[float] = field(default_factory=list)
    whitening_taps: list[float] = field(default_factory=lambda: [1.0])
    mlse_target: list[float] = field(default_factory=list)
    pulse_dropped_energy: float = 0.0  # fraction of the pulse energy outside the kept span
    cdr: dict | None = None  # clock recovery results (serdes.engines.cdr), None when off
    # decisions counted before the LMS training, RC search, CDR lock or ADC calibration
    # settle ended: a run shorter than its warm-up counts its last decisions (0: none)
    warmup_counted: int = 0

    def to_dict(self) -> dict:
        d = asdict(self)
        d["ber_ci"] = list(self.ber_ci)
        d["bursts"] = {str(k): v for k, v in sorted(self.bursts.items())}
        return d


#: the CDR lock point of each link and [cdr] settings (:func:`lock_offset_ui`)
_LOCKS: "weakref.WeakKeyDictionary" = weakref.WeakKeyDictionary()


def lock_offset_ui(system) -> float:
    """Where the receiver samples, from the pulse peak (UI): with clock recovery and
    ``cdr.lock = 'mm'`` the calibrated zero of its detector (the MM zero, or the BB zero),
    else 0 (the peak, where a loop biased to it locks). The calibration is deterministic
    and the front end's own (:meth:`serdes.engines.cdr.CdrFrontEnd.calibrate`)."""
    cdr = getattr(system, "cdr", None)
    if cdr is None or not cdr.active or cdr.lock != "mm":
        return 0.0
    per_link = _LOCKS.setdefault(system.link, {})
    if cdr not in per_link:
        per_link[cdr] = float(front_end(system, "pulse", seed=0).cal.lock_ui)
    return per_link[cdr]


def design_link(system):
    """The link as the equalizer design sees it: ``system.link`` with its pulse sampled at
    the CDR's lock point (:func:`lock_offset_ui`). A receiver adapts its FFE at the phase
    it samples: taps designed at the peak for a loop locked 0.14 UI before it (the MM
    zero of the IEEE KR DPO_4in thru) gave 15.0 dB at the slicer where the LMS, adapting
    at the lock point, reached 24.6 dB."""
    off = lock_offset_ui(system)
    if off == 0.0:
        return system.link
    from serdes.kernels.fir import interp_cubic

    p = system.link.pulse
    pos = np.arange(p.fine.shape[0], dtype=np.float64) + off * p.m
    link = copy.copy(system.link)
    link.__dict__["pulse"] = replace(p, fine=interp_cubic(p.fine, pos))
    return link


def design_equalizer(system) -> ReceiverTaps:
    """FFE/DFE taps of a :class:`~serdes.system.System`'s receiver: joint MMSE, or the LMS
    starting point, at the CDR's lock point (:func:`design_link`). With a reflection
    canceller or the MLSE detector, a :class:`serdes.dsp.design.ReceiverTaps` that also
    holds the RC taps, the whitening filter and the Viterbi target."""
    link, spec = design_link(system), system.receiver
    if spec.rc.taps or spec.detector != "dfe":
        from serdes.dsp.design import design_receiver

        return design_receiver(link, spec)
    h = link.pulse.taps
    n_taps, n_pre, n_dfe = spec.ffe_taps, spec.ffe_pre, spec.dfe_taps
    mmse = mmse_ffe_dfe(h, link.pulse.cursor, link.sampled_noise_autocorr(n_taps),
                        n_taps=n_taps, n_pre=n_pre, n_dfe=n_dfe,
                        level_power=link.level_power, dfe_limit=spec.dfe_limit)
    if spec.mode == "mmse":
        return ReceiverTaps(ffe=mmse.ffe, dfe=mmse.dfe, delay=mmse.delay,
                            combined=mmse.combined, predicted_snr_db=mmse.predicted_snr_db)
    w = np.zeros(n_taps)
    w[n_pre] = 1.0 / h[link.pulse.cursor]
    return ReceiverTaps(ffe=w, dfe=np.zeros(n_dfe), delay=mmse.delay, combined=mmse.combined,
                        predicted_snr_db=mmse.predicted_snr_db)


def _cdr_limits(system) -> None:
    """The clock-recovery / TX-jitter front end samples the aggressors at the recovered
    phase, on the victim transmitter's grid (a TX ppm offset moves them too), each with
    its own TX jitter (serdes.crosstalk); with an interleaved ADC it samples through the
    lanes (serdes.engines.cdr_lanes: every detector, with or without the calibration),
    so nothing is refused here."""


def _timing_keys(system) -> str:
    """The clock-recovery and TX-jitter settings a run has on, as the user wrote them."""
    on = [f"cdr.mode = {system.cdr.mode!r}"] if system.cdr.active else []
    tj = system.tx_jitter
    on += [f"tx_jitter.{k} = {getattr(tj, k):g}" for k in ("rj_ui", "sj_ui", "dcd_ui",
                                                          "buj_ui", "ppm")
           if getattr(tj, k) != 0]
    return ", ".join(on)


def _sampling_keys(adc) -> str:
    """What moves or filters the ADC's sampling instants per sample (its ``analog``
    property), as the settings a user wrote."""
    on = []
    if np.any(adc.skews_s != 0):
        on.append("adc.skew_rms_s or adc.skews_s (lane skew)")
    if adc.bw_mismatch:
        on.append("adc.bw_rms_rel (lane bandwidth mismatch)")
    if adc.aperture_jitter_s > 0:
        on.append(f"adc.aperture_jitter_s = {adc.aperture_jitter_s:g}")
    if adc.supply is not None and adc.supply.jitter_active:
        on.append("supply.delay_ps_per_mv with supply ripple or noise (clock jitter)")
    if adc.calibration is not None:
        on.append("adc_cal.enabled = true")
    return ", ".join(on) or "the ADC's sampling model"


def front_end(system, engine: str, seed: int):
    """The pulse (default) or waveform engine's front end of a system."""
    if engine == "pulse" and (system.cdr.active or system.tx_jitter.active):
        _cdr_limits(system)
        if getattr(system.link.adc, "interleaved", False):
            from serdes.engines.cdr_lanes import TiCdrFrontEnd as front
        else:
            from serdes.engines.cdr import CdrFrontEnd as front

        return front(system.link, seed, system.cdr, system.tx_jitter)
    if engine == "pulse":
        from serdes.engines.pulse import PulseFrontEnd

        return PulseFrontEnd(system.link, seed)
    if engine == "waveform" and (system.cdr.active or system.tx_jitter.active):
        from serdes.errors import ConfigError

        raise ConfigError(f"{_timing_keys(system)}: only the pulse engine models clock "
                          "recovery and TX jitter; use the pulse engine")
    if engine == "waveform" and getattr(system.link.adc, "analog", False):
        from serdes.errors import ConfigError

        raise ConfigError(f"{_sampling_keys(system.link.adc)}: only the pulse engine moves "
                          "the ADC's sampling instants sample by sample; use the pulse engine")
    if engine == "waveform":  # imported only here
        from serdes.engines.waveform import WaveformFrontEnd

        return WaveformFrontEnd(system.link, seed)
    raise ValueError(f"engine = {engine!r}: expected 'pulse' or 'waveform'")


def pipeline(system, taps: ReceiverTaps, *, engine: str = "pulse", seed: int,
             receiver=None) -> Pipeline:
    """The streaming pipeline of a system with the receiver chain for ``taps`` (or the
    given ``receiver`` chain, e.g. one with a block of your own)."""
    link, spec = system.link, system.receiver
    rx = receiver if receiver is not None else build_chain(link, taps, spec, seed=seed)
    counter = ErrorCounter(link.modulation_order, skip=0)
    return Pipeline(Transmitter(link, system.source, seed), front_end(system, engine, seed), rx,
                    levels=link.levels, modulation_order=link.modulation_order,
                    bit_errors_of=counter.bit_errors_of, precoding=system.source.precoding,
                    train_symbols=spec.train_symbols if spec.mode == "lms" else 0,
                    pulse_ui=link.pulse.n_ui, ffe_taps=len(taps.ffe))


def simulate(system, *, engine: str = "pulse", symbols: int | None = None,
             target_errors: int | None = None, chunk: int | None = None,
             seed: int | None = None, taps: EqualizerTaps | None = None, receiver=None,
             observers=(), progress=None, should_stop=None) -> RunResult:
    """Count errors on a :class:`~serdes.system.System` with the pulse (default) or
    waveform engine; arguments left at None take the system's :class:`RunSpec`.
    ``receiver``: a chain of your own instead of the one the spec asks for;
    ``observers``: more observers of the same run (e.g. a
    :class:`~serdes.pipeline.SlicerCapture`); ``progress(simulated, symbols, counted,
    bit_errors, bits)``: called after each chunk; ``should_stop()``: checked before each
    chunk (e.g. set on Ctrl-C), the run then ends with what was counted
    (``stopped_by = "interrupted"``)."""
    link, run = system.link, system.run
    symbols = run.symbols if symbols is None else whole_number("symbols", symbols, 1, 10**13)
    target = (run.target_errors if target_errors is None
              else whole_number("target_errors", target_errors, 0, 10**12))
    chunk = run.chunk_symbols if chunk is None else whole_number("chunk", chunk, 1, 1 << 24)
    seed = run.seed if seed is None else whole_number("seed", seed, 0, 2**63 - 1)
    t0 = time.perf_counter()
    taps = taps or design_equalizer(system)
    pipe = pipeline(system, taps, engine=engine, seed=seed, receiver=receiver)
    counter = ErrorCounter(link.modulation_order, skip=0)
    bursts, snr = Bursts(), SnrMeter(link.levels)
    out = pipe.run(symbols, chunk=chunk, observers=[counter, bursts, snr, *observers],
                   target_errors=target, progress=progress, should_stop=should_stop)
    elapsed = time.perf_counter() - t0
    now = chain_taps(pipe.rx)
    detector = getattr(taps, "detector", "dfe")
    return RunResult(
        symbols=counter.symbols, bits=counter.bits, bit_errors=counter.bit_errors,
        symbol_errors=counter.symbol_errors, ber=counter.ber, ber_ci=counter.ber_ci(),
        ser=counter.ser, snr_db=float(snr.snr_db) if counter.symbols else float("nan"), predicted_snr_db=taps.predicted_snr_db,
        latency=out.latency, ffe_taps=[float(t) for t in now["ffe"]],
        dfe_taps=[float(t) for t in now["dfe"]], elapsed_s=elapsed,
        symbols_per_s=out.decisions / elapsed if elapsed > 0 else float("inf"),
        stopped_by=out.stopped_by, bursts=bursts.close(), detector=detector,
        rc_lags=[int(j) for j in now["rc_lags"]], rc_taps=[float(t) for t in now["rc_taps"]],
        whitening_taps=[float(t) for t in getattr(taps, "whitening", [1.0])],
        mlse_target=([float(t) for t in taps.target] if detector == "mlse" else []),
        pulse_dropped_energy=float(link.pulse.dropped_energy),
        cdr=pipe.front.summary() if system.cdr.active else None, warmup_counted=out.early)
