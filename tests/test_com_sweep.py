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
