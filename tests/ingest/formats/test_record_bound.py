"""One huge record is left out by name, never held whole (issue 41.6).

A 1 GiB JSON Lines record took 13.8 GB in ``score --out``. Here the bound is lowered to
100 kB so a 300 kB record stands for it; the records around it are scored.
"""

from __future__ import annotations

import json

import pytest

import accordkit as ak
from accordkit.engines import reading as engine_reading
from accordkit.engines import score_to_store
from accordkit.ingest.formats import json_text


@pytest.fixture
def small_bound(monkeypatch):
    monkeypatch.setattr(engine_reading, "CACHED_BYTES", -1)
    monkeypatch.setattr(json_text, "STREAM_BYTES", -1)
    monkeypatch.setattr(json_text, "MAX_RECORD_BYTES", 100_000)


def _records(sample_dir, n: int = 12) -> list[dict]:
    rows = ak.load(sample_dir / "accord").to_list()[:n]
    return [json.loads(json.dumps(r)) for r in rows]


@pytest.mark.parametrize("layout", ["jsonl", "array"])
def test_a_record_over_the_bound_is_named_and_the_others_are_scored(tmp_path, sample_dir,
                                                                    small_bound, layout):
    records = _records(sample_dir)
    records[4]["messages"][0]["content"] = "x" * 300_000
    path = tmp_path / f"episodes.{'jsonl' if layout == 'jsonl' else 'json'}"
    path.write_text("\n".join(json.dumps(r) for r in records) + "\n" if layout == "jsonl"
                    else json.dumps(records))
    manifest = score_to_store([str(path)], out=tmp_path / "s", batch_size=5, progress=False)
    (rec,) = manifest["inputs"]
    assert rec["episodes"] == 11 and rec["skipped"] == 1
    where = "line 5" if layout == "jsonl" else "item 4"
    assert rec["problems"][0].startswith(f"file {path}, record {where}")
    assert "larger than 100,000 bytes" in rec["problems"][0]


def test_a_long_line_is_read_past_in_chunks(tmp_path, monkeypatch):
    monkeypatch.setattr(json_text, "MAX_RECORD_BYTES", 10)
    path = tmp_path / "lines"
    path.write_bytes(b"short\n" + b"y" * 5_000_000 + b"\nlast")
    with open(path, "rb") as fh:
        assert list(json_text._bounded_lines(fh)) == [b"short\n", None, b"last"]
