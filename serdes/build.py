"""The builder: the one place that reads a :class:`~serdes.config.Config`.

It turns config sections into typed objects: the grid and the analog stages of a
:class:`~serdes.link.Link`, the :class:`~serdes.impairments.Impairments`, the ADC, and
the :class:`~serdes.dsp.spec.ReceiverSpec`, :class:`~serdes.signal.source.SourceSpec` and
:class:`~serdes.system.RunSpec` of a :class:`~serdes.system.System`. Everything
downstream takes those objects, never config strings.

    >>> from serdes.build import build
    >>> system = build(Config.default().with_overrides(["channel.loss_db=30"]))
    >>> system.link.pulse.taps      # doctest: +SKIP
"""

from __future__ import annotations

from serdes.adc import Adc
from serdes.analog.ctle import IeeeCtle
from serdes.build_crosstalk import build_crosstalk, build_packages  # noqa: F401 (re-exported)
from serdes.config import Config
from serdes.dsp.rc import RcSettings
from serdes.dsp.spec import MlseSettings, ReceiverSpec
from serdes.grid import Grid
from serdes.impairments import Impairments
from serdes.link import Link
from serdes.signal.pam import levels as pam_levels
from serdes.signal.source import SourceSpec
from serdes.system import RunSpec, System


def build_grid(cfg: Config) -> Grid:
    lk = cfg["link"]
    return Grid(symbol_rate_hz=lk["symbol_rate_hz"], samples_per_ui=lk["samples_per_ui"],
                window_ui=lk["window_ui"])


def build_tx_stages(cfg: Config) -> list:
    from serdes.tx import TxEdge, TxFfe

    t = cfg["tx"]
    return [TxEdge(rise_time_s=t["rise_time_s"]),
            TxFfe(taps=t["ffe"], main=t["main"], symbol_rate_hz=cfg["link"]["symbol_rate_hz"])]


def build_reflections(cfg: Config):
    """The [reflections] section as a :class:`~serdes.channel.reflections.Reflections`
    stage (single values broadcast to every segment or stub)."""
    from serdes.channel.reflections import Reflections, Segment, Stub

    r = cfg["reflections"]
    fb = cfg["link"]["symbol_rate_hz"]
    n, k = len(r["segment_lengths_mm"]), len(r["stub_positions"])

    def col(key, count):
        v = list(r[key])
        return v * count if len(v) == 1 and count != 1 else v

    segments = [Segment(length_mm=ln, z0_ohm=z, eps_r=e, loss_db_per_mm=a)
                for ln, z, e, a in zip(r["segment_lengths_mm"], col("segment_z0_ohm", n),
                                       col("segment_eps_r", n),
                                       col("segment_loss_db_per_mm", n))]
    stubs = [Stub(position=int(p), length_mm=ln, z0_ohm=z, eps_r=e, loss_db_per_mm=a)
             for p, ln, z, e, a in zip(r["stub_positions"], col("stub_lengths_mm", k),
                                       col("stub_z0_ohm", k), col("stub_eps_r", k),
                                       col("stub_loss_db_per_mm", k))]
    amp = 0.0
    if r["echo_delay_ui"] > 0:
        amp = 10 ** (r["echo_db"] / 20.0) * (1 if r["echo_polarity"] == "positive" else -1)
    return Reflections(segments=segments, stubs=stubs, z_ref_ohm=r["z_ref_ohm"],
                       loss_ref_hz=r["loss_ref_hz"], echo_delay_s=r["echo_delay_ui"] / fb,
                       echo_amplitude=amp, ui_s=1.0 / fb)


def build_channel_stages(cfg: Config) -> list:
    """The channel model, then the [reflections] cascade in series if it has any."""
    from serdes.stage import Ideal

    ch = cfg["channel"]
    fb = cfg["link"]["symbol_rate_hz"]
    if ch["model"] == "ideal":
        stages = [Ideal()]
    elif ch["model"] == "loss":
        from serdes.channel.loss import LossLine

        stages = [LossLine(loss_db=ch["loss_db"], f_ref_hz=fb / 2.0,
                           skin_fraction=ch["skin_fraction"])]
    else:
        from serdes.channel.touchstone import TouchstoneChannel

        # used as the thru: it must be one, and its data must reach Nyquist
        stages = [TouchstoneChannel(ch["file"], ports=ch["ports"], thru=True,
                                    f_needed_hz=fb / 2.0)]
    refl = build_reflections(cfg)
    if refl.active:
        stages.append(refl)
    tx_pkg, rx_pkg = build_packages(cfg)
    if tx_pkg is not None:  # the die terminations end the cascade on both sides
        stages = [tx_pkg] + stages + [rx_pkg]
    return stages


