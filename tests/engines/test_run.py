"""``score_to_store``: one run per store folder, inputs named twice read once, and no part
of a batch that failed."""

from __future__ import annotations

import hashlib
import os
import subprocess
import sys
import warnings

import pandas as pd
import pytest

import accordkit as ak
from accordkit._internal import lock as _lock
from accordkit.cli import main
from accordkit.engines import run as run_mod
from accordkit.engines import score_to_store
from accordkit.engines.run import StoreBusyError
from accordkit.store import PartialStoreWarning, read_manifest, read_scores


def test_a_second_run_into_the_same_store_stops_and_touches_nothing(tmp_path, sample_dir):
    out = tmp_path / "store"
    _lock.lock_path(out).write_text(str(os.getppid()))  # a run that is writing it
    with pytest.raises(StoreBusyError, match="another accordkit run"):
        score_to_store([str(sample_dir / "goalshift")], out=out, progress=False)
    assert not out.exists()
    assert _lock.lock_path(out).read_text() == str(os.getppid())


def test_the_cli_says_so_in_one_line(tmp_path, sample_dir, capsys):
    out = tmp_path / "store"
    _lock.lock_path(out).write_text(str(os.getppid()))
    assert main(["score", str(sample_dir / "goalshift"), "--out", str(out), "--quiet"]) == 1
    err = capsys.readouterr().err.strip()
    assert err.startswith("accordkit score: error: another accordkit run") and \
        "\n" not in err


