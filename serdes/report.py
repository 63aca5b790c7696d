"""The run report: computed here, formatted by the CLI, read by sweeps and notebooks.

:func:`run_report` counts errors on a :class:`~serdes.system.System` with one pipeline
run; the counted slicer eye comes from a capture observer on that same run (no second
simulation). The statistical sections (statistical BER, eye openings, ADC clipping, DFE
error propagation) are computed only when asked for (``stat=True``): on by default for
``serdes run``, off for sweep points unless ``--stat``. ``stat="ber"`` computes only the
statistical BER part (what the CLI's text summary prints; the eye openings are most of the
statistical engine's time in a short run).
"""

from __future__ import annotations

from dataclasses import dataclass, field

from serdes.engines.run import RunResult
from serdes.errors import interrupted as is_interrupt

COUNTED_EYE_SYMBOLS = 1 << 17
COUNTED_EYE_TARGET = 1e-3


@dataclass
class RunReport:
    """Everything ``serdes run`` reports. ``to_dict()`` is the ``--json`` object."""

    counted: RunResult
    engine: str
    seed: int
    link: dict                      # Link.summary(): stages, IL, pulse, VGA, noise
    receiver: dict                  # the receiver's settings (mode, detector, ...)
    reflections: str = "none"
    adc: str = ""
    eye: dict | None = None         # counted slicer eye (+ statistical with stat)
    stat: dict | None = None        # statistical engine sections
    stat_ber: float | None = None
    skipped: str | None = None      # sections left out (and why)
    split: dict | None = None       # threads / workers of a block-split run
    noise_budget: dict | None = None  # share (0..1) of each contribution at the slicer
    ctle: dict | None = None        # the CTLE's gains and whether the search chose them
    fec: dict | None = None         # post-FEC counts and model (serdes.fec.counter), or None
    extra: dict = field(default_factory=dict)

    def to_dict(self) -> dict:
        out = self.counted.to_dict()
        out.update(link=self.link, il_nyquist_db=self.link["il_nyquist_db"],
                   engine=self.engine, seed=self.seed, reflections=self.reflections,
                   receiver=self.receiver, adc=self.adc)
        if self.eye is not None:
            out["eye"] = self.eye
        if self.stat is not None:
            out["stat"] = self.stat
        if self.stat_ber is not None:
            out["stat_ber"] = self.stat_ber
        if self.skipped:
            out["skipped"] = self.skipped
        if self.split is not None:
            out.update(self.split)
        if self.noise_budget is not None:
            out["noise_budget"] = self.noise_budget
        if self.ctle is not None:
            out["ctle"] = self.ctle
        out["fec"] = self.fec
        out.update(self.extra)
        return out


def receiver_summary(spec) -> dict:
    """The receiver settings a report shows (from a :class:`ReceiverSpec`)."""
    return {"mode": spec.mode, "ffe_taps": spec.ffe_taps, "ffe_pre": spec.ffe_pre,
            "dfe_taps": spec.dfe_taps, "detector": spec.detector,
            "rc_taps": spec.rc.taps, "rc_mode": spec.rc.mode,
            "mlse_memory": spec.mlse.memory, "mlse_whitening": spec.mlse.whitening,
            "mlse_traceback": spec.mlse.traceback}