def build_rx_stages(cfg: Config) -> list:
    """CTLE (unless 'none'), then the shunt-peaked AFE (flat when its bandwidth is 0), the
    COM reference Butterworth, or both (``afe.model``)."""
    c, a = cfg["ctle"], cfg["afe"]
    stages = []
    if c["model"] == "ieee":
        stages.append(IeeeCtle(g_dc_db=c["g_dc_db"], g_dc2_db=c["g_dc2_db"],
                               symbol_rate_hz=cfg["link"]["symbol_rate_hz"], f_z_hz=c["f_z_hz"],
                               f_p1_hz=c["f_p1_hz"], f_p2_hz=c["f_p2_hz"], f_lf_hz=c["f_lf_hz"]))
    elif c["model"] == "zpk":
        from serdes.analog.ctle import ZpkCtle

        stages.append(ZpkCtle(zeros_hz=c["zeros_hz"], poles_hz=c["poles_hz"], gain=c["gain"]))
    if a["model"] in ("shunt", "both"):
        from serdes.analog.peaking import ShuntPeakedAfe

        stages.append(ShuntPeakedAfe(m=a["peaking_m"], bandwidth_hz=a["bandwidth_hz"]))
    if a["model"] in ("butterworth", "both"):
        from serdes.analog.butterworth import ButterworthFilter

        stages.append(ButterworthFilter(f_r=a["f_r"], symbol_rate_hz=cfg["link"]["symbol_rate_hz"]))
    return stages


def build_impairments(cfg: Config) -> Impairments:
    n = cfg["noise"]
    return Impairments(eta0_v2_per_hz=n["eta0_v2_per_ghz"] * 1e-9, tx_snr_db=cfg["tx"]["snr_db"],
                       rj_ui=n["rj_ui"], sj_ui=n["sj_ui"], sj_hz=n["sj_hz"], dd_ui=n["dd_ui"])


def build_adc(cfg: Config) -> Adc:
    a = cfg["adc"]
    supply = build_supply(cfg)
    mismatch = ("offset_rms_v", "gain_rms", "skew_rms_s", "bw_rms_rel", "aperture_jitter_s",
                "offsets_v", "gains", "skews_s")
    c = cfg["adc_cal"]
    if a["lanes"] == 1 and not any(a[k] for k in mismatch) and supply is None \
            and not c["enabled"]:   # the single converter, as before the interleaved model
        return Adc(bits=a["bits"], fullscale_v=a["fullscale_v"], enob=a["enob"])
    from serdes.tiadc.model import TiAdc

    calibration = None
    if c["enabled"]:
        from serdes.dsp.ti_cal import SETTLE_PER_LANE, CalSettings

        calibration = CalSettings(mu_offset=c["mu_offset"], mu_gain=c["mu_gain"],
                                  skew_gain=c["skew_gain"], mu_average=c["mu_average"],
                                  deriv_taps=c["deriv_taps"],
                                  chunk_symbols=cfg["link"]["chunk_symbols"],
                                  settle_symbols=c["settle_symbols"] or SETTLE_PER_LANE * a["lanes"])
    return TiAdc.draw(calibration=calibration, bits=a["bits"], fullscale_v=a["fullscale_v"],
                      enob=a["enob"], lanes=a["lanes"], offset_rms_v=a["offset_rms_v"], gain_rms=a["gain_rms"],
                      skew_rms_s=a["skew_rms_s"], bw_hz=a["bw_hz"], bw_rms_rel=a["bw_rms_rel"],
                      seed=a["mismatch_seed"], offsets_v=a["offsets_v"], gains=a["gains"],
                      skews_s=a["skews_s"], aperture_jitter_s=a["aperture_jitter_s"],
                      supply=supply)


def build_supply(cfg: Config):
    """The ADC's supply path (:class:`serdes.tiadc.supply.SupplyPath`), or None when no
    ripple or noise reaches the clock or the front end."""
    s = cfg["supply"]
    if not ((s["ripple_mv"] or s["noise_uv_per_rthz"] > 0)
            and (s["delay_ps_per_mv"] > 0 or s["gain_pct_per_mv"] > 0)):
        return None
    from serdes.tiadc.supply import Ldo, SupplyPath

    return SupplyPath(fs_hz=cfg["link"]["symbol_rate_hz"],
                      ldo=Ldo(s["psrr_db"], s["psrr_pole_hz"]), ripple_mv=s["ripple_mv"],
                      ripple_hz=s["ripple_hz"], noise_uv_per_rthz=s["noise_uv_per_rthz"],
                      noise_bw_hz=s["noise_bw_hz"], delay_ps_per_mv=s["delay_ps_per_mv"],
                      gain_pct_per_mv=s["gain_pct_per_mv"], seed=cfg["link"]["seed"])


