"""The report folder: one writer, built beside it, swapped in whole, marked when incomplete."""

from __future__ import annotations

import errno
import json
import os
import shutil
from pathlib import Path

import pytest

from accordkit._internal import lock as _lock
from accordkit.report.outdir import (
    INCOMPLETE_MARKER,
    REPORT_MARKER,
    ReportBusyError,
    ReportIncompleteError,
    UnsafeOutputError,
    lock_path,
    staged_output,
    write_text_checked,
)


def _old_report(out):
    """A folder as an earlier report left it (its marker lists what the run wrote)."""
    with staged_output(out) as stage:
        (stage / "stale_page.html").write_text("old")
        (stage / "index.html").write_text("old index")


def _pages(out):
    """The files of a report folder, its marker aside."""
    return sorted(p.name for p in out.iterdir() if p.name != REPORT_MARKER)


def test_rerun_replaces_the_folder_and_leaves_no_stale_page(tmp_path):
    out = tmp_path / "rep"
    _old_report(out)
    with staged_output(out) as stage:
        assert stage != out and stage.parent == out.parent
        (stage / "index.html").write_text("new index")
        assert (out / "index.html").read_text() == "old index"  # untouched while building
    assert _pages(out) == ["index.html"] and (out / REPORT_MARKER).is_file()
    assert (out / "index.html").read_text() == "new index"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["rep"]  # no lock, stage or old copy


def test_a_second_writer_is_refused_while_the_first_holds_the_lock(tmp_path):
    out = tmp_path / "rep"
    _old_report(out)
    lock_path(out.resolve()).write_text(str(os.getppid()))  # a live process
    with pytest.raises(ReportBusyError, match="another accordkit report"), staged_output(out):
        pass
    assert (out / "stale_page.html").exists()


def test_nested_writers_in_one_process_do_not_mix(tmp_path):
    out = tmp_path / "rep"
    with staged_output(out) as stage:
        (stage / "a.html").write_text("a")
        with pytest.raises(ReportBusyError), staged_output(out):
            pass
    assert _pages(out) == ["a.html"]


def test_a_lock_left_by_a_dead_process_is_taken_over(tmp_path, monkeypatch):
    out = tmp_path / "rep"
    lock_path(out.resolve()).write_text("999999")
    monkeypatch.setattr(_lock, "pid_alive", lambda pid: False)
    with staged_output(out) as stage:
        (stage / "index.html").write_text("x")
    assert (out / "index.html").exists() and not lock_path(out.resolve()).exists()


def test_a_full_disk_keeps_the_old_report_and_marks_the_partial_one(tmp_path):
    out = tmp_path / "rep"
    _old_report(out)
    with pytest.raises(ReportIncompleteError, match="could not be written completely"), \
            staged_output(out) as stage:
        (stage / "index.html").write_text("half")
        raise OSError(errno.ENOSPC, "No space left on device")
    assert (out / "index.html").read_text() == "old index"
    kept = tmp_path / "rep.incomplete"
    assert "No space left" in (kept / INCOMPLETE_MARKER).read_text()
    assert not lock_path(out.resolve()).exists()


def test_leftovers_of_a_killed_run_are_cleared(tmp_path):
    out = tmp_path / "rep"
    (tmp_path / ".rep.building-424242").mkdir()
    (tmp_path / ".rep.old-424242").mkdir()
    with staged_output(out) as stage:
        (stage / "index.html").write_text("x")
    assert sorted(p.name for p in tmp_path.iterdir()) == ["rep"]


def test_other_errors_discard_the_staging_folder(tmp_path):
    out = tmp_path / "rep"
    with pytest.raises(KeyError), staged_output(out):
        raise KeyError("boom")
    assert list(tmp_path.iterdir()) == []


def test_write_text_checked_reports_short_writes(tmp_path, monkeypatch):
    path = tmp_path / "a.txt"
    write_text_checked(path, "héllo")
    assert path.read_text(encoding="utf-8") == "héllo"

    class Short:
        def __init__(self, fh):
            self.fh = fh

        def __enter__(self):
            return self

        def __exit__(self, *exc):
            self.fh.close()

        def write(self, data):
            return self.fh.write(data[:1])

        def flush(self):
            self.fh.flush()

        def fileno(self):
            return self.fh.fileno()

    real_open = type(path).open
    monkeypatch.setattr(type(path), "open", lambda self, mode="r", *a, **k:
                        Short(real_open(self, mode, *a, **k)))
    with pytest.raises(OSError, match="wrote 1 of 6 bytes"):
        write_text_checked(path, "héllo")


# ----------------------------------------------------------------- build_report, no papermill


