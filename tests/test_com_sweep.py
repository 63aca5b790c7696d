"""COM columns of `serdes sweep --com`: each point's COM equals `compute_com` run
directly on the same channel written to a Touchstone file (an independent path: the
file writer and parser instead of the config's synthetic line), and falls with loss."""

from __future__ import annotations

import csv
import json
import os
from pathlib import Path

import numpy as np
import pytest

from serdes.channel.loss import LossLine
from serdes.cli import main as cli_main
from serdes.com.core import compute_com

FB = 53.125e9
SMALL_GRID = ["g_dc=-10,-6", "g_dc2=0", "tx_min=0,0,-0.1,0", "tx_max=0,0,0,0"]
COM_ARGS = ["--com", "802.3ck-kr"] + [a for s in SMALL_GRID for a in ("--com-set", s)]
CHANNELS = Path(os.environ.get("SERDES_CHANNELS", "/work/shared/channels"))


def _write_line(path, loss_db):
    f = np.arange(0.0, 2.0 * FB + 5e6, 1e7)
    h = LossLine(loss_db=loss_db, f_ref_hz=FB / 2.0).response(f)
    with open(path, "w") as fh:
        fh.write("# Hz S RI R 50\n")
        for fi, hi in zip(f, h):
            fh.write(f"{fi:.1f} 0 0 {hi.real:.15e} {hi.imag:.15e} "
                     f"{hi.real:.15e} {hi.imag:.15e} 0 0\n")
    return path


def _rows(path):
    with open(path, newline="") as fh:
        return list(csv.DictReader(fh))


def test_sweep_com_columns_equal_direct_com(tmp_path, capsys):
    out = tmp_path / "com.csv"
    rc = cli_main(["sweep", "--grid", "channel.loss_db=16,26", "--set", "link.symbols=4000",
                   "--set", "channel.model=loss", "--set", "link.symbol_rate_hz=53.125e9",
                   "--workers", "0", "--no-progress", "--out", str(out)] + COM_ARGS)
    assert rc == 0
    capsys.readouterr()
    rows = _rows(out)
    assert [float(r["channel.loss_db"]) for r in rows] == [16.0, 26.0]
    for r in rows:
        assert r["status"] == "ok", r["message"]
        direct = compute_com(_write_line(tmp_path / "l.s2p", float(r["channel.loss_db"])),
                             preset="802.3ck-kr", overrides=SMALL_GRID)
        worst = min(direct.cases, key=lambda c: c.com_db)
        assert float(r["com_db"]) == pytest.approx(worst.com_db, abs=1e-6)
        assert float(r["com_a_s_mv"]) == pytest.approx(1e3 * worst.a_s_v, rel=1e-6)
        assert float(r["com_eye_height_mv"]) == pytest.approx(1e3 * worst.eye_height_v,
                                                              abs=1e-6)
        assert int(r["com_case"]) == worst.package_case
        assert r["ber"] != ""                      # the counted link ran too
    assert float(rows[1]["com_db"]) < float(rows[0]["com_db"]) - 3


