"""Rules of the package's sources that Python itself does not check: no module defines
the same top-level name twice (a second `def` silently replaces the first, so every
caller of the first gets the second: a helper named like an existing function once
broke every run's statistical sections)."""

from __future__ import annotations

import ast
from pathlib import Path

import serdes

ROOT = Path(serdes.__file__).resolve().parent


def _defined_twice(path: Path) -> list[str]:
    seen, twice = set(), []
    for node in ast.parse(path.read_text(), str(path)).body:
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            if node.name in seen:
                twice.append(f"{node.name} (line {node.lineno})")
            seen.add(node.name)
    return twice


def test_no_module_defines_a_function_or_class_twice():
    found = {str(f.relative_to(ROOT.parent)): d for f in sorted(ROOT.rglob("*.py"))
             if (d := _defined_twice(f))}
    assert not found, found


def test_the_rule_sees_a_second_definition(tmp_path):
    f = tmp_path / "m.py"
    f.write_text("def a():\n    pass\n\n\nclass B:\n    pass\n\n\ndef a():\n    pass\n")
    assert _defined_twice(f) == ["a (line 9)"]
