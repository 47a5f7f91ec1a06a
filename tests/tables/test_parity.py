"""Parity: the sample report tables keep their numbers.

``parity_sample.json`` was generated once, from the code as it stood before the tables
moved into :mod:`accordkit.tables` (``python -m tests.tables._parity``), and pins every
point estimate, interval end and count of the AcCoRD Table 3 (pooled and per domain),
per-dynamic and interaction-cost tables, the goal-shift main and GSRT tables (fixed seed,
400 resamples, BCa, clustered by scenario) and the point estimates of ``accord_table``.
"""

from __future__ import annotations

import json

import pytest

from ._parity import EXPECTED, SAMPLE, compute, same


@pytest.fixture(scope="module")
def current() -> dict:
    if not SAMPLE.exists():
        pytest.skip("data/sample has not been generated (run `make sample`)")
    return compute()


@pytest.mark.parametrize("table", sorted(json.loads(EXPECTED.read_text())))
def test_sample_table_numbers_unchanged(current: dict, table: str) -> None:
    expected = json.loads(EXPECTED.read_text())[table]
    got = current[table]
    assert sorted(got) == sorted(expected), f"{table}: rows differ"
    diffs = [(row, key, expected[row][key], got[row].get(key))
             for row in expected for key in expected[row]
             if not same(expected[row][key], got[row].get(key))]
    assert not diffs, f"{table}: {len(diffs)} numbers changed, e.g. {diffs[:3]}"
