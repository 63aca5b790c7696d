"""Short runs start fast: the modules a run needs do not import heavy scipy parts, and
the interval formula without scipy.stats equals scipy.stats' beta quantiles."""

import subprocess
import sys

import numpy as np
import pytest
from scipy import stats

from serdes.metrics.ber import clopper_pearson


@pytest.mark.parametrize("k, n", [(0, 10), (1, 10), (5, 10), (10, 10), (85, 7_999_528),
                                  (3, 1_000_000_000), (0, 1), (0, 99_769), (0, 10**12)])
def test_clopper_pearson_equals_the_beta_quantiles(k, n):
    lo, hi = clopper_pearson(k, n, 0.95)
    ref_lo = 0.0 if k == 0 else stats.beta.ppf(0.025, k, n - k + 1)
    ref_hi = 1.0 if k == n else stats.beta.ppf(0.975, k + 1, n - k)
    assert lo == pytest.approx(ref_lo, rel=1e-12, abs=0)
    assert hi == pytest.approx(ref_hi, rel=1e-12)


def test_a_run_imports_no_heavy_scipy_module():
    code = ("import io, sys, contextlib, serdes.cli\n"
            "with contextlib.redirect_stdout(io.StringIO()):\n"
            "    serdes.cli.main(['run', '--set', 'link.symbols=20000', '--no-stat',"
            " '--no-progress'])\n"
            "print(sorted(m for m in ('scipy.stats', 'scipy.signal', 'scipy.optimize', 'scipy.fft', "
            "'matplotlib', 'skrf', 'dask') if m in sys.modules))")
    assert _heavy_modules_loaded(code) == "[]"


def test_a_run_imports_no_sweep_machinery():
    """`serdes run` draws its progress line with serdes.sweep.progress; the sweep package
    resolves its other names on first use, so a run loads no grid, result-file, local or
    Dask runner module."""
    code = ("import io, sys, contextlib, serdes.cli\n"
            "with contextlib.redirect_stdout(io.StringIO()):\n"
            "    serdes.cli.main(['run', '--set', 'link.symbols=20000', '--no-stat',"
            " '--no-progress'])\n"
            "print(sorted(m for m in sys.modules if m.startswith('serdes.sweep.')))")
    assert _heavy_modules_loaded(code) == "['serdes.sweep.progress']"


def test_the_sweep_package_still_exports_its_names():
    import serdes.sweep as sweep
    from serdes.sweep import grid, runner

    assert sweep.Grid is grid.Grid and sweep.run_sweep is runner.run_sweep
    assert set(sweep.__all__) <= set(dir(sweep))
    with pytest.raises(AttributeError):
        sweep.no_such_name


def test_the_run_modules_do_not_import_scipy_linalg():
    """The equalizer design, the noise budget and the statistical engine use NumPy's
    linear algebra (serdes/dsp/linalg.py). numba imports scipy.linalg when it compiles a
    kernel (its BLAS check), not when it loads one from its cache
    (test_cached_kernels_load_without_numbas_lowering_registries), so this checks the
    imports before any kernel runs."""
    code = ("import sys, serdes.cli\n"
            "serdes.cli.build_parser()\n"
            "import serdes.build, serdes.report, serdes.engines.stat, serdes.dsp.design\n"
            "import serdes.dsp.whitening, serdes.impairments\n"
            "print(sorted(m for m in ('scipy.linalg', 'matplotlib', 'skrf') "
            "if m in sys.modules))")
    assert _heavy_modules_loaded(code) == "[]"


def test_the_counting_modules_do_not_import_scipy_special():
    """A split run (serdes run --threads N) forks its workers once the link is built, so
    what the parent imports before is serial time on every core: the counting path
    (build, pipeline, counters, the split's driver) leaves scipy.special to the interval
    and Q-function calls that need it."""
    code = ("import sys, serdes.cli\n"
            "serdes.cli.build_parser('run')\n"
            "import serdes.build, serdes.report, serdes.engines.run, serdes.engines.blocks_run\n"
            "import serdes.metrics.ber as ber\n"
            "before = 'scipy.special' in sys.modules\n"
            "ber.clopper_pearson(3, 1000)\n"
            "print(before, 'scipy.special' in sys.modules)")
    assert _heavy_modules_loaded(code) == "False True"


def test_a_run_without_errors_imports_no_scipy_special():
    """A run that counts no error (every short run of a working link) takes its interval
    from the closed form of Beta(1, n) and its statistical BER without scipy.special."""
    code = ("import io, sys, contextlib, serdes.cli\n"
            "with contextlib.redirect_stdout(io.StringIO()):\n"
            "    serdes.cli.main(['run', '--set', 'link.symbols=20000', '--no-progress'])\n"
            "print('scipy.special' in sys.modules)")
    assert _heavy_modules_loaded(code) == "False"