def build_link(cfg: Config | None = None, *, cache: bool = False) -> Link:
    """The analog :class:`~serdes.link.Link` of a config (default: the built-in link).
    With ``ctle.auto`` (IEEE CTLE) the gains are chosen for this link and receiver by
    :func:`serdes.dsp.ctle_search.search_ctle`; ``cache``: the choice is kept on disk
    (:mod:`serdes.buildcache`; the same link, bit for bit)."""
    cfg = cfg or Config.default()
    m = 4 if cfg["link"]["modulation"] == "pam4" else 2
    tx, channel, rx = build_tx_stages(cfg), build_channel_stages(cfg), build_rx_stages(cfg)
    xtalk = build_crosstalk(cfg, channel)
    if cfg["adc"]["bw_hz"] > 0:  # the nominal T/H: the lanes' mismatch is relative to it
        from serdes.tiadc.model import TrackHold

        rx.append(TrackHold(cfg["adc"]["bw_hz"]))

    def make(rx_stages):
        return Link(build_grid(cfg), tx=tx, channel=channel, rx=rx_stages,
                    levels=pam_levels(m, cfg["tx"]["rlm"]), swing_v=cfg["tx"]["swing_v"],
                    impairments=build_impairments(cfg), adc=build_adc(cfg),
                    clip_sigma=cfg["adc"]["clip_sigma"], pulse_ui=cfg["link"]["pulse_ui"],
                    crosstalk=xtalk)

    if cfg["ctle"]["model"] == "ieee" and cfg["ctle"]["auto"]:
        best = _ctle_choice(cfg, lambda: make(rx), cache)
        c = cfg["ctle"]
        rx[0] = IeeeCtle(g_dc_db=best["g_dc_db"], g_dc2_db=best["g_dc2_db"], auto=True,
                         symbol_rate_hz=cfg["link"]["symbol_rate_hz"], f_z_hz=c["f_z_hz"],
                         f_p1_hz=c["f_p1_hz"], f_p2_hz=c["f_p2_hz"], f_lf_hz=c["f_lf_hz"])
    return make(rx)


def _ctle_choice(cfg: Config, template, cache: bool) -> dict:
    """The searched CTLE gains {"g_dc_db", "g_dc2_db"} of ``template()`` (the link with
    the configured CTLE), from the on-disk cache when ``cache`` and stored there."""
    from serdes.dsp.ctle_search import G_DC2_GRID_DB, G_DC_GRID_DB, search_ctle

    key = None
    if cache:
        from serdes import buildcache

        values = cfg.to_dict()
        for name in ("symbols", "target_errors"):  # read by build_run only
            values["link"].pop(name)
        key = buildcache.key("ctle_search", values)
        got = buildcache.load(key)
        if (got is not None and got.get("g_dc_db") in G_DC_GRID_DB
                and got.get("g_dc2_db") in G_DC2_GRID_DB):
            return got
    cdr = build_cdr(cfg)   # a loop locked at its detector's zero: judged there
    best = search_ctle(template(), build_receiver(cfg),
                       cdr=cdr if cdr.active and cdr.lock == "mm" else None)
    got = {"g_dc_db": best.g_dc_db, "g_dc2_db": best.g_dc2_db}
    if key is not None:
        buildcache.store(key, got)
    return got


def build_receiver(cfg: Config) -> ReceiverSpec:
    r, e, ml = cfg["rc"], cfg["eq"], cfg["mlse"]
    return ReceiverSpec(
        ffe_taps=cfg["ffe"]["taps"], ffe_pre=cfg["ffe"]["pre"], dfe_taps=cfg["dfe"]["taps"],
        dfe_limit=cfg["dfe"]["limit"], mode=e["mode"], mu=e["mu"],
        train_symbols=e["train_symbols"], detector=e["detector"],
        rc=RcSettings(taps=r["taps"], span_ui=r["span_ui"], mode=r["mode"], mu=r["mu"],
                      search_symbols=r["search_symbols"]),
        mlse=MlseSettings(memory=ml["memory"], whitening=ml["whitening"],
                          traceback=ml["traceback"]))


