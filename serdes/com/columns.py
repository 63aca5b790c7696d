"""COM as result columns of a sweep point (``serdes sweep --com PRESET``).

The point's channel set comes from its config (:func:`serdes.build.build_com_channels`:
the touchstone thru and file aggressors, or the synthetic loss line); the columns are
those of the worst package case (the channel's COM).
"""

from __future__ import annotations

from typing import Any

__all__ = ["COM_COLUMNS", "com_columns"]

COM_COLUMNS = ("com_db", "com_case", "com_a_s_mv", "com_a_ni_mv", "com_eye_height_mv",
               "com_vec_db", "com_fom_db", "com_g_dc_db", "com_g_dc2_db", "com_elapsed_s")


def com_columns(cfg, preset: str, overrides=()) -> dict[str, Any]:
    from serdes.build import build_com_channels
    from serdes.com.core import compute_com

    thru, fext, nxt = build_com_channels(cfg)
    res = compute_com(thru, fext, nxt, preset, list(overrides))
    c = min(res.cases, key=lambda c: c.com_db)
    return {"com_db": float(c.com_db), "com_case": int(c.package_case),
            "com_a_s_mv": 1e3 * c.a_s_v, "com_a_ni_mv": 1e3 * c.a_ni_v,
            "com_eye_height_mv": 1e3 * c.eye_height_v,
            "com_vec_db": None if c.vec_db is None else float(c.vec_db),
            "com_fom_db": float(c.fom_db), "com_g_dc_db": float(c.g_dc_db),
            "com_g_dc2_db": float(c.g_dc2_db), "com_elapsed_s": float(res.elapsed_s)}
