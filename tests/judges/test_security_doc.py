"""``docs/security.md`` names the test behind each promise: every named test must exist."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]
DOC = REPO / "docs" / "security.md"


def _references(text: str) -> list[tuple[str, str | None]]:
    """``(file, test name or None)`` for every backticked test reference, in order.

    ```::name``` refers to the file named last before it.
    """
    refs, current = [], None
    for ref in re.findall(r"`((?:tests/[\w/]+\.py)?(?:::\w+)?)`", text):
        path, _, name = ref.partition("::")
        current = path or current
        if current is not None:
            refs.append((current, name or None))
    return refs


@pytest.mark.skipif(not DOC.is_file(), reason="docs/security.md is not in this checkout")
def test_every_test_named_in_the_security_page_exists():
    refs = _references(DOC.read_text(encoding="utf-8"))
    assert len(refs) >= 20
    missing = []
    for path, name in refs:
        file = REPO / path
        if not file.is_file():
            missing.append(path)
        elif name and not re.search(rf"^def {name}\(", file.read_text(encoding="utf-8"),
                                    re.MULTILINE):
            missing.append(f"{path}::{name}")
    assert missing == []
