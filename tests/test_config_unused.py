"""Settings the link does not use (serdes.config_unused): every rule checked by
experiment. For each rule, on a config where the rule says the key is dead, changing the
key leaves the run's report unchanged (the rule is true), and on a config where the rule
does not apply, the same change moves the report (so the comparison can see the key)."""

from __future__ import annotations

import json
import subprocess
import sys

import numpy as np
import pytest

from serdes.channel.loss import LossLine
from serdes.commands.run import run_link
from serdes.config import Config
from serdes.config_unused import RULES, unused_settings
from serdes.schema import SCHEMA

FB = 53.125e9
BASE = ["ctle.auto=false", "link.symbols=20000", "link.target_errors=0"]
SETTINGS_ECHO = ("receiver",)            # the report's echo of the settings, not a result
TIMES = ("elapsed_s", "symbols_per_s")


def _line(loss_db, f):
    return LossLine(loss_db=loss_db, f_ref_hz=FB / 2.0).response(f)


@pytest.fixture(scope="module")
def files(tmp_path_factory):
    """A 2-port loss line (20 dB) and a 4-port file whose 12,34 and 13,24 thrus differ."""
    d = tmp_path_factory.mktemp("unused")
    f = np.arange(0.0, 2.0 * FB + 5e6, 1e8)
    s2p, s4p = d / "line.s2p", d / "pair.s4p"
    with open(s2p, "w") as fh:
        fh.write("# Hz S RI R 50\n")
        for fi, h in zip(f, _line(20.0, f)):
            fh.write(f"{fi:.1f} 0 0 {h.real:.15e} {h.imag:.15e} {h.real:.15e} {h.imag:.15e} 0 0\n")
    with open(s4p, "w") as fh:
        fh.write("# Hz S RI R 50\n")
        # 0.45: passive (the largest singular value of S is |a| + |b| <= 0.9)
        for fi, a, b in zip(f, 0.45 * _line(18.0, f), 0.45 * _line(28.0, f)):
            s = np.zeros((4, 4), complex)
            s[1, 0] = s[0, 1] = s[3, 2] = s[2, 3] = a      # the thrus of 12,34
            s[2, 0] = s[0, 2] = s[3, 1] = s[1, 3] = b      # the thrus of 13,24
            vals = [f"{v.real:.15e} {v.imag:.15e}" for v in s.ravel()]
            fh.write(f"{fi:.1f} " + "\n".join(" ".join(vals[r * 4:(r + 1) * 4])
                                              for r in range(4)) + "\n")
    return {"s2p": str(s2p), "s4p": str(s4p)}


def _cfg(overrides, aggressors=()):
    cfg = Config.default().with_overrides(BASE + list(overrides))
    return cfg.with_aggressors(aggressors) if aggressors else cfg


def _result(cfg) -> str:
    """The run's report without timings and without the settings it echoes."""
    r = run_link(cfg, stat=False, eye=False)
    for k in SETTINGS_ECHO + TIMES:
        r.pop(k, None)
    return json.dumps(r, sort_keys=True, default=str)


FEXT_COPY = ({"kind": "fext", "model": "copy", "coupling_db": -25.0},)
NEXT_COPY = ({"kind": "next", "model": "copy", "coupling_db": -25.0},)
SEG = ["reflections.segment_lengths_mm=[10.0]", "reflections.segment_z0_ohm=[45.0]",
       "reflections.segment_loss_db_per_mm=[0.05]"]
STUB = ["reflections.stub_positions=[0]", "reflections.stub_lengths_mm=[1.0]",
        "reflections.stub_loss_db_per_mm=[0.05]"]
ECHO = ["reflections.echo_delay_ui=30", "reflections.echo_db=-12"]
RIPPLE = ["supply.ripple_mv=[20.0]", "supply.ripple_hz=[3.1e6]"]
LANES = ["adc.lanes=4", "adc.offset_rms_v=0.01"]
CAL = LANES + ["adc_cal.enabled=true", "adc_cal.settle_symbols=2000"]

