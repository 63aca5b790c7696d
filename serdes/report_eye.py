"""The "eye", "stat_ber" and "stat" sections of the ``serdes run`` report.

Registered in :data:`serdes.commands.run._EXTRAS` on import. The statistical engine
uses the taps the counted run ended with (MMSE: the designed taps; LMS: the adapted
ones), so both engines judge the same receiver.
"""

from __future__ import annotations

from serdes.commands.run import _EXTRAS

COUNTED_EYE_SYMBOLS = 1 << 17
COUNTED_EYE_TARGET = 1e-3


def eye_section(system, res, out: dict) -> None:
    from serdes.engines.run import design_equalizer
    from serdes.engines.stat import (DEFAULT_TARGETS, StatisticalEngine,
                                     dfe_error_propagation)
    from serdes.metrics.eye import counted_eye_report, slicer_samples, taps_of_result

    if getattr(res, "detector", "dfe") != "dfe":
        out["eye"] = out["stat"] = {"skipped": "the statistical engine and the slicer eye "
                                    "model FFE + DFE (+ RC) receivers, not MLSE"}
        return
    link = system.link
    # the taps the counted run ended with (adapted ones in LMS or adaptive-RC modes)
    taps = taps_of_result(design_equalizer(system), res)
    eng = StatisticalEngine(system, taps)
    sb = eng.ber(0.0)
    targets = DEFAULT_TARGETS + ((COUNTED_EYE_TARGET,) if COUNTED_EYE_TARGET not in
                                 DEFAULT_TARGETS else ())
    opening = eng.eye_opening(targets=targets)
    stat_eye = opening.to_dict()
    stat_eye.update(ber_per_eye={n: float(v) for n, v in zip(sb.eye_names, sb.ber_per_eye)},
                    sndr_db=sb.sndr_db, rlm=_rlm(link.levels))
    samples = slicer_samples(system, taps, symbols=COUNTED_EYE_SYMBOLS, seed=out.get("seed"))
    counted = counted_eye_report(samples, COUNTED_EYE_TARGET)
    out["eye"] = {
        "units": "height: normalised slicer units (outer level 1); *_mv: ADC-input referred "
                 "(times the main cursor at the ADC input); width_ui/_ps at the slicer "
                 "threshold; counted heights at the counted per-eye error rate 'target'",
        "volts_per_unit": eng.volts_per_unit,
        "statistical": stat_eye,
        "counted": counted,
        "rlm": counted["rlm"],
        "sndr_db": counted["sndr_db"],
    }
    out["stat_ber"] = sb.ber
    lo, hi = res.ber_ci
    stat = sb.to_dict()
    stat.update(
        counted_over_stat=(res.ber / sb.ber) if sb.ber > 0 else None,
        counted_ci_over_stat=[lo / sb.ber, hi / sb.ber] if sb.ber > 0 else None,
        counted_bit_errors=res.bit_errors,
        adc_clip_probability=eng.clip_probability(0.0),
        dfe_taps=len(res.dfe_taps),
        bursts={str(k): v for k, v in sorted(res.bursts.items())},
    )
    prop = dfe_error_propagation(eng)
    if prop is not None:
        stat["dfe_error_propagation"] = prop
    out["stat"] = stat


def _rlm(levels) -> float:
    """Ratio of level mismatch of the transmitted levels (1 for NRZ)."""
    return float(3.0 * levels[2]) if len(levels) == 4 else 1.0


_EXTRAS.append(eye_section)