def run_report(system, *, engine: str = "pulse", stat: bool | str = True, eye: bool = True,
               should_stop=None, progress=None, threads: int | None = 1,
               scheduler: str | None = None, timeout: float | None = None,
               stage=None) -> RunReport:
    """Count errors on ``system`` and build its report (see the module notes).
    ``threads`` (None: all cores) or ``scheduler`` (a Dask cluster): the run split into
    blocks (:mod:`serdes.parallel`), same counts; the report then says how
    (``threads``, ``workers``, and ``threads_note`` when the run could not be split).
    ``stat="ber"``: of the statistical sections only the BER part (``stat_ber`` and
    ``stat`` without ``adc_clip_probability``, ``dfe_error_propagation`` and the
    statistical eye), the same values as with ``stat=True``. ``stage(text)``: told when
    the statistical sections begin after the count (``"statistical BER"`` or
    ``"statistical eye and BER"``, which can take minutes on an interleaved ADC's jitter
    rows) and ``""`` when they end (a progress line shows their time)."""
    from serdes.channel.reflections import Reflections
    from serdes.engines.run import simulate
    from serdes.pipeline import SlicerCapture

    if threads is not None:   # (the statistical helpers below count on a number)
        from serdes.validate import whole_number

        threads = whole_number("threads", threads, 1, 4096)
    # forked helpers the statistical sections may use (serdes.forked.helpers; None: all)
    spare = None if threads is None else threads - 1
    link = system.link
    dfe = system.receiver.detector == "dfe"
    split, early, interrupted = None, [], []
    told = False    # stage told that the statistical sections began
    fec = None
    if threads == 1 and scheduler is None:
        if getattr(system.source, "fec", None) is not None:   # imported only then
            from serdes.fec.counter import counter_for

            fec = counter_for(system)
        capture = SlicerCapture(COUNTED_EYE_SYMBOLS) if (eye and dfe) else None
        res = simulate(system, engine=engine, should_stop=should_stop, progress=progress,
                       observers=[o for o in (capture, fec) if o is not None])
        fec = fec.result() if fec is not None else None
    else:
        from serdes.engines.blocks_run import simulate_split
        from serdes.forked import Forked

        # the statistical sections overlap the serial part and the counting: in a child
        # forked now, or (without fork) here while the workers count
        side = Forked(_stat_early, system, stat != "ber", spare) if (stat and dfe) else None

        def during():
            try:
                if side.forked and not side.ready():
                    _compile_late_stat_kernels(side, stat != "ber")
                early.append(side.result())
            except (KeyboardInterrupt, SystemError) as exc:   # a second Ctrl-C: the
                if should_stop is None or not is_interrupt(exc):   # sections are skipped
                    raise
                interrupted.append(True)

        try:
            res, capture, how = simulate_split(
                system, engine=engine, threads=threads, scheduler=scheduler,
                timeout=timeout, capture_limit=COUNTED_EYE_SYMBOLS if (eye and dfe) else 0,
                progress=progress, should_stop=should_stop,
                during=during if (side is not None and not side.forked) else None)
            if side is not None and side.forked and res.symbols:
                _tell(stage, _stat_stage(stat))     # the sections below go on with it
                told = True
                during()
        finally:
            if side is not None:
                side.close()
        fec = how.fec   # the ranges' codewords, merged (or the one pass's)
        split = {"threads": how.threads}
        if how.workers is not None:
            split["workers"] = how.workers
        if how.note:
            split["threads_note"] = f"one thread: {how.note}"
    refl = [s for s in link.channel_stages if isinstance(s, Reflections)]
    report = RunReport(counted=res, engine=engine, seed=system.run.seed, link=link.summary(),
                       receiver={**receiver_summary(system.receiver),
                                 "precoding": bool(system.source.precoding)},
                       reflections=refl[0].describe() if refl else "none",
                       adc=link.adc.describe(), split=split, ctle=ctle_summary(link))
    report.noise_budget = noise_budget(system, res)
    report.extra.update(crosstalk_fields(system, res))
    report.fec = fec
    if not dfe:
        if eye or stat:
            report.eye = report.stat = {"skipped": "the statistical engine and the slicer "
                                        "eye model FFE + DFE (+ RC) receivers, not MLSE"}
        return report
    if capture is not None and capture.n:
        report.eye = _counted_eye(capture, link)
    if stat and res.symbols and interrupted:
        report.skipped = "statistical sections (interrupted)"
    elif stat and res.symbols:
        from serdes.forked import helpers

        try:   # the cores the run was given (None: all) for a costly statistical eye
            if not told:
                _tell(stage, _stat_stage(stat))
            with helpers(spare):
                _stat_sections(system, res, report, early[0] if early else None,
                               detail=stat != "ber")
        except (KeyboardInterrupt, SystemError) as exc:
            if should_stop is None or not is_interrupt(exc):
                raise
            report.skipped = "statistical sections (interrupted)"
        finally:
            _tell(stage, "")
    return report


