"""The package's imports go one way (issue 33): no cycle, and no arrow that runs up a layer.

Every ``import`` of an ``accordkit`` module counts, also those inside functions (a lazy import
that goes up a layer is still an arrow up); imports under ``if TYPE_CHECKING:`` do not.
Every module falls under a rule of :data:`MAY_IMPORT`, the rules go down the layers of
:data:`LAYERS`, and docs/layers.md's table is checked against both, so it cannot drift.
"""

from __future__ import annotations

import ast
import re
from pathlib import Path

import pytest

from .conftest import REPO

PACKAGE = REPO / "accordkit"

#: The layers, top to bottom, and the packages of each (names without ``accordkit.``;
#: ``accordkit`` itself is the package's ``__init__``). docs/layers.md shows the same table.
LAYERS = {
    "faces": ("accordkit", "cli", "report", "show", "synth", "save"),
    "analysis": ("analysis", "interchange", "plots", "tables", "stats"),
    "engines": ("engines", "store"),
    "judging": ("judges",),
    "scoring": ("score", "metrics", "verdicts"),
    "loading": ("validate_report", "load", "readers", "ingest", "frame"),
    "schema": ("schema", "testing", "benchmarks", "names", "faults"),
    "helpers": ("_internal", "resources"),
}

#: package -> the packages it may import (besides itself and its own submodules). A rule
#: names a package (every module under it) or one module; ``accordkit`` is the top-level
#: ``__init__`` alone (its public names are imported lazily, by name, from every layer).
MAY_IMPORT = {
    # faces: what a user calls (ak.*, the command line, notebooks' helpers)
    "accordkit": ("_internal",),
    "cli": ("_internal", "schema", "ingest", "load", "validate_report", "metrics", "score",
            "judges", "store", "engines", "synth", "save", "benchmarks"),
    "report": ("_internal", "names", "ingest", "load", "frame", "metrics", "score", "judges",
               "store", "engines", "tables", "analysis", "plots", "benchmarks"),
    "show": ("_internal", "stats", "tables", "analysis", "report"),
    "synth": ("schema", "testing", "save", "judges", "benchmarks"),
    "save": ("_internal", "schema", "interchange"),
    # analysis: tidy score frames to tables, intervals and figures
    "analysis": ("_internal", "names", "faults", "metrics", "stats", "tables"),
    "interchange": ("_internal", "names", "schema", "ingest", "score", "judges", "stats",
                    "tables", "benchmarks"),
    "plots": (),
    "tables": ("names", "metrics", "stats", "benchmarks"),
    "stats": (),
    # engines: the score store and the runs that write it
    "engines": ("_internal", "schema", "ingest", "metrics", "score", "judges", "store"),
    "store": ("_internal", "names", "schema", "ingest", "load", "metrics", "score", "benchmarks"),
    # judging: verdicts obtained from LLMs (or stand-ins), cached and stored as data
    "judges": ("_internal", "faults", "load", "verdicts", "metrics", "benchmarks"),
    # scoring: pure functions of canonical episodes; no files, LLMs or resampling
    "score": ("_internal", "names", "schema", "verdicts", "metrics", "benchmarks"),
    "metrics": ("_internal", "names", "faults", "schema", "verdicts", "benchmarks"),
    "verdicts": ("_internal", "schema"),
    # loading: sources to canonical episodes (and back to files)
    "validate_report": ("_internal", "ingest", "load"),
    "load": ("_internal", "schema", "ingest"),
    "readers": ("ingest",),
    "ingest": ("_internal", "names", "faults", "schema"),
    "frame": ("_internal",),
    # schema: the canonical columns and the names everything shares
    "schema": ("_internal", "names"),
    "testing": ("schema",),
    # one entry per benchmark: what reads, scores, tabulates and reports it
    "benchmarks": ("names",),
    "names": (),
    "faults": (),
    # helpers: process helpers and packaged data, knowing nothing of benchmarks
    "_internal": (),
    "resources": (),
}


def _full(name: str) -> str:
    return name if name == "accordkit" else f"accordkit.{name}"


def _rule(module: str) -> str | None:
    """The rule ``module`` falls under: its longest package prefix (``accordkit`` matches
    the top-level module alone)."""
    if module == "accordkit":
        return "accordkit"
    found = [p for p in MAY_IMPORT if p != "accordkit"
             and (module == _full(p) or module.startswith(_full(p) + "."))]
    return max(found, key=len) if found else None


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


def test_no_import_cycle(graph):
    assert _cycles(graph) == []


def test_every_module_falls_under_a_rule(graph):
    assert [m for m in sorted(graph) if _rule(m) is None] == []


def test_no_arrow_runs_up_a_layer(graph):
    wrong = []
    for module, targets in sorted(graph.items()):
        rule = _rule(module)
        allowed = [_full(a) for a in MAY_IMPORT[rule]]
        for target in sorted(targets):
            if _rule(target) == rule:
                continue
            if not any(target == a or target.startswith(a + ".") for a in allowed):
                wrong.append(f"{module} -> {target}")
    assert wrong == []


def test_the_rules_go_down_the_layers():
    """Each rule names packages of its own layer or of the layers below, and the rules
    themselves have no cycle: MAY_IMPORT is a layering, not just a list of what is done."""
    ruled = [p for packages in LAYERS.values() for p in packages]
    assert sorted(ruled) == sorted(MAY_IMPORT) and len(set(ruled)) == len(ruled)
    depth = {p: i for i, packages in enumerate(reversed(LAYERS.values())) for p in packages}
    up = [f"{p} -> {a}" for p, allowed in MAY_IMPORT.items() for a in allowed
          if depth[a] > depth[p]]
    assert up == []
    rules = {p: set(allowed) for p, allowed in MAY_IMPORT.items()}
    assert _cycles(rules) == []


