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


# ================================================================ statistical eye map
@pytest.mark.parametrize("extra", [(), ("dfe.taps=0",), ("noise.sj_ui=0.05", "noise.sj_hz=1e6")])
def test_statistical_eye_is_periodic_without_a_seam(extra):
    """The map over one UI wraps: its columns at -T/2 and +T/2 are the same (with a DFE,
    without, and with quasi-static jitter, the interpolated path), and tiling it leaves
    no seam: the step across the wrap is no larger than the steps between neighbouring
    columns inside the UI. Within +-T/4 of the centre and in the eyes (a quarter of a level
    spacing around the thresholds) the map is the symbol's own eye."""
    from serdes.engines.stat import StatisticalEngine
    from serdes.engines.stat.views import eye

    eng = StatisticalEngine(build(Config.default().with_overrides(list(extra))))
    ends = eye(eng, n_phases=16, n_bins=64, phases_ui=[-0.5, 0.5])
    np.testing.assert_array_equal(ends.ber[0], ends.ber[1])
    se = eye(eng, n_phases=16, n_bins=64)
    lz = np.log10(se.ber)
    steps = np.abs(np.diff(lz, axis=0)).max(axis=1)
    wrap = np.abs(lz[0] - lz[-1]).max()
    assert wrap <= steps.max()
    # the symbol's own eye near the centre: one distribution per column, no fading
    centre = np.nonzero(np.abs(se.phases_ui) <= 0.25)[0]
    step = float(se.y[1] - se.y[0])
    spacing = float(np.min(np.diff(eng.levels)))
    for k in centre:
        d = eng.distribution(float(se.phases_ui[k]), grid_step=step)
        own = d.wrong_side_grid(float(se.y[0]), int(round(step / d.delta)), se.y.shape[0])
        inner = np.abs(se.y) <= np.max(eng.thresholds) + 0.25 * spacing  # the eyes
        if eng.jitter.weights.shape[0] == 1 and not eng.jitter.span_ui:
            np.testing.assert_allclose(se.ber[k][inner], np.maximum(own, 1e-30)[inner],
                                       rtol=1e-12)