def test_two_runs_started_together_never_mix(tmp_path, sample_dir):
    """Before the lock, the second run took the first's parts for the leftovers of an
    interrupted run, deleted them, and both exited 0 with a store of mixed inputs."""
    out = tmp_path / "store"
    cmd = [sys.executable, "-m", "accordkit.cli", "score", "--quiet", "--out", str(out)]
    env = dict(os.environ, HF_HUB_OFFLINE="1")
    first = subprocess.Popen([*cmd, str(sample_dir / "goalshift")], env=env,
                             stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    second = subprocess.Popen([*cmd, str(sample_dir / "accord")], env=env,
                              stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    # communicate() reads and closes each run's pipes (wait() left them open: ResourceWarning)
    errs = [run.communicate(timeout=300)[1] for run in (first, second)]
    codes = sorted([first.returncode, second.returncode])
    manifest = read_manifest(out)
    frame = read_scores(out)
    assert len(frame) == manifest["episodes"]
    assert set(frame["benchmark"]) in ({"accord"}, {"agentchangebench"}), "one run's only"
    assert codes == [0, 1]
    loser = errs[0] if first.returncode else errs[1]
    # it found the store being written, or (the first run done already) finished
    assert "another accordkit run" in loser \
        or "already holds a finished score store" in loser, loser


def test_a_file_named_twice_is_scored_once(tmp_path, sample_dir):
    folder = sample_dir / "goalshift"
    inner = sorted(folder.rglob("*.parquet"))[0]
    sources = [str(folder), str(inner)]
    manifest = score_to_store(sources, out=tmp_path / "store", progress=False)
    repeated = [r for r in manifest["inputs"] if r["same_as"] is not None]
    assert [r["source"] for r in repeated] == [str(inner.resolve())]
    first = manifest["inputs"][repeated[0]["same_as"]]
    assert first["source"] == str(inner.resolve()) and repeated[0]["episodes"] == 0
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # ak.load's note that it kept one copy of each
        want = ak.score(ak.load(sources))
    got = read_scores(tmp_path / "store")
    assert manifest["episodes"] == len(want)
    pd.testing.assert_frame_equal(got, want)


def test_a_batch_that_fails_half_written_leaves_no_part(tmp_path, sample_dir, monkeypatch):
    from accordkit.engines import item as item_mod

    real = item_mod.write_scored

    def write_then_fail(ds, out, **kw):
        real(ds, out, **kw)  # every level written ...
        raise OSError("disk full")  # ... then the batch fails

    monkeypatch.setattr(item_mod, "write_scored", write_then_fail)
    files = sorted(str(p) for p in (sample_dir / "goalshift").rglob("*.parquet"))
    out = tmp_path / "store"
    manifest = score_to_store(files[:1], out=out, progress=False, batch_size=10_000)
    assert manifest["failed_inputs"] == 1 and manifest["episodes"] == 0
    assert manifest["levels"]["episode"] == manifest["levels"]["shift"] == []
    with pytest.warns(PartialStoreWarning, match="1 of the 1 input.* could not be read"):
        assert len(read_scores(out)) == 0


@pytest.mark.parametrize(("modes", "message"), [
    ({"action_mode": "exact"}, "action_mode must be one of"),
    ({"tcrr_mode": "pooled"}, "tcrr_mode must be one of"),
    ({"tcr_mode": "episode"}, "unknown scoring option"),
])
def test_a_mode_that_does_not_exist_is_refused_before_anything_is_written(
        tmp_path, sample_dir, modes, message):
    """It used to make every batch fail, one by one, into a store of no episodes."""
    with pytest.raises(ValueError, match=message):
        score_to_store([str(sample_dir / "accord")], out=tmp_path / "s", modes=modes,
                       progress=False)
    assert not (tmp_path / "s").exists()


def test_an_input_that_changes_while_it_is_scored_leaves_the_store_unfinished(
        tmp_path, sample_dir, monkeypatch):
    """A results file a benchmark run is still writing: the manifest would give the sha256
    of bytes other than those scored."""
    import shutil

    from accordkit.engines.run import InputsChangedError
    from accordkit.store import IncompleteStoreError

    src = tmp_path / "run.parquet"
    shutil.copy(sorted((sample_dir / "goalshift").rglob("*.parquet"))[0], src)
    os.utime(src, (1.6e9, 1.6e9))
    real = run_mod._run_local

    def score_then_change(items, **kw):
        done = real(items, **kw)
        with open(src, "ab") as fh:  # the writer appends meanwhile
            fh.write(b"more")
        return done

    monkeypatch.setattr(run_mod, "_run_local", score_then_change)
    with pytest.raises(InputsChangedError, match="1 input.* changed while they were scored"):
        score_to_store([str(src)], out=tmp_path / "s", progress=False)
    with pytest.raises(IncompleteStoreError, match="not a finished score store"):
        read_scores(tmp_path / "s")
    monkeypatch.undo()
    manifest = score_to_store([str(src)], out=tmp_path / "s", progress=False)  # cleared, redone
    assert manifest["inputs"][0]["sha256"] == hashlib.sha256(src.read_bytes()).hexdigest()


def test_what_the_loader_notes_is_kept_in_the_manifest(tmp_path, capsys):
    from ..conftest import FIXTURES, _need

    path = _need(FIXTURES / "agentchangebench"
                 / "banking_gpt-4.1_legacy-reward_meta-tags_7sims.json")
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        ak.load(path, cache=False)
    said = [str(w.message) for w in caught]
    manifest = score_to_store([str(path)], out=tmp_path / "s", progress=False)
    notes = manifest["inputs"][0]["notes"]
    assert notes and all(any(n in m for m in said) for n in notes), (notes, said)
    assert main(["score", str(path), "--out", str(tmp_path / "cli"), "--quiet"]) == 0
    assert "the loader noted something of 1 input" in capsys.readouterr().out


def _quiet_load(sources, **kw):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # ak.load's note that it kept one copy of each
        return ak.load(sources, **kw)


def test_a_file_linked_into_a_folder_also_given_is_scored_once(tmp_path, sample_dir):
    src = sorted((sample_dir / "goalshift").rglob("*.parquet"))[0]
    (tmp_path / "runs").mkdir()
    (tmp_path / "runs" / "linked.parquet").symlink_to(src)
    sources = [str(src), str(tmp_path / "runs")]
    manifest = score_to_store(sources, out=tmp_path / "s", progress=False)
    assert [r["same_as"] for r in manifest["inputs"]] == [None, 0]
    assert len(read_scores(tmp_path / "s")) == len(_quiet_load(sources)) == 72


def test_of_a_file_named_twice_the_reading_through_its_dataset_card_is_kept(tmp_path,
                                                                           sample_dir):
    """The card names the file's split: read on its own first, the file's own rows (split
    "test") would leave nothing for split="train", where ak.load keeps the card's rows."""
    import shutil

    folder = tmp_path / "ds"
    (folder / "data").mkdir(parents=True)
    path = folder / "data" / "test-0.parquet"
    shutil.copy(sorted((sample_dir / "accord").rglob("*.parquet"))[0], path)
    (folder / "README.md").write_text("---\nconfigs:\n- config_name: shop\n  data_files:\n"
                                      "  - split: train\n    path: data/test-*.parquet\n---\n")
    sources = [str(path), str(folder)]
    manifest = score_to_store(sources, out=tmp_path / "s", progress=False, split="train")
    assert [r["same_as"] for r in manifest["inputs"]] == [1, None]
    assert manifest["episodes"] == len(_quiet_load(sources, split="train")) > 0


def test_a_store_has_one_lock_whatever_its_spelling(tmp_path, sample_dir):
    real = tmp_path / "real"
    (tmp_path / "link").symlink_to(real, target_is_directory=True)
    (tmp_path / "sub").mkdir()
    _lock.lock_path(real).write_text(str(os.getppid()))  # a run writing it
    for spelling in (tmp_path / "link", tmp_path / "sub" / ".." / "real"):
        with pytest.raises(StoreBusyError):
            score_to_store([str(sample_dir / "goalshift")], out=spelling, progress=False)
    assert sorted(p.name for p in tmp_path.iterdir()) == [".real.lock", "link", "sub"]
