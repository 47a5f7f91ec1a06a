"""Streamed scoring into a store equals ak.score in memory, row for row."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import numpy as np
import pandas as pd
import pyarrow as pa
import pyarrow.parquet as pq
import pytest

import accordkit as ak
from accordkit.engines import plan_work, score_to_store
from accordkit.store import PartialStoreWarning, read_manifest, read_modes, read_scores

from ..conftest import warns_of_twice_defined_tasks


def _sample_parquet_files(sample_dir):
    return sorted(str(p) for p in (sample_dir).rglob("*.parquet") if "verdicts" not in str(p))


@pytest.fixture(scope="module")
def shards(tmp_path_factory, sample_dir):
    """The sample rewritten as parquet shards of small row groups (several batches each)."""
    root = tmp_path_factory.mktemp("shards")
    for i, src in enumerate(_sample_parquet_files(sample_dir)):
        pq.write_table(pq.read_table(src), root / f"shard-{i:02d}.parquet", row_group_size=50)
    return root


@pytest.mark.parametrize("num_proc", [1, 2])
@pytest.mark.parametrize("level", ["episode", "preference", "shift"])
def test_streamed_store_equals_in_memory_scores(tmp_path, shards, level, num_proc):
    out = tmp_path / "store"
    manifest = score_to_store([str(shards)], out=out, num_proc=num_proc, batch_size=60,
                              progress=False)
    assert manifest["failed_inputs"] == 0 and manifest["skipped"] == 0
    files = sorted(str(p) for p in shards.glob("*.parquet"))
    want = ak.score(ak.load(files), level=level)
    got = read_scores(out, level=level)
    pd.testing.assert_frame_equal(got, want[got.columns], check_dtype=False)
    assert manifest["episodes"] == 792
    assert sum(r["batches"] for r in manifest["inputs"]) > len(files)   # really batched


def test_plan_batches_whole_row_groups_and_keeps_files_whole_when_asked(shards):
    items, inputs = plan_work([str(shards)], batch_size=120)
    first = [i for i in items if i.input_index == 0 and i.kind == "parquet"]
    assert [i.rows for i in first] == [150, 138]          # 288 rows in groups of 50
    # and one item for the compare_modes table of all parquet inputs, after the first's batches
    (modes,) = [i for i in items if i.kind == "modes"]
    assert (modes.input_index, modes.batch_index) == (0, 2)
    assert modes.sources == tuple(r.source for r in inputs) and len(inputs) == 5
    whole, _ = plan_work([str(shards)], batch_size=120, whole_files=True)
    whole = [i for i in whole if i.kind == "parquet"]
    assert len(whole) == len(inputs) == 5
    assert all(len(i.row_groups) == pq.ParquetFile(i.source).metadata.num_row_groups
               for i in whole)


def test_result_files_and_modes_that_pool_over_a_file(tmp_path, acb_dir):
    files = sorted(str(p) for p in acb_dir.glob("*.json") if p.name != "expected_upstream.json")
    modes = {"tcrr_mode": "upstream", "action_mode": "upstream"}
    out = tmp_path / "acb"
    manifest = score_to_store(files, out=out, modes=modes, progress=False)
    with warns_of_twice_defined_tasks(files):
        want = ak.score(ak.load(files), **modes)
    got = read_scores(out)
    pd.testing.assert_frame_equal(got, want[got.columns], check_dtype=False)
    assert manifest["modes"] == modes
    assert [r["source"] for r in manifest["inputs"]] == files
    assert all(len(r["sha256"]) == 64 for r in manifest["inputs"])


def test_a_bad_shard_is_listed_and_the_others_still_score(tmp_path, shards):
    src = tmp_path / "in"
    shutil.copytree(shards, src)
    good = pq.read_table(src / "shard-00.parquet")
    # a truncated parquet file and one with the wrong schema
    data = (src / "shard-01.parquet").read_bytes()
    (src / "shard-01.parquet").write_bytes(data[: len(data) // 2])
    pq.write_table(good.drop_columns(["messages"]), src / "shard-02.parquet")
    manifest = score_to_store([str(src)], out=tmp_path / "store", progress=False)
    by_name = {r["source"].rsplit("/", 1)[-1]: r for r in manifest["inputs"]}
    assert "unreadable parquet file" in by_name["shard-01.parquet"]["error"]
    assert by_name["shard-01.parquet"]["episodes"] == 0
    assert "messages" in by_name["shard-02.parquet"]["error"]
    assert by_name["shard-00.parquet"]["episodes"] == 288 and not by_name["shard-00.parquet"]["error"]
    assert manifest["failed_inputs"] == 2
    with pytest.warns(PartialStoreWarning, match="2 of the 5 input.* could not be read"):
        got = read_scores(tmp_path / "store")
    # shard-00 (288 shop episodes) and shards 03, 04 (72 banking, 72 retail) are scored
    assert len(got) == manifest["episodes"] == 288 + 72 + 72


def test_bad_records_are_skipped_and_counted(tmp_path, shards):
    src = tmp_path / "in"
    src.mkdir()
    table = pq.read_table(shards / "shard-03.parquet")
    bench = table.column("benchmark").to_pylist()
    bench[5] = "nonsense"
    table = table.set_column(table.schema.get_field_index("benchmark"), "benchmark",
                             pa.array(bench, pa.string()))
    pq.write_table(table, src / "bad.parquet", row_group_size=50)
    manifest = score_to_store([str(src)], out=tmp_path / "store", progress=False)
    rec = manifest["inputs"][0]
    assert rec["skipped"] == 1 and rec["episodes"] == table.num_rows - 1
    assert "benchmark" in rec["problems"][0]


def test_an_existing_store_is_never_overwritten(tmp_path, shards):
    out = tmp_path / "store"
    score_to_store([str(shards / "shard-00.parquet")], out=out, progress=False)
    with pytest.raises(FileExistsError, match="already holds"):
        score_to_store([str(shards / "shard-00.parquet")], out=out, progress=False)
    assert json.loads((out / "manifest.json").read_text()) == read_manifest(out)


def test_a_folder_with_nothing_to_read_is_an_input_error(tmp_path):
    empty = tmp_path / "empty"
    (empty / "sub").mkdir(parents=True)
    (empty / "README.md").write_text("no data here")
    manifest = score_to_store([str(empty)], out=tmp_path / "store", progress=False)
    (rec,) = manifest["inputs"]
    assert rec["source"] == str(empty.resolve()) and rec["episodes"] == 0
    assert rec["error"] == "no .parquet, .json, .jsonl file in this folder"
    assert manifest["failed_inputs"] == 1


def test_the_store_holds_compare_modes_of_every_source_file(tmp_path, shards, acb_dir):
    # parquet shards of several batches: each source group is scored whole
    out = tmp_path / "shards"
    score_to_store([str(shards)], out=out, batch_size=60, progress=False)
    files = sorted(str(p) for p in shards.glob("*.parquet"))
    want = pd.concat([ak.compare_modes(ak.load(f)) for f in files], ignore_index=True)
    got = read_modes(out)
    assert len(got) and set(got["source"]) == set(want["source"])
    pd.testing.assert_frame_equal(got, want, check_dtype=False)
    # result files (whole files): the same table as compare_modes of each file loaded alone
    results = sorted(str(p) for p in acb_dir.glob("*.json") if p.name != "expected_upstream.json")
    score_to_store(results, out=tmp_path / "acb", progress=False)
    with warns_of_twice_defined_tasks(results):
        want = pd.concat([ak.compare_modes(ak.load(f)) for f in results], ignore_index=True)
    pd.testing.assert_frame_equal(read_modes(tmp_path / "acb"), want, check_dtype=False)
    # AcCoRD only: an empty table with the usual columns
    accord = [f for f in files if "shop" in pq.read_table(f, columns=["domain"])
              .column("domain").to_pylist()[:1]]
    score_to_store(accord, out=tmp_path / "accord", progress=False)
    empty = read_modes(tmp_path / "accord")
    assert empty.empty and list(empty.columns) == list(want.columns)


def test_a_source_file_split_across_shards_is_one_row_group_of_the_modes_table(tmp_path,
                                                                             sample_dir):
    # one data set's shards may split an original results file: its upstream numbers pool
    # the whole file, as compare_modes of everything loaded at once does
    table = pq.read_table(sorted((sample_dir / "goalshift").rglob("*.parquet"))[0])
    order = np.random.default_rng(0).permutation(table.num_rows)
    table = table.take(pa.array(order))
    src = tmp_path / "shards"
    src.mkdir()
    half = table.num_rows // 2
    pq.write_table(table.slice(0, half), src / "a.parquet", row_group_size=10)
    pq.write_table(table.slice(half), src / "b.parquet", row_group_size=10)
    score_to_store([str(src)], out=tmp_path / "store", batch_size=15, progress=False)
    got = read_modes(tmp_path / "store")
    want = ak.compare_modes(ak.load(str(src)))
    per_file = pd.concat([ak.compare_modes(ak.load(str(src / n)))
                          for n in ("a.parquet", "b.parquet")])
    assert len(per_file) > len(want) == len(got)          # file by file would split sources
    key = ["source", "metric", "upstream_mode"]
    pd.testing.assert_frame_equal(got.sort_values(key).reset_index(drop=True),
                                  want.sort_values(key).reset_index(drop=True),
                                  check_dtype=False)


@pytest.mark.parametrize("pass_rows", [1, 10**9])
def test_interleaved_source_files_read_each_row_group_once_per_pass(tmp_path, sample_dir,
                                                                     monkeypatch, pass_rows):
    # shuffled rows: every row group holds rows of every source file
    from accordkit.engines import item

    table = pq.read_table(sorted((sample_dir / "goalshift").rglob("*.parquet"))[0])
    table = table.take(pa.array(np.random.default_rng(1).permutation(table.num_rows)))
    n_sources = len(set(table.column("source").to_pylist()))
    assert n_sources > 1
    pq.write_table(table, tmp_path / "mixed.parquet", row_group_size=40)
    n_groups = pq.ParquetFile(tmp_path / "mixed.parquet").metadata.num_row_groups
    reads = []
    real = pq.ParquetFile.read_row_group

    def counted(self, i, columns=None, **kwargs):
        reads.append((i, columns is None))
        return real(self, i, columns=columns, **kwargs)

    monkeypatch.setattr(pq.ParquetFile, "read_row_group", counted)
    monkeypatch.setattr(item, "MODES_PASS_ROWS", pass_rows)
    score_to_store([str(tmp_path / "mixed.parquet")], out=tmp_path / "store", progress=False)
    full_reads = sum(whole for _, whole in reads)
    # one group per pass: each row group once per source; one pass: each row group once
    assert full_reads == (n_groups * n_sources if pass_rows == 1 else n_groups)
    got = read_modes(tmp_path / "store")
    want = ak.compare_modes(ak.load(str(tmp_path / "mixed.parquet")))
    key = ["source", "metric", "upstream_mode"]
    pd.testing.assert_frame_equal(got.sort_values(key).reset_index(drop=True),
                                  want.sort_values(key).reset_index(drop=True),
                                  check_dtype=False)


def test_modes_passes_keep_order_and_give_a_large_group_its_own_pass():
    from accordkit.engines.run import _modes_passes

    def group(n):
        return [(0, 0, np.arange(n))]

    a, b, c, d = group(3), group(4), group(10), group(2)
    assert _modes_passes([a, b, c, d], max_rows=8) == [[a, b], [c], [d]]
    assert _modes_passes([a, b, c, d], max_rows=100) == [[a, b, c, d]]
    assert _modes_passes([], max_rows=8) == []


def test_verdicts_and_split_reach_the_batches(tmp_path, sample_dir):
    verdicts = sample_dir / "verdicts" / "usersim_tests.parquet"
    source = str(sample_dir / "accord")
    score_to_store([source], out=tmp_path / "v", verdicts=[str(verdicts)], progress=False)
    from accordkit.judges.verdicts import read_verdicts

    want = ak.score(ak.load(source), verdicts=read_verdicts([str(verdicts)]))
    pd.testing.assert_frame_equal(read_scores(tmp_path / "v"), want, check_dtype=False)
    assert read_manifest(tmp_path / "v")["verdicts"] == [str(verdicts.resolve())]
    manifest = score_to_store([source], out=tmp_path / "none", split="no-such-split",
                              progress=False)
    assert manifest["episodes"] == 0 and manifest["split"] == "no-such-split"


def test_verdicts_are_read_again_when_their_file_changes(tmp_path, sample_dir):
    from accordkit.engines.run import verdict_table

    path = tmp_path / "verdicts.parquet"
    full = pd.read_parquet(sample_dir / "verdicts" / "usersim_tests.parquet")
    full.to_parquet(path)
    first = verdict_table([str(path)])
    assert verdict_table([str(path)]) is first            # unchanged: read once
    full.head(5).to_parquet(path)
    assert len(verdict_table([str(path)])) == 5 < len(first)
    assert verdict_table([]) is None


def test_worker_processes_start_the_modes_item_first(monkeypatch):
    """The compare_modes item reads every goal-shift row: it is the longest, so it must
    not wait for a free worker behind the batches."""
    from concurrent.futures import Future

    from accordkit.engines import run
    from accordkit.engines.plan import WorkItem

    submitted = []

    class Pool:
        def __init__(self, **_):
            pass

        def __enter__(self):
            return self

        def __exit__(self, *exc):
            return False

        def shutdown(self, *args, **kwargs):
            pass

        def submit(self, fn, item, **_):
            submitted.append(item.kind)
            fut = Future()
            fut.set_result({"input_index": item.input_index, "batch_index": item.batch_index})
            return fut

    monkeypatch.setattr(run, "ProcessPoolExecutor", Pool)
    items = [WorkItem(0, 0, "a.parquet", "parquet", (0,), 10),
             WorkItem(0, 1, "a.parquet", "parquet", (1,), 10),
             WorkItem(0, 2, "a.parquet", "modes", sources=("a.parquet",))]
    results = run._run_local(items, out="unused", num_proc=2, progress=False)
    assert submitted == ["modes", "parquet", "parquet"]
    assert len(results) == 3


def test_an_out_folder_of_other_files_is_refused_and_left_untouched(tmp_path, sample_dir):
    out = tmp_path / "proj"
    data = out / "episodes" / "run1.parquet"        # the user's data, where a store puts parts
    data.parent.mkdir(parents=True)
    src = sorted((sample_dir / "goalshift").rglob("*.parquet"))[0]
    data.write_bytes(src.read_bytes())
    with pytest.raises(FileExistsError, match="not a score store"):
        score_to_store([str(data)], out=out, progress=False)
    assert data.read_bytes() == src.read_bytes()


def test_a_rerun_clears_every_part_of_the_interrupted_run(tmp_path, shards):
    out = tmp_path / "store"
    files = sorted(str(p) for p in shards.glob("*.parquet"))
    score_to_store(files, out=out, batch_size=60, progress=False)
    (out / "manifest.json").unlink()                 # as if killed before the manifest
    stale = out / "modes" / "00007-00099.parquet"    # a modes part of another batch size
    stale.write_bytes((next((out / "modes").glob("*.parquet"))).read_bytes())
    score_to_store(files, out=out, batch_size=500, progress=False)
    assert not stale.exists()
    want = ak.compare_modes(ak.load(files))
    assert len(read_modes(out)) == len(want)


def test_an_input_of_which_nothing_can_be_read_is_a_failed_input(tmp_path, tau2_dir):
    good = sorted(tau2_dir.glob("*.json"))[0]
    cut = tmp_path / "cut.json"
    cut.write_bytes(good.read_bytes()[:20_000])        # a truncated results file
    manifest = score_to_store([str(good), str(cut)], out=tmp_path / "s", progress=False)
    by_source = {Path(r["source"]).name: r for r in manifest["inputs"]}
    assert manifest["failed_inputs"] == 1 and by_source[good.name]["error"] is None
    assert "truncated JSON" in by_source["cut.json"]["error"]
    assert by_source["cut.json"]["skipped"] == 0 and by_source["cut.json"]["episodes"] == 0


def test_a_pooled_tcrr_mode_refuses_a_source_split_across_inputs(tmp_path, sample_dir):
    from accordkit.engines.run import SplitSourceError

    table = pq.read_table(sorted((sample_dir / "goalshift").rglob("*.parquet"))[0])
    halves = [tmp_path / "part-0.parquet", tmp_path / "part-1.parquet"]
    pq.write_table(table.take(pa.array(range(0, table.num_rows, 2))), halves[0])
    pq.write_table(table.take(pa.array(range(1, table.num_rows, 2))), halves[1])
    with pytest.raises(SplitSourceError, match="lie in 2 inputs"):
        score_to_store([str(h) for h in halves], out=tmp_path / "s", progress=False,
                       modes={"tcrr_mode": "upstream"})
    # the default mode scores each episode on its own: splitting is fine
    score_to_store([str(h) for h in halves], out=tmp_path / "t", progress=False)
    want = ak.score(ak.load([str(h) for h in halves]))
    pd.testing.assert_series_equal(read_scores(tmp_path / "t")["tcrr"], want["tcrr"])


def _children(pid: int) -> set[int]:
    kids = set()
    for task in Path(f"/proc/{pid}/task").iterdir():
        kids |= {int(k) for k in (task / "children").read_text().split()}
    return kids


@pytest.mark.skipif(not Path("/proc/self/task").is_dir(), reason="needs Linux /proc")
def test_sigterm_stops_the_workers_with_the_command(tmp_path, shards):
    import os
    import signal
    import subprocess
    import sys
    import time

    out = tmp_path / "store"
    proc = subprocess.Popen(
        [sys.executable, "-c", "import sys; from accordkit.cli import main; sys.exit(main())",
         "score", str(shards), "--out", str(out),
         "--num-proc", "2", "--batch-size", "10", "--quiet"],
        env={**os.environ, "HF_HUB_OFFLINE": "1"}, stderr=subprocess.PIPE, text=True)
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline and len(list((out / "episodes").glob("*.parquet"))) < 2:
        time.sleep(0.1)
    kids = _children(proc.pid)
    assert kids, "no worker started"
    proc.send_signal(signal.SIGTERM)
    assert proc.wait(timeout=30) == 130
    with proc.stderr:                                   # closed after: no ResourceWarning
        assert "interrupted" in proc.stderr.read()
    time.sleep(0.5)
    alive = [k for k in kids if Path(f"/proc/{k}").exists()
             and "Z" not in Path(f"/proc/{k}/stat").read_text().split()[2]]
    assert not alive, f"workers outlived the command: {alive}"
    assert not (out / "manifest.json").exists()


def test_rows_without_a_source_are_their_files_own_for_the_pooled_check(tmp_path, sample_dir):
    table = pq.read_table(sorted((sample_dir / "goalshift").rglob("*.parquet"))[0])
    table = table.set_column(table.column_names.index("source"), "source",
                             pa.nulls(table.num_rows, pa.string()))
    shards = [tmp_path / "a.parquet", tmp_path / "b.parquet"]
    half = table.num_rows // 2
    pq.write_table(table.slice(0, half), shards[0])
    pq.write_table(table.slice(half), shards[1])
    files = [str(s) for s in shards]
    score_to_store(files, out=tmp_path / "s", progress=False, modes={"tcrr_mode": "upstream"})
    want = ak.score(ak.load(files), tcrr_mode="upstream")
    pd.testing.assert_series_equal(read_scores(tmp_path / "s")["tcrr"], want["tcrr"])
    assert len(read_modes(tmp_path / "s")) == len(ak.compare_modes(ak.load(files)))


def test_an_input_whose_header_is_unreadable_is_a_failed_input(tmp_path, tau2_dir):
    good = sorted(tau2_dir.glob("*.json"))[0]
    bad = tmp_path / "wrongtype.json"
    bad.write_text('{"info": {}, "tasks": [], "simulations": "oops"}')
    manifest = score_to_store([str(good), str(bad)], out=tmp_path / "s", progress=False)
    by_source = {Path(r["source"]).name: r for r in manifest["inputs"]}
    assert manifest["failed_inputs"] == 1 and by_source[good.name]["episodes"] > 0
    assert by_source["wrongtype.json"]["error"] == (
        "field simulations: expected a list of simulations, got str 'oops'")


def test_an_input_read_whole_names_no_batch_in_its_error(tmp_path):
    bad = tmp_path / "bad.json"
    bad.write_text('{"note": "not a results file"}')
    manifest = score_to_store([str(bad)], out=tmp_path / "s", progress=False)
    (rec,) = manifest["inputs"]
    assert rec["error"].startswith("field (top level): not a results file")
