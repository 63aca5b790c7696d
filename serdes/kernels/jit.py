"""``@njit`` bound on first call: the ahead-of-time compiled twin of a kernel when
``serdes precompile`` built one for these sources, else numba's JIT, imported only then.

A kernel module on a default run's path writes ``from serdes.kernels.jit import njit``
and decorates as with numba's. The decorated function is a :class:`Kernel`; its first
call binds it:

- to the function of the AOT extension module (:mod:`serdes.kernels.aot`) when the
  module exists under the key of the current sources and the kernel is in it; each
  call then checks that the arguments have exactly the compiled types (numba's AOT
  wrapper would reinterpret an array of another dtype of the same size) and hands
  any other call to the JIT;
- else to numba's dispatcher: the first kernel of a module that needs the JIT turns
  every Kernel of that module into ``numba.njit(**options)(function)`` and puts the
  dispatchers in the module's namespace (the kernels that call helpers find
  dispatchers there; numba's cache keys them as before). A module may define
  ``_numba_globals()``, the names its kernels need from numba (intrinsics, tables),
  set in its namespace first.

``SERDES_AOT=off`` (or 0, no, false, empty) turns the AOT module off. A module that is
absent, stale (another key) or fails to load gives the JIT path; a load failure is
logged once. Attributes other than calling (``signatures``, ``py_func`` aside) are
the dispatcher's.
"""

from __future__ import annotations

import functools
import hashlib
import importlib.util
import logging
import os
import platform
import sys
import threading
from pathlib import Path

import numpy as np

from serdes import buildcache
from serdes.kernels import aot

log = logging.getLogger(__name__)
_OFF = ("", "off", "0", "no", "none", "false")
_state: dict = {"loaded": False, "module": None}
_jitted: set[str] = set()
_lock = threading.RLock()   # threads of a split run may bind the same kernel at once
_KINDS = {"float64": np.float64, "int64": np.int64, "uint64": np.uint64, "uint8": np.uint8}


class Kernel:
    """An @njit function not bound yet (see the module's text)."""

    def __init__(self, fn, options: dict):
        functools.update_wrapper(self, fn)
        self.py_func, self.options = fn, options
        self._target = self._dispatcher = None

    def __call__(self, *args):
        t = self._target
        if t is None:
            t = self._target = _bind(self)
        return t(*args)

    def __getattr__(self, name):
        if name.startswith("__") or name in ("py_func", "options", "_target", "_dispatcher"):
            raise AttributeError(name)
        return getattr(dispatcher(self), name)

    def __repr__(self) -> str:
        return f"<Kernel {self.py_func.__module__}.{self.py_func.__qualname__}>"


def njit(*args, **options):
    """numba.njit's decorator, bound on first call (see the module's text)."""
    if args and callable(args[0]) and not options:
        return Kernel(args[0], {})
    return lambda fn: Kernel(fn, options)


def dispatcher(k):
    """numba's dispatcher of kernel ``k`` (its module's kernels all turned to the JIT)."""
    if not isinstance(k, Kernel):
        return k
    with _lock:
        if k._dispatcher is None:
            _jit_module(sys.modules[k.py_func.__module__])
    return k._dispatcher


def _jit_module(mod) -> None:
    """Every Kernel of ``mod`` as numba's dispatcher, also in the module's namespace."""
    import numba

    names = vars(mod)
    if mod.__name__ not in _jitted and "_numba_globals" in names:
        names.update(names["_numba_globals"]())
    _jitted.add(mod.__name__)
    for name, obj in list(names.items()):
        if isinstance(obj, Kernel) and obj.py_func.__module__ == mod.__name__:
            if obj._dispatcher is None:
                obj._dispatcher = numba.njit(**obj.options)(obj.py_func)
                _light_cache_loads(obj._dispatcher)
            names[name] = obj._dispatcher


def _light_cache_loads(disp) -> None:
    """Load ``disp``'s machine code from numba's on-disk cache without refreshing the
    whole target context first. numba's cache does that refresh before every load: the
    first one imports every lowering registry (numba.np.arraymath among them, whose BLAS
    check imports scipy.linalg), about 0.1 s of a short run's start on the JIT, for code
    that is already compiled. A cached kernel needs only numba's runtime (NRT), whose
    symbols its code calls; a kernel numba has to compile (no cache entry, or a stale
    one) still gets the full refresh, which its compiler does first. Only our own
    dispatchers load this way. Left as numba's where its cache lacks the expected parts."""
    cache = getattr(disp, "_cache", None)
    load = getattr(cache, "_load_overload", None)
    guard = getattr(cache, "_guard_against_spurious_io_errors", None)
    if load is None or guard is None:
        return
    from numba.core.runtime import rtsys

    def load_overload(sig, target_context):
        rtsys.initialize(target_context)
        with guard():
            return load(sig, target_context)
        return None   # (the guard swallowed a spurious I/O error: compile instead)

    cache.load_overload = load_overload


