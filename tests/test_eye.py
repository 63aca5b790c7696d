"""Eye measurements (serdes.metrics.eye), plots (serdes.plot.eye), the `serdes eye` and
`serdes bathtub` commands and the "eye" / "stat_ber" sections of `serdes run --json`.

Images are judged by their pixels (ink coverage, distinct colours), not by existence."""

import json

import numpy as np
import pytest

from serdes.cli import main as cli
from serdes.config import Config
from serdes.build import build
from serdes.metrics import eye as meye

from conftest import EARLIER_DEFAULT, earlier_default

OPEN = ["channel.loss_db=8", "noise.eta0_v2_per_ghz=2e-9"]   # analog eyes open


def _pixels(path):
    import matplotlib.image as mpimg

    img = mpimg.imread(str(path))[..., :3]
    ink = np.any(img < 0.9, axis=-1).mean()            # fraction of non-white pixels
    colours = np.unique((img * 255).astype(np.uint8).reshape(-1, 3), axis=0).shape[0]
    return img, ink, colours


# ========================================================================= metrics
def test_opening_from_bathtub_interpolates_in_log():
    x = np.linspace(-1, 1, 201)
    ber = 10.0 ** (-12 * (1 - x ** 2))          # 1e-12 at 0, 1 at +-1
    w = meye.opening_from_bathtub(x, ber, 1e-6, 0.0)
    assert abs(w - 2 * np.sqrt(0.5)) < 1e-3      # log10 BER = -6 at x = +-sqrt(1/2)
    assert meye.opening_from_bathtub(x, ber, 1e-13, 0.0) == 0.0


def test_rlm_ieee_definition():
    assert meye.rlm([-1, -1 / 3, 1 / 3, 1]) == pytest.approx(1.0)
    assert meye.rlm([-1, -0.3, 0.3, 1]) == pytest.approx(0.9)
    assert meye.rlm([-1, -0.4, 0.3, 1]) == pytest.approx(0.8)   # 2 - 3 * 0.4


def test_slicer_samples_are_aligned_and_counted_eye_closes_with_target():
    system = build(earlier_default("dfe.taps=0"))  # a link with a closing eye
    s = meye.slicer_samples(system, symbols=1 << 15)
    decided = np.argmin(np.abs(s.v[:, None] - s.levels[None, :]), axis=1)
    assert np.mean(decided == s.sent) > 0.999
    h3 = meye.counted_eye_heights(s, 1e-3)
    h2 = meye.counted_eye_heights(s, 1e-2)
    assert np.all(h3 > 0) and np.all(h2 > h3)
    r = meye.counted_eye_report(s)
    assert 0.95 < r["rlm"] <= 1.0 and 15 < r["sndr_db"] < 25


