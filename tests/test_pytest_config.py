"""The test suite's warning policy in pyproject.toml (issue 33, quiet tests): every warning is
an error, except a short allow-list of third-party warnings we cannot fix, each with its reason.
accordkit's own warnings are never allowed through: a test that provokes one asserts it."""

from __future__ import annotations

import importlib.util
import re
import tomllib

from .conftest import REPO

PYPROJECT = REPO / "pyproject.toml"


def _filters() -> list[str]:
    data = tomllib.loads(PYPROJECT.read_text())
    return data["tool"]["pytest"]["ini_options"]["filterwarnings"]


def _fields(entry: str) -> dict[str, str]:
    """The fields of one ``action:message:category:module:lineno`` filter (missing ones empty)."""
    parts = (entry.split(":") + [""] * 5)[:5]
    return dict(zip(("action", "message", "category", "module", "lineno"), parts, strict=True))


def test_error_comes_first():
    """Filters listed later take precedence: "error" first makes every warning an error that
    no later entry of the allow-list names."""
    filters = _filters()
    assert filters[0] == "error"
    assert filters.count("error") == 1


def test_each_allowed_warning_names_a_third_party_module():
    allowed = _filters()[1:]
    assert len(allowed) <= 8, "the allow-list is meant to stay short"
    for entry in allowed:
        f = _fields(entry)
        assert f["action"] == "ignore", entry
        top = re.match(r"[A-Za-z_][A-Za-z0-9_]*", f["module"])
        assert top, f"{entry!r}: an allowed warning must name the module that raises it"
        package = top.group(0)
        assert package != "accordkit", f"{entry!r}: accordkit's own warnings are asserted in tests"
        assert not f["category"].startswith("accordkit"), entry
        assert importlib.util.find_spec(package) is not None, \
            f"{entry!r}: {package} is not installed, so the entry allows nothing"


def test_each_allowed_warning_says_why():
    """A comment on the entry's line or just above it gives the reason it is allowed."""
    text = PYPROJECT.read_text()
    block = re.search(r"^filterwarnings = \[\n(.*?)^\]", text, re.S | re.M)
    assert block, "filterwarnings is written one entry a line"
    lines = block.group(1).splitlines()
    for i, line in enumerate(lines):
        entry = re.match(r'\s*"([^"]*)",?\s*(#.*)?$', line)
        if not entry or entry.group(1) == "error":
            continue
        commented = entry.group(2) or (i > 0 and lines[i - 1].strip().startswith("#"))
        assert commented, f"{entry.group(1)!r} has no comment saying why it is allowed"
