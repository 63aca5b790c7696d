"""The COM report figure: pulses before/after equalization, the noise budget, the
distribution with A_s and A_ni, the FOM over g_DC x g_DC2. matplotlib is imported here
only, when a figure is asked for."""

from __future__ import annotations

import numpy as np


def report_figure(res, path, dpi: int = 120) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    from serdes.com.eye import vec_text
    from serdes.plot.eye import save_figure

    case = min(res.cases, key=lambda c: c.com_db)
    p = res.params
    m = p.samples_per_ui
    fig, ax = plt.subplots(2, 2, figsize=(12, 8))
    t_ui = (np.arange(len(case.pulse_eq)) - case.cursor_ix) / m
    sel = (t_ui > -10) & (t_ui < 40)
    pk = int(np.argmax(case.pulse_uneq))
    t_un = (np.arange(len(case.pulse_uneq)) - pk) / m
    sel2 = (t_un > -10) & (t_un < 40)
    a = ax[0, 0]
    a.plot(t_un[sel2], case.pulse_uneq[sel2] * 1e3, label="unequalized (packages, H_t, H_r)")
    eq = "TX FFE + CTLE" + (" + RX FFE" if case.rx_ffe_taps else "")
    a.plot(t_ui[sel], case.pulse_eq[sel] * 1e3, label=eq + " (before DFE)")
    a.plot(np.arange(-10, 40), case.pulse_eq[(case.cursor_ix + m * np.arange(-10, 40)) % len(case.pulse_eq)] * 1e3,
           "o", ms=3, label="samples at the cursor phase")
    a.set_xlabel("time from cursor (UI)")
    a.set_ylabel("mV")
    a.set_title(f"pulse responses, package case {case.package_case}")
    a.legend(fontsize=8)
    a = ax[0, 1]
    names = list(case.sigmas_v)
    a.barh(names, [case.sigmas_v[k] * 1e3 for k in names])
    a.set_xlabel("rms at the slicer (mV)")
    a.set_title(f"noise budget; A_s {case.a_s_v * 1e3:.2f} mV, A_ni {case.a_ni_v * 1e3:.2f} mV")
    a = ax[1, 0]
    cdf = np.cumsum(case.pdf)
    cdf /= cdf[-1]
    a.semilogy(case.y * 1e3, np.maximum(cdf, 1e-20))
    a.axhline(p.der0, color="k", ls=":", label=f"DER_0 {p.der0:g}")
    a.axvline(-case.a_ni_v * 1e3, color="r", ls="--", label="-A_ni")
    a.axvline(-case.a_s_v * 1e3, color="g", ls="--", label="-A_s")
    a.set_ylim(max(p.der0 / 1e3, 1e-20), 1)
    a.set_xlim(-1.5 * max(case.a_s_v, case.a_ni_v) * 1e3, 0)
    a.set_xlabel("noise + interference (mV)")
    a.set_ylabel("cumulative probability")
    # with the MLSD, COM is its receiver's; A_s, A_ni and this distribution the DFE's
    # with the C2M window, COM is the window's; this distribution is that of T_s
    a.set_title(f"COM {case.com_db:.2f} dB" + (
        f" (MLSD; the DFE's {case.mlsd['com_dfe_db']:.2f} dB, drawn)" if case.mlsd else
        f" (over the window; at T_s {case.com_t_s_db:.2f} dB, drawn)"
        if case.eye_window is not None and case.eye_window["com_db"] is not None else ""))
    a.legend(fontsize=8)
    a = ax[1, 1]
    im = a.imshow(case.landscape, aspect="auto", origin="lower",
                  extent=[min(p.g_dc2) - 0.5, max(p.g_dc2) + 0.5, min(p.g_dc) - 0.5, max(p.g_dc) + 0.5])
    # the quantization noise's branch and bound evaluates only the candidates it must:
    # there each cell is the best upper bound over its TX settings, the FOM at the chosen
    fig.colorbar(im, ax=a, label=("FOM upper bound over TX settings (dB)" if case.landscape_bound
                                  else "best FOM over TX settings (dB)"))
    a.plot([case.g_dc2_db], [case.g_dc_db], "r+", ms=12)
    a.set_xlabel("g_DC2 (dB)")
    a.set_ylabel("g_DC (dB)")
    cs = (case.eye_window or {}).get("c2m_search")
    chosen_by_eye = cs is not None and not cs.get("no_candidate")
    a.set_title("FOM landscape" + (" (bounds; exact at +)" if case.landscape_bound else "")
                + (" (+: chosen by the window's COM)" if chosen_by_eye else ""))
    ew = case.eye_window
    # the C2M criteria over the timing window: this case's eye there and its verdict
    win = "" if ew is None else (
        f"; over T_s +- {ew['t_o_mui']:g} mUI eye height {ew['eye_height_v'] * 1e3:.2f} mV, VEC "
        + vec_text(ew["vec_db"])
        + ("" if ew["passes"] is None else f" ({'pass' if ew['passes'] else 'FAIL'})"))
    fig.suptitle(f"{res.preset}: {res.thru.split('/')[-1]} (package case {case.package_case})"
                 + win)
    fig.tight_layout()
    try:
        save_figure(fig, path, dpi=dpi)
    finally:
        plt.close(fig)
