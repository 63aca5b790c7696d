"""Eye diagrams and bathtubs: analog (waveform engine), statistical (BER contours),
equalized (slicer-input distributions), horizontal and vertical bathtubs.

Time in ps (0 at a crossing, eye centres at T/2 and 3T/2 over two UI), voltages in
mV. Slicer quantities (statistical and equalized eyes, vertical bathtub) are in
normalised DSP units times the main cursor at the ADC input, i.e. "ADC-input
referred" mV.
"""

from __future__ import annotations

import numpy as np
import matplotlib
from matplotlib import colors

from serdes.plot import new_axes

DEFAULT_CONTOURS = (1e-3, 1e-6, 1e-9, 1e-12, 1e-15)
_EYE_COLOURS = ("tab:blue", "tab:orange", "tab:green")


def _ui_marks(ax, ui_ps: float, n_ui: int, centres: bool = True) -> None:
    for k in range(n_ui + 1):
        ax.axvline(k * ui_ps, color="0.6", lw=0.6, ls=":", zorder=3)
    if centres:
        for k in range(n_ui):
            ax.axvline((k + 0.5) * ui_ps, color="0.75", lw=0.4, ls="--", zorder=3)
    sec = ax.secondary_xaxis("top", functions=(lambda t: t / ui_ps, lambda u: u * ui_ps))
    sec.set_xlabel("UI")


def _annotate_heights(ax, x_ps: float, lows_mv, highs_mv, labels, colour="w") -> None:
    for lo, hi, text in zip(lows_mv, highs_mv, labels):
        if hi <= lo:
            continue
        ax.annotate("", xy=(x_ps, hi), xytext=(x_ps, lo),
                    arrowprops=dict(arrowstyle="<->", color=colour, lw=1.0), zorder=5)
        if text:   # beside the arrow (a small eye's arrow head covered the text's start)
            ax.annotate(text, xy=(x_ps, 0.5 * (lo + hi)), xytext=(6, 0),
                        textcoords="offset points", color="w", va="center", ha="left",
                        fontsize=7, zorder=5,
                        bbox=dict(boxstyle="round,pad=0.2", fc="k", alpha=0.55, lw=0))


def analog_eye(eye, ax=None, *, cmap: str = "inferno", annotate: bool = True):
    """Persistence image of :class:`serdes.metrics.eye.AnalogEye` (log colour scale)."""
    ax = new_axes(ax)
    ui_ps = eye.ui_s * 1e12
    t = eye.t_s * 1e12
    v = eye.v_v * 1e3
    dens = np.where(eye.density > 0, eye.density, np.nan)
    dt, dv = t[1] - t[0], v[1] - v[0]
    im = ax.imshow(dens.T, origin="lower", aspect="auto", cmap=cmap,
                   extent=(t[0] - dt / 2, t[-1] + dt / 2, v[0] - dv / 2, v[-1] + dv / 2),
                   norm=colors.LogNorm(vmin=1, vmax=max(np.nanmax(dens), 2)),
                   interpolation="nearest")
    ax.set_facecolor("black")
    ax.figure.colorbar(im, ax=ax, label="hits per bin")
    n_ui = eye.n_ui
    _ui_marks(ax, ui_ps, n_ui)
    if annotate and eye.heights_v.size:
        lv = eye.level_v * 1e3
        names = ("lower", "middle", "upper") if lv.shape[0] == 4 else ("eye",)
        for k in range(n_ui):
            x = (k + 0.5) * ui_ps
            lows, highs, labels = [], [], []
            for e, name in enumerate(names):
                h = eye.heights_v[e] * 1e3
                c = 0.5 * (lv[e] + lv[e + 1])
                lows.append(c - h / 2)
                highs.append(c + h / 2)
                labels.append(f"{h:.1f} mV" if h > 0 else "closed")
            if k == 0:
                for c, text in zip(0.5 * (lv[1:] + lv[:-1]), labels):
                    ax.text(x, c, " " + text, color="w", fontsize=7, va="center", zorder=5)
            _annotate_heights(ax, x, lows, highs, [""] * len(lows))
    where = "CTLE/AFE output" if eye.reference == "afe" else "ADC input"
    ax.set_xlabel("time (ps)")
    ax.set_ylabel(f"{where} (mV)")
    ax.set_title(f"analog eye at the {where}")
    return ax


def _tile(eye, n_ui: int):
    """The eye map tiled over n_ui UI, time 0 at a crossing (phase offset -T/2)."""
    ph = eye.phases_ui + 0.5                       # 0 .. 1 UI, eye centre at 0.5
    reps = [ph + k for k in range(n_ui)]
    x = np.concatenate(reps + [[n_ui]])
    z = np.concatenate([eye.ber] * n_ui + [eye.ber[:1]])
    return x, z