# (the change, a config where it is dead, a config where it is not); "{s2p}"/"{s4p}":
# the module's files; a third element of a side: its [[aggressor]] tables
CASES = [
    (["channel.file={s2p}"], [], ["channel.model=touchstone", "channel.file={s4p}"]),
    (["channel.ports=13,24"], [], ["channel.model=touchstone", "channel.file={s4p}"]),
    (["channel.loss_db=20"], ["channel.model=ideal"], []),
    (["channel.skin_fraction=0.6"], ["channel.model=ideal"], []),
    (["ctle.g_dc_db=-4"], ["ctle.auto=true"], []),
    (["ctle.g_dc2_db=-2"], ["ctle.model=none"], []),
    (["ctle.f_z_hz=12e9"], ["ctle.model=none"], []),
    (["ctle.f_p1_hz=30e9"], ["ctle.model=none"], []),
    (["ctle.f_p2_hz=30e9"], ["ctle.model=none"], []),
    (["ctle.f_lf_hz=2e9"], ["ctle.model=none"], []),
    (["ctle.poles_hz=[-10e9, -30e9]"], [], ["ctle.model=zpk", "ctle.poles_hz=[-20e9, -40e9]",
                                             "ctle.zeros_hz=[-4e9]"]),
    (["ctle.zeros_hz=[-6e9]"], [], ["ctle.model=zpk", "ctle.poles_hz=[-20e9, -40e9]"]),
    (["ctle.gain=2.0"], [], ["ctle.model=zpk", "ctle.poles_hz=[-20e9, -40e9]",
                             "ctle.zeros_hz=[-4e9]"]),
    (["afe.f_r=0.5"], [], ["afe.model=both"]),
    (["afe.peaking_m=1.0"], ["afe.model=butterworth"], []),
    (["afe.bandwidth_hz=30e9"], ["afe.model=butterworth"], []),
    (["package.c_b_nf=1e-4"], [], ["package.preset=802.3ck-kr"]),
    (["package.c_p_nf=2e-4"], [], ["package.preset=802.3ck-kr"]),
    (["package.r_d_ohm=45"], [], ["package.preset=802.3ck-kr"]),
    (["package.z_p_tx_mm=40"], [], ["package.preset=802.3ck-kr"]),
    (["package.z_p_rx_mm=40"], [], ["package.preset=802.3ck-kr"]),
    (["crosstalk.a_fe_v=0.2"], [], ([], FEXT_COPY)),
    (["crosstalk.a_ne_v=0.2"], ([], FEXT_COPY), ([], NEXT_COPY)),
    (["noise.sj_hz=3.1e6"], [], ["noise.sj_ui=0.1"]),
    (["tx_jitter.sj_hz=3.1e6"], [], ["tx_jitter.sj_ui=0.1"]),
    (["cdr.bandwidth_hz=12e6"], [], ["cdr.mode=bb", "cdr.warmup_symbols=5000"]),
    (["cdr.initial_phase_ui=0.2"], [], ["cdr.mode=bb", "cdr.warmup_symbols=5000"]),
    (["cdr.latency_ui=4"], [], ["cdr.mode=mm", "cdr.warmup_symbols=5000"]),
    (["cdr.lock=mm"], [], ["cdr.mode=mm", "cdr.warmup_symbols=5000"]),
    (["cdr.warmup_symbols=1000"], [], ["cdr.mode=mm"]),
    (["adc.offset_rms_v=0.02"], [], ["adc.lanes=4"]),
    (["adc.gain_rms=0.05"], [], ["adc.lanes=4"]),
    (["adc.skew_rms_s=3e-13"], [], ["adc.lanes=4"]),
    (["adc.bw_rms_rel=0.2"], ["adc.bw_hz=40e9"], ["adc.bw_hz=40e9", "adc.lanes=4"]),
    (["adc.mismatch_seed=7"], ["adc.offset_rms_v=0.01"], LANES),
    (["adc_cal.mu_offset=1e-2"], LANES, CAL),
    (["adc_cal.mu_gain=1e-2"], LANES, CAL + ["adc.gain_rms=0.05"]),
    (["adc_cal.settle_symbols=500"], LANES, CAL),
    (RIPPLE, [], ["supply.delay_ps_per_mv=0.2"]),
    (["supply.psrr_db=10"], RIPPLE, RIPPLE + ["supply.delay_ps_per_mv=0.2"]),
    (["supply.gain_pct_per_mv=0.5"], [], RIPPLE),
    (["dfe.limit=0.2"], ["dfe.taps=0"], []),
    (["eq.mu=0.05"], [], ["eq.mode=lms", "eq.train_symbols=5000"]),
    (["eq.train_symbols=100000"], [], ["eq.mode=lms", "link.symbols=300000"]),
    (["mlse.memory=2"], [], ["eq.detector=mlse"]),
    (["mlse.whitening=predictor"], [], ["eq.detector=mlse"]),
    (["mlse.traceback=4"], [], ["eq.detector=mlse"]),
    (["reflections.segment_eps_r=[3.0]"], [], SEG),
    (["reflections.segment_loss_db_per_mm=[0.2]"], [], SEG),
    (["reflections.stub_z0_ohm=[30.0]"], [], STUB),
    (["reflections.stub_eps_r=[3.0]"], [], STUB),
    (["reflections.stub_loss_db_per_mm=[0.2]"], [], STUB),
    (["reflections.z_ref_ohm=40"], [], SEG),
    (["reflections.loss_ref_hz=10e9"], [], SEG),
    (["reflections.echo_db=-10"], [], ECHO),
    (["reflections.echo_polarity=negative"], [], ECHO),
    (["rc.span_ui=20"], [], ["rc.taps=2"] + ECHO),
    (["rc.mode=adaptive"], [], ["rc.taps=2"] + ECHO),
    (["rc.mu=0.05"], ["rc.taps=2"] + ECHO, ["rc.taps=2", "rc.mode=adaptive"] + ECHO),
    (["rc.search_symbols=2000"], ["rc.taps=2"] + ECHO,
     ["rc.taps=2", "rc.mode=adaptive"] + ECHO),
    (["fec.interleave=1"], [], ["fec.mode=kp4", "noise.eta0_v2_per_ghz=2e-7"]),
    (["fec.target_post_fec_ber=1e-15"], [], ["fec.mode=kp4"]),
]


