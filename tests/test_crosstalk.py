"""Crosstalk aggressors: config, kernel, pulses, counted and statistical engines, ICN.

References: the kernel against a slow NumPy sum (tests/naive.py); a thru copy's pulse
against the victim's own pulse; the FFT path against the direct FIR; the counted engine
against the statistical engine (tolerance from the counted 95 % interval widened by the
1.5x the two engines are held to); ICN against scikit-rf's reading of the raw files.
"""

import tracemalloc

import numpy as np
import pytest

import naive
from serdes import crosstalk as X
from serdes.build import build, build_link
from serdes.cli import build_parser
from serdes.commands.common import load_config
from serdes.config import Config
from serdes.engines import crosstalk as engine_xt
from serdes.engines.blocks_run import simulate_split
from serdes.engines.pulse import Jitter, PulseFrontEnd
from serdes.engines.run import simulate
from serdes.engines.stat import StatisticalEngine
from serdes.errors import ConfigError
from serdes.kernels.xtalk import xtalk_add
from serdes.report import crosstalk_fields
from xtalk_cases import counted_ffe_variance

EX2 = "pychopmarg_example2_vita682"


def _cfg(aggs, *sets):
    return Config.default().with_overrides(["link.target_errors=0", *sets]).with_aggressors(aggs)


def _within(res, stat, factor=1.5):
    """The counted 95 % interval meets [stat / factor, stat * factor]."""
    lo, hi = res.ber_ci
    return hi >= stat / factor and lo <= stat * factor


# ----------------------------------------------------------------------- config and CLI
def test_aggressor_tables_from_toml_round_trip(tmp_path):
    (tmp_path / "x.s4p").write_text("")
    path = tmp_path / "link.toml"
    path.write_text('[crosstalk]\na_ne_v = 0.6\n\n[[aggressor]]\nkind = "next"\nfile = "x.s4p"\n'
                    '\n[[aggressor]]\nmodel = "copy"\ncoupling_db = -25\nppm = 50\n')
    cfg = Config.from_toml(path)
    a = cfg.aggressors
    assert [t["kind"] for t in a] == ["next", "fext"]
    assert a[0]["file"] == str(tmp_path / "x.s4p") and a[1]["ppm"] == 50.0
    assert Config(cfg.to_dict()) == cfg
    import tomllib
    assert Config(tomllib.loads(cfg.to_toml())) == cfg
    with pytest.raises(ConfigError, match=r"aggressor\[0\]\.bogus"):
        Config({"aggressor": [{"bogus": 1}]})
    with pytest.raises(ConfigError, match=r"aggressor\[0\]\.kind"):
        Config({"aggressor": [{"kind": "side", "model": "copy"}]})
    with pytest.raises(ConfigError, match=r"aggressor\[0\]\.file is empty"):
        Config({"aggressor": [{"kind": "next"}]})


def test_fext_next_options_add_aggressors(tmp_path):
    args = build_parser().parse_args(["run", "--fext", "a.s4p", "--next", "b.s4p", "--next",
                                      "c.s4p", "--set", "crosstalk.a_fe_v=0.3"])
    cfg = load_config(args)
    assert [(t["kind"], t["file"].rsplit("/", 1)[1]) for t in cfg.aggressors] == [
        ("fext", "a.s4p"), ("next", "b.s4p"), ("next", "c.s4p")]
    for cmd in ("eye", "bathtub", "sweep"):
        extra = ["--grid", "channel.loss_db=20", "--out", "x.csv"] if cmd == "sweep" else []
        assert load_config(build_parser().parse_args([cmd, "--next", "n.s4p", *extra])
                           ).aggressors[0]["kind"] == "next"


