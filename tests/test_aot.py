"""Kernels compiled ahead of time (``serdes precompile``, serdes/kernels/aot.py and jit.py):
a short run with them equals the JIT's to the bit and starts no numba; a module of
other sources is not used; arguments of other types go to the JIT."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
RUN = ["run", "--set", "link.symbols=100000", "--no-progress"]


def _env(cache: Path, aot: str = "on") -> dict:
    return dict(os.environ, SERDES_CACHE_DIR=str(cache), SERDES_AOT=aot,
                PYTHONPATH=str(ROOT) + os.pathsep + os.environ.get("PYTHONPATH", ""))


def _py(code: str, env: dict) -> str:
    out = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True,
                         text=True)
    assert out.returncode == 0, out.stderr
    return out.stdout.strip()


@pytest.fixture(scope="module")
def cache(tmp_path_factory) -> Path:
    """A cache folder holding the precompiled kernels of this tree (built once)."""
    if not (shutil.which("cc") or shutil.which("gcc")):
        pytest.skip("no C compiler: numba.pycc cannot link the precompiled module")
    where = tmp_path_factory.mktemp("cache")
    out = subprocess.run([sys.executable, "-m", "serdes.cli", "precompile"],
                         env=_env(where), capture_output=True, text=True)
    assert out.returncode == 0, out.stdout + out.stderr
    return where


def _run_json(env: dict, extra=()) -> dict:
    out = subprocess.run([sys.executable, "-m", "serdes.cli", *RUN, "--json", *extra],
                         env=env, capture_output=True, text=True, check=True).stdout
    d = json.loads(out)
    for timing in ("elapsed_s", "symbols_per_s"):
        d.pop(timing)
    return d


def test_a_precompiled_run_equals_the_jit_run_to_the_bit(cache):
    """The default link (RJ, ADC, FFE + DFE, the statistical BER): the whole JSON report
    with the precompiled kernels equals the one with numba's JIT, every float to the bit
    (a kernel compiled without its own fastmath / error_model flags, for another CPU, or
    called with reinterpreted arguments would change bits)."""
    aot, jit = _run_json(_env(cache)), _run_json(_env(cache, aot="off"))
    assert json.dumps(aot, sort_keys=True) == json.dumps(jit, sort_keys=True)
    text = [subprocess.run([sys.executable, "-m", "serdes.cli", *RUN], env=_env(cache, a),
                           capture_output=True, text=True, check=True).stdout
            for a in ("on", "off")]
    strip = [[ln for ln in t.splitlines() if not ln.startswith("time")] for t in text]
    assert strip[0] == strip[1] and len(strip[0]) >= 8


def test_a_run_mixing_precompiled_and_jit_kernels_equals_the_jit_run(cache):
    """Clock recovery (its loop kernel is not precompiled, numba starts for it) beside
    the precompiled ones in the same process: the same report as on the JIT alone."""
    extra = ["--set", "cdr.mode=mm", "--set", "link.symbols=200000"]
    aot, jit = _run_json(_env(cache), extra), _run_json(_env(cache, aot="off"), extra)
    assert aot["cdr"] and json.dumps(aot, sort_keys=True) == json.dumps(jit, sort_keys=True)


_RECORD = """
import contextlib, io, pickle, sys
import numpy as np
import serdes.cli
import serdes.kernels.jit as j

def copy(x):
    return tuple(map(copy, x)) if isinstance(x, tuple) else (
        x.copy() if isinstance(x, np.ndarray) else x)

calls, bind = [], j._bind

def recording(k):
    fn = bind(k)
    if not hasattr(fn, "aot"):
        return fn
    def call(*args):
        before = copy(args)
        out = fn(*args)
        calls.append((k.py_func.__module__, k.py_func.__name__, before, copy(args), copy(out)))
        return out
    return call

j._bind = recording
with contextlib.redirect_stdout(io.StringIO()):
    # one thread: the split run's statistical sections run in a forked child, whose
    # calls this process would not record
    serdes.cli.main(["run", "--set", "link.symbols=100000", "--no-progress", "--json",
                     "--threads", "1"])
with open(sys.argv[1], "wb") as f:
    pickle.dump(calls, f)