def _mixed_folder(tmp_path, tau2_dir):
    folder = tmp_path / "runs"
    folder.mkdir()
    shutil.copy(tau2_dir / "telecom_grok-3_5tasks_1trial.json", folder)
    data = json.loads((tau2_dir / "airline_grok-3_4tasks_4trials.json").read_text())
    data["simulations"][1]["reward_info"]["reward"] = "lots"
    (folder / "airline_bad_record.json").write_text(json.dumps(data))
    (folder / "broken.json").write_text("{not json")
    return folder


def test_skipped_records_are_in_results_provenance_and_index(tmp_path, tau2_dir):
    from accordkit.report.runner import build_report

    folder = _mixed_folder(tmp_path, tau2_dir)
    out = tmp_path / "rep"
    results = build_report([str(folder)], out=out, notebooks=["accord_results"],
                           progress=False)
    assert results.n_skipped == 2
    (entry,) = results.skipped
    assert entry["episodes"] == 5 + 15 and entry["skipped"] == 2
    assert any("broken.json" in r for r in entry["reasons"])
    assert any("airline_bad_record.json" in r and "reward" in r for r in entry["reasons"])
    saved = json.loads((out / "results.json").read_text())
    assert saved["skipped_records"] == results.skipped
    assert saved["notebooks"][0]["status"] == "skipped"
    prov = json.loads((out / "provenance.json").read_text())
    assert prov["skipped_records"] == results.skipped
    index = (out / "index.html").read_text()
    assert "Skipped records" in index and "broken.json" in index
    assert "2 bad record(s) skipped" in index


def test_strict_fails_with_exit_2_and_writes_nothing(tmp_path, tau2_dir, capsys):
    from accordkit.cli import main

    folder = _mixed_folder(tmp_path, tau2_dir)
    out = tmp_path / "rep"
    code = main(["report", "--source", str(folder), "--out", str(out), "--strict",
                 "--notebooks", "accord_results"])
    assert code == 2
    assert "2 bad record(s) were skipped" in capsys.readouterr().err
    assert not out.exists()
    assert main(["report", "--source", str(folder), "--out", str(out),
                 "--notebooks", "accord_results"]) == 0
    assert "skipped 2 bad record(s)" in capsys.readouterr().err


def test_a_source_that_does_not_exist_exits_2_and_writes_nothing(tmp_path, capsys):
    from accordkit.cli import main

    out = tmp_path / "rep"
    typo = tmp_path / "nonexistent.json"
    assert main(["report", "--source", str(typo), "--out", str(out)]) == 2
    err = capsys.readouterr().err
    assert "no such file or folder" in err and str(typo) in err
    assert not out.exists()


def test_a_bad_verdict_file_exits_2_naming_it_and_writes_nothing(tmp_path, capsys, sample_dir):
    from accordkit.cli import main

    bad = tmp_path / "verdicts.parquet"
    bad.write_bytes(b"not parquet")
    out = tmp_path / "rep"
    assert main(["report", "--source", str(sample_dir / "accord"), "--verdicts", str(bad),
                 "--out", str(out)]) == 2
    err = capsys.readouterr().err
    assert "--verdicts" in err and "verdicts.parquet" in err
    assert not out.exists()


def test_full_disk_during_report_marks_it_incomplete(tmp_path, tau2_dir, monkeypatch):
    from accordkit.cli import main
    from accordkit.report import index

    out = tmp_path / "rep"
    _old_report(out)

    def full(path, text):
        with open(path, "wb") as fh:
            fh.write(text.encode()[:10])
        raise OSError(errno.ENOSPC, "No space left on device", str(path))

    monkeypatch.setattr(index, "write_text_checked", full)
    code = main(["report", "--source", str(tau2_dir), "--out", str(out),
                 "--notebooks", "accord_results"])
    assert code == 1
    assert (out / "index.html").read_text() == "old index"  # old report intact
    assert (out / "stale_page.html").exists()
    assert (tmp_path / "rep.incomplete" / INCOMPLETE_MARKER).is_file()


def test_concurrent_report_into_a_locked_folder_is_refused(tmp_path, tau2_dir, capsys):
    from accordkit.cli import main

    out = tmp_path / "rep"
    _old_report(out)
    lock_path(out.resolve()).write_text(str(os.getppid()))
    code = main(["report", "--source", str(tau2_dir), "--out", str(out),
                 "--notebooks", "accord_results"])
    assert code == 1 and "another accordkit report" in capsys.readouterr().err
    assert _pages(out) == ["index.html", "stale_page.html"]


