"""Rules across config keys (one line each, naming the keys and what is allowed)."""

from __future__ import annotations

import math

from serdes.errors import ConfigError


def check_consistency(d: dict) -> None:
    """Rules across keys of a merged config ``d`` (section -> key -> value)."""
    ffe = d["tx"]["ffe"]
    if d["tx"]["main"] >= len(ffe):
        raise ConfigError(f"tx.main = {d['tx']['main']} must index a tap of tx.ffe "
                          f"(0..{len(ffe) - 1})")
    if sum(abs(c) for c in ffe) > 1.0 + 1e-9:
        raise ConfigError(f"tx.ffe = {ffe}: the sum of |taps| must be at most 1 "
                          "(peak-limited driver)")
    if ffe[d["tx"]["main"]] <= 0:
        raise ConfigError("tx.ffe: the main tap c(0) must be positive")
    if d["ffe"]["pre"] >= d["ffe"]["taps"]:
        raise ConfigError(f"ffe.pre = {d['ffe']['pre']} must be below ffe.taps = "
                          f"{d['ffe']['taps']}")
    if d["channel"]["model"] == "touchstone" and not d["channel"]["file"]:
        raise ConfigError("channel.file must name a .s4p or .s2p file when "
                          "channel.model = 'touchstone'")
    if d["adc"]["enob"] > d["adc"]["bits"] and d["adc"]["bits"] > 0:
        raise ConfigError(f"adc.enob = {d['adc']['enob']} cannot exceed adc.bits = "
                          f"{d['adc']['bits']}")
    if d["noise"]["sj_ui"] > 0 and d["noise"]["sj_hz"] <= 0:
        raise ConfigError("noise.sj_hz must be > 0 when noise.sj_ui > 0")
    if d["noise"]["sj_ui"] > 0:
        _check_sj(d)
    if d["tx_jitter"]["sj_ui"] > 0 and d["tx_jitter"]["sj_hz"] <= 0:
        raise ConfigError("tx_jitter.sj_hz must be > 0 when tx_jitter.sj_ui > 0")
    if d["ctle"]["model"] == "zpk" and not d["ctle"]["poles_hz"]:
        raise ConfigError("ctle.poles_hz must list at least one pole when ctle.model = 'zpk'")
    if any(z > 0 for z in d["ctle"]["zeros_hz"]):
        raise ConfigError(f"ctle.zeros_hz = {d['ctle']['zeros_hz']}: zeros must be <= 0 "
                          "(left half plane or origin; a right-half-plane zero is not a "
                          "minimum-phase CTLE)")
    if any(p >= 0 for p in d["ctle"]["poles_hz"]):
        raise ConfigError(f"ctle.poles_hz = {d['ctle']['poles_hz']}: poles must be negative "
                          "(left half plane)")
    if d["ctle"]["model"] == "zpk" and len(d["ctle"]["zeros_hz"]) > len(d["ctle"]["poles_hz"]):
        raise ConfigError(f"ctle.zeros_hz has {len(d['ctle']['zeros_hz'])} zeros and "
                          f"ctle.poles_hz {len(d['ctle']['poles_hz'])} poles: a CTLE needs at "
                          "least as many poles as zeros (its gain must level off at high "
                          "frequency)")
    _check_dsp(d)
    if d["adc"]["bw_rms_rel"] > 0 and d["adc"]["bw_hz"] <= 0:
        raise ConfigError(f"adc.bw_rms_rel = {d['adc']['bw_rms_rel']} needs a nominal T/H "
                          f"bandwidth adc.bw_hz > 0")
    if d["adc_cal"]["enabled"] and d["adc"]["lanes"] < 2:
        raise ConfigError(f"adc_cal.enabled = true needs adc.lanes >= 2 (an interleaved "
                          f"ADC), got adc.lanes = {d['adc']['lanes']}")
    if len(d["supply"]["ripple_mv"]) != len(d["supply"]["ripple_hz"]):
        raise ConfigError(f"supply.ripple_mv has {len(d['supply']['ripple_mv'])} values and "
                          f"supply.ripple_hz {len(d['supply']['ripple_hz'])}: one frequency "
                          f"per tone")
    if d["link"]["pulse_ui"] > d["link"]["window_ui"] // 2:
        raise ConfigError(f"link.pulse_ui = {d['link']['pulse_ui']} must be at most half of "
                          f"link.window_ui = {d['link']['window_ui']}")


SJ_MIN_PHASES = 32  # sampled SJ must visit at least this many phases (statistical quadrature)