def statistical_eye(eye, ax=None, *, contours=DEFAULT_CONTOURS, n_ui: int = 2,
                    opening=None, cmap: str = "viridis"):
    """BER contours of a :class:`serdes.engines.stat.StatEye` over n_ui UI.

    ``opening``: an EyeOpening to annotate (heights at its first target; the eye
    centre of the first UI).
    """
    ax = new_axes(ax)
    ui_ps = eye.ui_s * 1e12
    x, z = _tile(eye, n_ui)
    t = x * ui_ps
    mv = eye.y * eye.volts_per_unit * 1e3
    logz = np.log10(np.maximum(z, 1e-300)).T
    # colour scale from the data (two decades below the deepest point of the map), and
    # only the contours the map reaches
    lo = float(np.log10(bathtub_floor([z])))
    levels = sorted(v for v in np.log10(np.asarray(contours, dtype=float))
                    if v > float(logz.min()))
    fill = ax.contourf(t, mv, np.clip(logz, lo, 0), levels=np.linspace(lo, 0, 4 * int(-lo) + 1),
                       cmap=cmap, extend="neither")
    ax.figure.colorbar(fill, ax=ax, label="log10 BER",
                       ticks=np.arange(int(lo), 1, max(1, int(-lo) // 8)))
    cs = ax.contour(t, mv, logz, levels=levels or [float(logz.min()) + 1.0], colors="w",
                    linewidths=0.7, linestyles="solid")
    ax.clabel(cs, fmt=lambda v: f"1e{v:.0f}", fontsize=6)
    _ui_marks(ax, ui_ps, n_ui)
    for th in eye.thresholds:
        ax.axhline(th * eye.volts_per_unit * 1e3, color="w", lw=0.4, ls="--")
    if opening is not None:
        # annotate the lowest target BER at which some eye is open
        open_k = [k for k in range(len(opening.targets)) if opening.height[k].max() > 0]
        k = min(open_k, key=lambda j: opening.targets[j]) if open_k else 0
        tb = opening.targets[k]
        x0 = 0.5 * ui_ps + opening.offset_ui * ui_ps
        lows = (eye.thresholds - opening.height[k] / 2) * eye.volts_per_unit * 1e3
        highs = (eye.thresholds + opening.height[k] / 2) * eye.volts_per_unit * 1e3
        labels = [f"EH {h * eye.volts_per_unit * 1e3:.1f} mV, EW {w * ui_ps:.1f} ps"
                  for h, w in zip(opening.height[k], opening.width_ui[k])]
        _annotate_heights(ax, x0, lows, highs, labels, colour="r")
        ax.text(0.01, 0.015, f"openings at BER {tb:g}" + ("" if open_k else ": closed"),
                transform=ax.transAxes, color="w", fontsize=7, zorder=6,
                bbox=dict(boxstyle="round,pad=0.2", fc="k", alpha=0.55, lw=0))
    ax.set_xlabel("time (ps)")
    ax.set_ylabel("slicer input, ADC-input referred (mV)")
    ax.set_title("statistical eye")
    return ax


def equalized_eye(samples, dist=None, ax=None, *, bins: int = 200):
    """Distribution of the slicer input per transmitted level (counted histograms of
    :class:`serdes.metrics.eye.SlicerSamples`), with the statistical densities of a
    :class:`SlicerDistribution` overlaid when given."""
    ax = new_axes(ax)
    k = samples.volts_per_unit * 1e3
    v = samples.v * k
    edges = np.linspace(v.min(), v.max(), bins + 1)
    width = edges[1] - edges[0]
    n = samples.v.shape[0]
    cmap = matplotlib.colormaps["tab10"]
    for i in range(samples.levels.shape[0]):
        counts, _ = np.histogram(v[samples.sent == i], bins=edges)
        dens = counts / (n * width)
        ax.stairs(np.where(dens > 0, dens, np.nan), edges, color=cmap(i), lw=1.0,
                  label=f"level {i} counted")
        if dist is not None:
            y = np.linspace(edges[0], edges[-1], 600)
            p = dist.pdf(i, y / k) / dist.m / k
            ax.plot(y, np.where(p > 1e-300, p, np.nan), color=cmap(i), ls="--", lw=0.8)
    for th in samples.levels[1:] * 0.5 + samples.levels[:-1] * 0.5:
        ax.axvline(th * k, color="0.4", lw=0.6, ls=":")
    ax.set_yscale("log")
    top = np.histogram(v, bins=edges)[0].max() / (n * width)
    ax.set_ylim(0.3 / (n * width), 3 * top)
    ax.set_xlabel("slicer input, ADC-input referred (mV)")
    ax.set_ylabel("probability density (1/mV)")
    ax.set_title("equalized eye: slicer input per level"
                 + (" (dashed: statistical)" if dist is not None else ""))
    ax.legend(fontsize=7, loc="upper center", ncol=2)
    return ax


_EYE_STYLES = ("-", "--", ":")
FLOOR_DECADES = 2     # the axis reaches this many decades below the lowest value plotted
LOWEST_FLOOR = 1e-30  # never below (the statistical maps stop there)


def bathtub_floor(curves, targets=()) -> float:
    """Lower y-limit of a bathtub from its data: a power of ten FLOOR_DECADES below the
    smallest positive value plotted, lower still to show every target asked for, at
    most 1e-3 (three decades at least) and at least LOWEST_FLOOR."""
    vals = np.concatenate([np.ravel(np.asarray(c, dtype=np.float64)) for c in curves])
    vals = vals[np.isfinite(vals) & (vals > 0)]
    lowest = float(vals.min()) if vals.size else 1e-3
    lowest = min([lowest] + [float(t) for t in targets])
    floor = 10.0 ** (np.floor(np.log10(lowest)) - FLOOR_DECADES)
    return float(np.clip(floor, LOWEST_FLOOR, 1e-3))


def _targets(ax, targets, floor) -> None:
    for tb in targets:
        if tb >= floor:
            ax.axhline(tb, color="0.5", lw=0.6, ls="-.", zorder=1)
            ax.annotate(f"{tb:g}", xy=(1.0, tb), xycoords=("axes fraction", "data"),
                        xytext=(2, 0), textcoords="offset points", va="center",
                        fontsize=6, color="0.4")


def horizontal_bathtub(bathtub, ax=None, *, floor: float | None = None, targets=()):
    """BER vs sampling phase (ps from the nominal phase), per eye and total. The eyes
    differ in colour and line style; ``floor`` (default: from the data, see
    :func:`bathtub_floor`) is the lower y-limit; ``targets``: BERs marked by lines."""
    ax = new_axes(ax)
    t = bathtub.x * bathtub.ui_s * 1e12
    curves = list(bathtub.ber_per_eye) + ([] if bathtub.ber is None else [bathtub.ber])
    floor = bathtub_floor(curves, targets) if floor is None else float(floor)
    for e, name in enumerate(bathtub.eye_names):
        ax.semilogy(t, np.maximum(bathtub.ber_per_eye[e], floor), color=_EYE_COLOURS[e % 3],
                    ls=_EYE_STYLES[e % 3], lw=1.6 - 0.3 * (e % 3), label=f"{name} eye")
    if bathtub.ber is not None:
        ax.semilogy(t, np.maximum(bathtub.ber, floor), color="k", lw=1.0, alpha=0.7,
                    label="total BER")
    _targets(ax, targets, floor)
    ax.set_ylim(floor, 1)
    ax.set_xlabel("sampling phase offset (ps)")
    ax.set_ylabel("BER")
    ax.grid(True, which="major", alpha=0.3)
    _legend_above(ax, "horizontal bathtub")
    return ax


def _legend_above(ax, title: str) -> None:
    """The legend in one row just above the axes, the title above it: inside, the
    bathtubs' V's leave no corner free (the default placement hid the bottom of the upper
    eye's V on the vertical bathtub)."""
    n = len(ax.get_legend_handles_labels()[0])
    ax.legend(fontsize=7, ncol=max(n, 1), loc="lower center", bbox_to_anchor=(0.5, 1.0),
              frameon=False, handlelength=2.5, columnspacing=1.2, borderaxespad=0.2)
    ax.set_title(title, pad=20)


def vertical_bathtub(bathtub, ax=None, *, floor: float | None = None, targets=(),
                     thresholds=None):
    """Per-eye error rate vs slicer threshold (ADC-input referred mV).

    With ``thresholds`` (the slicer thresholds, normalised, e.g. ``engine.thresholds``)
    each eye's bathtub is drawn at its own threshold, side by side as on a scope;
    without, all are drawn against the offset from their threshold, told apart by
    colour and line style. ``floor`` and ``targets`` as in :func:`horizontal_bathtub`."""
    ax = new_axes(ax)
    k = bathtub.volts_per_unit * 1e3
    floor = bathtub_floor(bathtub.ber_per_eye, targets) if floor is None else float(floor)
    for e, name in enumerate(bathtub.eye_names):
        x = (bathtub.x + (0.0 if thresholds is None else thresholds[e])) * k
        ax.semilogy(x, np.maximum(bathtub.ber_per_eye[e], floor), color=_EYE_COLOURS[e % 3],
                    ls=_EYE_STYLES[e % 3], lw=1.6 - 0.3 * (e % 3), label=f"{name} eye")
        if thresholds is not None:
            ax.axvline(thresholds[e] * k, color=_EYE_COLOURS[e % 3], lw=0.5, ls=":")
    _targets(ax, targets, floor)
    ax.set_ylim(floor, 1)
    ax.set_xlabel("slicer threshold, ADC-input referred (mV)" if thresholds is not None
                  else "threshold offset, ADC-input referred (mV)")
    ax.set_ylabel("BER")
    ax.grid(True, which="major", alpha=0.3)
    _legend_above(ax, "vertical bathtub")
    return ax


def save_figure(fig, path, *, dpi: int = 120, close: bool = False) -> None:
    """Write a figure; one-line errors for a bad path or format. ``close``: release it
    from pyplot afterwards (a command's figure, made only for the file: commands run
    in one process, from a notebook or the tests, left them all open, and past 20
    pyplot warned on stderr)."""
    from serdes.errors import SerdesError

    try:
        fig.savefig(path, dpi=dpi, bbox_inches="tight")
    except (OSError, ValueError) as exc:
        raise SerdesError(f"cannot write {path}: {exc}") from None
    finally:
        if close:
            import matplotlib.pyplot as plt

            plt.close(fig)