@pytest.mark.slow
@pytest.mark.skipif(not Path("/proc/self/task").is_dir(), reason="needs Linux /proc")
def test_sigterm_stops_a_report_and_its_kernels_at_once(tmp_path, sample_dir):
    import signal
    import subprocess
    import sys
    import time

    import psutil

    out = tmp_path / "rep"
    proc = subprocess.Popen(
        [sys.executable, "-c", "import sys; from accordkit.cli import main; sys.exit(main())",
         "report", "--source", str(sample_dir / "accord"), str(sample_dir / "goalshift"),
         "--out", str(out), "--jobs", "2", "--set", "n_resamples=200"],
        env={**os.environ, "HF_HUB_OFFLINE": "1"}, stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE, text=True)
    deadline = time.monotonic() + 120
    while time.monotonic() < deadline and not list(tmp_path.rglob("notebooks/*.ipynb")):
        time.sleep(0.2)
    family = psutil.Process(proc.pid).children(recursive=True)
    assert family, "no notebook started"
    sent = time.monotonic()
    proc.send_signal(signal.SIGTERM)
    assert proc.wait(timeout=60) == 130
    took = time.monotonic() - sent
    proc.stderr.close()                          # the run is over: no ResourceWarning
    assert took < 8, took                        # not after every queued notebook
    gone, alive = psutil.wait_procs(family, timeout=10)
    assert not alive, f"left running: {[p.cmdline()[:3] for p in alive]}"
    assert not out.exists()                      # nothing half-written under --out


# --- only a folder that a report wrote is ever replaced (issue 35, item 2) ---------------

def _refused(capsys, *args):
    from accordkit.cli import main

    code = main(["report", *map(str, args), "--notebooks", "accord_results"])
    err = capsys.readouterr().err
    assert code == 64, err
    return err


def test_an_out_folder_holding_user_files_is_refused_and_kept(tmp_path, capsys, sample_dir):
    # the reproduction: mkdir p && echo x > p/keep.txt && accordkit report --out p
    out = tmp_path / "p"
    out.mkdir()
    (out / "keep.txt").write_text("x")
    err = _refused(capsys, "--source", sample_dir / "accord", "--out", out)
    assert "holds files that no accordkit report wrote (keep.txt)" in err
    assert [p.name for p in out.iterdir()] == ["keep.txt"]
    assert sorted(p.name for p in tmp_path.iterdir()) == ["p"]   # no lock or stage left


def test_out_dot_is_refused(tmp_path, capsys, sample_dir, monkeypatch):
    (tmp_path / "project.txt").write_text("mine")
    monkeypatch.chdir(tmp_path)
    _refused(capsys, "--source", sample_dir / "accord", "--out", ".")
    assert [p.name for p in tmp_path.iterdir()] == ["project.txt"]


def test_a_symlinks_target_is_refused_and_kept(tmp_path, capsys, sample_dir):
    target = tmp_path / "data"
    target.mkdir()
    (target / "run.json").write_text("{}")
    link = tmp_path / "link"
    link.symlink_to(target)
    err = _refused(capsys, "--source", sample_dir / "accord", "--out", link)
    assert "the target of the link" in err
    assert [p.name for p in target.iterdir()] == ["run.json"] and link.is_symlink()


def test_the_source_folder_or_a_score_store_as_out_is_refused(tmp_path, capsys, tau2_dir):
    from accordkit.cli import main

    src = tmp_path / "src"
    shutil.copytree(tau2_dir, src)
    before = sorted(p.name for p in src.iterdir())
    _refused(capsys, "--source", src, "--out", src)
    assert sorted(p.name for p in src.iterdir()) == before
    store = tmp_path / "store"
    assert main(["score", str(src), "--out", str(store)]) == 0
    capsys.readouterr()
    parts = sorted(p.relative_to(store) for p in store.rglob("*"))
    _refused(capsys, "--scores", store, "--out", store)
    assert sorted(p.relative_to(store) for p in store.rglob("*")) == parts


def test_an_out_holding_an_input_or_inside_one_is_refused(tmp_path, capsys, sample_dir):
    rep = tmp_path / "rep"
    _old_report(rep)        # even a report's own folder: it holds the source given
    shutil.copytree(sample_dir / "accord", rep / "accord")
    err = _refused(capsys, "--source", rep / "accord", "--out", rep)
    assert "holds an input of this report" in err and (rep / "accord").is_dir()
    data = tmp_path / "data"
    shutil.copytree(sample_dir / "accord", data)
    err = _refused(capsys, "--source", data, "--out", data / "report")
    assert "lies inside the input folder" in err and not (data / "report").exists()


def test_folders_beside_out_that_no_report_wrote_are_never_removed(tmp_path):
    out = tmp_path / "rep"
    mine = tmp_path / "rep.incomplete"              # a user's folder of that name
    mine.mkdir()
    (mine / "notes.txt").write_text("mine")
    stray = tmp_path / ".rep.building-424242"         # not a report's: it holds a user file
    stray.mkdir()
    (stray / "keep.txt").write_text("mine")
    with staged_output(out) as stage:
        (stage / "index.html").write_text("x")
    assert (mine / "notes.txt").exists() and (stray / "keep.txt").exists()
    with pytest.raises(ReportIncompleteError), staged_output(out) as stage:
        raise OSError(errno.ENOSPC, "No space left on device")
    assert (mine / "notes.txt").read_text() == "mine"     # the partial report went elsewhere
    assert (out / "index.html").read_text() == "x"


