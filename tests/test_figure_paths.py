"""Every command that writes a figure (and jtol's --csv) checks its path before any work: a missing folder,
a folder given as the file, or a format matplotlib does not write gives one line and
exit 2 at once (`serdes com -o` and `serdes jtol --plot` had ended a full run in a
traceback, the others in one line after the whole simulation)."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from serdes.cli import main as cli

CHANNELS = Path(__file__).resolve().parents[2] / "shared" / "channels"
THRU = CHANNELS / "ieee8023ck_KR_ortho_tracy_3ck_02_0119" / "DPO_4in_Meg7_THRU.s4p"


def _commands(tmp_path):
    csv = tmp_path / "r.csv"
    csv.write_text("channel.loss_db,status,ber\n20,ok,1e-6\n22,ok,1e-5\n")
    yield ["eye", "--set", "link.symbols=2000", "-o"]
    yield ["bathtub", "-o"]
    yield ["adc", "--fin", "1e9", "--plot"]
    yield ["plot", str(csv), "-o"]
    yield ["jtol", "--freqs", "1e6", "--plot"]
    if THRU.exists():
        yield ["com", str(THRU), "--preset", "802.3ck-kr", "-o"]


@pytest.mark.parametrize("bad, message", [
    ("missing/x.png", "folder {tmp}/missing does not exist"),
    (".", "it is a folder"),
    ("x.xyz", "format 'xyz' is not supported (supported formats: "),
])
def test_a_bad_figure_path_stops_every_command_before_its_work(tmp_path, capsys,
                                                               monkeypatch, bad, message):
    import serdes.com.core
    import serdes.commands.jtol
    import serdes.engines.run

    def no_work(*a, **k):
        raise AssertionError("the command started its work")

    monkeypatch.setattr(serdes.com.core, "compute_com", no_work)
    monkeypatch.setattr(serdes.commands.jtol, "jtol_report", no_work)
    monkeypatch.setattr(serdes.engines.run, "simulate", no_work)
    path = str(tmp_path / bad) if bad != "." else str(tmp_path)
    for cmd in _commands(tmp_path):
        assert cli(cmd + [path]) == 2, cmd
        err = capsys.readouterr().err
        assert err.count("\n") == 1 and err.startswith(f"serdes: error: cannot write {path}")
        assert message.format(tmp=tmp_path) in err, (cmd, err)


@pytest.mark.parametrize("bad, message", [("missing/x.csv", "does not exist"),
                                          (".", "it is a folder")])
def test_jtol_checks_its_csv_path_before_the_run(tmp_path, capsys, monkeypatch, bad,
                                                  message):
    import serdes.commands.jtol

    monkeypatch.setattr(serdes.commands.jtol, "jtol_report",
                        lambda *a, **k: pytest.fail("the run started"))
    path = str(tmp_path / bad) if bad != "." else str(tmp_path)
    assert cli(["jtol", "--freqs", "1e6", "--csv", path]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and message in err


@pytest.mark.skipif(os.geteuid() == 0, reason="root writes into any folder")
def test_a_folder_without_write_permission(tmp_path, capsys):
    ro = tmp_path / "ro"
    ro.mkdir()
    ro.chmod(0o500)
    try:
        assert cli(["eye", "-o", str(ro / "x.png")]) == 2
        assert "is not writable" in capsys.readouterr().err
    finally:
        ro.chmod(0o700)
