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


# --------------------------------------------------------------------------- built-in readers


def test_builtin_readers_by_kind_in_asking_order(tiny):
    assert [r.name for r in readers.formats("folder")] == [
        "results-folder", "dataset-folder", "folder"]
    assert [r.name for r in readers.formats("file")] == [
        "tiny", "parquet", "inspect", "results-file", "eee", "json"]
    assert [r.name for r in readers.formats("document")] == ["results", "taubench", "canonical"]
    assert [r.name for r in readers.formats("hub")] == ["hub"]
    with pytest.raises(ValueError, match="kind must be one of"):
        readers.formats("zip")


def test_formats_are_recognised_by_content_not_by_name(tmp_path):
    from .test_load_errors import _results, _sim

    results = tmp_path / "results.data"
    results.write_text(json.dumps(_results(_sim("s1"))))
    ds = ak.load(results, cache=False)
    assert ds["episode_id"] == ["tau2/s1"]
    episodes = tmp_path / "episodes.bin"
    ds.to_parquet(str(episodes))
    assert ak.load(episodes, cache=False)["episode_id"] == ["tau2/s1"]
    lines = tmp_path / "episodes.txt"
    lines.write_text("\n".join(json.dumps(r) for r in ds.to_list() * 2) + "\n")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # the same episode twice: kept once, with a warning
        assert ak.load(lines, cache=False)["episode_id"] == ["tau2/s1"]


def test_typed_results_reader_passes_what_it_refuses_to_the_json_reader(tmp_path):
    """A byte-order mark stops the typed decoder; the json reader still reads the file."""
    from .test_load_errors import _results, _sim

    plain = tmp_path / "plain.json"
    plain.write_text(json.dumps(_results(_sim("s1"))))
    bom = tmp_path / "bom.json"
    bom.write_bytes(b"\xef\xbb\xbf" + plain.read_bytes())
    typed = next(r for r in readers.formats("file") if r.name == "results-file")
    from accordkit.ingest.context import ReadContext
    from accordkit.ingest.inputs import Input

    assert typed.read(Input(name=str(bom), path=str(bom)), ReadContext()) is None
    a = ak.load(plain, cache=False).to_list()
    b = ak.load(bom, cache=False).to_list()
    assert [dict(r, source=None) for r in a] == [dict(r, source=None) for r in b]


def test_a_file_a_registered_reader_finds_changed_is_not_cached_under_its_old_bytes(
        tmp_path, tiny, monkeypatch, read_ahead_done):
    """A registered reader reads the file itself, while the cache key was made of bytes
    read before (on the reading-ahead thread, maybe seconds before): when the file changed
    in between, the rows read are not stored under the old bytes' key, nor as the load."""
    import importlib
    import os

    first = tmp_path / "a.json"
    first.write_text(json.dumps({"tiny": [["a1", "hi"]]}))
    path = tmp_path / "u.json"
    old, new = json.dumps({"tiny": [["v1", "hi"]]}), json.dumps({"tiny": [["v2", "hi"]]})
    path.write_text(old)
    for p in (first, path):
        os.utime(p, (1.6e9, 1.6e9))  # old: their digests may be remembered
    load_mod = importlib.import_module("accordkit.ingest.read")
    real_parse = load_mod.Reading._text

    def rewrite_while_parsing(self, input):
        source = input.name
        out = real_parse(self, input)
        if source.endswith("a.json"):  # another process replaces u.json meanwhile
            assert read_ahead_done.wait(10), "u.json is read ahead while a.json is parsed"
            (tmp_path / "u.tmp").write_text(new)
            os.replace(tmp_path / "u.tmp", path)
        return out

    monkeypatch.setattr(load_mod.Reading, "_text", rewrite_while_parsing)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        assert list(ak.load([first, path])["episode_id"]) == ["tiny/a1", "tiny/v2"]
    monkeypatch.setattr(load_mod.Reading, "_text", real_parse)
    (tmp_path / "u.tmp").write_text(old)
    os.replace(tmp_path / "u.tmp", path)
    os.utime(path, (1.6e9, 1.6e9))
    assert list(ak.load(path)["episode_id"]) == ["tiny/v1"]
    assert list(ak.load([first, path])["episode_id"]) == ["tiny/a1", "tiny/v1"]


def test_a_readers_version_is_part_of_the_cache_key(tmp_path, monkeypatch):
    """A reader whose output changed says so by its version: files read before are read
    again, not served as the old reader read them."""
    monkeypatch.setenv("ACCORDKIT_CACHE_DIR", str(tmp_path / "cache"))

    class Shouting(TinyFormat):
        version = "1"

        def read(self, path, *, source):
            for rec in super().read(path, source=source):
                rec["messages"][0]["content"] = rec["messages"][0]["content"].upper() \
                    if self.version == "2" else rec["messages"][0]["content"]
                yield rec

    path = _write(tmp_path, [["a", "hi"]])
    reader = Shouting()
    readers.register(reader)
    try:
        assert ak.load(path)[0]["messages"][0]["content"] == "hi"
        reader.version = "2"
        assert ak.load(path)[0]["messages"][0]["content"] == "HI"
    finally:
        readers.unregister("tiny")
