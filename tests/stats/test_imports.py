"""The statistics package imports one way: no cycle among its modules.

Every ``import`` counts, also one inside a function: a lazy import that goes back up is
still an arrow, and two modules that reach each other cannot be read (or split) apart.
"""

from __future__ import annotations

import ast
from pathlib import Path

import accordkit.stats

PACKAGE = Path(accordkit.stats.__file__).parent


def _arrows() -> dict[str, set[str]]:
    """Module name -> the sibling modules it imports (relative or absolute, at any depth)."""
    names = {p.stem for p in PACKAGE.glob("*.py")} - {"__init__"}
    graph: dict[str, set[str]] = {}
    for name in names:
        tree = ast.parse((PACKAGE / f"{name}.py").read_text(encoding="utf-8"))
        targets: set[str] = set()
        for node in ast.walk(tree):
            if isinstance(node, ast.ImportFrom):
                if node.level == 1 and node.module:
                    targets.add(node.module.split(".")[0])
                elif node.level == 1:  # from . import x
                    targets.update(a.name for a in node.names)
                elif node.module and node.module.startswith("accordkit.stats."):
                    targets.add(node.module.split(".")[2])
            elif isinstance(node, ast.Import):
                targets.update(a.name.split(".")[2] for a in node.names
                               if a.name.startswith("accordkit.stats."))
        graph[name] = targets & names
    return graph


def _cycle(graph: dict[str, set[str]]) -> list[str] | None:
    """One cycle of ``graph`` as a path that ends where it starts, or None."""
    state: dict[str, int] = {}
    stack: list[str] = []

    def visit(node: str) -> list[str] | None:
        state[node] = 1
        stack.append(node)
        for nxt in sorted(graph[node]):
            if state.get(nxt) == 1:
                return stack[stack.index(nxt):] + [nxt]
            if nxt not in state and (found := visit(nxt)):
                return found
        stack.pop()
        state[node] = 2
        return None

    for node in sorted(graph):
        if node not in state and (found := visit(node)):
            return found
    return None


def test_the_checker_finds_a_cycle():
    assert _cycle({"a": {"b"}, "b": {"c"}, "c": {"a"}}) == ["a", "b", "c", "a"]
    assert _cycle({"a": {"b"}, "b": set()}) is None


def test_no_import_cycle_in_stats():
    graph = _arrows()
    assert graph["_estimators"] >= {"_km", "_median"}  # the parser sees the arrows
    assert _cycle(graph) is None, " -> ".join(_cycle(graph))
