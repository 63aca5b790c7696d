"""Kernels compiled ahead for another process (serdes.kernels.jit.compile_ahead): on a
first run the parent of a split run, done counting, compiles the statistical kernels its
forked child calls last, and the child loads them from numba's on-disk cache. The cache
finds them only if they were compiled for exactly the argument types the child's calls
have, which the first test checks across two processes."""

from __future__ import annotations

import multiprocessing as mp
import os
import subprocess
import sys
import time
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]

_AHEAD = """
from serdes.kernels import jit
assert not jit.compiled_here()
jit.compile_ahead(["stat._tail_points", "stat_joint._merge_close"], lambda: False)
print(jit.compiled_here())
"""

_CALL = """
import numpy as np
from serdes.kernels import jit, stat, stat_joint
stat.tail_points(np.array([0.25, 0.5, 0.25]), 1, 0.1, np.array([0.05, 0.2]), 0.03, True)
stat_joint.merge_close_rows(np.array([[1.0, 1.001, 2.0]]), np.zeros((1, 3)),
                            np.array([[0.2, 0.3, 0.5]]), 0.01)
for k in (stat._tail_points, stat_joint._merge_close):
    s = jit.dispatcher(k).stats
    print(sum(s.cache_hits.values()), sum(s.cache_misses.values()))
print(jit.compiled_here())
"""


def _py(code: str, cache: Path) -> list[str]:
    env = dict(os.environ, NUMBA_CACHE_DIR=str(cache), SERDES_AOT="off",
               PYTHONPATH=str(ROOT) + os.pathsep + os.environ.get("PYTHONPATH", ""))
    out = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True,
                         text=True)
    assert out.returncode == 0, out.stderr
    return out.stdout.split("\n")[:-1]


def test_a_kernel_compiled_ahead_is_loaded_by_the_process_that_calls_it(tmp_path):
    """One process compiles two kernels ahead (one with a boolean argument), on an empty
    cache: it compiled. Another calls them through their checking wrappers: each is a
    cache hit, nothing compiled there."""
    assert _py(_AHEAD, tmp_path) == ["True"]
    assert _py(_CALL, tmp_path) == ["1 0", "1 0", "False"]


def test_compile_ahead_stops_when_asked():
    from serdes.kernels import jit, stat_joint

    before = len(jit.dispatcher(stat_joint._merge_close).signatures)
    asked = []
    jit.compile_ahead(["stat_joint._merge_close"], lambda: asked.append(1) or True)
    assert asked == [1]
    assert len(jit.dispatcher(stat_joint._merge_close).signatures) == before


@pytest.mark.skipif("fork" not in mp.get_all_start_methods(),
                    reason="no fork on this platform: no child to compile for")
@pytest.mark.parametrize("stat", ["ber", "all"])
def test_a_split_run_compiles_the_childs_last_kernels_while_it_waits(monkeypatch, stat):
    """Cold caches (kernels compiled in this run) and a child still computing when the
    counting ends: the parent compiles the kernels the child calls last, the last first,
    and stops when the child has answered; warm caches: nothing."""
    from conftest import EARLIER_DEFAULT
    from serdes.build import build
    from serdes.config import Config
    from serdes.kernels import jit
    import serdes.report as report

    system = build(Config.default().with_overrides(EARLIER_DEFAULT).with_overrides(
        ["link.symbols=100000", "link.target_errors=0"]))
    early = report._stat_early

    def slow(*a):
        time.sleep(1.0)
        return early(*a)

    calls = []
    monkeypatch.setattr(report, "_stat_early", slow)
    monkeypatch.setattr(jit, "compile_ahead", lambda keys, stop: calls.append((keys, stop())))
    for cold in (True, False):
        monkeypatch.setattr(jit, "compiled_here", lambda cold=cold: cold)
        report.run_report(system, threads=2, stat=stat)
    want = report._LATE_STAT_KERNELS if stat == "all" else report._LATE_STAT_KERNELS[2:]
    assert calls == [(want, False)]


_ORDER = """
from numba.core.dispatcher import Dispatcher
from conftest import EARLIER_DEFAULT
from serdes.build import build
from serdes.config import Config
import serdes.report as report

system = build(Config.default().with_overrides(EARLIER_DEFAULT).with_overrides(
    ["link.symbols=100000"]))
first = Dispatcher._compile_for_args   # a kernel's first call from Python, per signature

def recording(self, *a, **k):
    f = self.py_func
    print(f"{f.__module__.rsplit('.', 1)[1]}.{f.__name__}")
    return first(self, *a, **k)

Dispatcher._compile_for_args = recording
report._stat_early(system, True)
"""


def test_the_late_kernels_are_the_ones_the_statistical_sections_call_last(tmp_path):
    """The list the parent compiles ahead, reversed, is the order in which a detailed
    _stat_early (in a fresh process) first calls those kernels, after the long-compiling
    _rj_joint_classes, and no kernel is first called after them."""
    import serdes.report as report

    env = dict(os.environ, SERDES_AOT="off", PYTHONPATH=os.pathsep.join(
        [str(ROOT), str(ROOT / "tests"), os.environ.get("PYTHONPATH", "")]))
    out = subprocess.run([sys.executable, "-c", _ORDER], env=env, capture_output=True,
                         text=True)
    assert out.returncode == 0, out.stderr
    order = out.stdout.split()
    late = list(reversed(report._LATE_STAT_KERNELS))
    assert order[-len(late):] == late
    assert "stat_joint._rj_joint_classes" in order[:-len(late)]
