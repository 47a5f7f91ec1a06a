"""A score store that is damaged or crafted is refused, never read as wrong rows (issue 34).

Each test edits the manifest of a real store (the embedded sample's 792 episodes) the way
a reviewer did, and reads it back with ``ak.read_scores`` (``check_inputs=False`` too: it
skips only the check of the original inputs, never these), the report and
``fetch_episodes``.
"""

from __future__ import annotations

import json
import shutil
import warnings
from pathlib import Path

import pytest

import accordkit as ak
from accordkit.store import (
    StoreChangedWarning,
    StoreIntegrityError,
    fetch_episodes,
    read_manifest,
    read_scores,
)


@pytest.fixture(scope="module")
def stores(tmp_path_factory, sample_dir):
    """A real store of the sample (accord + goalshift) and another of accord alone."""
    from accordkit.cli import main

    root = tmp_path_factory.mktemp("stores")
    for name, sources in (("S", ["accord", "goalshift"]), ("other", ["goalshift"])):
        args = [str(sample_dir / s) for s in sources]
        assert main(["score", *args, "--out", str(root / name), "--quiet"]) == 0
    assert read_manifest(root / "S")["episodes"] == 792
    return root


@pytest.fixture
def store(stores, tmp_path):
    """A fresh copy of the sample store (and the other store beside it) to edit."""
    shutil.copytree(stores / "S", tmp_path / "S")
    shutil.copytree(stores / "other", tmp_path / "other")
    return tmp_path / "S"


def _edit(store: Path, change) -> None:
    path = store / "manifest.json"
    manifest = json.loads(path.read_text())
    change(manifest)
    path.write_text(json.dumps(manifest))


def _refused(store: Path, match: str) -> None:
    for check in (True, False):
        with pytest.raises(StoreIntegrityError, match=match):
            read_scores(store, check_inputs=check)
    with pytest.raises(StoreIntegrityError, match=match):
        read_scores(store, level=None, check_inputs=False)


def _other_part(store: Path) -> str:
    return sorted(p.name for p in (store.parent / "other" / "episodes").iterdir())[0]


def test_the_untouched_store_reads_every_episode(store):
    assert len(read_scores(store)) == 792


def test_a_part_path_out_of_the_store_is_refused(store):
    other = _other_part(store)
    _edit(store, lambda m: m["levels"]["episode"].__setitem__(
        0, f"../../other/episodes/{other}"))
    _refused(store, r"episode part '\.\./\.\./other/episodes/.*': not a plain part name")


def test_an_absolute_part_path_is_refused(store):
    other = store.parent / "other" / "episodes" / _other_part(store)
    _edit(store, lambda m: m["levels"]["episode"].__setitem__(0, str(other)))
    _refused(store, "not a plain part name inside")


def test_a_part_that_links_out_of_the_store_is_refused(store):
    name = sorted(read_manifest(store)["levels"]["episode"])[0]
    part = store / "episodes" / name
    part.unlink()
    part.symlink_to(store.parent / "other" / "episodes" / _other_part(store))
    _refused(store, "a link or name leading out of")


def test_a_part_listed_twice_is_refused(store):
    _edit(store, lambda m: m["levels"]["episode"].append(m["levels"]["episode"][0]))
    _refused(store, "listed more than once in manifest.json")


def test_a_part_without_digest_swapped_for_another_stores_is_refused(store):
    name = read_manifest(store)["levels"]["episode"][0]
    shutil.copy(store.parent / "other" / "episodes" / _other_part(store),
                store / "episodes" / name)
    _edit(store, lambda m: m.pop("sha256"))
    _refused(store, f"part '{name}': manifest.json records no sha256")


def test_a_part_swapped_for_another_stores_is_refused_by_its_digest(store):
    name = read_manifest(store)["levels"]["episode"][0]
    shutil.copy(store.parent / "other" / "episodes" / _other_part(store),
                store / "episodes" / name)
    _refused(store, "sha256 differs from manifest.json")


def test_an_episode_count_other_than_the_parts_hold_is_refused(store):
    _edit(store, lambda m: m.__setitem__("episodes", 5))
    _refused(store, "its parts hold 792 episodes, manifest.json says 5")


def test_a_row_count_other_than_the_part_holds_is_refused(store):
    def change(m):
        name = m["levels"]["episode"][0]
        m["rows"]["episode"][name] += 1
    _edit(store, change)
    _refused(store, r"holds \d+ rows, manifest.json says \d+")


def test_an_episode_in_two_parts_is_refused(store):
    """Another store's part under this store's digests (a crafted manifest): the episodes
    of both stores' goal-shift inputs overlap."""
    from accordkit._internal.files import file_sha256
    from accordkit.store import _part_rows

    other = store.parent / "other" / "episodes" / _other_part(store)
    shutil.copy(other, store / "episodes" / "99999-00000.parquet")

    def change(m):
        m["levels"]["episode"].append("99999-00000.parquet")
        m["sha256"]["episode"]["99999-00000.parquet"] = file_sha256(other)
        m["rows"]["episode"]["99999-00000.parquet"] = _part_rows(other)
        m["episodes"] += _part_rows(other)
    _edit(store, change)
    _refused(store, r"episode '.*' is in it more than once \(parts .*99999-00000.parquet")