def _stat_stage(stat) -> str:
    return "statistical BER" if stat == "ber" else "statistical eye and BER"


def _tell(stage, text: str) -> None:
    if stage is not None:
        stage(text)


def noise_budget(system, res: RunResult | None = None) -> dict:
    """Share (0..1) of each contribution to the slicer's noise and ISI (at the FFE output
    for an MLSE receiver), through the taps the run ended with (the designed ones
    without a run): :func:`serdes.impairments.slicer_shares`."""
    from serdes.engines.run import design_link
    from serdes.impairments import slicer_shares

    taps = _slicer_taps(system, res)
    if taps is None:
        return {}
    return slicer_shares(design_link(system), taps.ffe, taps.residual())


def _slicer_taps(system, res: RunResult | None = None):
    """The taps the run ended with (designed without a run), scaled to a main cursor of
    1 at the slicer; None when the cursor is 0."""
    import dataclasses

    import numpy as np

    from serdes.engines.run import design_equalizer, design_link
    from serdes.metrics.eye import taps_of_result

    taps = design_equalizer(system)
    if res is not None and res.ffe_taps:
        taps = taps_of_result(taps, res)
    f = np.convolve(taps.ffe, design_link(system).pulse.taps)
    scale = f[taps.delay]
    if scale == 0:
        return None
    return dataclasses.replace(taps, ffe=taps.ffe / scale, combined=f / scale)


def crosstalk_fields(system, res: RunResult | None = None) -> dict:
    """``icn_v`` (the 802.3 integrated crosstalk noise, rms V, :func:`serdes.crosstalk.icn_v`),
    ``crosstalk_rms_v`` (rms of all aggressors at the slicer through the run's FFE,
    ADC-input referred: slicer units times the main cursor at the ADC input) and
    ``crosstalk`` (per aggressor: peak and rms at the ADC input, rms at the slicer); the
    first two null without aggressors."""
    link = system.link
    if not link.aggressor_pulses:
        return {"icn_v": None, "crosstalk_rms_v": None}
    import numpy as np
    from scipy.linalg import toeplitz

    from serdes import crosstalk

    taps = _slicer_taps(system, res)
    vpu = float(link.pulse.taps[link.pulse.cursor])
    ffe = None if taps is None else np.asarray(taps.ffe, dtype=np.float64)
    rms = None
    if ffe is not None:
        r = crosstalk.crosstalk_autocorr(link, ffe.shape[0])
        rms = float(np.sqrt(max(float(ffe @ toeplitz(r) @ ffe), 0.0)) * vpu)
    return {"icn_v": crosstalk.icn_v(link), "crosstalk_rms_v": rms,
            "crosstalk": crosstalk.summary(link, ffe, vpu)}


def ctle_summary(link) -> dict | None:
    """The IEEE CTLE's gains (and ``auto``: chosen by the search), or None."""
    from serdes.analog.ctle import IeeeCtle

    for s in link.rx_stages:
        if isinstance(s, IeeeCtle):
            return {"g_dc_db": s.g_dc_db, "g_dc2_db": s.g_dc2_db,
                    "auto": bool(getattr(s, "auto", False))}
    return None


def _counted_eye(capture, link) -> dict:
    from serdes.metrics.eye import capture_samples, counted_eye_report

    counted = counted_eye_report(capture_samples(capture, link), COUNTED_EYE_TARGET)
    return {
        "units": "height: normalised slicer units (outer level 1); *_mv: ADC-input referred "
                 "(times the main cursor at the ADC input); width_ui/_ps at the slicer "
                 "threshold; counted heights at the counted per-eye error rate 'target'",
        "volts_per_unit": float(link.pulse.taps[link.pulse.cursor]),
        "counted": counted,
        "rlm": counted["rlm"],
        "sndr_db": counted["sndr_db"],
    }


