"""The eye and bathtub commands judge the receiver that runs: the taps LMS adapts to
(not its starting point), a refused MLSE eye, --dpi checked, the analog eye streamed in
bounded memory, progress on a terminal; and LMS that diverges is refused."""

import json

import numpy as np
import pytest

from serdes.cli import main as cli

from conftest import EARLIER_DEFAULT


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


# ===================================================================== LMS divergence
@pytest.mark.parametrize("loss, mu", [(30, 0.5), (10, 0.5)])
def test_diverging_lms_is_refused_naming_eq_mu(capsys, loss, mu):
    # 30 dB: the taps blow up (SNR -2139 dB was reported); 10 dB: the training converges,
    # then the decision-directed loop locks onto a wrong solution (BER 0.47)
    earlier = [a for ov in EARLIER_DEFAULT for a in ("--set", ov)]
    assert cli(["run", "--set", "eq.mode=lms", "--set", f"eq.mu={mu}", "--set",
                f"channel.loss_db={loss}", "--set", "link.symbols=400000", *earlier]) == 2
    err = capsys.readouterr().err
    assert err.startswith(f"serdes: error: eq.mu = {mu:g}: the LMS adaptation diverged")
    assert "0 < eq.mu <" in err and err.count("\n") == 1


def test_converging_lms_is_not_refused(capsys):
    assert cli(["run", "--json", "--set", "eq.mode=lms", "--set", "eq.mu=0.1", "--set",
                "channel.loss_db=30", "--set", "link.symbols=400000"]) == 0
    r = json.loads(capsys.readouterr().out)
    assert r["snr_db"] > r["predicted_snr_db"] - 1.5 and r["ber"] < 5e-3


# ============================================================================= --dpi
@pytest.mark.parametrize("command", [["eye"], ["eye", "--kind", "analog"], ["bathtub"],
                                     ["plot", "results.csv"]])
@pytest.mark.parametrize("dpi", ["100000", "0"])
def test_dpi_is_checked_the_same_way_everywhere(tmp_path, capsys, command, dpi):
    # eye --dpi 100000 tried to allocate the canvas (MemoryError traceback)
    out = tmp_path / "x.png"
    assert cli(command + ["--dpi", dpi, "-o", str(out)]) == 2
    err = capsys.readouterr().err
    assert err == f"serdes: error: --dpi = {dpi}: expected an integer in [10, 1200]\n"
    assert not out.exists()


def test_dpi_has_help(capsys):
    for command in ("eye", "bathtub", "plot"):
        with pytest.raises(SystemExit):
            cli([command, "--help"])
        assert "dots per inch" in capsys.readouterr().out


# ============================================================================= MLSE
@pytest.mark.parametrize("command", [["eye"], ["eye", "--kind", "equalized"], ["bathtub"]])
def test_slicer_eyes_with_mlse_are_refused_in_one_line(tmp_path, capsys, command):
    out = tmp_path / "x.png"
    assert cli(command + ["-o", str(out), "--set", "eq.detector=mlse"]) == 2
    err = capsys.readouterr().err
    assert err.startswith("serdes: error: eq.detector = mlse: the ") and err.count("\n") == 1
    assert "--kind analog" in err and not out.exists()


def test_analog_eye_with_mlse_is_drawn(tmp_path, capsys):
    out = tmp_path / "x.png"
    assert cli(["eye", "--kind", "analog", "--symbols", "2000", "--dpi", "20", "-o", str(out),
                "--set", "eq.detector=mlse"]) == 0
    assert out.exists()


# ======================================================================= analog eye
def _open_link():
    from serdes.config import Config
    from serdes.build import build

    return build(Config.default().with_overrides(["channel.loss_db=8",
                                                  "noise.eta0_v2_per_ghz=2e-9"]))


def test_analog_eye_does_not_depend_on_the_chunk_size():
    from serdes.metrics.eye import analog_eye

    link = _open_link()
    one = analog_eye(link, symbols=5000, chunk=100_000)
    many = analog_eye(link, symbols=5000, chunk=37)     # chunks shorter than a window
    assert one.density.sum() > 1e6
    assert np.array_equal(one.density, many.density)
    assert np.array_equal(one.heights_v, many.heights_v)
    np.testing.assert_allclose(one.level_v, many.level_v, rtol=1e-12)


