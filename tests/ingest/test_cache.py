"""The episode cache (issue 13): hit, miss, stale key, corrupt entry, concurrent writers,
an unwritable folder, and a cached load reporting exactly what a fresh one does."""

from __future__ import annotations

import json
import os
import sys
import threading
import time
import types
import warnings
from pathlib import Path

import pytest

import accordkit as ak
from accordkit._internal.arrow import arrow_table
from accordkit.cli import main
from accordkit.ingest import cache as cache_mod

from .test_load_errors import _results, _sim, _write


@pytest.fixture
def cache_dir(tmp_path, monkeypatch):
    folder = tmp_path / "cache"
    monkeypatch.setenv("ACCORDKIT_CACHE_DIR", str(folder))
    return folder


@pytest.fixture
def reads(monkeypatch):
    """Counts the files really decoded (a cache hit decodes nothing)."""
    reader = sys.modules["accordkit.ingest.read"].Reading
    real = reader._text
    seen: list[str] = []

    def spy(self, input):
        source = input.name
        seen.append(source)
        return real(self, input)

    monkeypatch.setattr(reader, "_text", spy)
    return seen


def _load(source, **kw):
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        ds, report = ak.load_with_report(source, **kw)
    return ds, report, caught


def _entries(folder):
    return sorted((folder / "episodes").glob("*.arrow"))


def test_miss_then_hit_gives_the_same_table(tmp_path, cache_dir, reads):
    path = _write(tmp_path, _results(_sim("s1"), _sim("s2")))
    first, _, _ = _load(path)
    assert reads == [str(path)] and len(_entries(cache_dir)) == 1
    second, _, _ = _load(path)
    assert reads == [str(path)], "the second load is served from the cache"
    assert arrow_table(second).equals(arrow_table(first))
    assert list(second.features) == list(ak.EPISODE_FEATURES)


def test_changed_file_is_a_new_key(tmp_path, cache_dir, reads):
    path = _write(tmp_path, _results(_sim("s1")))
    assert _load(path)[0]["episode_id"] == ["tau2/s1"]
    _write(tmp_path, _results(_sim("s1"), _sim("s2")))
    assert _load(path)[0]["episode_id"] == ["tau2/s1", "tau2/s2"]
    assert len(reads) == 2 and len(_entries(cache_dir)) == 2


def _age(path, seconds=3600):
    """Set the file's modification time into the past (it is no longer "racy")."""
    old = time.time() - seconds
    os.utime(path, (old, old))


@pytest.fixture
def file_reads(monkeypatch):
    """Counts whole-file reads of the loaded files (hashing or decoding them)."""
    real = Path.read_bytes
    seen: list[str] = []

    def spy(self):
        if self.suffix == ".json":
            seen.append(self.name)
        return real(self)

    monkeypatch.setattr(Path, "read_bytes", spy)
    return seen


def test_unchanged_file_is_found_without_reading_it(tmp_path, cache_dir, file_reads):
    path = _write(tmp_path, _results(_sim("s1"), _sim("s2")))
    _age(path)
    first, _, _ = _load(path)
    assert file_reads == ["run.json"]  # hashed and decoded from one read
    assert len(list((cache_dir / "digests").glob("*.json"))) == 1
    second, _, _ = _load(path)
    assert file_reads == ["run.json"], "a hit reads neither the file nor its bytes to hash"
    assert arrow_table(second).equals(arrow_table(first))


def test_remembered_digest_follows_a_change(tmp_path, cache_dir, reads):
    path = _write(tmp_path, _results(_sim("s1")))
    _age(path)
    assert _load(path)[0]["episode_id"] == ["tau2/s1"]
    _write(tmp_path, _results(_sim("s9")))  # same size, new content
    _age(path)
    assert _load(path)[0]["episode_id"] == ["tau2/s9"]
    assert len(reads) == 2


