"""What the benchmarks that time this tree against an earlier revision share: the
earlier tree exported with ``git archive`` into a folder, and the ``taskset`` prefix
that pins both runs of a pair to the same CPU (empty where ``taskset`` is absent)."""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def export_tree(rev: str, dest: Path, *paths: str) -> Path:
    """Write revision ``rev`` of this repository (only ``paths`` if given) into ``dest``."""
    dest = Path(dest)
    dest.mkdir(parents=True, exist_ok=True)
    archive = subprocess.run(["git", "-C", str(ROOT), "archive", rev, *paths],
                             capture_output=True, check=True).stdout
    subprocess.run(["tar", "-x", "-C", str(dest)], input=archive, check=True)
    return dest


def pinned(cpu: int) -> list[str]:
    """The command prefix that runs a process on CPU ``cpu`` alone."""
    return ["taskset", "-c", str(cpu)] if shutil.which("taskset") else []
