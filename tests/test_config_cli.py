"""Configuration validation and the `serdes run` command: one clear line, exit code 2."""

import json
import subprocess
import sys

import pytest

from serdes.cli import main
from serdes.config import SCHEMA, Config
from serdes.errors import ConfigError


def test_default_round_trips_through_toml(tmp_path):
    cfg = Config.default().with_overrides(["channel.loss_db=30", "tx.ffe=[0, -0.1, 0.8, -0.1]",
                                           "tx.main=2", "link.precoding=true"])
    path = tmp_path / "link.toml"
    path.write_text(cfg.to_toml())
    assert Config.from_toml(path) == cfg


def test_printed_config_names_the_same_files_from_any_folder(tmp_path, capsys,
                                                            monkeypatch):
    """`serdes config --set channel.file=REL --fext REL > elsewhere/x.toml`: both files
    are printed absolute, so the TOML names them wherever it is saved (a TOML's relative
    paths are taken from its own folder; the channel file was printed as typed and its
    run failed with "file not found" from another folder, while --fext was absolute)."""
    here, away = tmp_path / "here", tmp_path / "away"
    (here / "ch").mkdir(parents=True)
    away.mkdir()
    (here / "ch" / "thru.s4p").write_text("x")
    (here / "ch" / "fext.s4p").write_text("x")
    monkeypatch.chdir(here)
    assert main(["config", "--set", "channel.model=touchstone",
                 "--set", "channel.file=ch/thru.s4p", "--fext", "ch/fext.s4p"]) == 0
    (away / "x.toml").write_text(capsys.readouterr().out)
    cfg = Config.from_toml(away / "x.toml")
    assert cfg["channel"]["file"] == str(here / "ch" / "thru.s4p")
    assert [a["file"] for a in cfg.aggressors] == [str(here / "ch" / "fext.s4p")]


def test_every_key_has_a_valid_default():
    cfg = Config.default()
    for section, keys in SCHEMA.items():
        for key, field in keys.items():
            assert field.check(f"{section}.{key}", cfg[section][key]) == cfg[section][key]


@pytest.mark.parametrize("override, words", [
    ("channel.los_db=3", ["channel.los_db", "loss_db"]),
    ("chanel.loss_db=3", ["[chanel]", "channel"]),
    ("adc.bits=99", ["adc.bits", "[0, 16]"]),
    ("adc.bits=7.5", ["adc.bits", "integer"]),
    ("channel.loss_db=abc", ["channel.loss_db", "number"]),
    ("channel.model=coax", ["channel.model", "'loss'"]),
    ("tx.ffe=[0.1, 0.2, 0.3, 0.9]", ["tx.ffe", "sum of |taps|"]),
    ("ffe.pre=30", ["ffe.pre", "ffe.taps"]),
    ("link.precoding=3", ["link.precoding", "true or false, or 'auto'"]),
    ("noise.rj_ui=nan", ["noise.rj_ui"]),
    ("loss_db=3", ["section.key=value"]),
    ("reflections.echo_delay_ui=100", ["link.pulse_ui to at least 144"]),
    # the pulse may hold at most half the window: both keys, values that then run
    ("reflections.echo_delay_ui=2000", ["link.pulse_ui to at least 2688",
                                        "link.window_ui to at least 8192"]),
])
def test_bad_values_name_the_key_and_the_range(override, words):
    with pytest.raises(ConfigError) as exc:
        Config.default().with_overrides([override])
    msg = str(exc.value)
    assert "\n" not in msg
    for w in words:
        assert w in msg


def test_tx_sj_needs_a_frequency():
    """TX SJ at 0 Hz (a static offset) ended a CDR run in a NaN traceback; it is refused
    as noise.sj_hz = 0 is."""
    with pytest.raises(ConfigError, match="tx_jitter.sj_hz must be > 0 when tx_jitter.sj_ui"):
        Config.default().with_overrides(["tx_jitter.sj_ui=0.5", "tx_jitter.sj_hz=0"])


def test_a_path_key_given_a_number_asks_for_a_string():
    with pytest.raises(ConfigError) as exc:
        Config.default().with_overrides(["channel.file=3"])
    assert "expected a string (a file path)" in str(exc.value)
    assert "number" not in str(exc.value).split("expected")[1]
    for section, keys in SCHEMA.items():
        for key, field in keys.items():
            if field.kind is str:
                assert "number" not in field.allowed(), f"{section}.{key}"


def test_unknown_key_in_toml_file(tmp_path):
    p = tmp_path / "bad.toml"
    p.write_text("[adc]\nbitz = 6\n")
    with pytest.raises(ConfigError, match="adc.bitz"):
        Config.from_toml(p)


def _cli(*args):
    return subprocess.run([sys.executable, "-m", "serdes.cli", *args], capture_output=True,
                          text=True, timeout=300)


