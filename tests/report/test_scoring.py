"""The scoring step of a report: its sources into a score store."""

from __future__ import annotations


def test_workers_score_inputs_of_many_parquet_rows_or_many_json_bytes(tmp_path, monkeypatch):
    """Parquet is compressed: its rows, not its bytes, say how long scoring takes."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    from accordkit.report import scoring

    table = pa.table({"episode_id": [f"e{i}" for i in range(120)]})
    pq.write_table(table, tmp_path / "a.parquet")
    (tmp_path / "b.json").write_text("x" * 300)
    (tmp_path / "broken.parquet").write_bytes(b"not parquet")
    monkeypatch.setattr(scoring, "_PARALLEL_SCORING_ROWS", 100)
    monkeypatch.setattr(scoring, "_PARALLEL_SCORING_BYTES", 1_000)
    parquet, json_file = tmp_path / "a.parquet", tmp_path / "b.json"
    assert scoring._worth_workers([parquet])                     # 120 rows > 100
    assert not scoring._worth_workers([json_file])               # 300 bytes < 1,000
    assert not scoring._worth_workers([tmp_path / "broken.parquet", tmp_path / "missing"])
    monkeypatch.setattr(scoring, "_PARALLEL_SCORING_ROWS", 200)
    assert not scoring._worth_workers([parquet])                 # its 6 kB do not count
    monkeypatch.setattr(scoring, "_PARALLEL_SCORING_BYTES", 200)
    assert scoring._worth_workers([json_file])