def test_a_change_made_while_a_file_is_read_is_never_taken_for_its_old_bytes(
        tmp_path, cache_dir, monkeypatch):
    """The stat remembered with a digest is one taken before the bytes were read: a change
    made after it (same size, the old modification time put back) shows in the stat, so the
    next load reads the file again instead of trusting the digest of the older bytes."""
    path = _write(tmp_path, _results(_sim("s1")))
    _age(path)
    old = path.stat().st_mtime_ns
    real = Path.read_bytes

    def read_then_change(self):
        data = real(self)
        if self == path and b'"s1"' in data:
            time.sleep(0.02)  # past the change time's clock tick
            _write(tmp_path, _results(_sim("s9")))  # same size, new content
            os.utime(path, ns=(old, old))
        return data

    monkeypatch.setattr(Path, "read_bytes", read_then_change)
    assert _load(path)[0]["episode_id"] == ["tau2/s1"]  # the bytes it read
    assert path.stat().st_mtime_ns == old
    assert _load(path)[0]["episode_id"] == ["tau2/s9"]


def test_a_file_read_ahead_is_judged_fresh_by_when_it_was_read(tmp_path, cache_dir,
                                                                monkeypatch, read_ahead_done):
    """The next file of a load is read on another thread while the one before is parsed,
    and its digest is remembered only when its turn comes, maybe seconds later. Whether it
    was written too recently to trust its stat is judged at the time of its stat: judged
    when its turn comes, a file written just before it was read looked old enough."""
    first = _write(tmp_path, _results(_sim("s1")), "a.json")
    _age(first)
    fresh = _write(tmp_path, _results(_sim("s2")), "b.json")  # written just now
    load_mod = sys.modules["accordkit.ingest.read"]
    shift = [0.0]
    monkeypatch.setattr(cache_mod, "time",
                        types.SimpleNamespace(time=lambda: time.time() + shift[0]))
    real_parse = load_mod.Reading._text

    def slow_parse(self, input):
        source = input.name
        if source.endswith("a.json"):
            assert read_ahead_done.wait(10), "b.json is read ahead while a.json is parsed"
            shift[0] = 60.0  # a parse of a minute: b.json's turn comes much later
        return real_parse(self, input)

    monkeypatch.setattr(load_mod.Reading, "_text", slow_parse)
    assert _load([first, fresh])[0]["episode_id"] == ["tau2/s1", "tau2/s2"]
    assert cache_mod.known_digest(cache_mod.real_path(first)) is not None
    assert cache_mod.known_digest(cache_mod.real_path(fresh)) is None


def test_a_link_repointed_during_a_load_never_pairs_one_files_stat_with_anothers_bytes(
        tmp_path, cache_dir, monkeypatch):
    """The loader finds where a symbolic link leads once per load (reading ahead asks it
    before the file's turn): the bytes are read from that file too, so a link repointed
    meanwhile cannot give the first target's remembered stat the second target's digest."""
    first = _write(tmp_path, _results(_sim("s1")), "a.json")
    one = _write(tmp_path, _results(_sim("t1")), "t1.json")
    two = _write(tmp_path, _results(_sim("t2")), "t2.json")
    for path in (first, one, two):
        _age(path)
    _load(one)  # its digest remembered: the link is not read ahead, but in its turn
    link = tmp_path / "link.json"
    link.symlink_to(one)
    load_mod = sys.modules["accordkit.ingest.read"]
    real_parse = load_mod.Reading._text

    def repoint_while_parsing(self, input):
        source = input.name
        if source.endswith("a.json"):  # stands for another process
            link.unlink()
            link.symlink_to(two)
        return real_parse(self, input)

    monkeypatch.setattr(load_mod.Reading, "_text", repoint_while_parsing)
    _load([first, link])
    monkeypatch.setattr(load_mod.Reading, "_text", real_parse)
    link.unlink()
    link.symlink_to(one)  # t1.json itself never changed
    assert _load(link)[0]["episode_id"] == ["tau2/t1"]
    assert _load(one)[0]["episode_id"] == ["tau2/t1"]


def test_a_link_whose_first_target_is_gone_is_read_where_it_leads_now(
        tmp_path, cache_dir, monkeypatch):
    first = _write(tmp_path, _results(_sim("s1")), "a.json")
    one = _write(tmp_path, _results(_sim("t1")), "t1.json")
    two = _write(tmp_path, _results(_sim("t2")), "t2.json")
    for path in (first, one, two):
        _age(path)
    _load(one)
    link = tmp_path / "link.json"
    link.symlink_to(one)
    load_mod = sys.modules["accordkit.ingest.read"]
    real_parse = load_mod.Reading._text

    def repoint_and_remove(self, input):
        source = input.name
        if source.endswith("a.json"):
            link.unlink()
            link.symlink_to(two)
            one.unlink()
        return real_parse(self, input)

    monkeypatch.setattr(load_mod.Reading, "_text", repoint_and_remove)
    assert _load([first, link])[0]["episode_id"] == ["tau2/s1", "tau2/t2"]


