"""ADC plots: the sine-test spectrum with the interleaving spurs marked, and the
background calibration's convergence."""

from __future__ import annotations

import numpy as np

from serdes.plot import new_axes


def spectrum(power, result: dict, ax=None):
    """The one-sided power spectrum (dBc) of a sine test
    (:func:`serdes.tiadc.spectrum.sine_test`), the spurs at k fs/N +- f_in (images) and
    k fs/N (offsets) marked with their closed-form levels."""
    ax = new_axes(ax, file_backend=ax is None)
    p = np.asarray(power, dtype=np.float64)
    n = result["samples"]
    f = np.arange(p.shape[0]) * result["fs_hz"] / n
    ref = p[int(round(result["f_in_hz"] / result["fs_hz"] * n))]
    ax.plot(f / 1e9, 10 * np.log10(np.maximum(p / ref, 1e-30)), lw=0.6, label="spectrum")
    for kind, marker in (("image", "v"), ("offset", "s")):
        s = [x for x in result["spurs"] if x["kind"] == kind and np.isfinite(x["dbc"])]
        if s:
            ax.plot([x["f_hz"] / 1e9 for x in s], [x.get("predicted_dbc", np.nan) for x in s],
                    marker, mfc="none", ls="none",
                    label=f"{kind} spurs (k fs/N{' +- f_in' if kind == 'image' else ''}), "
                          "closed form")
    ax.set_xlabel("frequency (GHz)")
    ax.set_ylabel("power (dBc)")
    ax.set_ylim(bottom=max(-160.0, 10 * np.log10(max(np.median(p / ref), 1e-30)) - 20))
    ax.set_title(f"SNDR {result['sndr_db']:.1f} dB, ENOB {result['enob']:.2f}, "
                 f"SFDR {result['sfdr_db']:.1f} dB")
    ax.legend(fontsize=8)
    return ax


def plot_spectrum(power, result: dict, path: str) -> None:
    """:func:`spectrum` written to an image file."""
    from serdes.plot.eye import save_figure

    ax = spectrum(power, result)
    save_figure(ax.figure, path, close=True)


def calibration(history: dict, ax=None):
    """Residual mismatch (rms over the lanes) of a background calibration against
    samples: ``history`` from :meth:`serdes.dsp.ti_cal.TiCalibration.history`."""
    ax = new_axes(ax, file_backend=ax is None)
    k = np.asarray(history["samples"])
    for name, unit, scale in (("offset_rms_v", "offset (mV)", 1e3), ("gain_rms", "gain (%)", 1e2),
                              ("skew_rms_s", "skew (fs)", 1e15)):
        if name in history:
            ax.semilogy(k, np.maximum(np.asarray(history[name]) * scale, 1e-12), label=unit)
    ax.set_xlabel("samples")
    ax.set_ylabel("residual mismatch, rms over lanes")
    ax.legend()
    return ax
