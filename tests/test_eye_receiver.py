"""The eye and bathtub commands judge the receiver that runs: the taps LMS adapts to
(not its starting point), a refused MLSE eye, --dpi checked, the analog eye streamed in
bounded memory, progress on a terminal; and LMS that diverges is refused."""

import json

import numpy as np
import pytest

from serdes.cli import main as cli


def _bathtub_centre_ber(tmp_path, capsys, extra):
    out = tmp_path / "bt.png"
    assert cli(["bathtub", "-o", str(out), "--phases", "16", "--points", "32", "--json",
                "--dpi", "20", "--set", "channel.loss_db=25"] + extra) == 0
    data = json.loads(capsys.readouterr().out)
    x = np.array(data["horizontal"]["phase_ui"])
    return float(np.array(data["horizontal"]["ber"])[np.argmin(np.abs(x))]), data


def test_bathtub_with_lms_uses_the_adapted_taps(tmp_path, capsys):
    mmse, _ = _bathtub_centre_ber(tmp_path, capsys, [])
    lms, data = _bathtub_centre_ber(tmp_path, capsys, ["--set", "eq.mode=lms"])
    assert mmse < 1e-4
    # the LMS taps reach the MMSE ones up to the misadjustment of the step size
    assert mmse / 3 < lms < 3 * mmse, (lms, mmse)
    assert data["taps"].startswith("LMS taps adapted")
    assert len(data["dfe_taps"]) == 1 and abs(data["dfe_taps"][0]) > 0.1


def test_statistical_eye_with_lms_names_its_taps(tmp_path, capsys):
    out = tmp_path / "eye.png"
    assert cli(["eye", "-o", str(out), "--phases", "8", "--bins", "32", "--dpi", "20",
                "--set", "eq.mode=lms"]) == 0
    assert "LMS taps adapted over" in capsys.readouterr().out
