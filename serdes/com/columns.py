"""COM as result columns of a sweep point (``serdes sweep --com PRESET``).

The point's channel set comes from its config (:func:`serdes.build.build_com_channels`:
the touchstone thru and file aggressors, or the synthetic loss line); the columns are
those of the worst package case (the channel's COM).
"""

from __future__ import annotations

from typing import Any

__all__ = ["COM_COLUMNS", "channel_set", "com_columns"]

# com_dfe_db: the DFE receiver's COM at T_s, 20 log10(A_s / A_ni) of the columns beside
# it; with the MLSD (802.3dj-kr) com_db is the MLSD receiver's, with the C2M window
# (802.3ck-c2m) the window's, otherwise the two are equal
# com_window_*: the eye over the C2M timing window T_s +- T_O (802.3ck-c2m; null without
# it), its pass / FAIL against the preset's limits and the COM the IEEE code reports there
COM_COLUMNS = ("com_db", "com_dfe_db", "com_case", "com_a_s_mv", "com_a_ni_mv",
               "com_eye_height_mv", "com_vec_db", "com_window_eye_height_mv",
               "com_window_vec_db", "com_window_passes", "com_window_db", "com_fom_db",
               "com_g_dc_db", "com_g_dc2_db", "com_elapsed_s")


def channel_set(model: str, file: str, ports: str, loss_db: float, skin_fraction: float,
                fb_hz: float, aggressors=()):
    """``(thru, fext, next)`` for :func:`~serdes.com.core.compute_com`: a touchstone thru
    and file aggressors as paths; the ``loss`` and ``ideal`` models as a synthetic
    differential 2-port (matched, S21 = the line's response, 0-2 f_b in 10 MHz steps).
    ``aggressors``: ``(kind, model, file, ports)`` of each [[aggressor]] table."""
    import numpy as np

    from serdes.com.pulse import Channel
    from serdes.errors import ConfigError

    if model == "touchstone":
        if ports.replace(" ", "") != "12,34":
            raise ConfigError(f"channel.ports = {ports!r} is not allowed with COM: "
                              "expected 12,34 (ports 1->2 and 3->4)")
        thru = file
    else:
        f = np.arange(0.0, 2.0 * fb_hz + 5e6, 1e7)
        if model == "loss":
            from serdes.channel.loss import LossLine

            h = LossLine(loss_db=loss_db, f_ref_hz=fb_hz / 2.0,
                         skin_fraction=skin_fraction).response(f)
            label = f"loss line {loss_db:g} dB"
        else:
            h = np.ones_like(f, dtype=np.complex128)
            label = "ideal channel"
        sdd = np.zeros((len(f), 2, 2), dtype=np.complex128)
        sdd[:, 1, 0] = sdd[:, 0, 1] = h
        thru = Channel(label, "thru", f, sdd)
    fext, nxt = [], []
    for i, (kind, amodel, afile, aports) in enumerate(aggressors):
        if amodel != "file":
            raise ConfigError(f"aggressor {i + 1}: model = {amodel!r} is not allowed with "
                              "COM: expected file")
        if aports.replace(" ", "") != "12,34":
            raise ConfigError(f"aggressor {i + 1}: ports = {aports!r} is not allowed with "
                              "COM: expected 12,34")
        (nxt if kind == "next" else fext).append(afile)
    return thru, fext, nxt


def com_columns(channels, preset: str, overrides=()) -> dict[str, Any]:
    """The columns of the worst package case; ``channels`` = ``(thru, fext, next)`` as
    :func:`channel_set` gives them."""
    from serdes.com.core import compute_com

    thru, fext, nxt = channels
    res = compute_com(thru, fext, nxt, preset, list(overrides))
    c = min(res.cases, key=lambda c: c.com_db)
    ew = c.eye_window or {}
    return {"com_db": float(c.com_db),
            "com_dfe_db": c.com_t_s_db,
            "com_case": int(c.package_case),
            "com_a_s_mv": 1e3 * c.a_s_v, "com_a_ni_mv": 1e3 * c.a_ni_v,
            "com_eye_height_mv": 1e3 * c.eye_height_v,
            "com_vec_db": None if c.vec_db is None else float(c.vec_db),
            "com_window_eye_height_mv": (1e3 * ew["eye_height_v"]) if ew else None,
            "com_window_vec_db": ew.get("vec_db"), "com_window_passes": ew.get("passes"),
            "com_window_db": ew.get("com_db"),
            "com_fom_db": float(c.fom_db), "com_g_dc_db": float(c.g_dc_db),
            "com_g_dc2_db": float(c.g_dc2_db), "com_elapsed_s": float(res.elapsed_s)}
