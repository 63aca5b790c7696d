"""Sweep results as curves: BER waterfalls on a log axis with confidence intervals.

Rows are dicts as :func:`serdes.sweep.read_results` returns them (or the path of a
result file). Only rows with status "ok" are drawn. Every other swept key
(``section.key`` column) must be constant within a curve: choose a ``hue`` for it or
fix it with ``where``, so that two settings are never silently mixed on one line.
"""

from __future__ import annotations

import math
import os
from typing import Any, Iterable, Sequence

import matplotlib

from serdes.errors import SerdesError
from serdes.plot import new_axes

KP4_BER = 2.4e-4  # pre-FEC BER limit of RS(544,514) "KP4" in IEEE 802.3 112G PAM4 links
_MARKERS = "osD^v<>ph*"


def load_rows(rows, where: dict[str, Any] | None = None) -> list[dict[str, Any]]:
    """Rows of a result file or list, status "ok" only, filtered by ``where``."""
    if isinstance(rows, (str, os.PathLike)):
        from serdes.sweep import read_results

        rows = read_results(rows)
    rows = list(rows)
    if not rows:
        raise SerdesError("no rows to plot")
    columns = list(rows[0])
    for key, value in (where or {}).items():
        if key not in columns:
            raise SerdesError(f"where {key}: no such column; columns are "
                              + ", ".join(columns))
        rows = [r for r in rows if _same(r.get(key), value)]
    ok = [r for r in rows if r.get("status", "ok") == "ok"]
    if not ok:
        raise SerdesError("no rows with status 'ok' to plot"
                          + (" (after the where filter)" if where else ""))
    return ok


def _follows(rows, key: str, hue: str) -> bool:
    """Whether ``key`` takes one value per value of ``hue`` in ``rows``."""
    seen: dict = {}
    return all(seen.setdefault(_hashable(r.get(hue)), _hashable(r.get(key)))
               == _hashable(r.get(key)) for r in rows)


def curves(rows, x: str | None = None, y: str | Sequence[str] = "ber", hue: str | None = None,
           ax=None, *, where: dict[str, Any] | None = None, threshold: float | None = KP4_BER,
           ci: bool = True, log: bool | None = None, title: str | None = None):
    """One curve of ``y`` against ``x`` per value of ``hue``.

    ``y``: a column or several (e.g. ``("ber", "stat_ber")``: same colour, one line
    style each). BER-like columns (``ber``, ``ser``, ``stat_ber``...) go on a log axis,
    ``ber`` with its 95% confidence interval (``ber_ci_lo``/``ber_ci_hi``) as error
    bars; a point with no errors is drawn as an open triangle at its upper bound.
    ``threshold``: the horizontal line of the FEC limit on BER plots (None: none).
    Returns the Axes.
    """
    rows = load_rows(rows, where)
    columns = list(rows[0])
    swept = [c for c in columns if _is_key(c)]
    ys = [y] if isinstance(y, str) else list(y)
    if x is None:
        # the only swept key that varies apart from the hue and the keys that move with
        # it (zipped with it: one value per hue value)
        varying = [k for k in swept if k != hue and len({_hashable(r.get(k)) for r in rows}) > 1
                   and not (hue and _follows(rows, k, hue))]
        if len(varying) != 1:
            raise SerdesError("choose the x axis (--x): the swept keys are "
                              + (", ".join(swept) or "none")
                              + (f" (varying apart from the hue: {', '.join(varying)})"
                                 if hue and len(varying) > 1 else ""))
        x = varying[0]
    for name, what in [(x, "x"), (hue, "hue")] + [(c, "y") for c in ys]:
        if name is not None and name not in columns:
            raise SerdesError(f"{what} {name}: no such column; columns are "
                              + ", ".join(columns))
    # one row per (hue, x): rows that share both differ in another key (zipped keys
    # that move with x are fine)
    cells: dict[tuple, list[dict]] = {}
    for r in rows:
        cells.setdefault((_hashable(r.get(hue)) if hue else None, _hashable(r.get(x))),
                         []).append(r)
    for group in cells.values():
        if len(group) > 1:
            other = [k for k in columns if k not in (x, hue) and (_is_key(k) or k == "point")
                     and len({_hashable(r.get(k)) for r in group}) > 1]
            other = [k for k in other if k != "point"] or ["point"]
            raise SerdesError(f"the results also vary in {', '.join(other)}: use it as the "
                              f"hue or fix it with where (--where {other[0]}=VALUE)")
    if log is None:
        log = all(_ber_like(c) for c in ys)

    ax = new_axes(ax)
    groups: dict[Any, list[dict]] = {}
    for r in rows:
        groups.setdefault(_hashable(r.get(hue)) if hue else None, []).append(r)
    categorical = any(isinstance(r.get(x), (str, list)) for r in rows)
    cats = list(dict.fromkeys(_hashable(r.get(x)) for r in rows)) if categorical else []
    colours = [p["color"] for p in matplotlib.rcParams["axes.prop_cycle"]]
    zeros = False
    drawn = 0   # points drawn (a figure of none is refused: it would look like a result)
    handles: list = []  # legend entries in drawing order (ber before stat_ber)
    for gi, (hv, grp) in enumerate(sorted(groups.items(), key=lambda kv: _sort_key(kv[0]))):
        colour = colours[gi % len(colours)]
        xs_key = (lambda r: cats.index(_hashable(r.get(x)))) if categorical else \
            (lambda r: float(r.get(x)))
        grp = sorted(grp, key=xs_key)
        xs = [xs_key(r) for r in grp]
        for yi, col in enumerate(ys):
            label = _label(hue, hv, col, len(ys))
            style = ("-", "--", ":", "-.")[yi % 4]
            marker = _MARKERS[gi % len(_MARKERS)]
            vals = [_float(r.get(col)) for r in grp]
            if log:
                pos = [(xv, v, r) for xv, v, r in zip(xs, vals, grp) if v is not None and v > 0]
            else:
                pos = [(xv, v, r) for xv, v, r in zip(xs, vals, grp) if v is not None]
            drawn += len(pos)
            if pos:
                px, py = [p[0] for p in pos], [p[1] for p in pos]
                if col == "ber" and ci and "ber_ci_lo" in columns and "ber_ci_hi" in columns:
                    lo = [max(v - _or(_float(p[2].get("ber_ci_lo")), v), 0.0)
                          for p, v in zip(pos, py)]
                    hi = [max(_or(_float(p[2].get("ber_ci_hi")), v) - v, 0.0)
                          for p, v in zip(pos, py)]
                    art = ax.errorbar(px, py, yerr=[lo, hi], color=colour, linestyle=style,
                                      marker=marker, markersize=4, capsize=2, label=label)
                else:
                    art, = ax.plot(px, py, color=colour, linestyle=style, marker=marker,
                                   markersize=4, label=label)
            else:
                art, = ax.plot([], [], color=colour, linestyle=style, label=label)
            if label:
                handles.append(art)
            if log and col == "ber":  # no errors counted: the upper bound of the CI
                zx = [xv for xv, v in zip(xs, vals) if v == 0]
                zy = [_float(r.get("ber_ci_hi")) for v, r in zip(vals, grp) if v == 0]
                zz = [(a, b) for a, b in zip(zx, zy) if b is not None and b > 0]
                if zz:
                    ax.plot([a for a, _ in zz], [b for _, b in zz], linestyle="none",
                            marker="v", markerfacecolor="none", color=colour)
                    zeros = True
    if not drawn and not zeros:
        raise SerdesError(f"no finite {'positive ' if log else ''}value of "
                          f"{', '.join(ys)} to plot in {len(rows)} rows")
    if zeros:
        handles += ax.plot([], [], linestyle="none", marker="v", markerfacecolor="none",
                           color="grey", label="no errors: 95% upper bound")
    if log:
        ax.set_yscale("log")
        if threshold is not None and any(_ber_like(c) and "ser" not in c for c in ys):
            handles.append(ax.axhline(threshold, color="tab:red", linestyle="--",
                                      linewidth=1, label=f"KP4 FEC limit {threshold:.1e}"))
    if categorical:
        ax.set_xticks(range(len(cats)))
        ax.set_xticklabels([str(c) for c in cats])
    ax.set_xlabel(x)
    ax.set_ylabel("BER" if all(c in ("ber", "stat_ber") for c in ys) else ", ".join(ys))
    ax.grid(True, which="both" if log else "major", alpha=0.3)
    if handles:
        old = [h for h in ax.get_legend_handles_labels()[0] if h not in handles]
        ax.legend(handles=old + handles, fontsize=8, title=hue, title_fontsize=8)
    if title:
        ax.set_title(title)
    return ax


