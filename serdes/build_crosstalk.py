"""The builder's part for what surrounds the thru: the [package] section's package
stages and the [[aggressor]] tables' crosstalk. It reads the config as
:mod:`serdes.build` does (the builder is these two modules); :mod:`serdes.build`
re-exports both functions.
"""

from __future__ import annotations

from serdes.config import Config
from serdes.errors import ConfigError


def build_packages(cfg: Config, next_tx: bool = False):
    """The [package] section: (TX package, RX package) stages, or (None, None); with
    ``next_tx`` (the TX package of a NEXT aggressor, None)."""
    p = cfg["package"]
    if p["preset"] == "none":
        return None, None
    from dataclasses import replace

    from serdes.analog.package import Package
    from serdes.presets import package_preset

    def given(key):
        v = p[key]
        return None if (v == [] or v == -1.0) else (tuple(v) if isinstance(v, list) else v)

    base = package_preset(p["preset"], c_d_nf=given("c_d_nf"), l_s_nh=given("l_s_nh"),
                          c_b_nf=given("c_b_nf"), c_p_nf=given("c_p_nf"),
                          r_d_ohm=given("r_d_ohm"), z_c_ohm=given("z_c_ohm"))

    from serdes.presets import PACKAGE_CASES

    case1 = PACKAGE_CASES[p["preset"]][0]  # the standard's lengths per side (case 1)

    def side(key):
        z = given(key)
        if z is None:
            return replace(base, z_p_mm=case1[key.split("_")[2]])
        return replace(base, z_p_mm=(z,) + base.z_p_mm[1:])

    if next_tx:  # the local transmitter: on the victim receiver's device
        key = "z_p_next_mm" if given("z_p_next_mm") is not None else "z_p_rx_mm"
        return Package(side(key), "tx", p["preset"]), None
    from serdes.presets import NO_RX_PACKAGE  # C2M host output: only R_d at the RX

    rx = side("z_p_rx_mm")
    if p["preset"] in NO_RX_PACKAGE:
        rx = replace(rx, c_d_nf=(0.0,), l_s_nh=(0.0,), c_b_nf=0.0, c_p_nf=0.0,
                     z_p_mm=(0.0,) * len(rx.z_p_mm))
    return Package(side("z_p_tx_mm"), "tx", p["preset"]), Package(rx, "rx", p["preset"])


def build_crosstalk(cfg: Config, channel: list):
    """The [[aggressor]] tables as a :class:`~serdes.crosstalk.Crosstalk` (None without
    any): each aggressor's coupling path between the packages of its kind, its
    transmitter (defaults: the [tx] section; swing from [crosstalk]; its own TX jitter
    from [tx_jitter]'s rj/dcd/buj/sj), seed and phase."""
    tables = cfg.aggressors
    if not tables:
        return None
    import os

    import numpy as np

    from serdes.crosstalk import Aggressor, Crosstalk, ThruCopy
    from serdes.tx import TxEdge, TxFfe

    fb = cfg["link"]["symbol_rate_hz"]
    t, x = cfg["tx"], cfg["crosstalk"]
    tx_pkg, rx_pkg = build_packages(cfg)
    next_pkg = build_packages(cfg, next_tx=True)[0]
    from serdes.analog.package import Package

    core = [s for s in channel if not isinstance(s, Package)]   # the thru between the pads
    out = []
    for i, a in enumerate(tables):
        nxt = a["kind"] == "next"
        if a["model"] == "copy":
            path, label = ThruCopy(core, a["coupling_db"], a["delay_ui"] / fb), \
                f"{a['kind']} copy {a['coupling_db']:g} dB"
        else:
            from serdes.channel.touchstone import TouchstoneChannel

            path = TouchstoneChannel(a["file"], ports=a["ports"] or cfg["channel"]["ports"],
                                     thru=False)
            label = f"{a['kind']} {os.path.basename(a['file'])}"
        stages = [path] if tx_pkg is None else [next_pkg if nxt else tx_pkg, path, rx_pkg]
        swing = a["swing_v"]
        if swing < 0:
            swing = x["a_ne_v"] if nxt else x["a_fe_v"]
        if swing < 0:
            swing = t["swing_v"]
        rise = a["rise_time_s"] if a["rise_time_s"] >= 0 else t["rise_time_s"]
        taps = a["ffe"] or t["ffe"]
        main = a["main"] if a["main"] >= 0 else (t["main"] if not a["ffe"]
                                                 else int(np.argmax(np.abs(taps))))
        if main >= len(taps):
            raise ConfigError(f"aggressor[{i}].main = {main}: the FFE has {len(taps)} taps")
        seed = a["seed"] if a["seed"] >= 0 else int(np.random.SeedSequence(
            cfg["link"]["seed"], spawn_key=(1000 + i,)).generate_state(1, np.uint64)[0] >> 1)
        phase = a["phase_ui"] if a["phase_ui"] >= 0 else float(np.random.default_rng(
            np.random.SeedSequence(seed, spawn_key=(7,))).random())
        sj_ui, sj_hz = (a[k] if a[k] >= 0 else cfg["tx_jitter"][k[3:]]
                        for k in ("tx_sj_ui", "tx_sj_hz"))
        if sj_ui > 0.5:
            raise ConfigError(f"aggressor[{i}].tx_sj_ui = {sj_ui:g} (-1: tx_jitter.sj_ui): "
                              f"an aggressor's TX jitter is taken to first order, 0 .. 0.5 UI; "
                              f"set aggressor[{i}].tx_sj_ui")
        if sj_ui > 0 and not 0 < sj_hz < 0.25 * fb:
            raise ConfigError(f"aggressor[{i}].tx_sj_hz = {sj_hz:g} (-1: tx_jitter.sj_hz): "
                              f"expected > 0 and below a quarter of the symbol rate "
                              f"({0.25 * fb:g})")
        out.append(Aggressor(kind=a["kind"], channel=tuple(stages),
                             tx=(TxEdge(rise_time_s=rise),
                                 TxFfe(taps=taps, main=main, symbol_rate_hz=fb)),
                             swing_v=swing, rise_time_s=rise, pattern=a["pattern"], seed=seed,
                             phase_ui=phase, ppm=a["ppm"], label=label,
                             **{k: a[k] if a[k] >= 0 else cfg["tx_jitter"][k[3:]]
                                for k in ("tx_rj_ui", "tx_dcd_ui", "tx_buj_ui")},
                             tx_sj_ui=sj_ui, tx_sj_hz=sj_hz))
    return Crosstalk(aggressors=tuple(out), f_r=cfg["afe"]["f_r"], f1_hz=x["icn_f1_hz"],
                     f2_hz=x["icn_f2_hz"])
