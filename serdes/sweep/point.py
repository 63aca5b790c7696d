"""One sweep point: base config + the point's values + its own seed -> one result row.

:func:`run_point` is what local worker processes and Dask workers call. It never
raises for a failing point: the row gets ``status = "error"`` and the message.
"""

from __future__ import annotations

import copy
import math
import time
from typing import Any

from serdes.sweep.grid import point_id, point_seed


def point_config(base: dict[str, dict[str, Any]], point: dict[str, Any]):
    """The validated :class:`~serdes.config.Config` of a point and its seed."""
    from serdes.config import Config

    data = copy.deepcopy(base)
    for name, value in point.items():
        section, key = name.split(".")
        data[section][key] = value
    seed = seed_of(base, point)
    data["link"]["seed"] = seed
    return Config(data), seed


def seed_of(base: dict[str, dict[str, Any]], point: dict[str, Any]) -> int:
    """The point's seed, from the config seed (the point's own link.seed if swept)."""
    return point_seed(point.get("link.seed", base["link"]["seed"]), point)


def run_point(base: dict[str, dict[str, Any]], point: dict[str, Any], *,
              engine: str = "pulse", stat: bool = False, sweep: str = "",
              cache: bool = False) -> dict[str, Any]:
    """Run one point and return its row (plain Python values); the COM columns of its
    channel set are :func:`com_point`'s. ``cache``: the link build may take the CTLE
    choice from the on-disk cache (:mod:`serdes.buildcache`; the same link, bit for
    bit)."""
    t0 = time.perf_counter()
    row: dict[str, Any] = dict(point)
    row["status"] = "ok"
    seed = seed_of(base, point)
    try:
        cfg, _ = point_config(base, point)
        from serdes.build import build
        from serdes.report import run_report

        from serdes.report import short_run_warning

        report = run_report(build(cfg, cache=cache), engine=engine, stat=stat).to_dict()
        row.update(report_columns(report, stat=stat))
        # a point shorter than its warm-up: `serdes run`'s warning, kept with the row
        message = short_run_warning(cfg, report) or None
    except Exception as exc:  # a failing point is recorded, the sweep goes on
        row["status"] = "error"
        message = error_message(exc)
    row["elapsed_s"] = time.perf_counter() - t0
    row["seed"] = seed
    row["point"] = point_id(point)
    row["sweep"] = sweep
    row["message"] = message
    return row


def com_point(base: dict[str, dict[str, Any]], point: dict[str, Any], *, com: tuple,
              sweep: str = "") -> dict[str, Any]:
    """The COM columns of a point's channel set alone (the sweep runs this once per
    distinct :func:`serdes.build.com_channel_args` and gives the columns to every point
    of that set). Never raises: ``status`` "error" and the message instead."""
    row: dict[str, Any] = {"point": point_id(point), "sweep": sweep, "status": "ok",
                           "message": None}
    try:
        from serdes.build import build_com_channels
        from serdes.com.columns import com_columns

        cfg, _ = point_config(base, point)
        row.update(com_columns(build_com_channels(cfg), com[0], com[1]))
    except Exception as exc:  # the points of this channel set get the error
        row["status"] = "error"
        row["message"] = error_message(exc)
    return row


def error_row(point: dict[str, Any], message: str, *, base: dict[str, dict[str, Any]],
              sweep: str = "") -> dict[str, Any]:
    """The row of a point that could not run at all (e.g. its worker died)."""
    return {**point, "status": "error", "elapsed_s": None, "seed": seed_of(base, point),
            "point": point_id(point), "sweep": sweep, "message": message}


def error_message(exc: BaseException) -> str:
    from serdes.errors import SerdesError

    text = str(exc).strip().splitlines()
    text = text[0] if text else ""
    if isinstance(exc, SerdesError):
        return text
    return f"{type(exc).__name__}: {text}" if text else type(exc).__name__


def report_columns(report: dict[str, Any], *, stat: bool = False) -> dict[str, Any]:
    """The columns of a run report (:meth:`serdes.report.RunReport.to_dict`): the counted
    results, the eye heights of
    the counted slicer eye (``eye_<eye>_mv``, ``veo_mv``: at the report's counted
    target rate) and, with ``stat``, the statistical BER and vertical eye opening at
    each of the statistical engine's target rates (``stat_veo_mv_<target>``).
    Parts missing from the report (e.g. no eye model for an MLSE receiver) are left
    out; the row has empty cells there."""
    lo, hi = report["ber_ci"]
    out: dict[str, Any] = {
        "ber": float(report["ber"]), "ber_ci_lo": float(lo), "ber_ci_hi": float(hi),
        "ser": float(report["ser"]), "bit_errors": int(report["bit_errors"]),
        "symbol_errors": int(report["symbol_errors"]), "bits": int(report["bits"]),
        "symbols": int(report["symbols"]), "snr_db": float(report["snr_db"]),
    }
    eye = report.get("eye") if isinstance(report.get("eye"), dict) else {}
    counted = eye.get("counted") or {}
    for name, e in (counted.get("eyes") or {}).items():
        if isinstance(e, dict) and _number(e.get("height_mv")):
            out["eye_mv" if name == "eye" else f"eye_{name}_mv"] = float(e["height_mv"])
    if _number(counted.get("vertical_eye_opening_mv")):
        out["veo_mv"] = float(counted["vertical_eye_opening_mv"])
    for key in ("icn_v", "crosstalk_rms_v"):   # with crosstalk aggressors only
        if _number(report.get(key)):
            out[key] = float(report[key])
    fec = report.get("fec")
    if isinstance(fec, dict):  # post-FEC columns (fec.mode = "kp4")
        out.update({"fec_codewords": int(fec["codewords"]),
                    "fec_uncorrectable": int(fec["uncorrectable"]),
                    "rs_ser": float(fec["symbol_error_ratio"]), "flr": float(fec["flr"]),
                    "flr_model": float(fec["flr_model"]),
                    "flr_binomial": float(fec["flr_binomial"]),
                    "post_fec_ber": float(fec["post_fec_ber"]),
                    "post_fec_ber_model": float(fec["post_fec_ber_model"])})
    if stat:
        out["stat_ber"] = (float(report["stat_ber"]) if _number(report.get("stat_ber"))
                           else None)
        st = eye.get("statistical") or {}
        targets, veo = st.get("targets"), st.get("vertical_eye_opening_mv")
        if isinstance(targets, list) and isinstance(veo, list) and len(targets) == len(veo):
            for t, v in sorted(zip(targets, veo)):
                if _number(t) and _number(v):
                    out[f"stat_veo_mv_{float(t):.0e}"] = float(v)
    return out


def _number(x: Any) -> bool:
    return isinstance(x, (int, float)) and not isinstance(x, bool) and math.isfinite(x)
