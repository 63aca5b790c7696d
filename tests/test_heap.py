"""serdes.heap: with glibc's malloc told to keep freed memory, a repeated run reuses its
pages (no new page faults) and counts exactly what it counts without."""

import json
import os
import platform
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]

SCRIPT = r"""
import json, resource, sys
from serdes.build import build
from serdes.config import Config
from serdes.engines.run import simulate
kept = False
if sys.argv[1] == "keep":
    from serdes.heap import keep_freed_memory
    kept = keep_freed_memory()
system = build(Config.default().with_overrides(["link.symbols=400000"]))
for _ in range(2):                     # kernels, caches, the heap's peak
    simulate(system)
r0 = resource.getrusage(resource.RUSAGE_SELF)
res = simulate(system)
r1 = resource.getrusage(resource.RUSAGE_SELF)
print(json.dumps(dict(kept=kept, faults=r1.ru_minflt - r0.ru_minflt, snr=res.snr_db,
                      errors=res.bit_errors, symbols=res.symbols)))
"""


def _run(mode: str) -> dict:
    out = subprocess.run([sys.executable, "-c", SCRIPT, mode], capture_output=True,
                         text=True, check=True, cwd=ROOT,
                         env={**os.environ, "PYTHONPATH": str(ROOT)})
    return json.loads(out.stdout.strip().splitlines()[-1])


@pytest.mark.skipif(platform.system() != "Linux" or platform.libc_ver()[0] != "glibc",
                    reason="mallopt thresholds are glibc's")
def test_kept_memory_removes_the_page_faults_of_a_repeated_run():
    default, kept = _run("default"), _run("keep")
    assert kept["kept"] and not default["kept"]
    # the same counts: only where the arrays live changed
    assert (kept["snr"], kept["errors"], kept["symbols"]) == (
        default["snr"], default["errors"], default["symbols"])
    # default: the chunks touch new pages (about 200 faults a chunk);
    # kept: the third run finds every page it needs already mapped
    assert default["faults"] > 300
    assert kept["faults"] < default["faults"] / 10


WORKER = r"""
import resource, sys
import numpy as np
if sys.argv[1] == "worker":
    from serdes.sweep.local import _worker_init
    _worker_init()
rng = np.random.default_rng(1)

def chunk():                       # a chunk's worth of 512 KB arrays, made and freed
    a = rng.standard_normal(65536)
    b = np.cumsum(a)
    c = a * b + 1.0
    return float(np.sign(c).sum())

for _ in range(20):
    chunk()
r0 = resource.getrusage(resource.RUSAGE_SELF).ru_minflt
for _ in range(200):
    chunk()
print(resource.getrusage(resource.RUSAGE_SELF).ru_minflt - r0, "numba" in sys.modules)
"""


@pytest.mark.skipif(platform.system() != "Linux" or platform.libc_ver()[0] != "glibc",
                    reason="mallopt thresholds are glibc's")
def test_a_sweep_worker_keeps_freed_memory():
    """A sweep worker process (spawned, no numba imported, as with the precompiled
    kernels) reuses the pages of its chunk arrays like `serdes run` does."""
    def faults(mode):
        out = subprocess.run([sys.executable, "-c", WORKER, mode], capture_output=True,
                             text=True, check=True, cwd=ROOT,
                             env={**os.environ, "PYTHONPATH": str(ROOT)})
        n, numba = out.stdout.split()
        assert numba == "False"
        return int(n)

    plain, worker = faults("plain"), faults("worker")
    assert plain > 200 * 100          # 128 pages per fresh 512 KB array, several a chunk
    assert worker < plain / 100
