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

from serdes.sweep.grid import (Axis, Grid, SweepError, canonical, parse_axis, parse_specs,
                               point_id, point_seed, sweep_id)
from serdes.sweep.point import point_config, run_point
from serdes.sweep.results import ResultFile, read_results
from serdes.sweep.local import default_workers
from serdes.sweep.runner import SweepInterrupted, SweepSummary, run_sweep

__all__ = ["Axis", "Grid", "ResultFile", "SweepError", "SweepInterrupted", "SweepSummary",
           "canonical", "default_workers", "parse_axis", "parse_specs", "point_config",
           "point_id", "point_seed", "read_results", "run_point", "run_sweep", "sweep_id"]
