"""The reader registry (issue 13): a new format is one object plus a registration."""

from __future__ import annotations

import json
import warnings

import pytest

import accordkit as ak
from accordkit import readers
from accordkit.schema import EpisodeValidationError


class TinyFormat:
    """``{"tiny": [[id, text], ...]}``: one user message per episode."""

    name = "tiny"

    def sniff(self, path, head):
        return head.lstrip().startswith(b'{"tiny"')

    def read(self, path, *, source):
        obj = json.loads(path.read_text())
        if not isinstance(obj["tiny"], list):
            raise EpisodeValidationError("expected a list", source=source,
                                         record="(whole file)", field="tiny")
        for i, item in enumerate(obj["tiny"]):
            if not isinstance(item, list) or len(item) != 2:
                yield EpisodeValidationError("expected [id, text]", source=source,
                                             record=f"tiny[{i}]", field=f"tiny[{i}]")
                continue
            eid, text = item
            yield {"benchmark": "tau2", "domain": "demo", "scenario_id": f"tiny/{eid}",
                   "task_id": str(eid), "episode_id": f"tiny/{eid}", "rollout": 0,
                   "messages": [{"role": "user", "content": text, "turn_idx": 0}]}


@pytest.fixture
def tiny(tmp_path, monkeypatch):
    monkeypatch.setenv("ACCORDKIT_CACHE_DIR", str(tmp_path / "cache"))
    readers.register(TinyFormat())
    yield
    readers.unregister("tiny")


def _write(tmp_path, items):
    path = tmp_path / "run.json"
    path.write_text(json.dumps({"tiny": items}))
    return path


def test_registered_reader_is_picked_by_content(tmp_path, tiny):
    ds = ak.load(_write(tmp_path, [["a", "hello"], ["b", "bye"]]))
    assert ds["episode_id"] == ["tiny/a", "tiny/b"]
    assert ds[0]["messages"][0]["content"] == "hello" and ds[0]["source"] == str(tmp_path /
                                                                                  "run.json")


def test_registered_reader_records_get_the_usual_checks(tmp_path, tiny):
    path = _write(tmp_path, [["a", "hello"], "junk", ["c", 3]])
    with pytest.raises(ak.EpisodeValidationError) as exc:
        ak.load(path)
    assert (exc.value.record, exc.value.field) == ("tiny[1]", "tiny[1]")
    with warnings.catch_warnings(record=True):
        warnings.simplefilter("always")
        ds, report = ak.load_with_report(path, errors="skip")
    assert ds["episode_id"] == ["tiny/a"]
    assert [(s.record, s.field) for s in report.skipped] == [
        ("tiny[1]", "tiny[1]"), ("tiny/c (item 2)", "messages[0].content")]


def test_registered_reader_whole_file_problem(tmp_path, tiny):
    path = tmp_path / "run.json"
    path.write_text('{"tiny": 5}')
    with warnings.catch_warnings(record=True):
        warnings.simplefilter("always")
        ds, report = ak.load_with_report(path, errors="skip")
    assert len(ds) == 0 and [(s.record, s.field) for s in report.skipped] == [
        ("(whole file)", "tiny")]


def test_unregistered_format_is_not_recognised(tmp_path, monkeypatch):
    monkeypatch.setenv("ACCORDKIT_CACHE_DIR", str(tmp_path / "cache"))
    with pytest.raises(ak.EpisodeValidationError, match="not a results file"):
        ak.load(_write(tmp_path, [["a", "hello"]]))


def test_register_rejects_what_is_not_a_reader():
    with pytest.raises(TypeError, match="a reader needs"):
        readers.register(object())
