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


def compile_kernels(name: str, exports: dict, output_dir: str) -> str:
    """Compile ``exports`` (export name -> (kernel, numba signature string)) with
    numba.pycc into extension module ``name`` in ``output_dir``, each kernel with its own
    @njit options and for the host CPU, as the JIT compiles it (pycc alone would give
    every export its default flags). Returns the file name of the built module."""
    import numba.pycc.compiler as pc
    from numba.core import compiler as nc
    from numba.core.registry import cpu_target
    from numba.pycc import CC

    options = {}
    cc = CC(name)
    cc.target_cpu = "host"  # as the JIT: the same machine code, the same bits
    cc.output_dir = output_dir
    for export, (kernel, sig) in exports.items():
        d = dispatcher(kernel)
        options[d.py_func] = d.targetoptions   # as the JIT compiles it
        cc.export(export, sig)(d.py_func)
    compile_extra = pc.compile_extra

    def own_flags(typingctx, targetctx, func, args, return_type, flags, **kw):
        own = nc.Flags()
        cpu_target.options.parse_as_flags(own, options[func])
        own.no_compile = True
        return compile_extra(typingctx, targetctx, func, args, return_type, own, **kw)

    pc.compile_extra = own_flags
    try:
        cc.compile()
    finally:
        pc.compile_extra = compile_extra
    return cc.output_file


def build(dest: Path) -> Path:
    """Compile :data:`KERNELS` into ``dest`` (created; the file appears only when the
    build succeeded) and return the extension's path. Imports numba."""
    exports = {}
    for key, (ret, argt) in KERNELS.items():
        mod, name = key.split(".")
        kernel = getattr(importlib.import_module(f"serdes.kernels.{mod}"), name)
        exports[export_name(key)] = (kernel, f"{ret}({', '.join(argt)})")
    dest.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory(dir=dest) as tmp:
        file = compile_kernels(MODULE_NAME, exports, tmp)
        built = Path(tmp) / file
        out = dest / file
        shutil.move(str(built), str(out) + ".part")
        os.replace(str(out) + ".part", out)   # never a half-written module
    return out
