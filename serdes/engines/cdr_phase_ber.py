"""The statistical BER over the loop's own recorded phases: the engine's BER at each
tracking error a counted run's clock-recovery loop took (``cdr.phase_histogram`` of the
run's report), averaged with the share of symbols there.

The report's ``stat_ber`` takes the loop's wander as Gaussian about its static offset
(:mod:`serdes.engines.cdr_stat`). The MM loop's early tail is far heavier than that: on
two links with little RX RJ the Gaussian wander read 2.2-6.8x below the count, while
the engine at each recorded tracking error gave the count step by step, and averaged
over the run's histogram 0.94-0.96x the counted SER (``benchmarks/cdr_phase_histogram.py``,
docs/cdr.md). This is that average: a statistical number that knows the loop's tail as
far as the run sampled it (phases down to about one symbol in the run's length), and
nothing beyond it. The engine is the link's statistical one at the lock point with no
wander, no SJ and no dual-Dirac jitter: the recorded tracking error is the sampling
phase against the data's trackable jitter with the RX dual-Dirac holds added, so it
holds the SJ the loop left and the holds as the loop partly followed them (taking the
holds as independent of the recorded phase read 1.4-2.4x above the count on two links
with 0.03 UI).
"""

from __future__ import annotations

import copy
import dataclasses

import numpy as np


def ber_over_phases(system, taps, cdr: dict) -> dict | None:
    """``{"ber_recovered_phase", "ser_recovered_phase", "recovered_phase_symbols"}``
    from a run's ``cdr`` report (its ``phase_histogram``, tracking errors from
    ``target_lock_ui``); None without a histogram or for an interleaved ADC, whose
    engine costs seconds per phase."""
    histogram = cdr.get("phase_histogram") or {}
    counts = histogram.get("counts") or {}
    if not counts or getattr(system.link.adc, "interleaved", False):
        return None
    from serdes.engines.stat import StatisticalEngine

    # the link's own, not the loop's statistical model of it (cdr_stat.stat_link): what
    # that model sets (offset, wander, the SJ left) is all taken from the recording here
    link = copy.copy(system.link)   # shares the computed pulse and noise
    link.impairments = dataclasses.replace(link.impairments,
                                           offset_ui=float(cdr["target_lock_ui"]),
                                           wander_ui=0.0, sj_ui=0.0, dd_ui=0.0)
    eng = StatisticalEngine(dataclasses.replace(system, link=link), taps)
    step = float(histogram["step_ui"])
    total = float(sum(counts.values()))
    ber = ser = 0.0
    for k, n in sorted((int(k), v) for k, v in counts.items()):
        b = eng.ber(k * step)
        ber += n / total * b.ber
        ser += n / total * b.ser
    return {"ber_recovered_phase": float(ber), "ser_recovered_phase": float(ser),
            "recovered_phase_symbols": int(total)}