def build_source(cfg: Config, link=None, receiver: ReceiverSpec | None = None) -> SourceSpec:
    """``link.precoding = "auto"`` asks the receiver design (needs ``link``, ``receiver``),
    made where the receiver samples (:func:`serdes.engines.run.design_link`: at the CDR's
    lock point with ``cdr.lock = 'mm'``)."""
    pre = cfg["link"]["precoding"]
    if pre == "auto" and link is not None and receiver is not None:
        from types import SimpleNamespace

        from serdes.dsp.design import wants_precoding
        from serdes.engines.run import design_link

        seen = design_link(SimpleNamespace(link=link, cdr=build_cdr(cfg),
                                           tx_jitter=build_tx_jitter(cfg)))
        pre = wants_precoding(seen, receiver)
    elif pre == "auto":
        pre = False
    return SourceSpec(pattern=cfg["link"]["pattern"], precoding=bool(pre), fec=build_fec(cfg))


def build_fec(cfg: Config):
    """The [fec] section: a :class:`serdes.fec.FecSpec`, or None when off."""
    f = cfg["fec"]
    if f["mode"] == "off":
        return None
    from serdes.errors import ConfigError
    from serdes.fec import FecSpec

    if not (cfg["link"]["pattern"].startswith("prbs") or cfg["link"]["pattern"] == "random"):
        raise ConfigError(f"fec.mode = 'kp4' needs a payload pattern: link.pattern = "
                          f"{cfg['link']['pattern']!r} is not allowed, use a PRBS or 'random'")
    return FecSpec(mode=f["mode"], interleave=f["interleave"],
                   target_post_fec_ber=f["target_post_fec_ber"])


def build_run(cfg: Config) -> RunSpec:
    lk = cfg["link"]
    return RunSpec(symbols=lk["symbols"], target_errors=lk["target_errors"],
                   chunk_symbols=lk["chunk_symbols"], seed=lk["seed"])


def build_cdr(cfg: Config):
    """The [cdr] section as :class:`serdes.cdr.CdrSettings`."""
    from serdes.cdr import CdrSettings

    c = cfg["cdr"]
    return CdrSettings(mode=c["mode"], bandwidth_hz=c["bandwidth_hz"], damping=c["damping"],
                       kp=c["kp"], ki=c["ki"], latency_ui=c["latency_ui"],
                       pi_steps=c["pi_steps"], lock=c["lock"],
                       initial_phase_ui=c["initial_phase_ui"],
                       warmup_symbols=c["warmup_symbols"], acquire_gear=c["acquire_gear"],
                       acquire_symbols=c["acquire_symbols"])


def build_tx_jitter(cfg: Config):
    """The [tx_jitter] section as :class:`serdes.txjitter.TxJitter`."""
    from serdes.txjitter import TxJitter

    t = cfg["tx_jitter"]
    return TxJitter(rj_ui=t["rj_ui"], sj_ui=t["sj_ui"], sj_hz=t["sj_hz"], dcd_ui=t["dcd_ui"],
                    buj_ui=t["buj_ui"], ppm=t["ppm"])


def build(cfg: Config | None = None, *, cache: bool = False) -> System:
    """The whole :class:`~serdes.system.System` of a config (default: the built-in link);
    ``cache``: see :func:`build_link`."""
    cfg = cfg or Config.default()
    link, receiver = build_link(cfg, cache=cache), build_receiver(cfg)
    return System(link=link, source=build_source(cfg, link, receiver), receiver=receiver,
                  run=build_run(cfg), cdr=build_cdr(cfg), tx_jitter=build_tx_jitter(cfg))



def com_channel_args(cfg: Config) -> tuple:
    """Everything of a config that its COM channel set depends on, as the arguments of
    :func:`serdes.com.columns.channel_set` (hashable: a sweep computes the COM of each
    distinct tuple once): the [channel] model, file, ports, loss and skin fraction, the
    symbol rate and each [[aggressor]] table's kind, model, file and ports."""
    ch = cfg["channel"]
    aggs = tuple((a["kind"], a["model"], a["file"], a["ports"] or ch["ports"])
                 for a in cfg.aggressors)
    return (ch["model"], ch["file"], ch["ports"], ch["loss_db"], ch["skin_fraction"],
            cfg["link"]["symbol_rate_hz"], aggs)


def build_com_channels(cfg: Config):
    """The channel set of a config for :func:`serdes.com.core.compute_com` (the sweep's
    COM columns): :func:`serdes.com.columns.channel_set` of :func:`com_channel_args`.
    COM uses its own packages: [package] and [reflections] do not enter."""
    from serdes.com.columns import channel_set

    return channel_set(*com_channel_args(cfg))