def test_bathtub_axis_follows_the_data():
    """The y-axis of a bathtub ends two decades below its lowest value (or below the
    lowest target marked), not at a fixed 1e-18; the three eyes are told apart by line
    style, and a vertical bathtub at the thresholds puts them side by side."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    from serdes.engines.stat import StatisticalEngine
    from serdes.plot import eye as peye

    eng = StatisticalEngine(build(Config.default()))
    h = eng.bathtub_horizontal(16)
    v = eng.bathtub_vertical(0.0, 101)
    fig, (a, b, c) = plt.subplots(1, 3)
    assert peye.horizontal_bathtub(h, ax=a) is a
    lowest = min(h.ber_per_eye.min(), h.ber.min())
    lo, hi = a.get_ylim()
    assert hi == 1 and lowest / 1e3 < lo <= lowest / 1e2
    peye.horizontal_bathtub(h, ax=a, targets=(1e-12,))
    assert a.get_ylim()[0] == pytest.approx(1e-14)
    assert peye.vertical_bathtub(v, ax=b) is b
    lowest = v.ber_per_eye.min()
    assert lowest / 1e3 < b.get_ylim()[0] <= lowest / 1e2
    styles = {ln.get_linestyle() for ln in b.get_lines()[:3]}
    assert len(styles) == 3
    peye.vertical_bathtub(v, ax=c, thresholds=eng.thresholds)
    centres = [ln.get_xdata()[np.argmin(ln.get_ydata())] for ln in c.get_lines()
               if ln.get_label().endswith(" eye")]
    k = eng.volts_per_unit * 1e3
    np.testing.assert_allclose(centres, eng.thresholds * k, atol=2 * (v.x[1] - v.x[0]) * k)
    # a user's floor still wins; a curve far deeper than 1e-30 stops there
    peye.vertical_bathtub(v, ax=b, floor=1e-9)
    assert b.get_ylim()[0] == 1e-9
    assert peye.bathtub_floor([np.array([1e-40, 0.1])]) == 1e-30
    plt.close(fig)


def test_statistical_eye_colour_scale_follows_the_data():
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    from serdes.engines.stat import StatisticalEngine
    from serdes.plot import eye as peye

    eng = StatisticalEngine(build(Config.default()))
    se = eng.eye(n_phases=16, n_bins=64)
    fig, ax = plt.subplots()
    assert peye.statistical_eye(se, ax=ax) is ax
    cbar = fig.axes[-1]
    lo = min(cbar.get_ylim())
    deepest = np.log10(se.ber.min())
    assert deepest - 3 < lo <= deepest - 2
    plt.close(fig)


def test_tap_plots_are_relative_to_the_main_tap():
    """FFE taps are drawn divided by the main tap (the weights are in 1/V, scaled by the
    VGA); DFE taps as they are (units of the main cursor); both take ax=."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    from serdes.plot import dfe_taps, ffe_taps

    w = np.array([0.05, -0.25, 0.9, -3.3, 15.1, 1.6, -3.6, -0.8])
    fig, (a, b) = plt.subplots(1, 2)
    assert ffe_taps(w, 4, ax=a, label="8 taps") is a
    stem = a.containers[0]
    np.testing.assert_allclose(stem.markerline.get_ydata(), w / w[4], rtol=1e-15)
    np.testing.assert_array_equal(stem.markerline.get_xdata(), np.arange(8) - 4)
    assert "main tap" in a.get_ylabel() and "15.1 /V" in a.get_legend().get_texts()[0].get_text()
    assert dfe_taps([0.7, 0.18], ax=b) is b
    np.testing.assert_allclose(b.containers[0].markerline.get_ydata(), [0.7, 0.18])
    with pytest.raises(ValueError, match="main FFE tap is 0"):
        ffe_taps([1.0, 0.0], 1, ax=a)
    plt.close(fig)


def test_importing_serdes_plot_does_not_import_matplotlib():
    import subprocess
    import sys

    code = ("import sys, serdes, serdes.plot; a = 'matplotlib' in sys.modules; "
            "serdes.plot.ffe_taps; print(a, 'matplotlib' in sys.modules)")
    r = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert r.stdout.split() == ["False", "True"], r.stderr


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


def test_the_bathtubs_legend_stands_above_the_curves():
    """The legend sits in one row between the axes and the title, so no curve is hidden:
    inside, matplotlib's placement put it over the bottom of the upper eye's V on the
    default link's vertical bathtub (it weighs a line crossing it once, whatever part)."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    from serdes.engines.stat.results import Bathtub
    from serdes.plot import eye as peye

    x = np.linspace(-0.5, 0.5, 201)
    v = np.array([10.0 ** (-18 + 34 * np.abs(x - c)) for c in (0.0, 0.01, -0.01)])
    names = ("lower", "middle", "upper")
    fig, (a, b) = plt.subplots(1, 2, figsize=(11, 4.2))
    peye.horizontal_bathtub(Bathtub(x, v, v.sum(axis=0), names, "horizontal", 1e-11, 0.08),
                            ax=a)
    peye.vertical_bathtub(Bathtub(x, v, None, names, "vertical", 1e-11, 0.08), ax=b,
                          thresholds=np.array([-2 / 3, 0.0, 2 / 3]))
    fig.canvas.draw()
    r = fig.canvas.get_renderer()
    for ax, n in ((a, 4), (b, 3)):
        leg, box = ax.get_legend(), ax.get_window_extent(r)
        lb = leg.get_window_extent(r)
        assert len(leg.get_texts()) == n
        assert lb.y0 >= box.y1 - 1                                  # above the axes
        assert ax.title.get_window_extent(r).y0 >= lb.y1 - 1          # the title above it
        assert box.x0 <= lb.x0 and lb.x1 <= box.x1                   # one row, no wider
    plt.close(fig)