def test_defaults_swings_seeds_and_phases():
    cfg = _cfg([dict(kind="next", model="copy"), dict(model="copy", swing_v=0.2),
                dict(model="copy", phase_ui=0.25, seed=9)], "crosstalk.a_ne_v=0.6")
    aggs = build_link(cfg).crosstalk_spec.aggressors
    assert [a.swing_v for a in aggs] == [0.6, 0.2, 0.4]   # a_ne_v, own, tx.swing_v
    assert aggs[2].phase_ui == 0.25 and aggs[2].seed == 9
    assert len({a.seed for a in aggs}) == 3 and all(0 <= a.phase_ui < 1 for a in aggs)
    again = build_link(cfg).crosstalk_spec.aggressors
    assert [(a.seed, a.phase_ui) for a in again] == [(a.seed, a.phase_ui) for a in aggs]


# ----------------------------------------------------------------------------- kernel
@pytest.mark.parametrize("jit", [False, True])
def test_kernel_matches_naive(jit):
    rng = np.random.default_rng(4)
    L, n, k0, start = 7, 300, 1000, 980
    seg = np.array([0, 50, 180, 300])
    shift = np.array([-2, 0, 3])
    taps = rng.normal(size=(3, L))
    dtaps = rng.normal(size=(3, L)) if jit else np.zeros((0, L))
    off = rng.normal(size=n) * 0.01
    b = rng.normal(size=340)
    out = rng.normal(size=n)
    want = naive.xtalk_add(out, b, start, k0, seg, shift, taps, dtaps, off)
    got = out.copy()
    xtalk_add(got, b, start, k0, seg, shift, taps, dtaps, off)
    assert np.allclose(got, want, rtol=1e-12, atol=1e-12)
    with pytest.raises(ConfigError, match="do not cover"):
        xtalk_add(out.copy(), b[:100], start, k0, seg, shift, taps, dtaps, off)


# ---------------------------------------------------------------------------- pulses
def test_thru_copy_pulse_is_the_scaled_victim_pulse():
    link = build_link(_cfg([dict(model="copy", coupling_db=-20, phase_ui=0.0)]))
    p = link.aggressor_pulses[0]
    full = link._pulse_window * link.vga_gain
    n, m = full.shape[0], link.m
    for phase in (0.0, 0.5):
        idx = (p.start + m * (p.j0 + np.arange(p.n_taps)) - int(phase * m)) % n
        assert np.allclose(p.taps(phase), 0.1 * full[idx], rtol=0, atol=1e-12 * full.max())
    # the kept span holds the victim's own cursor and all but 1e-3 of the energy
    c = p.taps(0.0)
    assert np.isclose(c.max(), 0.1 * link.pulse.taps[link.pulse.cursor], rtol=1e-9)
    assert np.isclose(np.sum(c ** 2), np.sum((0.1 * full[p.start % m::m]) ** 2), rtol=2e-3)


def test_fft_path_equals_direct_fir(monkeypatch):
    cfg = _cfg([dict(kind="next", model="copy", coupling_db=-20),
                dict(model="copy", coupling_db=-26, delay_ui=3.3, pattern="prbs9")])
    link = build_link(cfg)
    out = {}
    # the same symbols and TX noise through both paths (the direct path would otherwise
    # draw the two aggressors' TX noise as one stream, engines/xtalk_noise.py)
    monkeypatch.setattr(engine_xt, "COMBINE_MIN", 99)
    for name, limit in (("direct", 10_000), ("fft", 0)):
        monkeypatch.setattr(engine_xt, "DIRECT_MAX_TAPS", limit)
        fe = engine_xt.CrosstalkFrontEnd(link, Jitter(link, 1))
        assert (fe.fft == []) == (name == "direct")
        out[name] = np.concatenate([fe(k, 30_000) for k in range(0, 90_000, 30_000)])
    scale = np.max(np.abs(out["direct"]))
    assert np.max(np.abs(out["fft"] - out["direct"])) < 1e-12 * scale