def _stat_sections(system, res: RunResult, report: RunReport, pre: dict | None = None,
                   detail: bool = True) -> None:
    """The statistical engine on the taps the counted run ended with (the adapted ones
    with LMS), so both engines judge the same receiver. ``pre``: :func:`_stat_parts`
    computed while the run counted (a split run), used when its taps are the run's.
    ``detail=False``: the BER part only (no statistical eye, clipping, propagation)."""
    from serdes.engines.run import design_equalizer
    from serdes.metrics.eye import taps_of_result

    taps = taps_of_result(design_equalizer(system), res)
    if pre is None or not _same_taps(pre["taps"], taps):
        pre = _stat_parts(system, taps, detail)
    stat_eye, sb = pre["stat_eye"], pre["sb"]
    if stat_eye is not None:
        if report.eye is None:
            report.eye = {"volts_per_unit": pre["volts_per_unit"]}
        report.eye["statistical"] = stat_eye
    report.stat_ber = sb.ber
    lo, hi = res.ber_ci
    st = sb.to_dict()
    st.update(
        counted_over_stat=(res.ber / sb.ber) if sb.ber > 0 else None,
        counted_ci_over_stat=[lo / sb.ber, hi / sb.ber] if sb.ber > 0 else None,
        counted_bit_errors=res.bit_errors,
        adc_clip_probability=pre["clip"],
        dfe_taps=len(res.dfe_taps),
        bursts={str(k): v for k, v in sorted(res.bursts.items())},
    )
    if stat_eye is None:
        del st["adc_clip_probability"]
    if pre["note"]:
        st["jitter_note"] = pre["note"]
    if _pattern_calibration(system):
        st["calibration_note"] = CALIBRATION_NOTE
    if pre.get("quad") is not None:   # the calibrated lanes' skew residual's rule
        st["skew_quadrature"] = pre["quad"]
    if pre["prop"] is not None:
        st["dfe_error_propagation"] = pre["prop"]
    if pre.get("cdr_model") is not None and res.cdr is not None:
        res.cdr.update(pre["cdr_model"])  # which loop model gave stat_ber
        if pre["cdr_model"]["stat_model"] == "tracking":
            st["cdr_note"] = ("ber from the loop's simulated tracking error (as serdes "
                              "jtol); ser, ber_per_eye and the eye from its Gaussian "
                              "wander; dfe_error_propagation's ratio and bursts from that "
                              "wander, its rates scaled to ber")
    if res.cdr is not None and res.cdr.get("phase_histogram"):
        from serdes.engines.cdr_phase_ber import ber_over_phases

        over = ber_over_phases(system, taps, res.cdr)   # the loop's own recorded phases
        if over is not None:
            st.update(over)
    report.stat = st


CALIBRATION_NOTE = (
    "stat is for random (scrambled) data: with a PRBS pattern the blind skew calibration "
    "keeps a larger residual (PRBS31 counted 2.7-4.6x above stat on two 64-lane links, "
    "random data 1.03-1.20x); set link.pattern=random to compare")


def _pattern_calibration(system) -> bool:
    """A background-calibrated interleaved ADC fed a PRBS pattern: the statistical
    engine's residual is the white-data closed form (serdes/tiadc/cal_residual.py)."""
    adc = system.link.adc
    return (getattr(adc, "interleaved", False) and getattr(adc, "calibration", None) is not None
            and system.source.pattern != "random")


