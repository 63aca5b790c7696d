"""Parameter sweeps: grids of links run locally or on a Dask cluster, resumable results.

>>> from serdes.config import Config
>>> from serdes.sweep import Grid, run_sweep
>>> grid = Grid.parse(["channel.loss_db=20:30:5", "ffe.taps=12,24"])
>>> len(grid)
6
>>> summary = run_sweep(Config.default(), grid, "results.csv", workers=2)  # doctest: +SKIP

``serdes sweep`` is the command-line face of :func:`run_sweep`; ``serdes plot`` draws
its result files (:mod:`serdes.plot.sweep`). Importing this package imports neither
Dask nor matplotlib.
"""

from __future__ import annotations

import importlib

# name -> submodule; imported on first use (PEP 562), so that importing one submodule
# (e.g. serdes.sweep.progress, which every `serdes run` uses for its progress line)
# does not import the grid, result-file, local and Dask runners (~0.07 s CPU)
_WHERE = {
    "Axis": "grid", "Grid": "grid", "SweepError": "grid", "canonical": "grid",
    "parse_axis": "grid", "parse_specs": "grid", "point_id": "grid", "point_seed": "grid",
    "sweep_id": "grid", "point_config": "point", "run_point": "point",
    "ResultFile": "results", "read_results": "results", "default_workers": "local",
    "SweepInterrupted": "runner", "SweepSummary": "runner", "run_sweep": "runner",
}

__all__ = sorted(_WHERE)


def __getattr__(name: str):
    where = _WHERE.get(name)
    if where is None:
        raise AttributeError(f"module 'serdes.sweep' has no attribute {name!r}")
    value = getattr(importlib.import_module(f"serdes.sweep.{where}"), name)
    globals()[name] = value
    return value


def __dir__():
    return sorted(set(globals()) | set(_WHERE))