@pytest.mark.parametrize("args, words", [
    (["run", "--set", "adc.bitz=6"], ["adc.bitz"]),
    (["run", "--set", "channel.loss_db=-3"], ["channel.loss_db", "[0, 60]"]),
    (["run", "missing.toml"], ["missing.toml"]),
    (["run", "--set", "channel.model=touchstone", "--set", "channel.file=/no/such.s4p"],
     ["/no/such.s4p"]),
    (["run", "--bogus"], ["--bogus"]),
])
def test_cli_errors_are_one_line_with_exit_code_2(args, words):
    r = _cli(*args)
    assert r.returncode == 2
    assert "Traceback" not in r.stderr
    lines = r.stderr.strip().splitlines()
    assert len(lines) == 1 or args == ["run", "--bogus"], r.stderr
    for w in words:
        assert w in r.stderr


def test_cli_malformed_files(tmp_path):
    toml = tmp_path / "broken.toml"
    toml.write_text("[link\nsymbols = 3")
    r = _cli("run", str(toml))
    assert r.returncode == 2 and "broken.toml" in r.stderr and "Traceback" not in r.stderr
    s4p = tmp_path / "garbage.s4p"
    s4p.write_text("this is not touchstone\n1 2 3\n")
    r = _cli("run", "--set", "channel.model=touchstone", "--set", f"channel.file={s4p}")
    assert r.returncode == 2 and "garbage.s4p" in r.stderr and "Traceback" not in r.stderr


def test_run_json_report(capsys):
    assert main(["run", "--set", "link.symbols=40000", "--json", "--seed", "3"]) == 0
    out = json.loads(capsys.readouterr().out)
    for key in ("ber", "ber_ci", "ser", "bits", "bit_errors", "symbols", "il_nyquist_db",
                "snr_db", "ffe_taps", "dfe_taps", "elapsed_s", "symbols_per_s"):
        assert key in out
    assert len(out["ber_ci"]) == 2 and out["ber_ci"][0] <= out["ber"] <= out["ber_ci"][1]
    assert out["symbols"] > 30_000 and out["bits"] == 2 * out["symbols"]
    assert out["il_nyquist_db"] == 25.0 and len(out["ffe_taps"]) == 24
    assert out["seed"] == 3


def test_run_summary_is_readable(capsys):
    assert main(["run", "--set", "link.symbols=20000"]) == 0
    text = capsys.readouterr().out
    for word in ("IL at Nyquist", "BER", "95% CI", "SNR", "FFE", "DFE", "symbols/s"):
        assert word.lower() in text.lower()


def test_run_summary_says_what_the_stat_ber_leaves_out(capsys):
    """A TX ppm offset without clock recovery: the count walks through the UI (BER ~0.4)
    while the statistical BER leaves the walk out; the text says so (the note was in
    --json's stat.jitter_note only, beside a stat BER of 4e-18)."""
    assert main(["run", "--set", "link.symbols=20000", "--set", "tx_jitter.ppm=50"]) == 0
    text = capsys.readouterr().out
    note = [x for x in text.splitlines() if x.startswith("note")]
    assert len(note) == 1 and "leaves out the frequency offset" in note[0]


def test_importing_serdes_does_not_import_matplotlib():
    code = "import sys, serdes, serdes.cli, serdes.link, serdes.engines.run; " \
           "print('matplotlib' in sys.modules)"
    r = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert r.stdout.strip() == "False"


def test_channel_reflections_table_is_the_reflections_section(tmp_path):
    """[channel.reflections] (as the issue tracker and users write it) and --set
    channel.reflections.KEY mean the [reflections] section."""
    p = tmp_path / "echo.toml"
    p.write_text("[link]\npulse_ui = 96\n[channel]\nloss_db = 20\n[channel.reflections]\n"
                 "echo_delay_ui = 60\necho_db = -20\n")
    cfg = Config.from_toml(p)
    assert cfg["channel"]["loss_db"] == 20.0
    assert cfg["reflections"]["echo_delay_ui"] == 60.0 and cfg["reflections"]["echo_db"] == -20
    cfg2 = Config.default().with_overrides(["link.pulse_ui=96",
                                            "channel.reflections.echo_delay_ui=60",
                                            "channel.loss_db=20", "reflections.echo_db=-20"])
    assert cfg2 == cfg
    p.write_text("[channel.reflections]\necho_dly = 60\n")
    with pytest.raises(ConfigError, match="reflections.echo_dly"):
        Config.from_toml(p)


def test_json_outputs_are_strict_json(tmp_path):
    """No NaN/Infinity tokens: a quantity that does not apply is null."""
    def strict(text):
        return json.loads(text, parse_constant=lambda c: pytest.fail(f"non-strict {c}"))

    r = _cli("run", "--set", "link.symbols=20000", "--json")
    assert r.returncode == 0, r.stderr
    strict(r.stdout)
    r = _cli("bathtub", "--set", "link.symbols=20000", "-o", str(tmp_path / "b.png"), "--json")
    assert r.returncode == 0, r.stderr
    strict(r.stdout.strip().splitlines()[-1])