"""


def _bits_equal(x, y) -> bool:
    import numpy as np

    if isinstance(x, tuple):
        return isinstance(y, tuple) and len(x) == len(y) and all(map(_bits_equal, x, y))
    if isinstance(x, np.ndarray):
        return (isinstance(y, np.ndarray) and x.dtype == y.dtype and x.shape == y.shape
                and x.tobytes() == y.tobytes())
    return type(x) is type(y) and x == y


def test_every_precompiled_kernel_equals_its_jit_to_the_bit(cache, tmp_path):
    """Each call a default short run makes to a precompiled kernel, replayed on numba's
    JIT: the same results and the same in-place updates, bit for bit. (Built with pycc's
    default flags, without the kernels' fastmath, the FIR and Taylor-sum kernels gave
    other bits in 72 % and 60 % of their outputs, which the ADC's rounding hid from the
    whole-run report above.)"""
    import importlib
    import pickle

    from serdes.kernels import aot, jit

    rec = tmp_path / "calls.pkl"
    subprocess.run([sys.executable, "-c", _RECORD, str(rec)], env=_env(cache), check=True)
    calls = pickle.loads(rec.read_bytes())
    assert {f"{m.rsplit('.', 1)[1]}.{n}" for m, n, *_ in calls} == set(aot.KERNELS)
    for mod, name, before, after, out in calls:
        d = jit.dispatcher(getattr(importlib.import_module(mod), name))
        args = tuple(x.copy() if hasattr(x, "copy") else x for x in before)
        got = d(*args)
        assert _bits_equal(got, out) and _bits_equal(args, after), f"{mod}.{name}"


_PROBE = ("import io, sys, contextlib, serdes.cli\n"
          "import serdes.kernels.jit as j\n"
          "with contextlib.redirect_stdout(io.StringIO()):\n"
          "    rc = serdes.cli.main(['run', '--set', 'link.symbols=20000', '--no-progress']"
          " + sys.argv[1:])\n"
          "print(rc, j.aot_module() is not None, sorted(m for m in "
          "('numba', 'llvmlite', 'scipy') if m in sys.modules))\n")


def _probe(env: dict, *extra: str) -> str:
    out = subprocess.run([sys.executable, "-c", _PROBE, *extra], env=env,
                         capture_output=True, text=True)
    assert out.returncode == 0, out.stderr
    return out.stdout.strip()


@pytest.mark.parametrize("extra", [(), ("--json",)], ids=["text", "json"])
def test_a_short_run_with_precompiled_kernels_does_not_import_numba(cache, extra):
    """The text summary and the --json report (its eye openings and clip probability
    included) run on the precompiled kernels alone."""
    assert _probe(_env(cache), *extra).split(None, 2) == ["0", "True", "[]"]
    # the same process without them: numba's JIT (the old path)
    rc, used, mods = _py(_PROBE, _env(cache, aot="off")).split(None, 2)
    assert (rc, used) == ("0", "False") and "numba" in mods


def test_a_module_of_other_sources_is_not_used(cache):
    """The key covers the kernels' sources: one changed byte in a kernel module gives
    another key, under which nothing is built, and the run uses numba's JIT."""
    code = ("import pathlib, sys\n"
            "import serdes.kernels.jit as j\n"
            "key = j.source_key()\n"
            "read = pathlib.Path.read_bytes\n"
            "pathlib.Path.read_bytes = lambda p: read(p) + (b'#' if p.name == 'adc.py' "
            "else b'')\n"
            "print(key != j.source_key())\n"
            + _PROBE)
    lines = _py(code, _env(cache)).splitlines()
    assert lines[0] == "True"
    rc, used, mods = lines[1].split(None, 2)
    assert (rc, used) == ("0", "False") and "numba" in mods


def test_arguments_of_other_types_go_to_the_jit(cache):
    """numba's AOT wrapper would take an int64 array as float64 bits (NaN here) or
    crash on float32: the bound kernel checks the types and hands such calls to the
    JIT, which gives what the same values as float64 give."""
    code = ("import sys, numpy as np\n"
            "from serdes.kernels import adc\n"
            "x = np.arange(-5.0, 6.0)\n"
            "a = adc._quantize(x, 0.5, 4)\n"
            "want = (np.clip(np.floor(x / 0.5), -8, 7) + 0.5) * 0.5\n"
            "print('numba' in sys.modules, (a == want).all())\n"
            "b = adc._quantize(np.arange(-5, 6), 0.5, 4)\n"
            "c = adc._quantize(x.astype(np.float32), 0.5, 4)\n"
            "d = adc._quantize(x, 0.5, np.int32(4))\n"
            "print('numba' in sys.modules, (a == b).all() and (a == c).all() and "
            "(a == d).all())\n")
    first, second = _py(code, _env(cache)).splitlines()
    assert first == "False True"
    assert second == "True True"


def test_precompile_check_and_errors(tmp_path):
    out = subprocess.run([sys.executable, "-m", "serdes.cli", "precompile", "--check"],
                         env=_env(tmp_path), capture_output=True, text=True)
    assert out.returncode == 1 and out.stdout.startswith("not built: ")
    env = _env(tmp_path)
    env["SERDES_CACHE_DIR"] = "off"
    out = subprocess.run([sys.executable, "-m", "serdes.cli", "precompile"], env=env,
                         capture_output=True, text=True)
    assert out.returncode == 2 and len(out.stderr.strip().splitlines()) == 1
    assert "cache folder is off" in out.stderr


def test_a_broken_module_file_gives_the_jit(tmp_path):
    """A truncated or foreign file where the module should be: logged, not used."""
    code = ("import serdes.kernels.jit as j, serdes.kernels.aot as a\n"
            "d = j.module_dir(); d.mkdir(parents=True)\n"
            "from importlib.machinery import EXTENSION_SUFFIXES as S\n"
            "(d / (a.MODULE_NAME + S[0])).write_bytes(b'x')\n"
            "print(j.aot_module())\n"
            "from serdes.kernels.adc import quantize\n"
            "print(quantize([0.3], 0.5, 4).tolist())\n")
    out = subprocess.run([sys.executable, "-c", code], env=_env(tmp_path),
                         capture_output=True, text=True)
    assert out.returncode == 0, out.stderr
    assert out.stdout.splitlines() == ["None", "[0.25]"]
    assert "not used" in out.stderr