@pytest.mark.parametrize("sets", [(), ("noise.rj_ui=0",)])
def test_chunk_size_invariant(sets, monkeypatch):
    monkeypatch.setattr(engine_xt, "FFT_MIN", 1 << 12)   # several FFT blocks per chunk
    cfg = _cfg([dict(kind="next", model="copy", coupling_db=-20),
                dict(model="copy", coupling_db=-24, ppm=300, pattern="prbs11"),
                dict(model="copy", coupling_db=-30, delay_ui=40)], *sets)
    link = build_link(cfg)
    monkeypatch.setattr(engine_xt, "DIRECT_MAX_TAPS", 4)
    a = np.random.default_rng(1).choice(link.levels, 50_000)
    runs = []
    for chunk in (50_000, 4_099):
        fe = PulseFrontEnd(link, 3)
        runs.append(np.concatenate([fe(a[k:k + chunk], k) for k in range(0, 50_000, chunk)]))
    assert fe.crosstalk is not None and fe.crosstalk.fft
    assert np.array_equal(runs[0], runs[1])


def test_split_run_counts_what_one_thread_counts():
    system = build(_cfg([dict(kind="next", model="copy", coupling_db=-19),
                         dict(model="copy", coupling_db=-22, ppm=-80)],
                        "link.symbols=300000", "channel.loss_db=30", "link.seed=5"))
    one = simulate(system)
    assert one.bit_errors > 50
    many, _, how = simulate_split(system, threads=2)
    assert how.tasks > 2
    for key in ("symbols", "bit_errors", "symbol_errors", "latency", "bursts"):
        assert getattr(one, key) == getattr(many, key), key


# ------------------------------------------------------------------ BER: both engines
def test_known_coupling_changes_ber_in_both_engines():
    """A NEXT copy of the thru at -18 dB: the counted BER rises by orders of magnitude
    and both engines agree on it, with and without a DFE."""
    for dfe in (0, 1):
        base = ["link.symbols=400000", "channel.loss_db=32", f"dfe.taps={dfe}"]
        clean = build(_cfg([], *base))
        noisy = build(_cfg([dict(kind="next", model="copy", coupling_db=-18)], *base))
        s_clean = StatisticalEngine(clean).ber().ber
        r = simulate(noisy)
        s_noisy = StatisticalEngine(noisy).ber().ber
        assert r.bit_errors > 40
        assert s_noisy > 30 * s_clean and r.ber > 30 * s_clean
        assert _within(r, s_noisy), (dfe, r.ber, r.ber_ci, s_noisy)


def test_real_set_stat_vs_counted_ffe_only(channels_dir):
    """example2 (2 FEXT + 3 NEXT) at 25.78 GBd, FFE only, RX noise raised so errors can be
    counted: the aggressors take the BER from ~1e-6 to ~1e-4, and the engines agree."""
    d = channels_dir / EX2
    aggs = [dict(kind=k.lower(), file=str(d / f"example2_{k}{i}.s4p"))
            for k, n in (("FEXT", 2), ("NEXT", 3)) for i in range(1, n + 1)]
    sets = ["link.symbols=400000", "dfe.taps=0", "link.symbol_rate_hz=25.78125e9",
            "noise.eta0_v2_per_ghz=2.5e-7", "channel.model=touchstone",
            f"channel.file={d / 'example2_THRU.s4p'}"]
    thru = StatisticalEngine(build(_cfg([], *sets))).ber().ber
    system = build(_cfg(aggs, *sets))
    r = simulate(system)
    s = StatisticalEngine(system).ber().ber
    assert r.bit_errors > 30 and s > 10 * thru
    assert _within(r, s), (r.ber, r.ber_ci, s)


# ---------------------------------------------------------------- report, ICN, memory
def test_report_fields_null_without_aggressors_and_filled_with():
    assert crosstalk_fields(build(_cfg([]))) == {"icn_v": None, "crosstalk_rms_v": None}
    system = build(_cfg([dict(kind="next", model="copy", coupling_db=-20, phase_ui=0.0)]))
    f = crosstalk_fields(system)
    row = f["crosstalk"][0]
    assert f["crosstalk_rms_v"] > 0 and row["slicer_rms_v"] == pytest.approx(f["crosstalk_rms_v"])
    # at the ADC input: rms = 0.1 x the victim's signal rms (same pulse, same levels)
    link = system.link
    h = link.pulse.taps
    assert row["rms_v"] == pytest.approx(0.1 * np.sqrt(link.level_power * h @ h), rel=2e-3)


