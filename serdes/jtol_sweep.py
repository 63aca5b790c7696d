"""Jitter tolerance on the sweep machinery: one point per SJ frequency, run in local
worker processes (``spawn``, one BLAS thread each) or on a Dask cluster, exactly as the
points of ``serdes sweep`` (:mod:`serdes.sweep.local`, :mod:`serdes.sweep.cluster`).

A point builds the system from the base config (a plain dict, so it travels to any
worker), calibrates the loop, solves the statistical tolerance and, for ``counted`` or
``both``, bisects the counted one around it (:class:`serdes.jtol.Jtol`). The same inputs
give the same row wherever it runs. A worker keeps the last Jtol it built (one per
sweep), so the points of one process share the calibration and the statistical solves
below ``f_floor``.
"""

from __future__ import annotations

import hashlib
import json
import sys
import time
from typing import Any

_CACHE: dict = {}  # sweep id -> Jtol, in each worker process


MAX_SYMBOLS = 10**13   # a counted run's limit (link.symbols)


def default_symbols(target: float, bps: int) -> int:
    """Symbols of a counted run at BER ``target`` when --symbols is not given: ten
    allowed bit errors (``bps`` bits per symbol), at least 1e6 and at most a run's
    limit (MAX_SYMBOLS: fewer allowed errors below BER 1e-12)."""
    import math

    n = 10 / target / bps      # (inf below BER ~1e-308)
    return MAX_SYMBOLS if not n < MAX_SYMBOLS else max(1_000_000, int(math.ceil(n)))


def _jtol(base: dict, sweep: str, cache: bool = False):
    jt = _CACHE.get(sweep)
    if jt is None:
        from serdes.build import build
        from serdes.config import Config
        from serdes.jtol import Jtol

        jt = Jtol(build(Config(base), cache=cache))
        _CACHE.clear()
        _CACHE[sweep] = jt
    return jt


def jtol_point(*, point: dict[str, Any], base: dict, sweep: str, target: float,
               method: str, symbols: int | None, cache: bool = False) -> dict[str, Any]:
    """The row of one frequency: the statistical point and, if asked, the counted one;
    ``cache``: the worker's link build may take the CTLE choice from the on-disk cache."""
    from serdes.sweep.point import error_message

    t0 = time.perf_counter()
    f = float(point["sj_hz"])
    row: dict[str, Any] = {"sj_hz": f, "status": "ok", "message": None}
    try:
        jt = _jtol(base, sweep, cache)
        sp = jt.stat_point(f, target)
        row.update({k: v for k, v in sp.items() if k != "sj_hz"})
        row["stat_sj_ui"] = sp["sj_ui"]
        if method in ("counted", "both"):
            link = jt.system.link
            bps = 2 if link.modulation_order == 4 else 1
            n = int(symbols) if symbols else default_symbols(target, bps)
            cp = jt.counted_point(f, target, n, min(sp["sj_ui"], 500.0))
            row.update(counted_sj_ui=cp["sj_ui"], counted_fail_ui=cp.get("sj_ui_fail"),
                       counted_runs=cp["runs"], symbols_per_run=n)
    except Exception as exc:  # a failing frequency is recorded, the others go on
        row["status"] = "error"
        row["message"] = error_message(exc)
    row["elapsed_s"] = time.perf_counter() - t0
    return row


def run_jtol(config, freqs, *, target: float, method: str, symbols: int | None = None,
             workers: int = 0, scheduler: str | None = None,
             timeout: float | None = None, jtol=None,
             cache: bool = False, progress=None) -> list[dict[str, Any]]:
    """Rows of :func:`jtol_point` for every frequency, in the order of ``freqs``:
    ``workers`` local processes (0: in this process), capped like a sweep's, or the
    Dask scheduler at ``scheduler``. ``jtol``: the :class:`~serdes.jtol.Jtol` of this
    config, already built here (used by the points run in this process). ``cache``: the
    workers' link builds may take the CTLE choice from the on-disk cache.
    ``progress(done, total)``: called once before the first frequency and as each ends."""
    from serdes.sweep.cluster import _DaskExecutor
    from serdes.sweep.local import _LocalExecutor, cap_workers

    base = config.to_dict()
    key = json.dumps([base, target, method, symbols], sort_keys=True, default=str)
    sweep = "jtol-" + hashlib.sha256(key.encode()).hexdigest()[:16]
    points = [{"sj_hz": float(f)} for f in freqs]
    kwargs = dict(base=base, sweep=sweep, target=float(target), method=method,
                  symbols=symbols, cache=cache)
    if scheduler:
        executor = _DaskExecutor(scheduler, timeout)
    else:
        n, note = cap_workers(workers) if workers else (0, None)
        if note:
            print(f"serdes: {note}", file=sys.stderr)
        executor = _LocalExecutor(min(n, len(points)))
        if n == 0 and jtol is not None:
            _CACHE.clear()
            _CACHE[sweep] = jtol
    rows = {}
    if progress is not None:
        progress(0, len(points))
    with executor:
        for done, row in enumerate(executor.run(points, kwargs, fn=jtol_point), 1):
            rows[row["sj_hz"]] = row
            if progress is not None:
                progress(done, len(points))
    return [rows[p["sj_hz"]] for p in points]