def _check_sj(d: dict) -> None:
    """Sinusoidal jitter is sampled once per UI. At or above half the symbol rate it aliases
    (at exactly f_b/2 the instants see +-A sin(phi0), at f_b a fixed offset A sin(phi0), set
    by the starting phase), and at a ratio sj_hz / symbol_rate = p/q with small q the run
    visits only q phases: the counted BER then depends on the random starting phase while
    the statistical engine averages over all phases. Both are refused."""
    fb = d["link"]["symbol_rate_hz"]
    f = d["noise"]["sj_hz"]
    if f >= fb / 2:
        raise ConfigError(f"noise.sj_hz = {f:g} aliases when sampled once per UI: it must be "
                          f"below link.symbol_rate_hz / 2 = {fb / 2:g}")
    r = f / fb
    n = d["link"]["symbols"]
    for q in range(2, SJ_MIN_PHASES):
        p = round(r * q)
        if p >= 1 and abs(r - p / q) * q * n < 1.0:
            raise ConfigError(f"noise.sj_hz = {f:g} is {p}/{q} of link.symbol_rate_hz: sampled "
                              f"once per UI it visits only {q} phases, so the result depends on "
                              f"the starting phase; move noise.sj_hz off rational fractions p/q "
                              f"of the symbol rate with q < {SJ_MIN_PHASES}")


def _check_dsp(d: dict) -> None:
    """Cross-key rules of the reflections, the reflection canceller and the MLSE."""
    r = d["reflections"]
    counts = {"segment_lengths_mm": len(r["segment_lengths_mm"]),
              "stub_positions": len(r["stub_positions"])}
    for key, owner, single_ok in (("segment_z0_ohm", "segment_lengths_mm", False),
                                  ("segment_eps_r", "segment_lengths_mm", True),
                                  ("segment_loss_db_per_mm", "segment_lengths_mm", True),
                                  ("stub_lengths_mm", "stub_positions", False),
                                  ("stub_z0_ohm", "stub_positions", True),
                                  ("stub_eps_r", "stub_positions", True),
                                  ("stub_loss_db_per_mm", "stub_positions", True)):
        n, k = counts[owner], len(r[key])
        if (n or not single_ok) and k != n and not (single_ok and k == 1):
            raise ConfigError(f"reflections.{key} has {k} values: it needs one per entry of "
                              f"reflections.{owner} ({n})"
                              + (" or a single value for all" if single_ok else ""))
    for key, lo, hi, unit in (("segment_lengths_mm", 0.0, 1e4, " mm"),
                              ("segment_z0_ohm", 1.0, 1000.0, " ohm"),
                              ("segment_eps_r", 1.0, 100.0, ""),
                              ("segment_loss_db_per_mm", 0.0, 10.0, " dB/mm"),
                              ("stub_lengths_mm", 0.0, 1e3, " mm"),
                              ("stub_z0_ohm", 1.0, 1000.0, " ohm"),
                              ("stub_eps_r", 1.0, 100.0, ""),
                              ("stub_loss_db_per_mm", 0.0, 10.0, " dB/mm")):
        if any(not lo <= v <= hi for v in r[key]):
            raise ConfigError(f"reflections.{key} = {r[key]}: each value must be in "
                              f"[{lo:g}, {hi:g}]{unit}")
    n_seg = counts["segment_lengths_mm"]
    if any(not float(v).is_integer() or not 0 <= v <= n_seg for v in r["stub_positions"]):
        raise ConfigError(f"reflections.stub_positions = {r['stub_positions']}: each must be "
                          f"a junction number in 0..{n_seg} (0 = before the first segment)")
    delay = r["echo_delay_ui"]
    pulse_ui = d["link"]["pulse_ui"]
    # the trimmed pulse keeps at most pulse_ui - pulse_ui // 4 UI from the cursor on, and
    # the echo brings a tail of its own
    if delay > 0 and pulse_ui - pulse_ui // 4 < delay + 8:
        need = 16 * math.ceil((delay + 8) * 4 / 3 / 16)
        window = d["link"]["window_ui"]
        wider = ""
        if need > window // 2:   # pulse_ui may be at most half the window
            wider = f" and link.window_ui to at least {1 << (2 * need - 1).bit_length()}"
        raise ConfigError(f"link.pulse_ui = {pulse_ui} is too short to hold the echo at "
                          f"reflections.echo_delay_ui = {delay:g}: set link.pulse_ui to at "
                          f"least {need}" + wider)
    rc, ml, eq = d["rc"], d["mlse"], d["eq"]
    if eq["detector"] == "mlse":
        if eq["mode"] == "lms":
            raise ConfigError("eq.mode = 'lms' is not available with eq.detector = 'mlse': "
                              "use eq.mode = 'mmse'")
        if rc["taps"] and rc["mode"] == "adaptive":
            raise ConfigError("rc.mode = 'adaptive' is not available with eq.detector = "
                              "'mlse': use rc.mode = 'pulse'")
        first = ml["memory"] + 1
    else:
        first = d["dfe"]["taps"] + 1
    if rc["taps"] and rc["span_ui"] < first + rc["taps"] - 1:
        raise ConfigError(f"rc.span_ui = {rc['span_ui']} leaves no room for rc.taps = "
                          f"{rc['taps']}: the canceller reaches lags {first}..span_ui (after "
                          + ("the MLSE target memory mlse.memory)"
                             if eq["detector"] == "mlse" else "the DFE taps)"))