def test_icn_against_scikit_rf(channels_dir):
    skrf = pytest.importorskip("skrf")
    d = channels_dir / EX2
    files = {"fext": ["example2_FEXT1.s4p"], "next": ["example2_NEXT1.s4p", "example2_NEXT2.s4p"]}
    aggs = [dict(kind=k, file=str(d / f)) for k, fs in files.items() for f in fs]
    fb = 25.78125e9
    cfg = _cfg(aggs, f"link.symbol_rate_hz={fb}", "crosstalk.a_fe_v=0.4", "crosstalk.a_ne_v=0.6",
               "tx.rise_time_s=12e-12", "afe.f_r=0.75")
    ours = X.icn_v(build_link(cfg))
    # the standard's form: MDNEXT/MDFEXT power sums from the raw files, read by scikit-rf
    total = 0.0
    for kind, amp in (("fext", 0.4), ("next", 0.6)):
        md2 = 0.0
        for f in files[kind]:
            net = skrf.Network(str(d / f))
            net.renumber([0, 1, 2, 3], [0, 2, 1, 3])   # thru 1->2, 3->4 as skrf's (1,3)->(2,4)
            net.se2gmm(p=2)
            keep = (net.f >= 0.05e9) & (net.f <= fb)
            md2 = md2 + np.abs(net.s[keep, 1, 0]) ** 2
            freq = net.f[keep]
        ft = 0.2365 / 12e-12
        w = (amp ** 2 / fb * np.sinc(freq / fb) ** 2 / (1 + (freq / ft) ** 4)
             / (1 + (freq / (0.75 * fb)) ** 8))
        total += 2 * (freq[1] - freq[0]) * np.sum(w * md2)
    assert ours == pytest.approx(np.sqrt(total), rel=1e-6)


def test_memory_bounded_with_15_aggressors():
    aggs = [dict(kind="next" if i % 2 else "fext", model="copy", coupling_db=-35 - i,
                 delay_ui=i * 7.0, ppm=(50.0 if i % 5 == 0 else 0.0)) for i in range(15)]
    system = build(_cfg(aggs, "link.chunk_symbols=16384"))
    peaks = []
    for n in (400_000, 1_200_000):   # past the pipeline's start-up (its peak settles by 400k)
        simulate(system, symbols=20_000)   # compiled, pulses cached
        tracemalloc.start()
        simulate(system, symbols=n)
        peaks.append(tracemalloc.get_traced_memory()[1])
        tracemalloc.stop()
    assert peaks[1] < 1.05 * peaks[0] + (1 << 20), peaks


def test_sweep_over_the_aggressor_swing(tmp_path):
    from serdes.sweep import Grid
    from serdes.sweep.runner import run_sweep
    from serdes.sweep.results import ResultFile

    cfg = _cfg([dict(kind="next", model="copy", coupling_db=-18)], "link.symbols=60000",
               "channel.loss_db=32", "dfe.taps=0")
    out = tmp_path / "xt.csv"
    run_sweep(cfg, Grid.parse(["crosstalk.a_ne_v=0.05,0.4"]), out, workers=0, progress=False)
    f = ResultFile(out, ["crosstalk.a_ne_v"])
    f.open()
    rows = sorted(f.rows, key=lambda r: float(r["crosstalk.a_ne_v"]))
    assert all(r["status"] == "ok" for r in rows)
    # ICN scales with the swing (8x), the counted errors rise with it
    assert float(rows[1]["icn_v"]) == pytest.approx(8 * float(rows[0]["icn_v"]), rel=1e-9)
    assert int(rows[1]["bit_errors"]) > int(rows[0]["bit_errors"])


