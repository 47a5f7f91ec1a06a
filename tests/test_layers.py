"""The package's imports go one way (issue 33): no cycle, and no arrow that runs up a layer.

Every ``import`` of an ``accordkit`` module counts, also those inside functions (a lazy import
that goes up a layer is still an arrow up); imports under ``if TYPE_CHECKING:`` do not.
"""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

from .conftest import REPO

PACKAGE = REPO / "accordkit"

#: Cycles that other work removes; none may be added (none is left).
KNOWN_CYCLES: list[set[str]] = []

#: module prefix -> the prefixes it may import (besides itself and its own submodules).
#: The loading corridor sits on the schema, which sits on the names and the process helpers;
#: metrics know nothing of files; the face of the loader (``load``) only the corridor.
MAY_IMPORT = {
    "accordkit._internal": (),
    "accordkit.names": (),
    "accordkit.benchmarks": ("accordkit.names",),   # the catalogue: names what is above
    "accordkit.faults": (),
    "accordkit.schema": ("accordkit.names", "accordkit._internal"),
    "accordkit.ingest": ("accordkit.schema", "accordkit.names", "accordkit.faults",
                         "accordkit._internal", "accordkit.ingest"),
    "accordkit.load": ("accordkit.ingest", "accordkit.schema", "accordkit._internal"),
    "accordkit.readers": ("accordkit.ingest",),
    "accordkit.metrics": ("accordkit.schema", "accordkit.names", "accordkit.faults",
                          "accordkit._internal", "accordkit.metrics", "accordkit.benchmarks"),
}


#: Arrows up that other work removes (outside the loading corridor); none may be added.
KNOWN_ARROWS = {
    "accordkit.metrics.accord -> accordkit.judges.verdicts",
    "accordkit.metrics.accord -> accordkit.tables.paper",
    "accordkit.metrics.accord_table -> accordkit.tables.paper",
    "accordkit.metrics.goalshift -> accordkit.judges.verdicts",
    "accordkit.metrics.passk -> accordkit.stats.summarize",
}


def _modules() -> dict[str, Path]:
    out = {}
    for path in PACKAGE.rglob("*.py"):
        parts = list(path.relative_to(REPO).with_suffix("").parts)
        if parts[-1] == "__init__":
            parts = parts[:-1]
        out[".".join(parts)] = path
    return out


def _type_checking_nodes(tree: ast.AST) -> set[int]:
    skip: set[int] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.If) and "TYPE_CHECKING" in ast.unparse(node.test):
            skip.update(id(n) for stmt in node.body for n in ast.walk(stmt))
    return skip


def _imports(name: str, path: Path, modules: dict[str, Path]) -> set[str]:
    """The accordkit modules ``name`` imports (each resolved to a module that exists)."""
    tree = ast.parse(path.read_text(encoding="utf-8"))
    skip = _type_checking_nodes(tree)
    package = name if path.name == "__init__.py" else name.rpartition(".")[0]
    found: set[str] = set()
    for node in ast.walk(tree):
        if id(node) in skip:
            continue
        targets: list[str] = []
        if isinstance(node, ast.Import):
            targets = [a.name for a in node.names]
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = package.split(".")
                base = base[:len(base) - (node.level - 1)]
                stem = ".".join(base + ([node.module] if node.module else []))
            else:
                stem = node.module or ""
            targets = [f"{stem}.{a.name}" if f"{stem}.{a.name}" in modules else stem
                       for a in node.names]
        for target in targets:
            while target not in modules and "." in target:
                target = target.rpartition(".")[0]
            if target.startswith("accordkit") and target != name \
                    and not name.startswith(target + "."):   # a package of its own
                found.add(target)
    return found


@pytest.fixture(scope="module")
def graph() -> dict[str, set[str]]:
    modules = _modules()
    return {name: _imports(name, path, modules) for name, path in modules.items()}


def _cycles(graph: dict[str, set[str]]) -> list[set[str]]:
    """The strongly connected components of more than one module (Tarjan)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on: set[str] = set()
    out: list[set[str]] = []
    counter = [0]

    def visit(v: str) -> None:
        index[v] = low[v] = counter[0]
        counter[0] += 1
        stack.append(v)
        on.add(v)
        for w in graph.get(v, ()):
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            comp = set()
            while True:
                w = stack.pop()
                on.discard(w)
                comp.add(w)
                if w == v:
                    break
            if len(comp) > 1:
                out.append(comp)

    for v in sorted(graph):
        if v not in index:
            visit(v)
    return out


def test_no_import_cycle_beyond_those_known(graph):
    cycles = _cycles(graph)
    assert [c for c in cycles if c not in KNOWN_CYCLES] == []


def test_no_arrow_runs_up_a_layer(graph):
    wrong = []
    for module, targets in sorted(graph.items()):
        rule = next((p for p in sorted(MAY_IMPORT, key=len, reverse=True)
                     if module == p or module.startswith(p + ".")), None)
        if rule is None:
            continue
        allowed = MAY_IMPORT[rule]
        for target in sorted(targets):
            if target == rule or target.startswith(rule + "."):
                continue
            if not any(target == a or target.startswith(a + ".") for a in allowed):
                wrong.append(f"{module} -> {target}")
    assert [w for w in wrong if w not in KNOWN_ARROWS] == []


def test_the_graph_sees_lazy_imports(graph):
    """An import inside a function is an arrow too (the check would be blind without it)."""
    assert "accordkit.ingest.formats.tau2.runs" in graph["accordkit.ingest.read"]
