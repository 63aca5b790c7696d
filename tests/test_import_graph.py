"""The package's modules import each other without circles: every import (top-level or
inside a function) of a serdes module, read from the sources, forms a graph with no
strongly connected set of two or more modules. A circle ties the layers together (the
statistical engine's views imported the eye measurements, which import the engines)
and makes an import's order matter."""

from __future__ import annotations

import ast
from pathlib import Path

import serdes

ROOT = Path(serdes.__file__).resolve().parent


def _modules() -> dict[str, Path]:
    out = {}
    for f in ROOT.rglob("*.py"):
        parts = list(f.relative_to(ROOT.parent).with_suffix("").parts)
        if parts[-1] == "__init__":
            parts = parts[:-1]
        out[".".join(parts)] = f
    return out


def _edges(mods: dict[str, Path]) -> dict[str, set[str]]:
    def resolve(name: str) -> str | None:
        while name and name not in mods:
            name = name.rpartition(".")[0]
        return name or None

    graph = {m: set() for m in mods}
    for m, f in mods.items():
        pkg = m if f.name == "__init__.py" else m.rpartition(".")[0]
        for node in ast.walk(ast.parse(f.read_text(), str(f))):
            targets = []
            if isinstance(node, ast.Import):
                targets = [a.name for a in node.names]
            elif isinstance(node, ast.ImportFrom):
                base = node.module or ""
                if node.level:
                    up = pkg.split(".")[:len(pkg.split(".")) - node.level + 1]
                    base = ".".join(up + ([base] if base else []))
                # a submodule named in the list is the dependency, not its package
                # (a parent package is loaded before any of its modules anyway)
                targets = [f"{base}.{a.name}" if f"{base}.{a.name}" in mods else base
                           for a in node.names]
            for t in targets:
                if t.split(".")[0] == "serdes":
                    r = resolve(t)
                    if r and r != m:
                        graph[m].add(r)
    return graph


def _circles(graph: dict[str, set[str]]) -> list[list[str]]:
    """Strongly connected sets of two or more modules (Tarjan's algorithm)."""
    index, low, on, stack, out = {}, {}, set(), [], []

    def visit(v):
        index[v] = low[v] = len(index)
        stack.append(v)
        on.add(v)
        for w in sorted(graph[v]):
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            comp = []
            while True:
                w = stack.pop()
                on.discard(w)
                comp.append(w)
                if w == v:
                    break
            if len(comp) > 1:
                out.append(sorted(comp))

    for v in sorted(graph):
        if v not in index:
            visit(v)
    return out


def test_the_finder_sees_a_circle():
    g = {"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}
    assert _circles(g) == [["a", "b", "c"]]
    assert _circles({"a": {"b"}, "b": set()}) == []


def test_the_package_imports_without_circles():
    graph = _edges(_modules())
    assert "serdes.metrics.opening" in graph["serdes.engines.stat.views"]
    assert _circles(graph) == []


TOP = ("serdes.cli", "serdes.commands", "serdes.plot", "serdes.report", "serdes.sweep",
       "serdes.jtol_sweep")


def test_the_lower_layers_import_no_command_report_sweep_or_plot():
    """The model, engines, receiver, COM, kernels and their helpers import nothing of
    the commands, the report, sweeps or plots (the Dask client raised the sweep's error
    class, importing the sweep's grid; the COM method kept its figure)."""
    graph = _edges(_modules())
    up = {m: sorted(b for b in bs if b.startswith(TOP)) for m, bs in graph.items()
          if not m.startswith(TOP)}
    assert {m: b for m, b in up.items() if b} == {}