def test_waveform_engine_adds_the_same_crosstalk():
    """Without noise, the waveform engine's samples with aggressors equal the pulse
    engine's (both add the same aggressor sums at the same instants)."""
    from serdes.engines.waveform import WaveformFrontEnd

    link = build_link(_cfg([dict(kind="next", model="copy", coupling_db=-20),
                            dict(model="copy", coupling_db=-25, ppm=200)],
                           "noise.rj_ui=0.03", "noise.sj_ui=0.2", "noise.sj_hz=2e8",
                           "tx.snr_db=200"))   # the exact jitter path in both
    a = np.random.default_rng(0).choice(link.levels, size=5000)
    pulse = PulseFrontEnd(link, seed=5)
    pulse.noise_fir = np.zeros(1)
    wave = WaveformFrontEnd(link, seed=5, noise=False)
    xp = np.concatenate([pulse(a[:3000], 0), pulse(a[3000:], 3000)])
    xw = np.concatenate([wave(a[:2000], 0), wave(a[2000:], 2000)])
    g = wave.latency
    xt = engine_xt.CrosstalkFrontEnd(link, Jitter(link, 5))(0, len(a))
    assert np.max(np.abs(xt)) > 0.02 * np.max(np.abs(xp))
    assert pulse.path == "exact"
    np.testing.assert_allclose(xw[g:], xp[: len(a) - g], rtol=0, atol=1e-9 * np.max(np.abs(xp)))


def test_aggressors_get_the_packages_of_their_kind():
    aggs = [dict(kind="next", model="copy"), dict(kind="fext", model="copy")]
    cfg = _cfg(aggs, "package.preset=802.3ck-kr", "package.z_p_tx_mm=31",
               "package.z_p_rx_mm=29")
    nxt, fxt = build_link(cfg).crosstalk_spec.aggressors
    # FEXT: the thru's packages (far TX 31 mm); NEXT: the local device's TX (as RX, 29 mm)
    assert [s.side for s in fxt.channel[::2]] == ["tx", "rx"]
    assert fxt.channel[0].params.z_p_mm[0] == 31.0 and fxt.channel[2].params.z_p_mm[0] == 29.0
    assert nxt.channel[0].params.z_p_mm[0] == 29.0
    cfg = cfg.with_overrides(["package.z_p_next_mm=12"])
    assert build_link(cfg).crosstalk_spec.aggressors[0].channel[0].params.z_p_mm[0] == 12.0
    # the copy path itself holds the thru without its packages
    from serdes.analog.package import Package
    assert nxt.coupling.stages and not any(isinstance(s, Package) for s in nxt.coupling.stages)


def test_icn_closed_form_flat_coupling():
    """ICN of flat couplings |S| = c (no package, no FFE) against the 802.3 integral done
    independently by quadrature: sigma^2 = sum_a c_a^2 (2 A_a^2 / f_b) int_f1^f2 sinc^2(f/f_b)
    / (1 + (f/f_t)^4) / (1 + (f/(f_r f_b))^8) df, f_t = 0.2365 / T. Tolerance: the
    discretisation bound of the 10 MHz sum (one bin of the weight at each band edge plus
    the midpoint-rule term), not a fitted number."""
    from types import SimpleNamespace

    from scipy.integrate import quad

    fb, f_r, f1 = 53.125e9, 0.75, 0.05e9
    aggs = (("fext", -30.0, 0.413, 0.0), ("fext", -36.0, 0.413, 8e-12), ("next", -26.0, 0.608, 12e-12))

    def weight(f, amp, rise):
        w = amp ** 2 / fb * np.sinc(f / fb) ** 2 / (1 + (f / (f_r * fb)) ** 8)
        return w / (1 + (f * rise / 0.2365) ** 4) if rise > 0 else w

    expect, bound = 0.0, 0.0
    df = 1e7
    for _, cdb, amp, rise in aggs:
        c2 = 10 ** (cdb / 10)
        val, err = quad(weight, f1, fb, args=(amp, rise), limit=200, epsabs=0, epsrel=1e-10)
        expect += 2 * c2 * val
        ff = np.linspace(f1, fb, 20001)
        w2 = np.max(np.abs(np.gradient(np.gradient(weight(ff, amp, rise), ff), ff)))
        bound += 2 * c2 * (df * (weight(f1, amp, rise) + weight(fb, amp, rise))
                           + (fb - f1) * df ** 2 / 12 * w2 + err)
    spec = X.Crosstalk(aggressors=tuple(
        X.Aggressor(kind=k, channel=(X.ThruCopy([], cdb),), tx=(), swing_v=amp, rise_time_s=rise)
        for k, cdb, amp, rise in aggs), f_r=f_r, f1_hz=f1)
    ours = X.icn_v(SimpleNamespace(crosstalk_spec=spec, symbol_rate_hz=fb))
    assert abs(ours ** 2 - expect) <= bound, (ours ** 2 / expect - 1, bound / expect)
    assert bound < 1e-3 * expect          # the check is tight: 0.1 % of sigma^2
    # power sum over aggressors: each alone adds in sigma^2
    alone = [X.icn_v(SimpleNamespace(crosstalk_spec=X.Crosstalk(aggressors=(a,), f_r=f_r, f1_hz=f1),
                                     symbol_rate_hz=fb)) for a in spec.aggressors]
    assert ours ** 2 == pytest.approx(sum(v ** 2 for v in alone), rel=1e-12)


