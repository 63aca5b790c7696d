"""Shared test helpers, and how the suite shares the cores (pytest-xdist)."""

import os
import tempfile
from pathlib import Path


def _cores() -> int:
    """The cores this process may run on (a taskset or a cgroup's CPU set counts)."""
    try:
        return len(os.sched_getaffinity(0))
    except AttributeError:  # not on Linux
        return os.cpu_count() or 1


# Each xdist worker is one process on one core: the COM searches' kernel threads
# (numba's thread count, serdes/kernels/threads.py) get the worker's share of the cores
# instead of a thread per core in every worker (2 workers x 2 threads on 2 cores only add
# switches). Set before serdes (and numba) is imported below; a value the user set is
# kept. The kernels' chunks are independent rows, so the thread count changes no result.
if os.environ.get("PYTEST_XDIST_WORKER_COUNT") and "NUMBA_NUM_THREADS" not in os.environ:
    _share = _cores() // int(os.environ["PYTEST_XDIST_WORKER_COUNT"])
    os.environ["NUMBA_NUM_THREADS"] = str(max(1, _share))

# numpy's BLAS with one thread, as the `serdes` command runs it (serdes/cli.py), when numpy
# has not loaded it yet: the suite's in-process commands then run as the command does,
# and xdist's workers do not each spin extra BLAS threads on the shared cores.
if "numpy" not in __import__("sys").modules:
    for _name in ("OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS"):
        os.environ.setdefault(_name, "1")

# `serdes run` keeps its CTLE choices and the precompiled kernels (`serdes precompile`)
# in the user's cache folder: the tests (and the processes they start) use a folder of
# their own, set here, when the conftest is imported, so that a kernel called while the
# test modules are collected does not find the user's precompiled module either (the
# suite tests numba's JIT; tests/test_aot.py builds a module of its own).
_TEST_CACHE = tempfile.TemporaryDirectory(prefix="serdes-test-cache-")
os.environ["SERDES_CACHE_DIR"] = _TEST_CACHE.name

import pytest  # noqa: E402

from serdes.config import Config  # noqa: E402

CHANNELS = Path(__file__).resolve().parents[1].parent / "shared" / "channels"


def ideal_config(**sections) -> Config:
    """A link with no ISI: flat channel, no CTLE, no AFE bandwidth limit, no TX edge,
    no TX FFE, no ADC, no jitter, a one-tap FFE and no DFE."""
    data = {
        "link": {"window_ui": 256, "pulse_ui": 16},
        "tx": {"ffe": [1.0], "main": 0, "rise_time_s": 0.0, "snr_db": 200.0, "rlm": 1.0},
        "channel": {"model": "ideal"},
        "ctle": {"model": "none"},
        "afe": {"peaking_m": 0.0, "bandwidth_hz": 0.0},
        "noise": {"rj_ui": 0.0, "sj_ui": 0.0},
        "adc": {"bits": 0, "enob": 0.0},
        "ffe": {"taps": 1, "pre": 0},
        "dfe": {"taps": 0},
    }
    for name, values in sections.items():
        data.setdefault(name, {}).update(values)
    return Config(data)


@pytest.fixture
def channels_dir():
    if not CHANNELS.is_dir():
        pytest.skip(f"real channel data not found at {CHANNELS} (the shared/ folder beside "
                    "the checkout)")
    return CHANNELS


# The default link before the loss split, the CTLE search and ENOB 6 (the package-trace
# skin share of the Annex 93A line at 26.5625 GHz, the CTLE fixed at -8 dB, ENOB 5):
# tests that pin numbers of that link, or need its error rate, build it with these.
EARLIER_DEFAULT = ["channel.skin_fraction=0.6980985932251722", "ctle.auto=false",
                   "adc.enob=5"]


def earlier_default(*overrides) -> Config:
    return Config.default().with_overrides([*EARLIER_DEFAULT, *overrides])


# the DFE error propagation model's own error against counts (a factor): counted / model
# 0.95-1.11 on real links (benchmarks/mlse_fair.py --only propagation and the unprecoded
# 2-tap links of benchmarks/stat_vs_counted_fuzz.py, in the model's docstring; one link
# with 71 % residual ISI at 1.64), 0.96 with SJ 0.1 UI and 1.06 with dual-Dirac jitter
# (tests/test_statistical.py); the interleaved ADC's chain per output phase 1.15 with SJ
# unprecoded (tests/test_tiadc_ber.py; 1.29 before it had the next symbols)
PROPAGATION_MODEL_ERROR = 1.25


def assert_propagation_model_holds(label: str, res, prop: dict, key: str) -> None:
    """The propagation model's ``prop[key]`` against the count ``res``: inside the 99 %
    interval of its error bursts (nearly independent events; the bits of one burst are
    not), scaled by its bit errors per burst and widened by PROPAGATION_MODEL_ERROR."""
    from serdes.metrics.ber import clopper_pearson

    bursts = sum(res.bursts.values())
    lo, hi = clopper_pearson(bursts, res.bits, 0.99)
    per = res.bit_errors / bursts
    print(f"\n{label}: counted {res.ber:.3e} ({res.bit_errors} errors in {bursts} bursts), "
          f"{key} {prop[key]:.3e}, correct feedback {prop['ber_correct_feedback']:.3e}; "
          f"interval [{lo * per:.3e}, {hi * per:.3e}]")
    assert lo * per / PROPAGATION_MODEL_ERROR <= prop[key] <= hi * per * PROPAGATION_MODEL_ERROR




# -- the suite on all cores (pytest-xdist: `-n auto --dist loadgroup` in pyproject.toml) --

@pytest.hookimpl(tryfirst=True)
def pytest_xdist_auto_num_workers(config):
    """`-n auto`: one worker process per core this process may use; none (the tests run
    in this process, as without xdist) on one core or when the command line names one
    test file. PYTEST_XDIST_AUTO_NUM_WORKERS still decides when set."""
    if os.environ.get("PYTEST_XDIST_AUTO_NUM_WORKERS"):
        return None  # xdist's own hook reads it
    files = {arg.split("::")[0] for arg in config.args}
    if len(files) == 1 and next(iter(files)).endswith(".py"):
        return 0
    cores = _cores()
    return cores if cores > 1 else 0


# Work is handed out a group at a time: a test file is a group (its module fixtures are
# built once, in one worker), and the test files that compile the same heavy kernels are
# one group, so that one worker compiles them on a cold numba cache while the other runs
# other files (the COM files: serdes/kernels/com_*). The groups are the scheduler's own
# (below), not xdist_group marks: xdist 3.8 marks a group by renaming the test's node id,
# which pytest 9.2 no longer takes (its loadgroup then hands out single tests).
SHARED_KERNEL_GROUPS = {"tests/test_com": "com"}


def _group(nodeid: str) -> str:
    path = nodeid.split("::", 1)[0]
    for prefix, group in SHARED_KERNEL_GROUPS.items():
        if path.startswith(prefix):
            return group
    return path


@pytest.hookimpl(tryfirst=True)
def pytest_xdist_make_scheduler(config, log):
    """`--dist loadgroup` (pyproject's addopts) hands out the groups above."""
    if config.getvalue("dist") != "loadgroup":
        return None
    from xdist.scheduler import LoadScopeScheduling

    class FileGroups(LoadScopeScheduling):
        def _split_scope(self, nodeid: str) -> str:
            return _group(nodeid)

    return FileGroups(config, log)