def test_the_report_refuses_a_crafted_store(store, tmp_path, capsys):
    from accordkit.cli import main

    _edit(store, lambda m: m.__setitem__("episodes", 5))
    assert main(["report", "--scores", str(store), "--out", str(tmp_path / "rep")]) == 1
    assert "manifest.json says 5" in capsys.readouterr().err
    assert not (tmp_path / "rep").exists()


def test_drill_down_says_when_an_input_is_not_the_file_scored(store, tmp_path, tau2_dir):
    manifest = read_manifest(store)
    first = next(r for r in manifest["inputs"] if r["episodes"])
    ids = list(read_scores(store)["episode_id"][:2])
    with warnings.catch_warnings():
        warnings.simplefilter("error")           # the untouched store: no warning
        assert len(fetch_episodes(store, ids)) == 2
    other = tmp_path / "other_run.json"
    shutil.copy(sorted(tau2_dir.glob("*.json"))[0], other)
    _edit(store, lambda m: m["inputs"][first["index"]].__setitem__("source", str(other)))
    with pytest.warns(StoreChangedWarning, match=r"not the file\(s\) it scored"):
        fetch_episodes(store, ids)
    # the scores themselves are unchanged, and read with the input warning
    with pytest.warns(StoreChangedWarning):
        assert len(read_scores(store)) == 792


def test_a_store_is_checked_fast_once_per_process(store, monkeypatch):
    """The parts are hashed once while stat says they are the same (ctime included)."""
    import time

    from accordkit.store import format as format_mod

    monkeypatch.setattr(format_mod, "_RACY_NS", 50_000_000)   # 2 s on a real machine
    time.sleep(0.1)   # a part changed a moment ago is hashed again
    read_scores(store, level=None)
    calls = []
    monkeypatch.setattr(format_mod, "file_sha256", lambda p: calls.append(p) or "x")
    assert ak.read_scores(store).shape[0] == 792
    read_scores(store, level="preference")
    assert calls == []


def test_a_level_folder_that_links_to_another_store_is_refused(store):
    # the reproduction: episodes/ -> the other store's episodes/, the manifest listing its
    # parts with their digests and counts: 216 foreign rows were read as this store's
    other = read_manifest(store.parent / "other")
    shutil.rmtree(store / "episodes")
    (store / "episodes").symlink_to(store.parent / "other" / "episodes")

    def swap(m):
        for key in ("levels", "sha256", "rows"):
            m[key]["episode"] = other[key]["episode"]
        m["episodes"] = other["episodes"]
    _edit(store, swap)
    _refused(store, "its episode folder episodes/ is a link")


def test_a_manifest_that_is_a_link_is_refused(store):
    (store / "manifest.json").unlink()
    (store / "manifest.json").symlink_to(store.parent / "other" / "manifest.json")
    _refused(store, "manifest.json is a link")


def test_a_part_rewritten_in_place_with_its_size_time_and_inode_is_refused(store, monkeypatch):
    # the reproduction: a process reads the store, the part is rewritten in place (same
    # size, mtime put back, same inode), and the same process read it without a word
    import os
    import time

    from accordkit.store import format as format_mod

    monkeypatch.setattr(format_mod, "_RACY_NS", 50_000_000)   # 2 s on a real machine
    time.sleep(0.1)
    assert len(read_scores(store, check_inputs=False)) == 792      # the memo knows the part
    name = read_manifest(store)["levels"]["episode"][0]
    part = store / "episodes" / name
    before = part.stat()
    with part.open("r+b") as fh:     # another byte in the middle of the file, in place
        fh.seek(before.st_size // 2)
        byte = fh.read(1)
        fh.seek(before.st_size // 2)
        fh.write(bytes([byte[0] ^ 0xFF]))
    os.utime(part, ns=(before.st_atime_ns, before.st_mtime_ns))
    after = part.stat()
    assert (after.st_size, after.st_mtime_ns, after.st_ino) == \
        (before.st_size, before.st_mtime_ns, before.st_ino)
    _refused(store, "sha256 differs from manifest.json")


def test_a_part_changed_within_the_same_clock_tick_is_hashed_again(store, monkeypatch):
    """A memo entry whose file changed just before it was hashed proves nothing: rehashed."""
    from accordkit.store import format as format_mod

    calls = []
    real = format_mod.file_sha256
    monkeypatch.setattr(format_mod, "file_sha256", lambda p: calls.append(p) or real(p))
    monkeypatch.setattr(format_mod, "_RACY_NS", 10**15)    # every file is "just changed"
    for _ in range(2):
        read_scores(store, check_inputs=False)
    parts = len(read_manifest(store)["levels"]["episode"])
    assert len(calls) == 2 * parts


def test_a_manifest_nested_beyond_any_parser_is_refused_as_integrity(store):
    # the reproduction: a 100,000-deep manifest.json raised RecursionError
    (store / "manifest.json").write_text("[" * 100_000 + "]" * 100_000)
    _refused(store, "nests too deep")
