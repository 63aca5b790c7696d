"""What the benchmarks that time this tree against an earlier revision share: their
command line's common part, the earlier tree exported with ``git archive`` into a
folder, and the ``taskset`` prefix that pins both runs of a pair to the same CPU (empty
where ``taskset`` is absent)."""

from __future__ import annotations

import argparse
import shutil
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def parser(doc: str, **counts: int) -> argparse.ArgumentParser:
    """The command line every revision benchmark starts from: its first ``doc`` line as
    the description, the earlier revision, ``--cpu`` and its repeat counts, each a
    keyword with its default (``pairs=3`` gives ``--pairs``, 3 unless told)."""
    ap = argparse.ArgumentParser(description=doc.splitlines()[0])
    ap.add_argument("rev", help="the earlier revision (commit, tag, branch)")
    for name, default in counts.items():
        ap.add_argument(f"--{name}", type=int, default=default)
    ap.add_argument("--cpu", type=int, default=1, help="CPU to pin every run to")
    return ap


def export_tree(rev: str, dest: Path, *paths: str) -> Path:
    """Write revision ``rev`` of this repository (only ``paths`` if given) into ``dest``."""
    dest = Path(dest)
    dest.mkdir(parents=True, exist_ok=True)
    archive = subprocess.run(["git", "-C", str(ROOT), "archive", rev, *paths],
                             capture_output=True, check=True).stdout
    subprocess.run(["tar", "-x", "-C", str(dest)], input=archive, check=True)
    return dest


def export_with_script(rev: str, tmp, text: str, *paths: str) -> tuple[Path, Path]:
    """Revision ``rev`` (only ``paths`` if given) exported into ``tmp``/old and the
    measuring script ``text`` written to ``tmp``/measure.py: (the tree, the script)."""
    script = Path(tmp) / "measure.py"
    script.write_text(text)
    return export_tree(rev, Path(tmp) / "old", *paths), script


def pinned(cpu: int) -> list[str]:
    """The command prefix that runs a process on CPU ``cpu`` alone."""
    return ["taskset", "-c", str(cpu)] if shutil.which("taskset") else []


def measure(cpu: int, script, tree, *args) -> list[str]:
    """The words the measuring ``script`` prints for ``tree`` (and its ``args``), run in
    a fresh interpreter pinned to CPU ``cpu``."""
    return subprocess.run(pinned(cpu) + [sys.executable, str(script), str(tree),
                                         *map(str, args)],
                          check=True, capture_output=True, text=True).stdout.split()
