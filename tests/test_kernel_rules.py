"""Rules every module of serdes/kernels keeps.

numba's cache=True keys a cached kernel on its own module's source only: a kernel that
inlines an @njit helper defined in another module keeps the old machine code after that
helper changes. So no @njit function may call a name imported from another module.
"""

import ast
from pathlib import Path

import pytest

KERNELS = Path(__file__).resolve().parents[1] / "serdes" / "kernels"
# imported names a kernel may call: numpy and the standard library, which numba compiles
# itself (nothing of theirs is in numba's cache)
ALLOWED_MODULES = {"numpy", "math", "numba", "cmath"}
# and the decorator that binds a kernel to its precompiled twin or to numba on first call
ALLOWED_FROM = {"serdes.kernels.jit"}
# the kernel modules: serdes/kernels and the RS codec of serdes/fec
KERNEL_FILES = sorted(KERNELS.glob("*.py")) + [KERNELS.parent / "fec" / f for f in
                                              ("rs.py", "renewal.py")]


def _is_njit(dec: ast.expr) -> bool:
    target = dec.func if isinstance(dec, ast.Call) else dec
    name = target.attr if isinstance(target, ast.Attribute) else getattr(target, "id", "")
    return name in {"njit", "jit", "vectorize", "guvectorize", "generated_jit"}


def foreign_calls(source: str) -> list[str]:
    """'function calls name' for each call inside an @njit function of ``source`` to a
    name (or attribute of a module) imported from a module outside ALLOWED_MODULES."""
    tree = ast.parse(source)
    foreign: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom):
            root = "." if node.level else (node.module or "").split(".")[0]
            if root not in ALLOWED_MODULES and node.module not in ALLOWED_FROM:
                foreign.update(a.asname or a.name for a in node.names)
        elif isinstance(node, ast.Import):
            for a in node.names:
                if a.name.split(".")[0] not in ALLOWED_MODULES:
                    foreign.add((a.asname or a.name).split(".")[0])
    out = []
    for fn in ast.walk(tree):
        if not isinstance(fn, ast.FunctionDef) or not any(map(_is_njit, fn.decorator_list)):
            continue
        for call in ast.walk(fn):
            if not isinstance(call, ast.Call):
                continue
            f = call.func
            while isinstance(f, ast.Attribute):
                f = f.value
            if isinstance(f, ast.Name) and f.id in foreign:
                out.append(f"{fn.name} calls {ast.unparse(call.func)}")
    return out


def test_the_scan_finds_a_helper_from_another_module():
    src = ("from numba import njit\nfrom serdes.kernels.slicer import slice_one\n"
           "import serdes.kernels.fir as kf\nimport numpy as np\n\n"
           "@njit(cache=True)\ndef k(v, t):\n    return slice_one(v, t) + kf._cubic(t, v)"
           " + np.sum(t)\n\n"
           "def wrapper(v, t):\n    return slice_one(v, t)\n")
    assert foreign_calls(src) == ["k calls slice_one", "k calls kf._cubic"]


@pytest.mark.parametrize("path", KERNEL_FILES, ids=lambda p: p.name)
def test_no_kernel_calls_an_njit_helper_of_another_module(path):
    assert foreign_calls(path.read_text()) == []


@pytest.mark.parametrize("path", KERNEL_FILES, ids=lambda p: p.name)
def test_kernels_are_private_and_cached(path):
    """Every @njit function is private (``_name``; callers use the checking wrappers)
    and cached."""
    tree = ast.parse(path.read_text())
    for fn in ast.walk(tree):
        if isinstance(fn, ast.FunctionDef) and any(map(_is_njit, fn.decorator_list)):
            assert fn.name.startswith("_"), f"{path.name}: {fn.name} is public"
            dec = next(d for d in fn.decorator_list if _is_njit(d))
            assert isinstance(dec, ast.Call) and any(
                k.arg == "cache" and getattr(k.value, "value", None) is True
                for k in dec.keywords), f"{path.name}: {fn.name} is not cache=True"


FLAGS = ("fastmath", "error_model")


def flag_leaks(source: str) -> list[str]:
    """'caller (flag=value) -> helper' for each call from an @njit function that sets
    fastmath or error_model to a same-module @njit helper that does not set it to the
    same value. numba compiles a helper that sets no such flag of its own with its
    caller's, and keeps the first compile of each signature: the helper's numbers (and
    those of every other caller of it) would then depend on which caller compiled first."""
    tree = ast.parse(source)
    flags: dict[str, dict[str, str]] = {}
    bodies: dict[str, ast.FunctionDef] = {}
    for fn in tree.body:
        if isinstance(fn, ast.FunctionDef) and any(map(_is_njit, fn.decorator_list)):
            dec = next(d for d in fn.decorator_list if _is_njit(d))
            kws = dec.keywords if isinstance(dec, ast.Call) else []
            flags[fn.name] = {k.arg: ast.unparse(k.value) for k in kws if k.arg in FLAGS}
            bodies[fn.name] = fn
    out = []
    for name, fl in flags.items():
        for call in ast.walk(bodies[name]):
            if not (isinstance(call, ast.Call) and isinstance(call.func, ast.Name)):
                continue
            callee = call.func.id
            if callee not in flags or callee == name:
                continue
            for flag, value in fl.items():
                if flags[callee].get(flag) != value:
                    out.append(f"{name} ({flag}={value}) -> {callee}")
    return sorted(set(out))


def test_the_scan_finds_a_flag_that_would_reach_a_helper():
    src = ("from numba import njit\n\n"
           "@njit(cache=True)\ndef _chol(a):\n    return a\n\n"
           "@njit(cache=True, fastmath=True)\ndef _leaf(a):\n    return a\n\n"
           "@njit(cache=True, fastmath=True)\ndef _bound(a):\n    return _chol(a) + _leaf(a)\n\n"
           "@njit(cache=True, error_model='numpy')\ndef _k(a):\n    return _chol(a)\n")
    assert flag_leaks(src) == ["_bound (fastmath=True) -> _chol",
                               "_k (error_model='numpy') -> _chol"]


@pytest.mark.parametrize("path", KERNEL_FILES, ids=lambda p: p.name)
def test_no_kernel_flag_reaches_a_helper_that_does_not_set_it(path):
    assert flag_leaks(path.read_text()) == []