def test_a_short_run_starts_without_walking_its_objects_again_and_again():
    """The CLI raises the collector's young-generation threshold while a command runs:
    numba's registries and our modules (about 120k objects) were walked by about 260
    collections of a short run with Python's default (700), 0.12-0.19 s CPU."""
    code = ("import gc, io, sys, contextlib, serdes.cli\n"
            "n = [0]\n"
            "gc.callbacks.append(lambda phase, info: n.__setitem__(0, n[0] + (phase == 'start')))\n"
            "with contextlib.redirect_stdout(io.StringIO()):\n"
            "    serdes.cli.main(['run', '--set', 'link.symbols=20000', '--no-progress'])\n"
            "print(n[0])")
    assert int(_heavy_modules_loaded(code)) <= 10


def test_the_cli_gives_back_the_callers_collector_threshold(capsys):
    """cli.main in a caller's process (a test, a notebook) leaves its gc setting as it
    was, also when argparse exits."""
    import gc

    from serdes.cli import GC_YOUNG_THRESHOLD, main

    before = gc.get_threshold()
    assert before[0] != GC_YOUNG_THRESHOLD
    assert main(["config", "--keys"]) == 0
    assert gc.get_threshold() == before
    with pytest.raises(SystemExit):
        main(["run", "--no-such-option"])
    assert gc.get_threshold() == before
    capsys.readouterr()


def _heavy_modules_loaded(code: str) -> str:
    """What ``code``, run in a fresh interpreter, prints: the heavy modules it found."""
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         check=True)
    return out.stdout.strip()


def test_the_text_summary_computes_only_what_it_prints(capsys):
    """``serdes run`` without --json asks for the statistical BER only (stat="ber", no
    eyes): the same stat BER and text as the full report, which keeps its eye sections."""
    import json

    from serdes.build import build
    from serdes.commands.run import format_summary
    from serdes.config import Config
    from serdes.report import run_report
    import serdes.cli

    over = ["link.symbols=20000"]
    system = build(Config.default().with_overrides(over))
    full = run_report(system, stat=True).to_dict()
    short = run_report(system, stat="ber", eye=False).to_dict()
    assert short["stat_ber"] == full["stat_ber"] > 0
    assert "eye" not in short and full["eye"]["statistical"] and full["eye"]["counted"]
    gone = {"adc_clip_probability", "dfe_error_propagation"}
    assert gone <= set(full["stat"]) and not gone & set(short["stat"])
    same = {k: v for k, v in full["stat"].items() if k not in gone}
    assert json.dumps(short["stat"], sort_keys=True) == json.dumps(same, sort_keys=True)
    assert serdes.cli.main(["run", "--set", over[0], "--no-progress"]) == 0
    text = capsys.readouterr().out.strip().splitlines()
    want = format_summary({**full, "threads": 1}).splitlines()
    assert len(text) == len(want)
    assert [a for a in text if not a.startswith("time")] == \
        [b for b in want if not b.startswith("time")]


@pytest.mark.parametrize("stat", [["--no-stat"], []])
def test_a_default_run_imports_no_module_of_a_feature_it_does_not_use(stat):
    """No aggressors, no interleaved-ADC model, no MLSE: their modules (and the other
    commands' modules, COM's parameter tables) stay unloaded in a default run, also in
    the default command's statistical BER."""
    code = ("import io, sys, contextlib, serdes.cli\n"
            "with contextlib.redirect_stdout(io.StringIO()):\n"
            "    serdes.cli.main(['run', '--set', 'link.symbols=20000', '--no-progress', "
            + ", ".join(repr(a) for a in stat) + "])\n"
            "print(sorted(m for m in ('serdes.crosstalk', 'serdes.engines.crosstalk', "
            "'serdes.icn', 'serdes.tiadc.stat', 'serdes.tiadc.lanes', 'serdes.dsp.mlse', "
            "'serdes.com', 'serdes.commands.com', 'serdes.commands.sweep', "
            # the statistical eye, clipping and DFE propagation (the --json sections), the
            # MLSE whitening, the precoder's kernels
            "'serdes.engines.stat.views', 'serdes.engines.stat.clip', "
            "'serdes.engines.stat.error_propagation', 'serdes.dsp.whitening', "
            "'serdes.kernels.precode') "
            "if m in sys.modules))")
    assert _heavy_modules_loaded(code) == "[]"


def test_the_lazily_loaded_names_are_the_modules_own():
    """``serdes.engines.stat.dfe_error_propagation`` (loaded when first asked for) is the
    function of its module, and an unknown name still raises AttributeError."""
    import serdes.engines.stat as st
    from serdes.engines.stat.error_propagation import dfe_error_propagation

    assert st.dfe_error_propagation is dfe_error_propagation
    from serdes.engines.stat import dfe_error_propagation as again

    assert again is dfe_error_propagation
    with pytest.raises(AttributeError):
        st.no_such_name