# ------------------------------------------------------------------------ analog eye
_QUIET = ("noise.eta0_v2_per_ghz=0", "noise.rj_ui=0", "tx.snr_db=200")


def test_analog_eye_aggressor_waveform_equals_the_counted_sum():
    """The aggressors' fine-grid waveform of the analog eye, read at the victim's
    sampling instants, is the counted engines' crosstalk sum (fixed and walking phases,
    chunk by chunk); the eye's per-level extremes are those of the pulse-engine samples
    (victim pulse sum plus that crosstalk) of the same symbols."""
    from serdes.metrics.eye import analog_eye
    from serdes.signal.source import Transmitter

    aggs = [dict(kind="next", model="copy", coupling_db=-24, phase_ui=0.4),
            dict(kind="fext", model="copy", coupling_db=-28, delay_ui=3.0, ppm=300.0)]
    system = build(_cfg(aggs, "channel.loss_db=10", *_QUIET))
    link = system.link
    n, m, ph = 5000, link.m, link.pulse.phase
    xt = engine_xt.CrosstalkFrontEnd(link, Jitter(link, 3))
    assert not xt.jitter.active
    ref = xt(0, n)
    wave = engine_xt.AggressorWaveform(link)
    fine = np.concatenate([wave(0, 1700), wave(1700, n - 1700)])
    np.testing.assert_allclose(fine[ph::m], ref, rtol=0, atol=1e-12 * np.max(np.abs(ref)))
    assert np.max(np.abs(ref)) > 0.02 * link.pulse.taps[link.pulse.cursor]

    eye = analog_eye(system, symbols=n, reference="adc", chunk=1000)
    tx = Transmitter(link, system.source, system.run.seed)
    line, a = [], []
    for _ in range(5):
        li, _, ai = tx.next(1000)
        line.append(li)
        a.append(ai)
    line, a = np.concatenate(line), np.concatenate(a)
    v = np.convolve(a, link.pulse.taps)[:n] + ref
    u = np.arange(link.pulse.n_ui + 2, n - 3)
    sym = line[u - link.pulse.cursor]
    lo = [v[u][sym == i].min() for i in range(4)]
    hi = [v[u][sym == i].max() for i in range(4)]
    want = np.array([lo[i + 1] - hi[i] for i in range(3)])
    assert np.all(want > 0)
    np.testing.assert_allclose(eye.heights_v, want, rtol=0, atol=1e-9)
    np.testing.assert_allclose(eye.level_v, [v[u][sym == i].mean() for i in range(4)],
                               rtol=0, atol=1e-9)