def _stat_parts(system, taps, detail: bool = True) -> dict:
    """What the statistical sections compute from the link and the taps alone (no
    counted result needed); ``detail=False``: the BER only (``stat_eye``, ``clip`` and
    ``prop`` None)."""
    note = cdr_model = None
    if system.cdr.active or system.tx_jitter.active:  # jitter the sampler sees
        from serdes.engines.cdr_stat import stat_note
        from serdes.engines.cdr_stat_model import stat_system

        note = stat_note(system)
        system, cdr_model = stat_system(system, taps)
    if getattr(system.link.adc, "interleaved", False):  # the lanes' model
        from serdes.tiadc.stat import statistical_engine as engine
    else:  # the same class statistical_engine gives, without loading serdes.tiadc
        from serdes.engines.stat import StatisticalEngine as engine
    eng = engine(system, taps)
    with eng.holding_rows():   # the BER's rows serve the propagation model and the eye
        return _stat_parts_on(system, taps, eng, note, cdr_model, detail)


def _stat_parts_on(system, taps, eng, note, cdr_model, detail: bool) -> dict:
    """:func:`_stat_parts` once its engine is made."""
    from serdes.engines.stat import DEFAULT_TARGETS

    quad = eng.skew_quadrature() if hasattr(eng, "skew_quadrature") else None
    sb = eng.ber(0.0)
    if cdr_model is not None:  # the loop's model of the BER (engines/cdr_stat_model.py)
        from serdes.engines.cdr_false_lock import weigh

        sb = cdr_model.apply(sb)
        sb, lock_points = weigh(system, taps, sb, cdr_model)  # all the loop's lock points
        cdr_model = {**cdr_model.to_dict(), **lock_points}
    if not detail:
        return dict(taps=taps, note=note, sb=sb, stat_eye=None, clip=None, prop=None,
                    volts_per_unit=eng.volts_per_unit, cdr_model=cdr_model, quad=quad)
    from serdes.engines.stat.error_propagation import dfe_error_propagation

    targets = DEFAULT_TARGETS + ((COUNTED_EYE_TARGET,) if COUNTED_EYE_TARGET not in
                                 DEFAULT_TARGETS else ())
    prop = dfe_error_propagation(eng)   # on the BER's rows, before the eye's walks
    if cdr_model is not None and prop is not None:
        prop = on_loop_ber(prop, sb.ber)
    stat_eye = eng.eye_opening(targets=targets).to_dict()
    stat_eye.update(ber_per_eye={n: float(v) for n, v in zip(sb.eye_names, sb.ber_per_eye)},
                    sndr_db=sb.sndr_db, rlm=rlm_of(system.link.levels))
    return dict(taps=taps, note=note, sb=sb, stat_eye=stat_eye,
                volts_per_unit=eng.volts_per_unit, clip=eng.clip_probability(0.0),
                prop=prop, cdr_model=cdr_model, quad=quad)


def on_loop_ber(prop: dict, ber: float) -> dict:
    """The propagation model (:func:`dfe_error_propagation`, formed on the engine's
    rows: the loop's Gaussian wander) in units of the loop model's BER ``ber``, the
    report's ``stat.ber`` where the tracking model or the loop's lock points gave it:
    the rates scaled so that ``ber_correct_feedback`` is that BER, the ratio, the bursts
    and the precoded share those rows'. Without it a tracked TX SJ read a BER with
    propagation several times below ``stat.ber`` (5.5e-8 against 3.8e-7 on a 33 dB MM
    link with 0.3 UI at 100 kHz, whose rows' own BER is 4.5e-8)."""
    free = float(prop["ber_correct_feedback"])
    if not free > 0 or free == ber:
        return prop
    g = float(ber) / free
    return dict(prop, ber_correct_feedback=float(ber),
                ber_with_propagation=float(prop["ber_with_propagation"]) * g,
                ber_precoded=float(prop["ber_precoded"]) * g)