def test_a_report_folder_is_replaced_again_and_again(tmp_path, sample_dir):
    from accordkit.report.outdir import check_output_folder

    out = tmp_path / "rep"
    for text in ("one", "two"):
        with staged_output(out) as stage:
            (stage / "index.html").write_text(text)
        assert (out / "index.html").read_text() == text
    assert check_output_folder(out) == out.resolve()
    empty = tmp_path / "empty"
    empty.mkdir()
    assert check_output_folder(empty) == empty.resolve()   # nothing to lose


def test_notes_added_to_a_report_folder_are_refused_and_kept(tmp_path, capsys, sample_dir):
    # the reproduction: a report, then NOTES.md beside its pages, then the same report again
    out = tmp_path / "rep"
    _old_report(out)
    (out / "NOTES.md").write_text("my notes")
    err = _refused(capsys, "--source", sample_dir / "accord", "--out", out)
    assert "holds files that no accordkit report wrote (NOTES.md)" in err
    assert (out / "NOTES.md").read_text() == "my notes"
    with pytest.raises(UnsafeOutputError, match="NOTES.md"), staged_output(out):
        pass
    assert (out / "NOTES.md").read_text() == "my notes" and (out / "index.html").exists()


def test_a_report_copied_into_a_project_does_not_make_the_project_replaceable(
        tmp_path, capsys, sample_dir):
    # the reproduction: cp -r rep/. project/ ; accordkit report --out project deleted src/main.py
    rep = tmp_path / "rep"
    _old_report(rep)
    project = tmp_path / "project"
    (project / "src").mkdir(parents=True)
    (project / "src" / "main.py").write_text("print('mine')")
    shutil.copytree(rep, project, dirs_exist_ok=True)
    err = _refused(capsys, "--source", sample_dir / "accord", "--out", project)
    assert "holds files that no accordkit report wrote (src, src/main.py)" in err
    assert (project / "src" / "main.py").read_text() == "print('mine')"


def test_a_page_edited_since_the_report_wrote_it_is_refused(tmp_path, capsys, sample_dir):
    out = tmp_path / "rep"
    _old_report(out)
    (out / "index.html").write_text("my annotated index")   # same name, the user's text now
    err = _refused(capsys, "--source", sample_dir / "accord", "--out", out)
    assert "holds files changed since the report wrote them (index.html)" in err
    assert (out / "index.html").read_text() == "my annotated index"


def test_a_marker_without_its_listing_or_a_linked_file_is_not_enough(tmp_path):
    out = tmp_path / "rep"
    out.mkdir()
    (out / REPORT_MARKER).write_text("written by accordkit report")   # the marker alone
    (out / "main.py").write_text("mine")
    with pytest.raises(UnsafeOutputError, match="main.py"), staged_output(out):
        pass
    listed = tmp_path / "listed"
    _old_report(listed)
    (tmp_path / "secret.txt").write_text("mine")
    (listed / "stale_page.html").unlink()
    (listed / "stale_page.html").symlink_to(tmp_path / "secret.txt")  # a link, never written
    with pytest.raises(UnsafeOutputError, match="stale_page.html"), staged_output(listed):
        pass
    assert (tmp_path / "secret.txt").read_text() == "mine"


def test_the_marker_lists_every_file_with_its_digest(tmp_path):
    import hashlib

    out = tmp_path / "rep"
    with staged_output(out) as stage:
        (stage / "figures").mkdir()
        (stage / "figures" / "a.png").write_bytes(b"png")
        (stage / "index.html").write_text("x")
    body = json.loads((out / REPORT_MARKER).read_text())
    assert body["files"] == {"figures/a.png": hashlib.sha256(b"png").hexdigest(),
                             "index.html": hashlib.sha256(b"x").hexdigest()}
    assert body["folders"] == ["figures"] and body["state"] == "complete"


def test_make_report_never_replaces_a_folder_the_readme_tells_the_user_to_make():
    # the reproduction: `make report` wrote reports/ whole, deleting the README's reports/mine
    import re

    repo = Path(__file__).resolve().parents[2]
    make_out = re.search(r"^OUT \?= (\S+)$", (repo / "Makefile").read_text(), re.M).group(1)
    readme_outs = set(re.findall(r"--out (\S+)", (repo / "README.md").read_text()))
    assert make_out == "reports/sample" and "reports/mine" in readme_outs
    for other in readme_outs:
        mine, made = Path(other).parts, Path(make_out).parts
        assert mine[:len(made)] != made and made[:len(mine)] != mine, other
