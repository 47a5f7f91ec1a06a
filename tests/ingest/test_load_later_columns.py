"""A canonical file written before a column existed (schema version 2, no ``reviews_json``)
loads with the column null; a ``reviews_json`` that is not a JSON object is its record's
problem."""

from __future__ import annotations

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

import accordkit as ak
from accordkit.schema import LATER_COLUMNS
from accordkit.testing import build_episode, episode_table, message


def _table():
    recs = [build_episode([message("user", "hi")], benchmark="tau2", episode_id=f"tau2/e{i}",
                          task_id=f"t{i}") for i in range(3)]
    return episode_table(*recs)


def test_a_file_without_the_later_columns_loads_with_them_null(tmp_path):
    old = _table().drop_columns(list(LATER_COLUMNS))
    pq.write_table(old, tmp_path / "v2.parquet")
    ds = ak.load(tmp_path / "v2.parquet")
    assert len(ds) == 3 and ds["reviews_json"] == [None, None, None]


def test_other_missing_columns_are_still_refused(tmp_path):
    pq.write_table(_table().drop_columns(["persona"]), tmp_path / "bad.parquet")
    with pytest.raises(ak.EpisodeValidationError, match=r"missing column\(s\) \['persona'\]"):
        ak.load(tmp_path / "bad.parquet")


def test_reviews_json_must_be_an_object(tmp_path):
    table = _table()
    i = table.schema.get_field_index("reviews_json")
    table = table.set_column(i, "reviews_json", pa.array(['{"review": {}}', "[1]", None]))
    pq.write_table(table, tmp_path / "r.parquet")
    ds, report = ak.load_with_report(tmp_path / "r.parquet", errors="skip")
    assert ds["episode_id"] == ["tau2/e0", "tau2/e2"]
    (bad,) = report.skipped
    assert bad.field == "reviews_json" and "JSON text of an object" in bad.reason