def _stat_early(system, detail: bool = True, helpers: int | None = 0) -> dict | None:
    """:func:`_stat_parts` on the designed fixed taps, for a split run to compute while
    its workers count (its taps are checked against the run's before use); ``helpers``:
    forked helpers it may use (:func:`serdes.forked.helpers`)."""
    import dataclasses

    import numpy as np

    from serdes.engines.run import design_equalizer
    from serdes.forked import helpers as allowed

    d = design_equalizer(system)
    taps = dataclasses.replace(d, ffe=np.asarray(d.ffe, dtype=np.float64),
                               dfe=np.asarray(d.dfe, dtype=np.float64))
    with allowed(helpers):
        return _stat_parts(system, taps, detail)


# The kernels _stat_early calls after _rj_joint_classes, last first (with ``detail``: all
# four; else the last two). On a first run the child compiles its kernels in the order
# it calls them, and _rj_joint_classes alone takes about 6 s; the parent, done counting
# and otherwise waiting, compiles these meanwhile, and the child loads them from numba's
# cache (first default run 13.0-13.5 -> 10.6-11.0 s).
_LATE_STAT_KERNELS = ("stat._tail_points", "stat_tails._rows_wrong_side",
                      "stat_tails._mixture_tails", "stat_joint._merge_close")


def _compile_late_stat_kernels(side, detail: bool) -> None:
    """While the forked child ``side`` computes :func:`_stat_early`, compile the kernels
    it calls last, if kernels compiled in this run (cold caches; otherwise the child
    loads them from the cache and they are not compiled here)."""
    from serdes.kernels import jit

    try:
        if jit.compiled_here():
            jit.compile_ahead(_LATE_STAT_KERNELS[0 if detail else 2:], side.ready)
    except Exception:   # noqa: BLE001 - only a head start: the child compiles what it needs
        pass


def _same_taps(a, b) -> bool:
    import numpy as np

    return all(np.array_equal(np.asarray(getattr(a, k)), np.asarray(getattr(b, k)))
               for k in ("ffe", "dfe", "rc_lags", "rc_taps"))


def rlm_of(levels) -> float:
    """Ratio of level mismatch of the transmitted levels (1 for NRZ)."""
    return float(3.0 * levels[2]) if len(levels) == 4 else 1.0


def short_run_warning(cfg, report: dict) -> str:
    """The warning (or "") when a run is shorter than its warm-up (the CDR's lock, the LMS
    training, the RC search, the ADC calibration's settling) and the alignment window:
    the pipeline then counts its last few thousand decisions, some of them made before
    the warm-up ended (a few thousand UI are also a small part of an SJ period).
    ``report``: the run's report as a dict (its ``warmup_counted`` and ``symbols``);
    ``serdes run`` prints it on stderr, a sweep keeps it in the point's message."""
    from serdes.build import build_run
    from serdes.pipeline import ALIGN_WINDOW

    early = report.get("warmup_counted") or 0
    if early <= 0:
        return ""
    warm = []
    if cfg["cdr"]["mode"] != "off":
        warm.append(("cdr.warmup_symbols", cfg["cdr"]["warmup_symbols"]))
    if cfg["eq"]["mode"] == "lms":
        warm.append(("eq.train_symbols", cfg["eq"]["train_symbols"]))
    if cfg["rc"]["taps"] > 0 and cfg["rc"]["mode"] == "adaptive":
        warm.append(("rc.search_symbols", cfg["rc"]["search_symbols"]))
    if cfg["adc_cal"]["enabled"]:
        from serdes.dsp.ti_cal import SETTLE_PER_LANE

        warm.append(("adc_cal.settle_symbols", cfg["adc_cal"]["settle_symbols"]
                     or SETTLE_PER_LANE * cfg["adc"]["lanes"]))
    name, need = max(warm, key=lambda w: w[1]) if warm else ("the warm-up", 0)
    symbols = build_run(cfg).symbols
    return (f"link.symbols = {symbols:,} is shorter than {name} = "
            f"{need:,} + {ALIGN_WINDOW} and more: only the last {report['symbols']:,} "
            f"decisions were counted, {early:,} of them before the warm-up had ended; "
            "give more symbols for a BER")