def _side(side, files):
    overrides, aggressors = side if isinstance(side, tuple) else (side, ())
    return [o.format(**files) for o in overrides], aggressors


@pytest.mark.parametrize("change,dead,alive", CASES, ids=[";".join(c[0]) for c in CASES])
def test_a_key_said_unused_does_not_move_the_report(change, dead, alive, files):
    change = [o.format(**files) for o in change]
    keys = {c.split("=")[0] for c in change}
    over, aggs = _side(dead, files)
    base, changed = _cfg(over, aggs), _cfg(over + change, aggs)
    assert keys <= {u.key for u in unused_settings(changed)}
    assert _result(changed) == _result(base)
    over, aggs = _side(alive, files)
    base, changed = _cfg(over, aggs), _cfg(over + change, aggs)
    assert not keys & {u.key for u in unused_settings(changed)}
    assert _result(changed) != _result(base)


def test_every_rule_key_has_a_case():
    covered = {c.split("=")[0] for case in CASES for c in case[0]}
    ruled = {f"{s}.{k}" for s, keys, _ in RULES for k in keys}
    not_cased = ruled - covered
    # the rest share their rule with a case above (same section, same rule function)
    for key in not_cased:
        section, name = key.split(".")
        rule = next(r for s, ks, r in RULES if s == section and name in ks)
        assert any(f"{section}.{k}" in covered for s, ks, r in RULES if r is rule
                   for k in ks), key


def test_the_default_link_and_the_examples_have_none():
    assert unused_settings(Config.default()) == []


def test_aggressor_keys_of_the_other_model(files):
    cfg = _cfg([], ({"kind": "fext", "model": "copy", "file": files["s2p"]},
                    {"kind": "next", "model": "file", "file": files["s4p"],
                     "coupling_db": -20.0}))
    assert [(u.key, u.why) for u in unused_settings(cfg)] == [
        ("aggressor[0].file", "aggressor[0].model = 'copy'"),
        ("aggressor[1].coupling_db", "aggressor[1].model = 'file'")]
    # a copy aggressor's file is never read: a file that does not exist runs the same
    gone = _cfg([], ({"kind": "fext", "model": "copy", "file": "/no/such.s4p"},))
    assert _result(gone) == _result(_cfg([], ({"kind": "fext", "model": "copy"},)))


def test_channel_ports_is_used_by_an_aggressor_file(files):
    aggs = ({"kind": "fext", "model": "file", "file": files["s4p"]},)
    cfg = _cfg(["channel.ports=13,24"], aggs)
    assert "channel.ports" not in {u.key for u in unused_settings(cfg)}
    assert _result(cfg) != _result(_cfg([], aggs))


def test_the_cli_warns_and_the_json_lists_them(files):
    cmd = [sys.executable, "-m", "serdes.cli", "run", "--json", "--no-stat", "--no-progress",
           "--set", "link.symbols=2000", "--set", f"channel.file={files['s2p']}",
           "--set", "ctle.g_dc_db=-3"]
    r = subprocess.run(cmd, capture_output=True, text=True, timeout=300)
    assert r.returncode == 0, r.stderr
    warned = [ln for ln in r.stderr.splitlines() if "is not used" in ln]
    assert len(warned) == 2 and "channel.model = 'loss'" in warned[0], r.stderr
    assert "ctle.auto = true" in warned[1]
    got = json.loads(r.stdout)["unused_settings"]
    assert [u["key"] for u in got] == ["channel.file", "ctle.g_dc_db"]
    assert got[1]["value"] == -3.0


def test_schema_sections_of_the_rules_exist():
    for section, keys, _ in RULES:
        assert set(keys) <= set(SCHEMA[section]), (section, keys)


def _sweep(tmp_path, capsys, *args):
    from serdes.cli import main as cli_main

    rc = cli_main(["sweep", "--set", "link.symbols=2000", "--set", "ctle.auto=false",
                   "--workers", "0", "--no-progress", "--out", str(tmp_path / "s.csv")]
                  + list(args))
    assert rc == 0
    return [ln for ln in capsys.readouterr().err.splitlines() if "is not used" in ln]


def test_a_sweep_warns_of_settings_no_point_uses(tmp_path, capsys, files):
    # an axis no point uses: every point gives the same result (one at the default value)
    got = _sweep(tmp_path, capsys, "--grid", "channel.loss_db=20,25",
                 "--set", "channel.model=ideal")
    assert got == ["serdes: warning: channel.loss_db (swept) is not used at any point of the "
                   "sweep: channel.model = 'ideal'"]
    rows = (tmp_path / "s.csv").read_text().splitlines()
    assert len(rows) == 3


def test_a_sweep_does_not_warn_of_a_setting_some_point_uses(tmp_path, capsys, files):
    got = _sweep(tmp_path, capsys, "--grid", "channel.model=loss,touchstone",
                 "--set", f"channel.file={files['s2p']}", "--set", "eq.mu=0.02")
    assert got == ["serdes: warning: eq.mu = 0.02 is not used at any point of the sweep: "
                   "eq.mode = 'mmse'"]