def _docs_table() -> dict[str, tuple[str, set[str]]]:
    """package -> (layer, may import) from the table in docs/layers.md."""
    text = (REPO / "docs" / "layers.md").read_text(encoding="utf-8")
    rows: dict[str, tuple[str, set[str]]] = {}
    layer = ""
    for line in text.splitlines():
        cells = [c.strip() for c in line.strip().strip("|").split("|")]
        if not line.startswith("|") or len(cells) != 3 or cells[0] == "layer" \
                or all(set(c) <= {"-", ":"} and c for c in cells):   # header, rule line
            continue
        layer = cells[0].strip("*") or layer
        names = re.findall(r"`([^`]+)`", cells[1])
        allowed = set(re.findall(r"`([^`]+)`", cells[2]))
        for name in names:
            rows[name] = (layer, allowed)
    return rows


def test_the_docs_table_is_the_rules():
    """docs/layers.md's table says what MAY_IMPORT and LAYERS say, row for row."""
    docs = _docs_table()
    want = {p: (layer, set(MAY_IMPORT[p])) for layer, packages in LAYERS.items()
            for p in packages}
    assert docs == want
    # and in the same order, top to bottom
    assert list(dict.fromkeys(layer for layer, _ in docs.values())) == list(LAYERS)


def test_the_graph_sees_lazy_imports(graph):
    """An import inside a function is an arrow too (the check would be blind without it)."""
    assert "accordkit.ingest.formats.tau2.runs" in graph["accordkit.ingest.read"]


#: The modules of ``ingest`` its readers (``ingest/formats/``) may use: the record checker,
#: the reading context, the reader contract and the input helpers. Never the registry, the
#: cache, the plan or the read loop: ``ingest`` asks the readers, they never ask it.
FORMATS_MAY_IMPORT = ("accordkit.ingest.check", "accordkit.ingest.context",
                      "accordkit.ingest.contract", "accordkit.ingest.inputs")


def test_the_readers_use_only_the_checker_context_contract_and_inputs_of_ingest(graph):
    formats = "accordkit.ingest.formats"
    wrong = sorted(f"{name} -> {target}" for name, targets in graph.items()
                   if name == formats or name.startswith(formats + ".")
                   for target in targets
                   if target.startswith("accordkit.ingest.")
                   and not (target == formats or target.startswith(formats + "."))
                   and target not in FORMATS_MAY_IMPORT)
    assert not wrong, wrong
    used = {t for name, targets in graph.items() if name.startswith(formats)
            for t in targets}
    assert set(FORMATS_MAY_IMPORT) <= used, "a module of the rule is no longer used: narrow it"


#: Private names still imported across packages, each with the reason it is allowed.
PRIVATE_ACROSS: dict[tuple[str, str], str] = {}


def _private_across(modules: dict[str, Path]) -> set[tuple[str, str, str]]:
    """(importer, owner module, private name) for every ``from ... import`` whose path or
    name starts with ``_`` (``_internal`` aside) in a package other than the importer's."""
    found = set()
    for name, path in modules.items():
        package = name if path.name == "__init__.py" else name.rpartition(".")[0]
        top = name.split(".")[:2]
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if not isinstance(node, ast.ImportFrom):
                continue
            if node.level:
                base = package.split(".")[:len(package.split(".")) - (node.level - 1)]
                stem = ".".join(base + ([node.module] if node.module else []))
            else:
                stem = node.module or ""
            if not stem.startswith("accordkit."):
                continue
            for alias in node.names:
                parts = f"{stem}.{alias.name}".split(".")
                for i, part in enumerate(parts[2:], 2):
                    if part.startswith("_") and not part.startswith("__"):
                        if parts[:2] != top:
                            found.add((name, ".".join(parts[:i + 1]), alias.name))
                        break
    return found


def test_no_private_name_is_imported_across_packages():
    found = _private_across(_modules())
    wrong = sorted(f"{importer} imports {name} from {owner}" for importer, owner, name in found
                   if not any(importer == i and owner.startswith(o) for i, o in PRIVATE_ACROSS))
    assert not wrong, wrong
    stale = [k for k in PRIVATE_ACROSS
             if not any(i == k[0] and o.startswith(k[1]) for i, o, _ in found)]
    assert not stale, f"no longer imported, remove from PRIVATE_ACROSS: {stale}"


def test_the_private_rule_sees_a_private_module_and_name(tmp_path):
    (tmp_path / "accordkit" / "stats").mkdir(parents=True)
    (tmp_path / "accordkit" / "report").mkdir()
    report = tmp_path / "accordkit" / "report" / "headline.py"
    report.write_text("from ..stats._validate import SUMMARY_COLUMNS\n"
                      "from ..stats.noise import _check_level\nfrom . import _own\n"
                      "from .._internal.files import atomic_write\n")
    found = _private_across({"accordkit.report.headline": report})
    assert found == {("accordkit.report.headline", "accordkit.stats._validate",
                      "SUMMARY_COLUMNS"),
                     ("accordkit.report.headline", "accordkit.stats.noise._check_level",
                      "_check_level")}