def _console(args: list[str]) -> subprocess.CompletedProcess:
    """``serdes ARGS`` through the installed entry point, with an exit handler that says
    whether the interpreter's teardown ran."""
    code = ("import atexit, sys, serdes.cli\n"
            "atexit.register(lambda: print('teardown ran', file=sys.stderr))\n"
            f"sys.argv[1:] = {args!r}\n"
            "serdes.cli.console()")
    return subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)


def test_serdes_run_ends_without_the_interpreters_teardown():
    """``serdes run`` ends at once after flushing its output (the teardown was a third of
    a short run's CPU): the whole JSON arrives through the pipe, the exit code is the
    command's, and the teardown's exit handlers do not run; other commands exit as usual."""
    import json

    from serdes.cli import QUICK_EXIT

    assert "run" in QUICK_EXIT
    args = ["run", "--json", "--no-progress", "--no-cache", "--set", "link.symbols=20000"]
    out = _console(args)
    assert out.returncode == 0 and "teardown ran" not in out.stderr, out.stderr
    # the same command through main() and the usual exit, in a fresh process as well (in
    # this process earlier tests may have changed state that moves the last bits)
    usual = subprocess.run([sys.executable, "-c", "import sys, serdes.cli\n"
                            f"sys.exit(serdes.cli.main({args!r}))"],
                           capture_output=True, text=True)
    assert usual.returncode == 0, usual.stderr
    got, want = json.loads(out.stdout), json.loads(usual.stdout)
    for r in (got, want):
        del r["elapsed_s"], r["symbols_per_s"]
    assert got == want
    bad = _console(["run", "--set", "link.no_such_key=1"])
    assert bad.returncode == 2 and bad.stdout == "" and "teardown ran" not in bad.stderr
    assert bad.stderr.count("\n") == 1 and bad.stderr.startswith("serdes: error:")
    keys = _console(["config", "--keys"])
    assert keys.returncode == 0 and "teardown ran" in keys.stderr


