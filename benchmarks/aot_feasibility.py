"""Can a short ``serdes run`` skip numba's start-up? Ahead-of-time compiled kernels.

    python3 benchmarks/aot_feasibility.py record DIR [--symbols 100000]
    python3 benchmarks/aot_feasibility.py build DIR
    python3 benchmarks/aot_feasibility.py replay DIR

``record`` runs ``serdes run --set link.symbols=N`` in this process with the JIT kernels
and stores, for every @njit kernel of serdes.kernels that Python called, its numba
signature and each call's arguments (copied before the call: some update state in place)
and results. ``build`` compiles those kernels with numba.pycc into one extension module
(DIR/aot_proto*.so), with each kernel's own flags (fastmath, error_model) and the host
CPU, as the JIT compiles them. ``replay`` is meant for a fresh process: it imports NumPy
and the extension only, asserts that numba was not imported, calls every recorded call
and compares the results with the JIT's to the bit; it prints the CPU and wall time of
the imports and of the calls.
"""

from __future__ import annotations

import argparse
import contextlib
import importlib.util
import io
import pickle
import sys
import time
from pathlib import Path

T0 = (time.perf_counter(), time.process_time())


def _copy(x):
    import numpy as np

    if isinstance(x, np.ndarray):
        return x.copy()
    if isinstance(x, tuple):
        return tuple(_copy(v) for v in x)
    return x


def record(out: Path, symbols: int) -> None:
    from numba.core.dispatcher import Dispatcher

    import serdes.cli
    import serdes.kernels as pkg

    calls: dict[str, list] = {}
    kernels: dict[str, Dispatcher] = {}
    import importlib
    import pkgutil

    mods = [importlib.import_module(f"serdes.kernels.{info.name}")
            for info in pkgutil.iter_modules(pkg.__path__)]
    for mod in mods:
        for name, obj in list(vars(mod).items()):
            if isinstance(obj, Dispatcher) and obj.py_func.__module__ == mod.__name__:
                kernels[f"{mod.__name__.rsplit('.', 1)[1]}.{name}"] = obj
    wrappers = {}
    for key, d in kernels.items():
        def wrapped(*a, _k=key, _d=d):
            before = _copy(a)
            res = _d(*a)
            calls.setdefault(_k, []).append((before, _copy(a), _copy(res)))
            return res

        wrappers[id(d)] = wrapped
    for mod in mods:  # also where another module imported a kernel by name
        for name, obj in list(vars(mod).items()):
            if id(obj) in wrappers:
                setattr(mod, name, wrappers[id(obj)])
    with contextlib.redirect_stdout(io.StringIO()) as text:
        serdes.cli.main(["run", "--set", f"link.symbols={symbols}", "--no-progress"])
    sigs = {}
    for key in calls:
        d = kernels[key]
        assert len(d.nopython_signatures) == 1, (key, d.nopython_signatures)
        sigs[key] = d.nopython_signatures[0]
    out.mkdir(parents=True, exist_ok=True)
    with open(out / "calls.pkl", "wb") as f:  # plain NumPy objects: no numba to read it
        pickle.dump({"calls": calls, "text": text.getvalue()}, f)
    with open(out / "sigs.pkl", "wb") as f:
        pickle.dump(sigs, f)
    for key, sig in sigs.items():
        print(f"  {key:34s} {len(calls[key]):5d} calls")


def build(out: Path) -> None:
    import importlib

    from serdes.kernels.aot_build import compile_kernels

    with open(out / "sigs.pkl", "rb") as f:
        sigs = pickle.load(f)
    exports = {}
    for key, sig in sigs.items():
        modname, name = key.split(".")
        kernel = getattr(importlib.import_module(f"serdes.kernels.{modname}"), name)
        exports[key.replace(".", "__")] = (kernel, sig)
    t = time.perf_counter(), time.process_time()
    compile_kernels("aot_proto", exports, str(out))
    print(f"  built {len(sigs)} kernels in {time.perf_counter() - t[0]:.1f} s wall, "
          f"{time.process_time() - t[1]:.1f} s CPU: {sorted(out.glob('aot_proto*.so'))}")


def replay(out: Path) -> int:
    import numpy as np

    t_np = time.perf_counter(), time.process_time()
    path = next(out.glob("aot_proto*.so"))
    spec = importlib.util.spec_from_file_location("aot_proto", path)
    aot = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(aot)
    t_aot = time.perf_counter(), time.process_time()
    after_import = sorted(m for m in ("numba", "llvmlite", "scipy") if m in sys.modules)
    with open(out / "calls.pkl", "rb") as f:
        rec = pickle.load(f)
    t_load = time.perf_counter(), time.process_time()
    bad = 0
    spent = {}
    for key, rows in rec["calls"].items():
        fn = getattr(aot, key.replace(".", "__"))
        t = time.process_time()
        got = []
        for before, after, res in rows:
            a = _copy(before)
            got.append((a, fn(*a)))
        spent[key] = time.process_time() - t
        for (a, r), (_, after, res) in zip(got, rows):
            for x, y in zip(a + (r,), after + (res,)):
                if not _same(x, y):
                    bad += 1
    t_end = time.perf_counter(), time.process_time()
    print(f"  imported after the AOT module: {after_import}; after the replay: "
          f"{sorted(m for m in ('numba', 'llvmlite', 'scipy') if m in sys.modules)}")
    print(f"  interpreter + import numpy: CPU {t_np[1] - 0:.3f} s (process so far)")
    print(f"  import the AOT module: wall {t_aot[0] - t_np[0]:.3f} s  CPU "
          f"{t_aot[1] - t_np[1]:.3f} s")
    print(f"  replay {sum(len(v) for v in rec['calls'].values())} calls: CPU "
          f"{sum(spent.values()):.3f} s (reading the record {t_load[1] - t_aot[1]:.3f} s)")
    for key, s in spent.items():
        print(f"    {s * 1e3:7.1f} ms  {key} ({len(rec['calls'][key])} calls)")
    print(f"  results differing from the JIT's: {bad} "
          f"(of {sum(len(v) for v in rec['calls'].values())} calls)")
    del np, t_end
    return 1 if bad else 0


def _same(x, y) -> bool:
    import numpy as np

    if isinstance(x, tuple):
        return isinstance(y, tuple) and len(x) == len(y) and all(map(_same, x, y))
    if isinstance(x, np.ndarray) or isinstance(y, np.ndarray):
        x, y = np.asarray(x), np.asarray(y)
        return x.shape == y.shape and x.dtype == y.dtype and x.tobytes() == y.tobytes()
    return type(x) is type(y) and (x == y or (x != x and y != y))


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("step", choices=["record", "build", "replay"])
    ap.add_argument("dir", type=Path)
    ap.add_argument("--symbols", type=int, default=100_000)
    a = ap.parse_args(argv)
    if a.step == "record":
        record(a.dir, a.symbols)
    elif a.step == "build":
        build(a.dir)
    else:
        return replay(a.dir)
    return 0


if __name__ == "__main__":
    sys.exit(main())