def test_analog_eye_shrinks_by_the_crosstalk_peak():
    """NRZ on an almost ISI-free link (cursor h_c, the rest of the pulse |ISI| sum I) with
    a thru copy at -6 dB (peak P = sum |c_i|, its 5 taps): every aggressor pattern occurs
    among the ~2000 samples of each level, so the inner eye height lies within
    2 h_c - 2 P +- 2 I; without the aggressors it is >= 2 h_c - 2 I, far above."""
    from serdes.metrics.eye import analog_eye

    sets = ["link.modulation=nrz", "channel.loss_db=1", "ctle.model=none",
            "afe.bandwidth_hz=0", "afe.peaking_m=0", *_QUIET]
    clean = build(_cfg([], *sets))
    system = build(_cfg([dict(kind="fext", model="copy", coupling_db=-6, phase_ui=0.3)], *sets))
    link = system.link
    h, c = link.pulse.taps, link.pulse.cursor
    isi = float(np.sum(np.abs(h)) - abs(h[c]))
    peak = X.summary(link)[0]["peak_v"]
    assert 2 ** link.aggressor_pulses[0].n_taps < 100 and 4 * isi < peak
    tol = 16 * link.tx_noise_sigma * float(np.sum(np.abs(h)))   # the 200 dB TX noise, 8 sigma
    h0 = analog_eye(clean, symbols=4000, reference="adc").heights_v[0]
    hx = analog_eye(system, symbols=4000, reference="adc").heights_v[0]
    assert h0 >= 2 * h[c] - 2 * isi - tol
    assert abs(hx - (2 * h[c] - 2 * peak)) <= 2 * isi + tol, (hx, 2 * h[c] - 2 * peak, isi)


# --------------------------------------------- aggressor TX noise and jitter (both engines)
def test_aggressor_tx_noise_and_jitter_variance_counted_vs_statistical():
    """The aggressors' variance at the FFE output with their TX noise (SNR_TX 12 dB) and
    the victim's random jitter (0.1 UI rms) on them: the counted engine's time-domain
    sum against the statistical engine's terms (cursor variance + TX noise + RJ on the
    slopes). Tolerance: 4 standard errors of the counted variance (batch means); both
    new terms are each many standard errors, so leaving either out fails."""
    system = build(_cfg([dict(kind="next", model="copy", coupling_db=-12, phase_ui=0.3),
                         dict(kind="fext", model="copy", coupling_db=-16, delay_ui=2.0)],
                        "noise.rj_ui=0.1", "tx.snr_db=12"))
    link = system.link
    w, count, se = counted_ffe_variance(system)
    _, _, var, gauss = X.stat_components(link, w, 0.0, 0.0)
    es = link.level_power
    g2 = sum(float(np.sum(np.convolve(w, p.taps(p.agg.phase_ui)) ** 2)) for p in link.aggressor_pulses)
    d2 = sum(float(p.slope(p.agg.phase_ui) @ p.slope(p.agg.phase_ui)) for p in link.aggressor_pulses)
    tx_term, rj_term = link.tx_noise_sigma ** 2 * g2, 0.1 ** 2 * es * float(w @ w) * d2
    assert var == pytest.approx(es * g2, rel=1e-12)
    assert gauss == pytest.approx(tx_term + rj_term, rel=1e-12)
    assert min(tx_term, rj_term) > 8 * se
    assert abs(count - (var + gauss)) < 4 * se, (count, var + gauss, se)


def test_stat_vs_counted_with_jitter_on_aggressors():
    """A NEXT thru copy at -18 dB with random and dual-Dirac jitter and TX noise: the
    statistical BER (aggressors moved by the victim's jitter, their TX noise in) lies
    within 1.5x of the counted interval, FFE only and with a DFE."""
    for dfe in (0, 1):
        base = ["link.symbols=300000", "channel.loss_db=30", f"dfe.taps={dfe}",
                "noise.rj_ui=0.03", "noise.dd_ui=0.05", "tx.snr_db=26"]
        system = build(_cfg([dict(kind="next", model="copy", coupling_db=-16)], *base))
        r = simulate(system)
        s = StatisticalEngine(system).ber().ber
        assert r.bit_errors > 100
        assert _within(r, s), (dfe, r.ber, r.ber_ci, s)
