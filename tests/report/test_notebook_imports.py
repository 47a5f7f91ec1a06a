"""Notebooks import accordkit only from its curated faces (issue 42).

A notebook reads ``accordkit``, ``accordkit.tables``, ``accordkit.plots``,
``accordkit.analysis`` and ``accordkit.report``; what lies below (``accordkit.metrics``,
``accordkit.judges``, a module of ``report/``) is reached through those packages' names, so
moving a module never breaks a notebook and a reader sees where a table or figure lives.
"""

from __future__ import annotations

import ast
import json

import pytest

from ..conftest import REPO

NOTEBOOKS = REPO / "notebooks"

#: The only accordkit modules a notebook may import from.
FACES = {"accordkit", "accordkit.tables", "accordkit.plots", "accordkit.analysis",
         "accordkit.report"}


def _sources(path) -> str:
    if path.suffix == ".py":
        return path.read_text(encoding="utf-8")
    cells = json.loads(path.read_text(encoding="utf-8"))["cells"]
    code = ("".join(c["source"]) if isinstance(c["source"], list) else c["source"]
            for c in cells if c["cell_type"] == "code")
    # IPython magics are not Python: leave them out
    return "\n".join(line for cell in code for line in cell.splitlines()
                     if not line.lstrip().startswith(("%", "!")))


def outside_faces(source: str) -> list[str]:
    """The accordkit modules ``source`` imports that are not one of :data:`FACES`."""
    found = []
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.Import):
            names = [a.name for a in node.names]
        elif isinstance(node, ast.ImportFrom) and not node.level:
            names = [node.module or ""]
        else:
            continue
        found += [n for n in names if n.split(".")[0] == "accordkit" and n not in FACES]
    return found


@pytest.mark.parametrize("path", sorted([*NOTEBOOKS.glob("*.py"), *NOTEBOOKS.glob("*.ipynb")]),
                         ids=lambda p: p.name)
def test_notebooks_import_accordkit_only_from_its_faces(path):
    assert outside_faces(_sources(path)) == [], path.name


def test_the_rule_names_an_import_from_below_the_faces():
    source = ("import accordkit as ak\nimport accordkit.metrics.tue\n"
              "from accordkit.report.drilldown import DrillDown\n"
              "from accordkit.tables import accord_tables\nimport pandas as pd\n")
    assert outside_faces(source) == ["accordkit.metrics.tue", "accordkit.report.drilldown"]
