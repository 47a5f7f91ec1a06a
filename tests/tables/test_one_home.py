"""Each analysis constant has one home: the package source repeats none of them elsewhere."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

PACKAGE = Path(__file__).resolve().parents[2] / "accordkit"

#: pattern -> the one module allowed to write it
HOMES = {
    r"\(0\.6,\s*0\.4\)|0\.6\s*\*|\*\s*0\.6\b|0\.4\s*\*\s*[a-z(]": "metrics/tue.py",
    r"[\"']hard_underspec[\"'],\s*[\"']soft_underspec[\"']": "names.py",  # schema re-exports
    r"[\"']benchmark[\"'],\s*[\"']domain[\"'],\s*[\"']scenario_id[\"'],\s*[\"']task_id[\"'],"
    r"\s*[\"']episode_id[\"'],\s*[\"']source[\"']": "schema/features.py",
}


@pytest.mark.parametrize("pattern", list(HOMES))
def test_constant_written_only_in_its_home(pattern):
    found = []
    for path in sorted(PACKAGE.rglob("*.py")):
        rel = path.relative_to(PACKAGE).as_posix()
        if rel == HOMES[pattern]:
            continue
        for i, line in enumerate(path.read_text("utf-8").splitlines(), 1):
            if re.search(pattern, line) and not line.lstrip().startswith((">>>", "...")):
                found.append(f"{rel}:{i}: {line.strip()}")
    assert not found, f"written outside {HOMES[pattern]}: {found}"


def test_cli_choices_are_the_library_constants():
    from accordkit.cli import build_parser
    from accordkit.metrics.tcrr import TCRR_MODES
    from accordkit.metrics.tsr import ACTION_MODES
    from accordkit.score import LEVELS

    score = build_parser()._subparsers._group_actions[0].choices["score"]
    choices = {a.dest: tuple(a.choices) for a in score._actions if a.choices}
    assert choices["level"] == LEVELS
    assert choices["tcrr_mode"] == TCRR_MODES
    assert choices["action_mode"] == ACTION_MODES


def test_metric_specs_are_written_only_in_tables_and_stats():
    """A table's metrics (``Metric(...)``) are defined where tables are built (``tables/``)
    or where the statistics define the type (``stats/``), never in the report or elsewhere."""
    found = []
    for path in sorted(PACKAGE.rglob("*.py")):
        rel = path.relative_to(PACKAGE).as_posix()
        if rel.startswith(("tables/", "stats/")):
            continue
        for i, line in enumerate(path.read_text("utf-8").splitlines(), 1):
            if re.search(r"\bMetric\(", line):
                found.append(f"{rel}:{i}: {line.strip()}")
    assert not found, f"Metric specs outside tables/ and stats/: {found}"