def test_sweep_com_bad_options_one_line(tmp_path, capsys):
    base = ["sweep", "--grid", "channel.loss_db=16", "--workers", "0", "--out",
            str(tmp_path / "x.csv")]
    assert cli_main(base + ["--com", "nope"]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and "nope" in err[0] and "802.3ck-kr" in err[0] and "--com " in err[0]
    assert cli_main(base + ["--com-set", "der0=1e-5"]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and "--com-set" in err[0]
    assert not (tmp_path / "x.csv").exists()


@pytest.mark.skipif(not (CHANNELS / "ieee8023ck_KR_ortho_tracy_3ck_02_0119").is_dir(),
                    reason="IEEE 802.3ck channel files not present (/work/shared/channels)")
def test_sweep_com_over_channel_files(tmp_path, capsys):
    kr = CHANNELS / "ieee8023ck_KR_ortho_tracy_3ck_02_0119"
    files = [kr / "DPO_4in_Meg7_THRU.s4p", kr / "DPO_12in_Meg7_THRU.s4p"]
    out = tmp_path / "files.csv"
    rc = cli_main(["sweep", "--grid", "channel.file=" + ",".join(f'"{f}"' for f in files),
                   "--set", "channel.model=touchstone", "--set", f'channel.file="{files[0]}"',
                   "--set", "link.symbols=4000",
                   "--set", "link.symbol_rate_hz=53.125e9", "--workers", "0",
                   "--no-progress", "--json", "--out", str(out)] + COM_ARGS)
    assert rc == 0
    d = json.loads(capsys.readouterr().out)
    for r, f in zip(d["rows"], files):
        direct = compute_com(f, preset="802.3ck-kr", overrides=SMALL_GRID)
        assert r["com_db"] == pytest.approx(direct.com_db, abs=1e-9)


def _counting_com(monkeypatch, fail_at=None):
    """compute_com counted per call (and failing for one loss line, ``fail_at`` dB)."""
    import serdes.com.core as core

    calls, real = [], core.compute_com

    def counted(thru, *args, **kwargs):
        calls.append(getattr(thru, "path", thru))
        if fail_at is not None and getattr(thru, "path", "") == f"loss line {fail_at:g} dB":
            raise ValueError("no COM for this one")
        return real(thru, *args, **kwargs)

    monkeypatch.setattr(core, "compute_com", counted)
    return calls


def test_sweep_computes_each_channel_sets_com_once(tmp_path, capsys, monkeypatch):
    """Points that differ only in the receiver share their channel set: its COM is
    computed once and every one of them gets its columns (those of a sweep over the
    channel alone, where each point has a set of its own)."""
    calls = _counting_com(monkeypatch)
    common = ["--set", "link.symbols=4000", "--set", "channel.model=loss", "--workers", "0",
              "--no-progress", "--json"] + COM_ARGS
    assert cli_main(["sweep", "--grid", "channel.loss_db=16,26", "--grid", "ffe.taps=8,12,16",
                     "--out", str(tmp_path / "a.csv")] + common) == 0
    rows = json.loads(capsys.readouterr().out)["rows"]
    assert sorted(calls) == ["loss line 16 dB", "loss line 26 dB"]
    assert len(rows) == 6 and all(r["status"] == "ok" for r in rows)
    calls.clear()
    assert cli_main(["sweep", "--grid", "channel.loss_db=16,26",
                     "--out", str(tmp_path / "b.csv")] + common) == 0
    alone = {r["channel.loss_db"]: r for r in json.loads(capsys.readouterr().out)["rows"]}
    assert len(calls) == 2
    from serdes.com.columns import COM_COLUMNS

    for r in rows:
        for c in COM_COLUMNS:
            if c != "com_elapsed_s":
                assert r[c] == alone[r["channel.loss_db"]][c], c
    # resumed with one more receiver: only the new points' channel sets are computed
    calls.clear()
    assert cli_main(["sweep", "--grid", "channel.loss_db=16,26", "--grid", "ffe.taps=8,12,16,20",
                     "--out", str(tmp_path / "a.csv")] + common) == 0
    capsys.readouterr()
    assert sorted(calls) == ["loss line 16 dB", "loss line 26 dB"]


def test_sweep_com_error_goes_to_the_points_of_its_channel_set(tmp_path, capsys,
                                                               monkeypatch):
    calls = _counting_com(monkeypatch, fail_at=26)
    assert cli_main(["sweep", "--grid", "channel.loss_db=16,26", "--grid", "ffe.taps=8,12",
                     "--set", "link.symbols=4000", "--set", "channel.model=loss",
                     "--workers", "0", "--no-progress", "--json",
                     "--out", str(tmp_path / "e.csv")] + COM_ARGS) == 0
    rows = json.loads(capsys.readouterr().out)["rows"]
    assert len(calls) == 2
    for r in rows:
        if r["channel.loss_db"] == 26:
            assert r["status"] == "error" and "no COM for this one" in r["message"]
            assert r["com_db"] is None and r["ber"] is not None   # the run's columns kept
        else:
            assert r["status"] == "ok" and r["com_db"] is not None


def test_sweep_com_on_worker_processes_equals_in_process(tmp_path, capsys):
    """The COM pass and the points' pass on the same two worker processes give the
    rows of the in-process sweep."""
    got = {}
    for workers in ("0", "2"):
        assert cli_main(["sweep", "--grid", "channel.loss_db=16,26", "--grid", "ffe.taps=8,12",
                         "--set", "link.symbols=4000", "--set", "channel.model=loss",
                         "--workers", workers, "--no-progress", "--json",
                         "--out", str(tmp_path / f"w{workers}.csv")] + COM_ARGS) == 0
        got[workers] = json.loads(capsys.readouterr().out)["rows"]
    for a, b in zip(got["0"], got["2"]):
        assert a["status"] == b["status"] == "ok"
        assert a["com_db"] == pytest.approx(b["com_db"], abs=1e-9)
        assert a["bit_errors"] == b["bit_errors"] and a["symbols"] == b["symbols"]


def test_sweep_progress_bar_names_the_com_pass(tmp_path, capsys):
    """While the channel sets' COM runs the bar says so (points 0/N would look stuck),
    and the points' rate counts from when it ends."""
    assert cli_main(["sweep", "--grid", "channel.loss_db=16,26", "--grid", "ffe.taps=8,12",
                     "--set", "link.symbols=4000", "--set", "channel.model=loss",
                     "--workers", "0", "--progress", "--out", str(tmp_path / "p.csv")]
                    + COM_ARGS) == 0
    err = capsys.readouterr().err
    frames = [f for f in err.split("\r") if "points" in f]
    com = [i for i, f in enumerate(frames) if "COM" in f]
    assert "0/4 points  COM 0/2 channel sets" in frames[com[0]]
    assert "0/4 points  COM 1/2 channel sets" in frames[com[-1]]
    assert com == list(range(com[0], com[-1] + 1)) and com[-1] < len(frames) - 1
    assert "4/4 points" in frames[-1] and "pt/min" in frames[-1]


def test_a_refused_point_leaves_its_channel_sets_com_to_the_next(tmp_path, capsys,
                                                                monkeypatch):
    """The first point of each channel set has a config the config refuses (ffe.taps 2
    below ffe.pre): it is an error row with the config's message, and the set's COM
    comes from its next point, computed once per set."""
    calls = _counting_com(monkeypatch)
    assert cli_main(["sweep", "--grid", "ffe.taps=2,12", "--grid", "channel.loss_db=16,26",
                     "--set", "link.symbols=4000", "--set", "channel.model=loss",
                     "--workers", "0", "--no-progress", "--json",
                     "--out", str(tmp_path / "r.csv")] + COM_ARGS) == 0
    rows = json.loads(capsys.readouterr().out)["rows"]
    assert sorted(calls) == ["loss line 16 dB", "loss line 26 dB"]
    for r in rows:
        if r["ffe.taps"] == 2:
            assert r["status"] == "error" and "ffe.pre" in r["message"] and r["com_db"] is None
        else:
            assert r["status"] == "ok" and r["com_db"] is not None