def test_analog_eye_shows_three_eyes():
    ae = meye.analog_eye(build(Config.default().with_overrides(OPEN)), symbols=6000)
    assert ae.density.shape == (256, 256) and ae.density.sum() > 1e6
    assert np.all(ae.heights_v > 0)                            # three open eyes
    col = ae.density[ae.density.shape[0] // 4]                 # the first eye centre
    occupied = col > 0
    gaps = np.sum(occupied[1:] < occupied[:-1])                # falling edges
    assert gaps >= 4                                           # 4 level bands, 3 gaps
    assert np.all(np.diff(ae.level_v) > 0)


# ========================================================================== images
def test_plots_write_images_with_content(tmp_path):
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    from serdes.engines.stat import StatisticalEngine
    from serdes.plot import eye as peye

    system = build(Config.default().with_overrides(OPEN))
    eng = StatisticalEngine(system)
    fig, axes = plt.subplots(2, 3, figsize=(15, 8))
    peye.analog_eye(meye.analog_eye(system, symbols=3000), ax=axes[0, 0])
    se = eng.eye(n_phases=32, n_bins=128)
    peye.statistical_eye(se, ax=axes[0, 1], opening=eng.eye_opening(n_phases=16))
    s = meye.slicer_samples(system, eng.taps, symbols=1 << 14)
    peye.equalized_eye(s, eng.distribution(), ax=axes[0, 2])
    peye.horizontal_bathtub(eng.bathtub_horizontal(16), ax=axes[1, 0])
    peye.vertical_bathtub(eng.bathtub_vertical(0.0, 101), ax=axes[1, 1])
    out = tmp_path / "all.png"
    peye.save_figure(fig, out)
    plt.close(fig)
    _, ink, colours = _pixels(out)
    assert ink > 0.15 and colours > 200


@pytest.mark.parametrize("kind,min_ink,min_colours", [("analog", 0.4, 100),
                                                      ("statistical", 0.5, 60),
                                                      ("equalized", 0.05, 10)])
def test_cli_eye_kinds(tmp_path, capsys, kind, min_ink, min_colours):
    out = tmp_path / f"{kind}.png"
    args = ["eye", "--kind", kind, "-o", str(out), "--phases", "32", "--bins", "128"]
    for o in OPEN:
        args += ["--set", o]
    if kind != "statistical":
        args += ["--symbols", "8000"]
    assert cli(args) == 0
    assert f"wrote {out}" in capsys.readouterr().out
    img, ink, colours = _pixels(out)
    assert img.shape[0] > 300 and img.shape[1] > 400
    assert ink > min_ink and colours > min_colours
    if kind == "analog":
        # the persistence image is mostly dark (inferno on black) with bright traces
        dark = np.mean(img.max(axis=-1) < 0.2)
        assert dark > 0.1 and np.mean(img.max(axis=-1) > 0.8) > 0.1


def test_cli_bathtub_image_and_json(tmp_path, capsys):
    out = tmp_path / "bt.png"
    assert cli(["bathtub", "-o", str(out), "--phases", "16", "--points", "64", "--json",
                "--set", "channel.loss_db=15"]) == 0
    data = json.loads(capsys.readouterr().out)
    h = np.array(data["horizontal"]["ber"])
    assert h.shape == (16,) and h.min() < 1e-6 and h.max() > 1e-3
    assert np.array(data["vertical"]["ber_per_eye"]).shape == (3, 64)
    _, ink, colours = _pixels(out)
    assert ink > 0.03 and colours > 20


def test_cli_errors_are_one_line(tmp_path, capsys):
    assert cli(["eye", "-o", str(tmp_path / "no" / "dir" / "x.png")]) == 2
    err = capsys.readouterr().err
    assert err.startswith("serdes: error: cannot write") and err.count("\n") == 1
    assert cli(["eye", "--contours", "2,abc"]) == 2
    assert "--contours" in capsys.readouterr().err
    assert cli(["bathtub", "--phases", "1"]) == 2


# ========================================================================== report
def test_run_json_has_eye_and_stat_ber(capsys):
    earlier = [a for ov in EARLIER_DEFAULT for a in ("--set", ov)]  # BER 1e-5..1e-3
    assert cli(["run", "--json", "--set", "link.symbols=200000", "--set", "channel.loss_db=28",
                "--set", "noise.eta0_v2_per_ghz=3e-8", *earlier]) == 0
    r = json.loads(capsys.readouterr().out)
    assert isinstance(r["stat_ber"], float) and 1e-5 < r["stat_ber"] < 1e-3
    eye = r["eye"]
    st = eye["statistical"]
    assert st["targets"][:3] == [1e-6, 1e-12, 1e-15]
    assert set(st["eyes"]) == {"lower", "middle", "upper"}
    for e in st["eyes"].values():
        assert len(e["height_mv"]) == len(st["targets"]) and len(e["width_ps"]) == 4
        assert e["height"][3] > 0 and e["width_ps"][3] > 0          # open at 1e-3
    assert len(st["vertical_eye_opening_mv"]) == 4
    c = eye["counted"]
    assert c["symbols"] > 100_000 and 0.9 < eye["rlm"] <= 1.0 and eye["sndr_db"] > 10
    # counted and statistical eye heights at 1e-3 agree within the counting scatter
    for name in ("lower", "middle", "upper"):
        assert c["eyes"][name]["height"] == pytest.approx(st["eyes"][name]["height"][3],
                                                          rel=0.1)
    s = r["stat"]
    assert s["dfe_taps"] == 1 and "dfe_error_propagation" in s
    assert s["counted_over_stat"] == pytest.approx(r["ber"] / r["stat_ber"])
    assert s["adc_clip_probability"] < 1e-6