def test_analog_eye_memory_does_not_grow_with_the_symbols():
    import tracemalloc

    from serdes.metrics.eye import analog_eye

    link = _open_link()
    analog_eye(link, symbols=3000)                      # compile outside the measurement
    tracemalloc.start()
    try:
        eye = analog_eye(link, symbols=40_000)
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    # the whole-waveform version held ~9.5 KB per symbol (380 MB here); streamed: ~35 MB
    assert eye.density.sum() > 40_000 * 200
    assert peak < 80e6, peak / 1e6


# ========================================================================= progress
@pytest.mark.parametrize("command, unit", [
    (["eye", "--kind", "analog", "--symbols", "5000"], "symbols"),
    (["eye", "--phases", "8", "--bins", "32"], "distributions"),
    (["bathtub", "--phases", "8", "--points", "16"], "distributions"),
])
def test_long_eyes_and_bathtubs_show_progress_on_request(tmp_path, capsys, command, unit):
    out = tmp_path / "x.png"
    base = command + ["--dpi", "20", "-o", str(out)]
    assert cli(base + ["--progress"]) == 0
    err = capsys.readouterr().err
    assert "\r" in err and f" {unit}" in err and "elapsed" in err
    assert err.endswith("\r\x1b[K")                    # erased at the end
    assert cli(base) == 0                              # not a terminal: nothing drawn
    assert capsys.readouterr().err == ""


def test_count_progress_line():
    import io

    from serdes.commands.common import ItemProgress

    s = io.StringIO()
    bar = ItemProgress(1000, "symbols", label="analog eye", enabled=True, stream=s)
    bar(1000)
    assert "analog eye: [" in s.getvalue() and "1,000/1,000 symbols" in s.getvalue()
    bar.close()
    assert s.getvalue().endswith("\r\x1b[K")


def test_count_progress_line_without_a_total():
    """No total (`serdes eye`, `serdes bathtub`, `serdes com` before its first case): the
    count alone. It was drawn as a bar one short of its end, N/N+1, with an ETA of 0:00."""
    import io

    from serdes.commands.common import ItemProgress

    s = io.StringIO()
    bar = ItemProgress(None, "distributions", label="bathtub", enabled=True, stream=s)
    bar(5)
    bar.draw(force=True)
    line = s.getvalue().split("\r")[-1].removesuffix("\x1b[K")
    assert line.startswith("bathtub: 5 distributions  ") and "[" not in line
    assert "ETA" not in line and bar.total is None
    bar(2, 4)                    # a total given later: the bar
    bar.draw(force=True)
    assert "bathtub: [" in s.getvalue().split("\r")[-1] and "2/4 distributions" in s.getvalue()


def test_progress_line_shows_the_stage_of_a_long_item():
    """`serdes com`'s line names where a package case's search is (its stage), after the
    count, in both forms."""
    import io

    from serdes.commands.common import ItemProgress

    s = io.StringIO()
    bar = ItemProgress(2, "package cases", label="com 802.3dj-kr", enabled=True, stream=s)
    bar.stage = "bounds 3/147 CTLE"
    bar.draw(force=True)
    assert "0/2 package cases  bounds 3/147 CTLE  0:00 elapsed" in s.getvalue()
    bar.total = None
    bar.stage = "exact 64/<=900"
    bar.draw(force=True)
    assert "com 802.3dj-kr: 0 package cases  exact 64/<=900  0:00 elapsed" in s.getvalue()


def test_commands_release_their_figures(tmp_path, capsys):
    """`serdes eye` and `serdes bathtub` run in one process (a notebook, the tests) close
    the figure they wrote: they stayed open, and past 20 pyplot's warning came out as a
    second stderr line beside a command's one-line error."""
    import matplotlib.pyplot as plt

    before = len(plt.get_fignums())
    for kind in ("analog", "equalized"):
        assert cli(["eye", "--kind", kind, "--symbols", "3000", "--dpi", "20", "-o",
                    str(tmp_path / f"{kind}.png"), "--no-progress"]) == 0
    assert cli(["bathtub", "--phases", "8", "--points", "16", "--dpi", "20", "-o",
                str(tmp_path / "bt.png"), "--no-progress"]) == 0
    assert len(plt.get_fignums()) == before
