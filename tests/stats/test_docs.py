"""The docstring examples of the statistics layer run and give what they show."""

from __future__ import annotations

import doctest
import importlib

import pytest

MODULES = [
    "accordkit.stats.summarize",
    "accordkit.stats.compare",
    "accordkit.stats.metrics",
    "accordkit.stats._adjust",
    "accordkit.stats._resample",
    "accordkit.stats._point",
    "accordkit.stats._options",
    "accordkit.tables.format",
    "accordkit.tables.catalogue",
    "accordkit.tables.shared",
    "accordkit.tables.accord",
    "accordkit.tables.failures",
    "accordkit.tables.paper",
    "accordkit.stats.judge_correction",
    "accordkit.stats.ppi",
]


@pytest.mark.parametrize("name", MODULES)
def test_docstring_examples(name):
    result = doctest.testmod(importlib.import_module(name),
                             optionflags=doctest.NORMALIZE_WHITESPACE | doctest.ELLIPSIS)
    assert result.failed == 0
    assert result.attempted > 0


def test_public_names():
    import accordkit.stats as s

    assert set(s.__all__) >= {"summarize", "compare", "Metric"}
    for name in s.__all__:
        assert getattr(s, name).__doc__
