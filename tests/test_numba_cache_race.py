"""numba's on-disk cache shared by processes that compile at the same time.

The suite runs in two worker processes (pytest-xdist) that import the same kernels: on a
cold cache both compile a kernel and save it into the same folder at the same time.
numba writes each index and data file to a unique temporary name and renames it over
the target (numba/core/caching.py, _open_for_write), so a reader sees a whole old file or
a whole new one; two processes saving the same signature write the same file name with
the same key. Here two processes compile the same 8 kernels into a cold cache at once
(started together behind a barrier), then a third loads every one of them from the cache.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time

KERNELS = 8
SCRIPT = r"""
import json, os, sys, time
import numpy as np
import racekernels
go = sys.argv[1]
while go != "-" and not os.path.exists(go):   # start together: both compile at once
    time.sleep(0.001)
x = np.arange(10.0)
fns = [getattr(racekernels, f"k{i}") for i in range(racekernels.N)]
values = [f(x) for f in fns]
print(json.dumps(dict(values=values,
                      hits=[sum(f.stats.cache_hits.values()) for f in fns],
                      misses=[sum(f.stats.cache_misses.values()) for f in fns])))
"""


def _module() -> str:
    lines = ["from numba import njit", f"N = {KERNELS}"]
    for i in range(KERNELS):
        lines += ["", "", "@njit(cache=True)", f"def k{i}(x):", "    s = 0.0",
                  "    for v in x:", f"        s += v * {i + 1}.0", "    return s"]
    return "\n".join(lines) + "\n"


def _start(tmp_path, go):
    env = {**os.environ, "NUMBA_CACHE_DIR": str(tmp_path / "cache"),
           "PYTHONPATH": str(tmp_path)}
    return subprocess.Popen([sys.executable, "-c", SCRIPT, go], env=env, cwd=tmp_path,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)


def _result(proc) -> dict:
    out, err = proc.communicate(timeout=600)  # only against a hung process
    assert proc.returncode == 0, err
    return json.loads(out.strip().splitlines()[-1])


def test_two_processes_compiling_at_once_leave_a_cache_a_third_loads(tmp_path):
    (tmp_path / "racekernels.py").write_text(_module())
    go = tmp_path / "go"
    writers = [_start(tmp_path, str(go)) for _ in range(2)]
    time.sleep(2.0)  # both import numpy and numba, then wait at the barrier
    go.touch()
    expected = [45.0 * (i + 1) for i in range(KERNELS)]  # sum(0..9) * (i + 1)
    for r in map(_result, writers):
        assert r["values"] == expected
    files = os.listdir(tmp_path / "cache")
    assert not [f for f in files if ".tmp." in f]  # every write was renamed into place
    loaded = _result(_start(tmp_path, "-"))
    assert loaded["values"] == expected
    assert loaded["hits"] == [1] * KERNELS and loaded["misses"] == [0] * KERNELS


def test_numba_writes_a_cache_file_under_another_name_then_renames_it(tmp_path):
    """The property the race above relies on, checked directly (a race run seldom hits a
    half-written file even where writes are not atomic): while numba writes a cache
    file, a reader of its name still reads the whole old file; the new one replaces it
    at once when the write ends."""
    from numba.core.caching import IndexDataCacheFile

    target = tmp_path / "kernel.nbi"
    target.write_bytes(b"old index")
    cache_file = IndexDataCacheFile(str(tmp_path), "kernel", source_stamp=None)
    with cache_file._open_for_write(str(target)) as f:
        f.write(b"new index")
        f.flush()
        assert target.read_bytes() == b"old index"
    assert target.read_bytes() == b"new index"
    assert os.listdir(tmp_path) == ["kernel.nbi"]