def test_a_simulation_added_while_a_dir_format_run_is_read_is_not_cached_as_the_run(
        tmp_path, cache_dir, monkeypatch):
    """The key of a dir-format run covers its listed files; a simulation written while the
    run is read (listed by the read, not by the key) keeps the entry from being stored."""
    run = tmp_path / "run"
    (run / "simulations").mkdir(parents=True)
    meta = _results()
    del meta["simulations"]
    (run / "results.json").write_text(json.dumps(meta))
    (run / "simulations" / "s1.json").write_text(json.dumps(_sim("s1")))
    for path in (run / "results.json", run / "simulations" / "s1.json"):
        _age(path)
    results_mod = sys.modules["accordkit.ingest.formats.tau2.runs"]
    real_read = results_mod.read_results_dir

    def the_run_writes_its_next_simulation(*args, **kw):
        (run / "simulations" / "s2.json").write_text(json.dumps(_sim("s2")))
        return real_read(*args, **kw)

    monkeypatch.setattr(results_mod, "read_results_dir", the_run_writes_its_next_simulation)
    assert _load(run, errors="skip")[0]["episode_id"] == ["tau2/s1", "tau2/s2"]
    monkeypatch.setattr(results_mod, "read_results_dir", real_read)
    (run / "simulations" / "s2.json").unlink()
    assert _load(run, errors="skip")[0]["episode_id"] == ["tau2/s1"]


def test_every_spelling_of_a_file_shares_its_remembered_digest(tmp_path, cache_dir):
    path = _write(tmp_path, _results(_sim("s1")))
    _age(path)
    link = tmp_path / "link.json"
    link.symlink_to(path)
    _load(link)
    assert cache_mod.known_digest(cache_mod.real_path(path)) is not None
    assert cache_mod.real_path(link) == cache_mod.real_path(tmp_path / "." / "run.json")


def test_fresh_files_are_hashed_every_time(tmp_path, cache_dir, file_reads):
    """A file modified within the last seconds may change again unseen: no digest memo."""
    path = _write(tmp_path, _results(_sim("s1")))
    _load(path)
    _load(path)
    assert not list((cache_dir / "digests").glob("*.json"))
    assert file_reads == ["run.json", "run.json"]


def test_the_digests_of_a_folders_files_are_one_memo_written_once(tmp_path, cache_dir,
                                                                     file_reads, monkeypatch):
    paths = [_write(tmp_path, _results(_sim(f"s{i}")), f"run{i}.json") for i in range(3)]
    for path in paths:
        _age(path)
    writes = []
    real = cache_mod.write_digests
    monkeypatch.setattr(sys.modules["accordkit.ingest.cache_policy"], "write_digests",
                        lambda memos: writes.append(len(memos)) or real(memos))
    _load(paths)
    assert writes == [6], "three digests and where each entry is, written once at the end"
    (memo,) = (cache_dir / "digests").glob("*.json")
    files = json.loads(memo.read_text())["files"]
    assert sorted(files) == ["run0.json", "run1.json", "run2.json"]
    assert {saved["entry"]["file"] for saved in files.values()} == \
        {p.stem for p in _entries(cache_dir)}, "all three entries are in the one cache file"
    _load(paths[:2])
    # (the next file of a load is read ahead on another thread: reads come in any order)
    assert sorted(file_reads) == ["run0.json", "run1.json", "run2.json"], "none read again"
    paths[2].unlink()
    _write(tmp_path, _results(_sim("s7")), "run3.json")
    _age(tmp_path / "run3.json")
    _load([paths[0], tmp_path / "run3.json"])
    assert sorted(json.loads(memo.read_text())["files"]) == ["run0.json", "run1.json",
                                                            "run3.json"], "run2 is gone"


def test_corrupt_digest_memo_is_ignored(tmp_path, cache_dir, reads):
    path = _write(tmp_path, _results(_sim("s1")))
    _age(path)
    _load(path)
    (memo,) = (cache_dir / "digests").glob("*.json")
    memo.write_text('{"stat": "garbage", "sha256": 5')
    assert _load(path)[0]["episode_id"] == ["tau2/s1"]
    assert reads == [str(path)], "the digest was recomputed and the entry still found"