def _bind(k: Kernel):
    key = f"{k.py_func.__module__.rsplit('.', 1)[-1]}.{k.py_func.__name__}"
    module = aot_module() if key in aot.KERNELS else None
    fn = getattr(module, aot.export_name(key), None) if module is not None else None
    if fn is None:
        return dispatcher(k)
    checks = [_check(t) for t in aot.KERNELS[key][1]]

    def call(*args):
        if len(args) == len(checks) and all(c(a) for c, a in zip(checks, args)):
            return fn(*args)
        return dispatcher(k)(*args)

    call.aot = fn
    return call


def _check(t: str):
    """A test that a value has exactly the type ``t`` (numba syntax, as in aot.KERNELS)."""
    if "[" in t:
        dtype, ndim = np.dtype(_KINDS[t[:t.index("[")]]), t.count(":") - 1
        return lambda a: (type(a) is np.ndarray and a.dtype == dtype and a.ndim == ndim
                          and a.flags.c_contiguous and a.flags.writeable)
    if t == "float64":
        return lambda a: type(a) is float or type(a) is np.float64
    if t == "boolean":
        return lambda a: type(a) is bool or type(a) is np.bool_
    return lambda a: (type(a) is int or type(a) is np.int64) and -2**63 <= a < 2**63


def enabled() -> bool:
    return os.environ.get("SERDES_AOT", "on").strip().lower() not in _OFF


def source_key() -> str:
    """The key the AOT module is stored under: SHA-256 of the sources of its kernels'
    modules and of this loader and the builder, the installed numba, llvmlite and NumPy,
    Python, and the CPU (its name and flags: the module is compiled for this host)."""
    here = Path(__file__).resolve().parent
    h = hashlib.sha256(f"{sys.version} {np.__version__} {platform.machine()} "
                       f"{buildcache.installed('numba')} {buildcache.installed('llvmlite')}"
                       .encode())
    mods = sorted({k.split(".")[0] for k in aot.KERNELS} | {"jit", "aot", "aot_build", "args"})
    for m in mods:
        h.update(m.encode() + b"\0" + (here / f"{m}.py").read_bytes())
    try:
        with open("/proc/cpuinfo", "rb") as f:
            h.update(b"".join(ln for ln in f.read().splitlines(True)
                              if ln.startswith((b"model name", b"flags")))[:4096])
    except OSError:
        pass
    return h.hexdigest()[:32]


def module_dir() -> Path | None:
    """Where the AOT module of these sources is stored (None: no cache folder)."""
    base = buildcache.cache_dir()
    return None if base is None else base / "aot" / source_key()


def aot_module():
    """The AOT extension module of these sources, loaded once, or None."""
    with _lock:
        if not _state["loaded"]:
            _load()
    return _state["module"]


def _load() -> None:
    _state["loaded"] = True
    where = module_dir() if enabled() else None
    found = sorted(where.glob(f"{aot.MODULE_NAME}*.so")) if where and where.is_dir() else []
    if found:
        try:
            spec = importlib.util.spec_from_file_location(aot.MODULE_NAME, found[0])
            mod = importlib.util.module_from_spec(spec)
            spec.loader.exec_module(mod)
            _state["module"] = mod
        except Exception as e:  # a broken file: the JIT, never a wrong result
            log.warning("serdes: precompiled kernels in %s not used (%s); using numba",
                        found[0], e)


def compiled_here() -> bool:
    """Whether numba compiled a kernel in this process rather than load it from its
    on-disk cache: the caches are cold (a first run) or stale, so the kernels not
    called yet will compile too."""
    if not _jitted:
        return False
    from numba.core.registry import CPUDispatcher

    return any(isinstance(obj, CPUDispatcher) and obj.stats.cache_misses
               for name in list(_jitted) for obj in list(vars(sys.modules[name]).values()))


def compile_ahead(keys, stop) -> None:
    """Compile the kernels ``keys`` (``module.name`` in :data:`aot.KERNELS`) for the
    argument types of their table signature, in this order, checking ``stop()`` before
    each: numba keeps each one in its on-disk cache, from which another process (a
    forked child that calls it with those types) loads it instead of compiling it."""
    from numba.core import sigutils

    for key in keys:
        if stop():
            return
        module, name = key.split(".")
        k = getattr(importlib.import_module(f"serdes.kernels.{module}"), name)
        argtypes, _ = sigutils.normalize_signature(f"none({', '.join(aot.KERNELS[key][1])})")
        dispatcher(k).compile(tuple(argtypes))
