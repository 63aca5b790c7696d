"""Kernels compiled ahead for another process (serdes.kernels.jit.compile_ahead): on a
first run the parent of a split run, done counting, compiles the statistical kernels its
forked child calls last, and the child loads them from numba's on-disk cache. The cache
finds them only if they were compiled for exactly the argument types of the child's
calls, which the tests check with the calls a detailed ``_stat_early`` makes."""

from __future__ import annotations

import multiprocessing as mp
import os
import pickle
import subprocess
import sys
import time
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]

# a detailed _stat_early in a fresh process: every kernel's first call from Python (per
# signature) in order, with the arguments of the calls to the kernels compiled ahead
_RECORD = """
import pickle, sys
from numba.core.dispatcher import Dispatcher
from conftest import EARLIER_DEFAULT
from serdes.build import build
from serdes.config import Config
import serdes.report as report

system = build(Config.default().with_overrides(EARLIER_DEFAULT).with_overrides(
    ["link.symbols=100000"]))
first, order, calls = Dispatcher._compile_for_args, [], []

def recording(self, *a, **k):
    f = self.py_func
    key = f"{f.__module__.rsplit('.', 1)[1]}.{f.__name__}"
    order.append(key)
    if key in report._LATE_STAT_KERNELS:
        calls.append((key, pickle.dumps(a)))
    return first(self, *a, **k)

Dispatcher._compile_for_args = recording
report._stat_early(system, True)
with open(sys.argv[1], "wb") as f:
    pickle.dump((order, calls), f)
"""

_AHEAD = """
import serdes.report as report
from serdes.kernels import jit
assert not jit.compiled_here()
jit.compile_ahead(report._LATE_STAT_KERNELS, lambda: False)
print(jit.compiled_here())
"""

_REPLAY = """
import importlib, pickle, sys
from serdes.kernels import jit
with open(sys.argv[1], "rb") as f:
    order, calls = pickle.load(f)
for key, a in calls:
    mod, name = key.split(".")
    d = jit.dispatcher(getattr(importlib.import_module(f"serdes.kernels.{mod}"), name))
    d(*pickle.loads(a))
    print(key, sum(d.stats.cache_hits.values()), sum(d.stats.cache_misses.values()))
print(jit.compiled_here())
"""


def _py(code: str, *argv, cache: Path | None = None) -> list[str]:
    env = dict(os.environ, SERDES_AOT="off", PYTHONPATH=os.pathsep.join(
        [str(ROOT), str(ROOT / "tests"), os.environ.get("PYTHONPATH", "")]))
    if cache is not None:
        env["NUMBA_CACHE_DIR"] = str(cache)
    out = subprocess.run([sys.executable, "-c", code, *map(str, argv)], env=env,
                         capture_output=True, text=True)
    assert out.returncode == 0, out.stderr
    return out.stdout.split("\n")[:-1]


@pytest.fixture(scope="module")
def recorded(tmp_path_factory) -> Path:
    where = tmp_path_factory.mktemp("calls") / "calls.pkl"
    _py(_RECORD, where)
    return where


def test_the_late_kernels_are_the_ones_the_statistical_sections_call_last(recorded):
    """The list the parent compiles ahead, reversed, is the order in which a detailed
    _stat_early first calls those kernels, after the long-compiling _rj_joint_classes,
    and no kernel is first called after them."""
    import serdes.report as report

    order, _ = pickle.loads(recorded.read_bytes())
    late = list(reversed(report._LATE_STAT_KERNELS))
    assert order[-len(late):] == late
    assert "stat_joint._rj_joint_classes" in order[:-len(late)]


def test_kernels_compiled_ahead_are_loaded_by_the_process_that_calls_them(recorded,
                                                                          tmp_path):
    """One process compiles the four kernels ahead, on an empty cache: it compiled.
    Another replays _stat_early's calls of them on that cache: each is a cache hit,
    nothing is compiled there."""
    import serdes.report as report

    assert _py(_AHEAD, cache=tmp_path) == ["True"]
    got = _py(_REPLAY, recorded, cache=tmp_path)
    assert sorted(got[:-1]) == sorted(f"{k} 1 0" for k in report._LATE_STAT_KERNELS)
    assert got[-1] == "False"


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