def test_options_and_path_are_part_of_the_key(tmp_path, cache_dir):
    rows = ak.load(_write(tmp_path, _results(_sim("s1"))), cache=False).to_list()
    rows[0]["config"] = "a"
    canon = tmp_path / "episodes.jsonl"
    canon.write_text(json.dumps(rows[0]) + "\n")
    assert len(_load(canon)[0]) == 1
    assert len(_load(canon, config="b")[0]) == 0
    copy = tmp_path / "copy.jsonl"
    copy.write_bytes(canon.read_bytes())
    ds = _load(copy)[0]
    assert ds["source"] == [rows[0]["source"]] and len(_entries(cache_dir)) == 3


def test_cache_false_reads_afresh_and_writes_nothing(tmp_path, cache_dir, reads):
    path = _write(tmp_path, _results(_sim("s1")))
    _load(path, cache=False)
    _load(path, cache=False)
    assert len(reads) == 2 and not cache_dir.exists()


def test_cached_load_reports_the_same_problems_and_notes(tmp_path, cache_dir, reads):
    obj = _results(_sim("s1", task_id="missing"), _sim("bad", trial="x"), _sim("s3"))
    path = _write(tmp_path, obj)
    fresh, fresh_report, _ = _load(path, errors="skip")
    cached, cached_report, _ = _load(path, errors="skip")
    assert len(reads) == 1
    assert cached["episode_id"] == fresh["episode_id"] == ["tau2/s1", "tau2/s3"]
    assert cached_report.skipped == fresh_report.skipped and len(fresh_report.skipped) == 1
    assert cached_report.notes == fresh_report.notes and "'missing'" in fresh_report.notes[0]
    assert cached_report.files == fresh_report.files
    with pytest.raises(ak.EpisodeValidationError, match="record bad, field trial"):
        ak.load(path)


def test_whole_file_problem_is_cached_and_reported(tmp_path, cache_dir, reads):
    path = tmp_path / "cut.json"
    path.write_text('{"info": {"environment_info": {"domain_name": "x"}}, "simulations": [')
    for _ in range(2):
        with pytest.raises(ak.EpisodeValidationError, match="truncated JSON"):
            ak.load(path)
    ds, report, _ = _load(path, errors="skip")
    assert len(ds) == 0 and [s.record for s in report.skipped] == ["(whole file)"]
    assert len(reads) == 1


@pytest.mark.parametrize("damage", ["garbage", "truncate", "foreign_key"])
def test_corrupt_or_foreign_entry_is_ignored_and_rebuilt(tmp_path, cache_dir, reads, damage):
    path = _write(tmp_path, _results(_sim("s1")))
    first = _load(path)[0]
    (entry,) = _entries(cache_dir)
    if damage == "garbage":
        entry.write_bytes(b"not arrow at all")
    elif damage == "truncate":
        entry.write_bytes(entry.read_bytes()[:200])
    else:  # a valid entry stored under another key
        other = _write(tmp_path, _results(_sim("zz")), "other.json")
        _load(other)
        (other_entry,) = [e for e in _entries(cache_dir) if e != entry]
        entry.write_bytes(other_entry.read_bytes())
    cache_mod._damaged_warned.clear()
    again, _, caught = _load(path)
    assert again["episode_id"] == first["episode_id"] == ["tau2/s1"]
    assert [w for w in caught if isinstance(w.message, cache_mod.CacheWarning)
            and str(entry) in str(w.message)], "and a warning said so"
    assert reads.count(str(path)) == 2, "the damaged entry was not trusted"
    assert _load(path)[0]["episode_id"] == ["tau2/s1"]
    assert reads.count(str(path)) == 2, "and it was rebuilt"


def test_unwritable_cache_folder_loads_without_caching_and_warns(tmp_path, monkeypatch):
    blocker = tmp_path / "not-a-folder"
    blocker.write_text("a file where the cache folder should be")
    monkeypatch.setenv("ACCORDKIT_CACHE_DIR", str(blocker))
    path = _write(tmp_path, _results(_sim("s1")))
    ds, _, caught = _load(path)
    assert ds["episode_id"] == ["tau2/s1"]
    found = [w for w in caught if isinstance(w.message, cache_mod.CacheWarning)]
    assert len(found) == 1 and "loading without the cache" in str(found[0].message)
    assert blocker.read_text().startswith("a file")


