"""``serdes precompile``: compile the kernels of a default short run ahead of time, so that
such a run starts without numba (:mod:`serdes.kernels.aot`, :mod:`serdes.kernels.jit`);
``--com``: compile the COM kernels into numba's cache instead, so that the first
``serdes com`` does not (:mod:`serdes.com.warm`)."""

from __future__ import annotations

import time

from serdes.errors import ConfigError


def add_parser(sub):
    p = sub.add_parser("precompile", help="compile a short run's kernels ahead of time",
                       description="Compile the kernels a default `serdes run` calls into "
                                   "one extension module in the cache folder "
                                   "($SERDES_CACHE_DIR/aot), keyed by their sources, numba, "
                                   "Python and the CPU: a short run then does not start "
                                   "numba (any other kernel still uses numba's JIT). Needs a "
                                   "C compiler; takes about a minute. --com: compile "
                                   "the COM kernels instead, into numba's cache "
                                   "(NUMBA_CACHE_DIR, or __pycache__ beside the "
                                   "sources), so that the first `serdes com` does not "
                                   "(about a minute; no C compiler needed).")
    g = p.add_mutually_exclusive_group()
    g.add_argument("--check", action="store_true",
                   help="only say whether the module of these sources is built")
    g.add_argument("--com", action="store_true",
                   help="compile the COM kernels (serdes com) instead")
    return p


def main(args) -> int:
    if args.com:
        return _com()
    from serdes.kernels import aot, aot_build, jit

    where = jit.module_dir()
    if where is None:
        raise ConfigError("the cache folder is off (SERDES_CACHE_DIR): nowhere to store "
                          "the compiled kernels")
    found = sorted(where.glob(f"{aot.MODULE_NAME}*.so")) if where.is_dir() else []
    if args.check:
        print(f"{'built' if found else 'not built'}: {where}")
        return 0 if found else 1
    t = time.perf_counter()
    try:
        path = aot_build.build(where)
    except Exception as e:  # no compiler, a numba error: the JIT stays in use
        raise ConfigError(f"precompile failed ({type(e).__name__}: {e}); runs keep "
                          f"using numba's JIT") from None
    print(f"compiled {len(aot.KERNELS)} kernels in {time.perf_counter() - t:.0f} s: {path}")
    return 0


def _com() -> int:
    from serdes.com.warm import compile_kernels

    t = time.perf_counter()
    done = compile_kernels()
    each = ", ".join(f"{name} {sec:.0f} s" for name, sec in done)
    print(f"COM kernels compiled into numba's cache, or found there, in "
          f"{time.perf_counter() - t:.0f} s ({each})")
    return 0
