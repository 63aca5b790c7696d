"""A real IEEE P802.3ck channel through the whole link."""

from pathlib import Path

import numpy as np
import pytest

from serdes.channel.touchstone_io import read_sdd21
from serdes.config import Config
from serdes.engines.run import simulate
from serdes.build import build, build_link


@pytest.mark.parametrize("name, il", [
    ("ieee8023ck_KR_ortho_tracy_3ck_02_0119/DPO_4in_Meg7_THRU.s4p", 12.0),
    ("ieee8023ck_C2C_gore_3ck_02_0519/C2C_PCB_SYSVIA_12dB_thru.s4p", 12.0),
])
def test_touchstone_link(channels_dir, name, il):
    path = channels_dir / name
    cfg = Config.default().with_overrides(["channel.model=touchstone",
                                           f"channel.file={path}", "noise.rj_ui=0"])
    system = build(cfg)
    link = system.link
    # the reported IL at Nyquist is the file's, within the authors' label rounding
    assert link.il_nyquist_db == pytest.approx(il, abs=0.5)
    # the link's channel response on its grid follows the file between file points
    f, s = read_sdd21(path)
    sel = (f > 1e9) & (f < 40e9)
    h = np.interp(f[sel], link.f_hz, np.abs(link.h_channel))
    np.testing.assert_allclose(h, np.abs(s[sel]), rtol=0.02, atol=1e-3)
    # a causal pulse: nothing of note arrives before the main cursor's pre-cursor span
    p = link.pulse
    assert p.dropped_energy < 1e-3
    res = simulate(system, symbols=100_000)
    assert res.snr_db == pytest.approx(res.predicted_snr_db, abs=0.3)


# ------------------------------------------- one rule for every entry point


from serdes.cli import main  # noqa: E402
from serdes.errors import FileFormatError  # noqa: E402


def _flat_s2p(path, f_top_ghz, value=0.9, step_ghz=0.1):
    f = np.arange(0.0, f_top_ghz + step_ghz / 2, step_ghz)
    rows = [f"{x:.6g} 0 0 {value} 0 {value} 0 0 0" for x in f]
    path.write_text("# GHz S MA R 50\n" + "\n".join(rows) + "\n")
    return path


def _cut_file(src, dst, f_top_hz):
    """The Touchstone text of ``src`` with the records above ``f_top_hz`` removed."""
    out, keep = [], True
    for line in src.read_text().splitlines():
        body = line.split("!", 1)[0].split()
        if body and not body[0].startswith("#") and len(body) % 2 == 1:  # record start
            keep = float(body[0]) <= f_top_hz  # the IEEE files are in Hz
        if keep:
            out.append(line)
    dst.write_text("\n".join(out) + "\n")
    return dst


def _entry_points(tmp_path, capsys, sets):
    """Every entry point on one config: (Python exception or None, CLI stderr lines)."""
    cfg = Config.default().with_overrides(sets)
    errors = []
    for make in (lambda: build_link(cfg).pulse, lambda: simulate(build(cfg), symbols=2000)):
        with pytest.raises(FileFormatError) as ei:
            make()
        errors.append(str(ei.value))
    args = [a for s in sets for a in ("--set", s)]
    for cmd in (["run", "--set", "link.symbols=2000"],
                ["eye", "-o", str(tmp_path / "eye.png")],
                ["bathtub", "-o", str(tmp_path / "bt.png")]):
        assert main(cmd + args) == 2
        err = capsys.readouterr().err
        assert err.count("\n") == 1 and "Traceback" not in err, err
        errors.append(err)
    return errors


def test_band_limited_file_is_refused_everywhere(tmp_path, capsys):
    path = _flat_s2p(tmp_path / "to10g.s2p", 10.0)
    sets = ["channel.model=touchstone", f"channel.file={path}"]
    for msg in _entry_points(tmp_path, capsys, sets):
        assert "to10g.s2p" in msg and "10 GHz" in msg and "26.5625 GHz" in msg, msg
    # a lower symbol rate whose Nyquist frequency the data reach is fine
    cfg = Config.default().with_overrides(sets + ["link.symbol_rate_hz=20e9"])
    assert build_link(cfg).il_nyquist_db == pytest.approx(-20 * np.log10(0.9), abs=1e-9)


def test_real_file_cut_below_nyquist_is_refused(tmp_path, capsys, channels_dir):
    src = channels_dir / "ieee8023ck_KR_ortho_tracy_3ck_02_0119" / "DPO_4in_Meg7_THRU.s4p"
    cut = _cut_file(src, tmp_path / "DPO_4in_to10G.s4p", 10e9)
    sets = ["channel.model=touchstone", f"channel.file={cut}"]
    for msg in _entry_points(tmp_path, capsys, sets):
        assert "DPO_4in_to10G.s4p" in msg and "10 GHz" in msg and "26.5625" in msg, msg


def test_port_mapping_that_is_not_a_thru_is_refused(tmp_path, capsys, channels_dir):
    src = channels_dir / "ieee8023ck_KR_ortho_tracy_3ck_02_0119" / "DPO_4in_Meg7_THRU.s4p"
    sets = ["channel.model=touchstone", f"channel.file={src}", "channel.ports=13,24"]
    for msg in _entry_points(tmp_path, capsys, sets):
        assert "DPO_4in_Meg7_THRU.s4p" in msg and "not a thru" in msg and "-49.5 dB" in msg, msg


def test_relative_channel_file_in_toml_is_relative_to_the_toml(tmp_path, monkeypatch, capsys):
    sub = tmp_path / "configs"
    sub.mkdir()
    _flat_s2p(sub / "chan.s2p", 60.0)
    toml = sub / "link.toml"
    toml.write_text('[channel]\nmodel = "touchstone"\nfile = "chan.s2p"\n')
    monkeypatch.chdir(tmp_path)  # not the TOML's folder
    cfg = Config.from_toml("configs/link.toml")
    assert Path(cfg["channel"]["file"]) == (sub / "chan.s2p").resolve()
    assert build_link(cfg).il_nyquist_db == pytest.approx(-20 * np.log10(0.9), abs=1e-9)
    assert main(["run", "configs/link.toml", "--set", "link.symbols=2000"]) == 0
    capsys.readouterr()
    # --set on the command line stays relative to the current directory
    assert main(["run", "configs/link.toml", "--set", "channel.file=chan.s2p",
                 "--set", "link.symbols=2000"]) == 2
    assert "not found" in capsys.readouterr().err
    assert main(["run", "configs/link.toml", "--set", "channel.file=configs/chan.s2p",
                 "--set", "link.symbols=2000"]) == 0