def test_the_top_selection_equals_numpys_sort_of_the_top():
    """_rj_classes' selection (instead of numba's np.partition, costly to compile):
    the same values as np.sort(vs)[first:], ties and presorted input included."""
    import numpy as np

    from serdes.kernels.stat_rows import _top_sorted

    rng = np.random.default_rng(5)
    cases = [rng.random(n) for n in (1, 2, 3, 10, 257, 4000)]
    cases += [rng.integers(0, 4, 300).astype(float), np.ones(50), np.arange(100.0),
              np.arange(100.0)[::-1].copy(), rng.random(1000) ** 8]
    for vs in cases:
        for first in sorted({0, vs.size // 2, int(0.85 * (vs.size - 1)), vs.size - 1}):
            got = _top_sorted(vs, first)
            assert np.array_equal(got, np.sort(vs)[first:])
            assert np.array_equal(got, np.sort(np.partition(vs, first)[first:]))


def test_the_stable_order_equals_numpys_stable_argsort():
    import numpy as np

    from serdes.kernels.stat_batch import _stable_order

    rng = np.random.default_rng(6)
    for keys in (np.zeros(1, np.int64), rng.integers(0, 5, 200), rng.integers(0, 3000, 700),
                 np.arange(30)[::-1].copy(), np.full(9, 7)):
        keys = keys.astype(np.int64)
        assert np.array_equal(_stable_order(keys), np.argsort(keys, kind="stable"))


@pytest.mark.parametrize("given, want", [(None, "1"), ("3", "3")])
def test_the_command_runs_numpy_with_one_blas_thread_unless_told(given, want):
    """`serdes` sets OPENBLAS_NUM_THREADS / MKL_NUM_THREADS to 1 before numpy loads its
    BLAS (importing serdes.cli imports no numpy, so the setting takes effect); extra BLAS
    threads only spun beside our small matrices and took the cores of split runs'
    worker processes. A value the user set is kept."""
    import os

    env = {k: v for k, v in os.environ.items()
           if k not in ("OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS")}
    if given is not None:
        env["OPENBLAS_NUM_THREADS"] = given
    code = ("import os, sys, serdes.cli\n"
            "print('numpy' in sys.modules, os.environ['OPENBLAS_NUM_THREADS'],"
            " os.environ['MKL_NUM_THREADS'])")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         env=env, check=True).stdout.split()
    assert out == ["False", want, "1"]


_LOAD_ALL = """
import importlib, json, pkgutil, sys, contextlib, io
import serdes.cli
import serdes.kernels as K
from serdes.kernels import jit

with contextlib.redirect_stdout(io.StringIO()) as out:
    serdes.cli.main({args!r})
report = json.loads(out.getvalue())
seen = sorted(m for m in ('numba.np.arraymath', 'numba.np.linalg', 'scipy.linalg')
              if m in sys.modules)
from numba.core.registry import CPUDispatcher
# (a module whose kernels went to the JIT holds numba's dispatchers in their place)
kernels = {{id(o): o for m in pkgutil.iter_modules(K.__path__)
           for o in vars(importlib.import_module('serdes.kernels.' + m.name)).values()
           if isinstance(o, (jit.Kernel, CPUDispatcher))
           and o.py_func.__module__.startswith("serdes.kernels.")}}.values()
hits = sum(sum(jit.dispatcher(k).stats.cache_hits.values()) for k in kernels)
misses = sum(sum(jit.dispatcher(k).stats.cache_misses.values()) for k in kernels)
# every entry of numba's cache for these sources, loaded (machine code linked: a symbol
# the light load left out would fail here); the light loads first, before a module that
# loads as numba does imports the registries
light = lambda k: 'load_overload' in vars(jit.dispatcher(k)._cache)
kernels = sorted(kernels, key=lambda k: not light(k))
assert any(light(k) for k in kernels)
loaded = 0
for k in kernels:
    d = jit.dispatcher(k)
    magic = d.targetctx.codegen().magic_tuple()
    for key in d._cache._cache_file._load_index():
        if key[1] == magic and key[0] not in d.overloads:
            d.compile(key[0])
            loaded += 1
misses_after = sum(sum(jit.dispatcher(k).stats.cache_misses.values()) for k in kernels)
# a function numba must compile still gets the whole context (np.linalg's lowering)
import numba, numpy as np
solve = numba.njit(lambda a, b: np.linalg.solve(a, b))
x = solve(np.array([[2.0, 1.0], [1.0, 3.0]]), np.array([1.0, 2.0]))
print(json.dumps(dict(report=report, seen=seen, hits=hits, misses=misses, loaded=loaded,
                      misses_after=misses_after, x=x.tolist())))
"""


def test_cached_kernels_load_without_numbas_lowering_registries():
    """On numba's JIT with a warm cache, a run loads its kernels' machine code without
    numba's lowering registries (scipy.linalg among their imports, about 0.1 s of a short
    run): the run's report is that of the first run, which compiled or loaded as numba
    does; every cached entry of every kernel then links in that process; and a function
    numba must compile afterwards still gets the whole context."""
    import json
    import os

    env = {**os.environ, "SERDES_AOT": "off"}
    args = ["run", "--json", "--no-progress", "--no-cache", "--set", "link.symbols=20000"]
    first = subprocess.run([sys.executable, "-c", "import sys, serdes.cli\n"
                            f"sys.exit(serdes.cli.main({args!r}))"],
                           capture_output=True, text=True, env=env)
    assert first.returncode == 0, first.stderr
    out = subprocess.run([sys.executable, "-c", _LOAD_ALL.format(args=args)],
                         capture_output=True, text=True, env=env)
    assert out.returncode == 0, out.stderr
    got = json.loads(out.stdout)
    want = json.loads(first.stdout)
    for r in (got["report"], want):
        del r["elapsed_s"], r["symbols_per_s"]
    assert got["report"] == want
    assert got["misses"] == 0 and got["hits"] >= 5, got
    assert got["seen"] == [], got["seen"]       # no registry was imported for the loads
    assert got["misses_after"] == 0             # every entry loaded from the cache
    assert got["x"] == pytest.approx([0.2, 0.6], rel=1e-12)


def test_a_com_run_imports_neither_scipy_signal_nor_stats(tmp_path):
    """`serdes com` convolves its PMFs with serdes.com.noise.fft_convolve (scipy.fft
    only): scipy.signal and the scipy.stats it pulls in took 0.44 s of every COM run's
    start."""
    from tests.test_com import _write_s2p

    f = np.arange(0.0, 50.0 + 1e-9, 0.01)
    s21 = 10 ** (-(0.4 * f) / 20) * np.exp(-2j * np.pi * f * 0.5)     # 0.4 dB/GHz, 0.5 ns
    path = _write_s2p(tmp_path / "line.s2p", f, s21)
    code = ("import io, sys, contextlib, serdes.cli\n"
            "with contextlib.redirect_stdout(io.StringIO()):\n"
            f"    rc = serdes.cli.main(['com', {str(path)!r}, '--preset', '100gbase-kr4'])\n"
            "print(rc, sorted(m for m in ('scipy.signal', 'scipy.stats') if m in sys.modules))")
    assert _heavy_modules_loaded(code) == "0 []"
