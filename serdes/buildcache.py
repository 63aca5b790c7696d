"""On-disk cache of the link build's costly choice: the IEEE CTLE gains that
:func:`serdes.dsp.ctle_search.search_ctle` picks (about 25 pulse responses and equalizer
designs, half a second of a short run).

Only the chosen gains are stored (two grid values, in a small JSON file); the link is
then built from them exactly as after a search, so a cached build is bit-identical to
an uncached one. The key is a SHA-256 of everything the choice depends on: every config
value the caller passes (:func:`serdes.build.build_link` passes all but the run's length
and error target), the contents of every file a config value names, the size and time of
every source file of the package (any code change is a new key), the Python, NumPy,
the installed SciPy and numba (path, size and time of their ``__init__.py``: a short run
imports neither) and the machine type. An unreadable, malformed or foreign entry counts
as a miss.

Where: ``$SERDES_CACHE_DIR``, else ``$XDG_CACHE_HOME/serdes``, else ``~/.cache/serdes``.
Off: ``SERDES_CACHE_DIR=off`` (or empty) or a command's ``--no-cache``. The library's
:func:`serdes.build.build` uses it only when asked (``cache=True``, as ``serdes run``,
``eye``, ``bathtub``, ``jtol`` and each point of ``serdes sweep`` do). At most
:data:`MAX_ENTRIES` entries are kept (the oldest go first).
"""

from __future__ import annotations

import hashlib
import importlib.util
import json
import os
import platform
import sys
import tempfile
from pathlib import Path

MAX_ENTRIES = 2000
_OFF = ("", "off", "0", "no", "none", "false")
_state = {"code": None}


def cache_dir() -> Path | None:
    """The cache folder, or None when the cache is off."""
    env = os.environ.get("SERDES_CACHE_DIR")
    if env is not None:
        return None if env.strip().lower() in _OFF else Path(env)
    base = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
    return Path(base) / "serdes"


def installed(name: str) -> str:
    """Which copy of package ``name`` is installed, without importing it (a short run
    imports neither numba nor scipy): the path, size and modification time of its
    ``__init__.py``, which a new version rewrites; "absent" when not installed."""
    spec = importlib.util.find_spec(name)
    if spec is None or not spec.origin:
        return "absent"
    st = os.stat(spec.origin)
    return f"{spec.origin} {st.st_size} {st.st_mtime_ns}"


def code_fingerprint() -> str:
    """SHA-256 of the package's source files (names, sizes and modification times, the
    test Python's own bytecode cache makes), the versions of Python and the numerical
    libraries and the machine type: a cached result is only reused by the same code
    (a home folder shared by different machines keeps their choices apart)."""
    if _state["code"] is None:
        import numpy

        root = os.path.dirname(os.path.abspath(__file__))
        h = hashlib.sha256(f"numpy {numpy.__version__} scipy {installed('scipy')} "
                           f"numba {installed('numba')} python {sys.version} "
                           f"{platform.machine()}".encode())
        files = sorted(os.path.join(d, f) for d, _, names in os.walk(root)
                       for f in names if f.endswith(".py"))
        for path in files:
            st = os.stat(path)
            h.update(b"%s %d %d\0" % (os.path.relpath(path, root).encode(), st.st_size,
                                       st.st_mtime_ns))
        _state["code"] = h.hexdigest()
    return _state["code"]


def key(kind: str, values: dict) -> str:
    """The cache key of a ``kind`` of result computed from ``values`` (a config as
    nested dicts/lists): its JSON, every named file's contents and the code."""
    h = hashlib.sha256(kind.encode() + b"\0" + code_fingerprint().encode())
    h.update(json.dumps(values, sort_keys=True, default=repr).encode())
    for name in sorted(_strings(values)):
        if os.path.isfile(name):
            h.update(b"\0file\0" + os.path.abspath(name).encode() + b"\0")
            h.update(hashlib.sha256(Path(name).read_bytes()).digest())
    return h.hexdigest()


def _strings(obj) -> set[str]:
    if isinstance(obj, str):
        return {obj} if obj else set()
    if isinstance(obj, dict):
        obj = list(obj.values())
    if isinstance(obj, (list, tuple)):
        return set().union(*(_strings(v) for v in obj)) if obj else set()
    return set()


def load(k: str) -> dict | None:
    """The stored result of key ``k`` (None: not stored, unreadable, or off)."""
    folder = cache_dir()
    if folder is None:
        return None
    try:
        data = json.loads((folder / f"{k}.json").read_text())
    except (OSError, ValueError):
        return None
    if not isinstance(data, dict) or data.get("key") != k or not isinstance(data.get("value"), dict):
        return None
    return data["value"]


def store(k: str, value: dict) -> None:
    """Write ``value`` (JSON-able) under key ``k``, atomically (a concurrent reader sees
    the whole file or none); a folder that cannot be written is skipped silently."""
    folder = cache_dir()
    if folder is None:
        return
    try:
        folder.mkdir(parents=True, exist_ok=True)
        fd, tmp = tempfile.mkstemp(dir=folder, suffix=".tmp")
        try:
            with os.fdopen(fd, "w") as fh:
                json.dump({"key": k, "value": value}, fh)
            os.replace(tmp, folder / f"{k}.json")
        finally:
            if os.path.exists(tmp):
                os.unlink(tmp)
        _prune(folder)
    except OSError:
        return


def _prune(folder: Path) -> None:
    entries = list(folder.glob("*.json"))
    if len(entries) <= MAX_ENTRIES:
        return
    entries.sort(key=lambda p: p.stat().st_mtime)
    for p in entries[:len(entries) - MAX_ENTRIES // 2]:
        p.unlink(missing_ok=True)