def parse_where(items: Iterable[str]) -> dict[str, Any]:
    """``["key=value", ...]`` -> ``{key: value}`` (values in TOML syntax)."""
    from serdes.config import parse_value

    out = {}
    for item in items:
        if "=" not in item:
            raise SerdesError(f"--where {item!r}: expected COLUMN=VALUE")
        k, v = item.split("=", 1)
        out[k.strip()] = parse_value(v)
    return out


# -- helpers --------------------------------------------------------------------------
def _is_key(column: str) -> bool:
    from serdes.sweep.results import is_config_column

    return is_config_column(column)


def _ber_like(column: str) -> bool:
    c = column.lower()
    return "ber" in c or c == "ser" or c.endswith("_ser")


def _float(v) -> float | None:
    if v is None or isinstance(v, (str, list)):
        return None
    v = float(v)
    return v if math.isfinite(v) else None


def _or(v, default):
    return default if v is None else v


def _hashable(v):
    return tuple(v) if isinstance(v, list) else v


def _same(a, b) -> bool:
    if isinstance(a, (int, float)) and isinstance(b, (int, float)) \
            and not isinstance(a, bool) and not isinstance(b, bool):
        return math.isclose(float(a), float(b), rel_tol=1e-12, abs_tol=0.0)
    return _hashable(a) == _hashable(b)


def _sort_key(v):
    if v is None:
        return (0, 0, "")
    if isinstance(v, (int, float)):
        return (1, float(v), "")
    return (2, 0, str(v))


def _fmt(v) -> str:
    if isinstance(v, float):
        return f"{v:g}"
    if isinstance(v, tuple):
        return "[" + ", ".join(_fmt(x) for x in v) + "]"
    return str(v)


def _label(hue, hv, col, n_y) -> str | None:
    parts = []
    if hue:
        parts.append(f"{hue.split('.', 1)[-1]}={_fmt(hv)}")
    if n_y > 1:
        parts.append(col)
    return ", ".join(parts) or None