def test_two_writers_at_once_never_expose_half_an_entry(tmp_path, cache_dir):
    path = _write(tmp_path, _results(*[_sim(f"s{i}") for i in range(20)]))
    ds = ak.load(path, cache=False)
    entry = cache_mod.CacheEntry(arrow_table(ds), [f"x{i}" for i in range(len(ds))], [], [], 20)
    key = "ab" + "0" * 62
    errors: list[BaseException] = []
    seen: list[int] = []

    def writer():
        try:
            for _ in range(15):
                assert cache_mod.write_entry(key, entry)
        except BaseException as exc:  # noqa: BLE001 - reported by the main thread
            errors.append(exc)

    def reader():
        for _ in range(60):
            got = cache_mod.read_entry(key)
            if got is not None:
                seen.append(got.table.num_rows)

    threads = [threading.Thread(target=f) for f in (writer, writer, reader, reader)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert not errors
    assert set(seen) <= {len(ds)}
    assert cache_mod.read_entry(key).table.equals(arrow_table(ds))
    assert [p.name for p in (cache_dir / "episodes").iterdir()] == [f"{key}.arrow"]


def test_concurrent_loads_of_one_file_agree(tmp_path, cache_dir):
    path = _write(tmp_path, _results(*[_sim(f"s{i}") for i in range(10)]))
    results: list[list[str]] = []

    def run():
        results.append(ak.load(path)["episode_id"])

    threads = [threading.Thread(target=run) for _ in range(3)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert len(results) == 3 and all(r == results[0] for r in results)
    assert len(_entries(cache_dir)) == 1


def test_cache_info_and_clear(tmp_path, cache_dir, capsys):
    _load(_write(tmp_path, _results(_sim("s1"))))
    (cache_dir / "episodes" / ".tmp-killed.arrow").write_bytes(b"half")
    # an entry of the older layout (a subfolder per first two characters of the key)
    (cache_dir / "episodes" / "zz").mkdir()
    (cache_dir / "episodes" / "zz" / f"zz{'0' * 62}.arrow").write_bytes(b"old")
    assert main(["cache", "info"]) == 0
    out = capsys.readouterr().out
    assert str(cache_dir) in out and "entries: 2" in out
    assert main(["cache", "clear"]) == 0
    assert "removed 2 cache entries" in capsys.readouterr().out
    assert not list((cache_dir / "episodes").iterdir())
    assert cache_mod.cache_info().entries == 0


def test_a_dir_format_run_is_one_entry_renewed_when_any_of_its_files_changes(
        tmp_path, cache_dir, monkeypatch):
    from accordkit.ingest.formats.tau2 import runs as results_reader

    from .test_load_errors import _dir_run

    run = _dir_run(tmp_path, _sim("a"), _sim("b", trial=1))
    built: list[str] = []
    real = results_reader.read_results_dir

    def spy(folder):
        built.append(str(folder))
        return real(folder)

    monkeypatch.setattr(results_reader, "read_results_dir", spy)
    first, _, _ = _load(run)
    again, _, _ = _load(run / "results.json")               # the same run, named by its file
    assert built == [str(run)] and len(_entries(cache_dir)) == 1
    assert arrow_table(again).equals(arrow_table(first))
    # one simulation file changes: a new key, read afresh, the new content served
    sim = run / "simulations" / "b.json"
    sim.write_text(json.dumps(_sim("b", trial=2)))
    changed, _, _ = _load(run)
    assert built == [str(run)] * 2 and changed["rollout"] != first["rollout"]
    # a simulation added to the folder (and its index) also changes the key
    meta = json.loads((run / "results.json").read_text())
    meta["simulation_index"].append({"id": "c", "task_id": "t1"})
    (run / "results.json").write_text(json.dumps(meta))
    (run / "simulations" / "c.json").write_text(json.dumps(_sim("c", trial=3)))
    grown, _, _ = _load(run)
    assert len(built) == 3 and len(grown) == 3


def test_a_cached_dir_format_run_reports_its_problems_again(tmp_path, cache_dir):
    from .test_load_errors import _dir_run

    run = _dir_run(tmp_path, _sim("a"), _sim("b", trial=1))
    sim_file = run / "simulations" / "b.json"
    sim_file.write_text(sim_file.read_text()[:40])
    for _ in range(2):                                       # a fresh read, then the entry
        _, report, _ = _load(run, errors="skip")
        assert [(s.source, s.record) for s in report.skipped] == [(str(sim_file), "b")]
        with pytest.raises(ak.EpisodeValidationError, match="record b"):
            ak.load(run)
    assert len(_entries(cache_dir)) == 1


# --------------------------------------------------------------------------- several files


def _two_files(tmp_path):
    a = _write(tmp_path, _results(_sim("a1"), _sim("a2")), "a.json")
    b = _write(tmp_path, _results(_sim("b1"), _sim("b2", task_id="missing")), "b.json")
    for path in (a, b):
        _age(path)
    return a, b


def test_a_load_of_several_files_is_served_by_one_entry(tmp_path, cache_dir, file_reads,
                                                         monkeypatch):
    a, b = _two_files(tmp_path)
    first, report1, caught1 = _load([a, b])
    assert len(_entries(cache_dir)) == 1, "one cache file: both files' entries and the load's"
    opened: list[str] = []
    real = cache_mod.read_file
    monkeypatch.setattr(sys.modules["accordkit.ingest.cache_policy"], "read_file",
                        lambda key: opened.append(key) or real(key))
    second, report2, caught2 = _load([a, b])
    assert sorted(file_reads) == ["a.json", "b.json"], "the second load reads neither file"
    assert opened == [_entries(cache_dir)[0].stem], "one read for the whole load"
    assert arrow_table(second).equals(arrow_table(first))
    assert report2 == report1  # counts, episodes and simulations per file, notes
    assert [str(w.message) for w in caught2] == [str(w.message) for w in caught1]
    assert any("missing from 'tasks'" in note for note in report2.notes)


def test_each_file_of_a_load_is_found_on_its_own(tmp_path, cache_dir, file_reads):
    a, b = _two_files(tmp_path)
    _load([a, b])
    alone, report, _ = _load(b)
    assert sorted(file_reads) == ["a.json", "b.json"], "b is served from the load's cache file"
    fresh, fresh_report, _ = _load(b, cache=False)
    assert arrow_table(alone).equals(arrow_table(fresh)) and report == fresh_report
    assert len(_entries(cache_dir)) == 1


def test_without_the_folders_memo_the_files_are_read_again(tmp_path, cache_dir, file_reads):
    a, b = _two_files(tmp_path)
    first, report1, _ = _load([a, b])
    for memo in (cache_dir / "digests").glob("*.json"):
        memo.unlink()
    second, report2, _ = _load([a, b])
    assert sorted(file_reads) == ["a.json", "a.json", "b.json", "b.json"]
    assert arrow_table(second).equals(arrow_table(first)) and report2 == report1
    _load([a, b])
    assert len(file_reads) == 4, "and found again without reading them after"


def test_a_changed_file_or_order_is_not_served_by_the_load_entry(tmp_path, cache_dir):
    a, b = _two_files(tmp_path)
    _load([a, b])
    assert _load([b, a])[0]["episode_id"] == ["tau2/b1", "tau2/b2", "tau2/a1", "tau2/a2"]
    _write(tmp_path, _results(_sim("a9")), "a.json")
    _age(a)
    assert _load([a, b])[0]["episode_id"] == ["tau2/a9", "tau2/b1", "tau2/b2"]


def test_a_load_with_problems_or_duplicates_is_not_stored_as_one_entry(tmp_path, cache_dir):
    a, b = _two_files(tmp_path)
    bad = _write(tmp_path, _results(_sim("c1", trial="x"), _sim("c2")), "c.json")
    same = _write(tmp_path, _results(_sim("a1"), _sim("a2")), "d.json")
    for path in (bad, same):
        _age(path)
    _, report, _ = _load([a, bad], errors="skip")
    assert len(report.skipped) == 1
    _, report, _ = _load([a, same])
    assert report.duplicates
    stored = [cache_mod.read_file(p.stem) for p in _entries(cache_dir)]
    assert sorted(len(f.entries) for f in stored) == [1, 2], "a and c, then d alone"
    assert all(f.load is None for f in stored), "no load is kept as a whole"
    ds, report, _ = _load([a, bad], errors="skip")  # the problem is reported again
    assert [s.record for s in report.skipped] == ["c1"] and len(ds) == 3


def test_the_load_entry_reports_sources_as_they_were_given(tmp_path, cache_dir, monkeypatch):
    a, b = _two_files(tmp_path)
    monkeypatch.chdir(tmp_path)
    _load(["a.json", "b.json"])
    _, report, _ = _load(["./a.json", "b.json"])
    assert list(report.counts) == ["./a.json", "b.json"]


def test_the_load_entry_asks_the_folder_readers_first(tmp_path, cache_dir):
    # A dir-format run's results.json, before its simulations/ folder exists, reads as a
    # results file; once the folder appears, the run's reader takes it.
    run = tmp_path / "run"
    run.mkdir()
    header = _results()
    del header["simulations"]
    first = _write(run, header, "results.json")
    b = _write(tmp_path, _results(_sim("b1")), "b.json")
    for path in (first, b):
        _age(path)
    assert _load([first, b])[0]["episode_id"] == ["tau2/b1"]
    (run / "simulations").mkdir()
    _age(_write(run / "simulations", _sim("s1"), "s1.json"))
    assert _load([first, b])[0]["episode_id"] == ["tau2/s1", "tau2/b1"]


def test_a_file_listed_twice_and_changed_between_reads_is_not_kept_as_one_load(
        tmp_path, cache_dir, monkeypatch):
    a = _write(tmp_path, _results(_sim("old1")), "a.json")
    c = _write(tmp_path, _results(_sim("c1")), "c.json")
    for path in (a, c):
        _age(path)
    reader = sys.modules["accordkit.ingest.read"].Reading
    real = reader._file

    def file_then_change_a(self, input):
        out = real(self, input)
        if input.name == str(a) and not getattr(self, "_changed", False):
            self._changed = True
            _write(tmp_path, _results(_sim("new1")), "a.json")
            _age(a)
        return out

    monkeypatch.setattr(reader, "_file", file_then_change_a)
    assert _load([a, c, a])[0]["episode_id"] == ["tau2/old1", "tau2/c1", "tau2/new1"]
    monkeypatch.setattr(reader, "_file", real)
    assert _load([a, c, a])[0]["episode_id"] == ["tau2/new1", "tau2/c1"]


# --------------------------------------------------------------------------- reading ahead


def test_the_files_of_a_load_are_read_once_though_read_ahead(tmp_path, cache_dir, file_reads):
    paths = [_write(tmp_path, _results(_sim(f"s{i}")), f"run{i}.json") for i in range(4)]
    ds, _, _ = _load(paths, cache=False)
    assert sorted(file_reads) == ["run0.json", "run1.json", "run2.json", "run3.json"]
    assert ds["episode_id"] == ["tau2/s0", "tau2/s1", "tau2/s2", "tau2/s3"]
    _load(paths)
    assert len(file_reads) == 8, "with the cache too: each file read once, hashed and parsed"


def test_a_file_that_fails_to_read_ahead_is_read_where_it_is_used(tmp_path, cache_dir,
                                                                  monkeypatch):
    a, b = _two_files(tmp_path)
    expected, report1, _ = _load([a, b], cache=False)

    def fail(path, cache):
        raise OSError("the disk hiccupped")

    monkeypatch.setattr(sys.modules["accordkit.ingest.prefetch"], "_read_and_hash", fail)
    got, report2, _ = _load([a, b])
    assert arrow_table(got).equals(arrow_table(expected)) and report2 == report1
    b.unlink()  # a file gone: its problem is the loader's own, naming it
    with pytest.raises(ak.EpisodeValidationError, match="b.json"):
        ak.load([a, b], cache=False)


def test_no_reading_thread_outlives_a_load(tmp_path, cache_dir):
    a, b = _two_files(tmp_path)
    bad = _write(tmp_path, _results(_sim("c1", trial="x")), "c.json")
    with pytest.raises(ak.EpisodeValidationError):
        ak.load([bad, a, b])  # stops at the first file, with the second read ahead
    _load([a, b])
    assert not [t for t in threading.enumerate() if t.name.startswith("accordkit-read-ahead")]


def _forge(entry_path, rows_from, *, trailer=b""):
    """Write at ``entry_path`` the rows of the cache file ``rows_from`` under the key its
    name says, as someone who can write the folder would (the format's own writer)."""
    import pyarrow as pa

    key = entry_path.stem
    found = cache_mod.read_file(rows_from.stem)
    (inner,) = found.entries.values()
    meta = {"format": cache_mod.ENTRY_FORMAT, "key": key,
            "entries": [{"key": key, "rows": inner.table.num_rows, "labels": inner.labels,
                         "skipped": [], "notes": [], "simulations": inner.simulations}]}
    table = inner.table.replace_schema_metadata({cache_mod._META: json.dumps(meta).encode()})
    sink = pa.BufferOutputStream()
    with pa.ipc.new_file(sink, table.schema) as writer:
        writer.write_table(table)
    entry_path.write_bytes(sink.getvalue().to_pybytes() + trailer)


@pytest.mark.parametrize("trailer", ["none", "wrong digest"])
def test_a_forged_cache_file_never_loads_as_other_episodes(tmp_path, cache_dir, reads,
                                                            trailer):
    # the reproduction: a file written into the cache folder under the key of results.json
    # made it load as the episodes of another file, without a word
    path = _write(tmp_path, _results(_sim("s1")))
    other = _write(tmp_path, _results(_sim("zz")), "other.json")
    _load(path)
    (entry,) = _entries(cache_dir)
    _load(other)
    (other_entry,) = [e for e in _entries(cache_dir) if e != entry]
    _forge(entry, other_entry,
           trailer=b"" if trailer == "none" else cache_mod._TRAILER + b"0" * 64)
    cache_mod._damaged_warned.clear()
    ds, _, caught = _load(path)
    assert ds["episode_id"] == ["tau2/s1"], "the forged rows were not served"
    found = [str(w.message) for w in caught if isinstance(w.message, cache_mod.CacheWarning)]
    assert len(found) == 1 and str(entry) in found[0] and "read again" in found[0]
    assert reads.count(str(path)) == 2
    assert _load(path)[0]["episode_id"] == ["tau2/s1"] and reads.count(str(path)) == 2


def test_a_cache_file_ends_with_the_sha256_of_its_content(tmp_path, cache_dir):
    import hashlib

    _load(_write(tmp_path, _results(_sim("s1"))))
    (entry,) = _entries(cache_dir)
    data = entry.read_bytes()
    body, tail = data[:-cache_mod._TRAILER_SIZE], data[-cache_mod._TRAILER_SIZE:]
    assert tail == cache_mod._TRAILER + hashlib.sha256(body).hexdigest().encode()
    cache_mod._damaged_warned.clear()
    flipped = bytearray(data)
    flipped[len(body) // 2] ^= 0xFF               # one byte changed in place
    entry.write_bytes(bytes(flipped))
    with pytest.warns(cache_mod.CacheWarning, match="does not match the sha256"):
        assert cache_mod.read_file(entry.stem) is None


def test_cache_folders_are_made_private(tmp_path, cache_dir):
    old = os.umask(0o002)              # a umask that would make them group-writable
    try:
        path = _write(tmp_path, _results(_sim("s1")))
        _load(path)
        cache_mod.write_digests([cache_mod.DigestNote(path, {"sha256": "0" * 64})])
    finally:
        os.umask(old)
    for folder in (cache_dir, cache_dir / "episodes", cache_dir / "digests"):
        assert folder.stat().st_mode & 0o777 == 0o700, folder


def test_a_cache_folder_others_may_write_is_not_used(tmp_path, cache_dir, reads):
    path = _write(tmp_path, _results(_sim("s1")))
    _load(path)
    before = _entries(cache_dir)
    os.chmod(cache_dir / "episodes", 0o777)
    cache_mod._distrusted.clear()
    cache_mod._checked.clear()
    try:
        ds, _, caught = _load(path)
        ds2, _, caught2 = _load(path)
    finally:
        cache_mod._distrusted.clear()
        cache_mod._checked.clear()
    assert ds["episode_id"] == ds2["episode_id"] == ["tau2/s1"]
    assert reads.count(str(path)) == 3, "read afresh each time: nothing there is trusted"
    found = [str(w.message) for w in caught if isinstance(w.message, cache_mod.CacheWarning)]
    assert len(found) == 1 and "may be written by its group or others" in found[0]
    assert _entries(cache_dir) == before
