"""Building the ahead-of-time kernel module of :mod:`serdes.kernels.aot` with numba.pycc
(``serdes precompile``). Imports numba; a short run never imports this module."""

from __future__ import annotations

import importlib
import os
import shutil
import tempfile
from pathlib import Path

from serdes.kernels.aot import KERNELS, MODULE_NAME, export_name
from serdes.kernels.jit import dispatcher


def build(dest: Path) -> Path:
    """Compile :data:`KERNELS` into ``dest`` (created; the file appears only when the
    build succeeded) and return the extension's path. Imports numba."""
    import numba.pycc.compiler as pc
    from numba.core import compiler as nc
    from numba.core.registry import cpu_target
    from numba.pycc import CC

    options = {}
    cc = CC(MODULE_NAME)
    cc.target_cpu = "host"  # as the JIT: the same machine code, the same bits
    for key, (ret, argt) in KERNELS.items():
        mod, name = key.split(".")
        d = dispatcher(getattr(importlib.import_module(f"serdes.kernels.{mod}"), name))
        options[d.py_func] = d.targetoptions   # as the JIT compiles it
        cc.export(export_name(key), f"{ret}({', '.join(argt)})")(d.py_func)
    compile_extra = pc.compile_extra

    def own_flags(typingctx, targetctx, func, args, return_type, flags, **kw):
        """pycc compiles every export with default flags: give each its @njit options."""
        own = nc.Flags()
        cpu_target.options.parse_as_flags(own, options[func])
        own.no_compile = True
        return compile_extra(typingctx, targetctx, func, args, return_type, own, **kw)

    dest.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory(dir=dest) as tmp:
        cc.output_dir = tmp
        pc.compile_extra = own_flags
        try:
            cc.compile()
        finally:
            pc.compile_extra = compile_extra
        built = Path(tmp) / cc.output_file
        out = dest / cc.output_file
        shutil.move(str(built), str(out) + ".part")
        os.replace(str(out) + ".part", out)   # never a half-written module
    return out
