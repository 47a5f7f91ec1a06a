"""The score store: parts + manifest round-trip to the frames ak.score gives."""

from __future__ import annotations

import json

import pandas as pd
import pytest

import accordkit as ak
from accordkit.store import (
    IncompleteStoreError,
    InputRecord,
    read_manifest,
    read_scores,
    write_manifest,
    write_part,
)


@pytest.fixture(scope="module")
def sample(sample_dir):
    return ak.load([str(sample_dir / "accord"), str(sample_dir / "goalshift")])


def _halves(ds):
    """The input records of :func:`_store_by_halves`' store, with their episode counts."""
    n = len(ds)
    return [InputRecord(0, "a", episodes=n // 2), InputRecord(1, "b", episodes=n - n // 2)]


def _store_by_halves(tmp_path, ds, level):
    """Write ds's scores as parts of two inputs, second half first (workers finish in any
    order), and return the store."""
    n = len(ds)
    halves = [ds.select(range(0, n // 2)), ds.select(range(n // 2, n))]
    for i in (1, 0):
        frame = ak.score(halves[i], level=level)
        write_part(tmp_path, level, frame, input_index=i, batch_index=0)
    return tmp_path


@pytest.mark.parametrize("level", ["episode", "preference", "shift"])
def test_round_trip_equals_ak_score(tmp_path, sample, level):
    store = _store_by_halves(tmp_path, sample, level)
    write_manifest(store, _halves(sample), modes={}, engine="test")
    got = read_scores(store, level=level)
    want = ak.score(sample, level=level)
    assert list(got.columns) == list(want.columns)
    # same values row for row; text columns may come back as pandas string dtype
    pd.testing.assert_frame_equal(got, want, check_dtype=False)


def test_column_selection_keeps_ids(tmp_path, sample):
    store = _store_by_halves(tmp_path, sample, "episode")
    write_manifest(store, _halves(sample), modes={}, engine="test")
    got = read_scores(store, columns=["task_score"])
    assert list(got.columns) == [*ak.ID_COLUMNS, "task_score"]


@pytest.mark.parametrize("categorical", [False, True])
@pytest.mark.parametrize("level", ["episode", "preference"])
def test_a_read_of_some_ids_has_their_values_and_the_columns_that_order_and_check(
        tmp_path, sample, level, categorical):
    store = _store_by_halves(tmp_path, sample, level)
    write_manifest(store, _halves(sample), modes={}, engine="test")
    some = read_scores(store, level=level, columns=["completed"], ids=["scenario_id"],
                       categorical=categorical)
    every = read_scores(store, level=level, columns=["completed"], categorical=categorical)
    # the benchmark always (it orders the columns), the episode ids at the episode level
    expected = ["benchmark", *(["episode_id"] if level == "episode" else []), "scenario_id",
                "completed"]
    assert sorted(some.columns) == sorted(expected)
    pd.testing.assert_frame_equal(some, every[list(some.columns)])
    with pytest.raises(ValueError, match="ids must be id columns"):
        read_scores(store, level=level, columns=["completed"], ids=["completed"])
    with pytest.raises(ValueError, match="come with columns"):
        read_scores(store, level=level, ids=["scenario_id"])


def test_a_store_without_manifest_is_refused(tmp_path, sample):
    store = _store_by_halves(tmp_path, sample, "episode")
    with pytest.raises(IncompleteStoreError, match="did not finish"):
        read_scores(store)


def test_a_missing_part_or_foreign_version_is_refused(tmp_path, sample):
    store = _store_by_halves(tmp_path, sample, "episode")
    write_manifest(store, [], modes={}, engine="test")
    manifest = read_manifest(store)
    assert manifest["levels"]["episode"] == ["00000-00000.parquet", "00001-00000.parquet"]
    (store / "episodes" / "00001-00000.parquet").unlink()
    with pytest.raises(IncompleteStoreError, match="missing"):
        read_scores(store)
    manifest["store_version"] = "accordkit.scores/9"
    (store / "manifest.json").write_text(json.dumps(manifest))
    with pytest.raises(IncompleteStoreError, match="reads 'accordkit.scores/2'"):
        read_scores(store)


def test_empty_level_gives_empty_frame_with_ids(tmp_path, sample_dir):
    ds = ak.load(str(sample_dir / "goalshift"))
    write_part(tmp_path, "preference", ak.score(ds, level="preference"), input_index=0,
               batch_index=0)
    write_manifest(tmp_path, [InputRecord(0, "g", episodes=len(ds))], modes={}, engine="t")
    got = read_scores(tmp_path, level="preference")
    want = ak.score(ds, level="preference")
    assert got.empty and list(got.columns) == list(want.columns)
    assert read_manifest(tmp_path)["episodes"] == len(ds)


def _as_text(frame: pd.DataFrame) -> pd.DataFrame:
    """Categories back to Python strings, missing as None (as ``ak.score`` gives them)."""
    out = frame.copy()
    for c in out.columns:
        if isinstance(out[c].dtype, pd.CategoricalDtype) or pd.api.types.is_string_dtype(
                out[c].dtype):
            out[c] = out[c].astype(object).where(out[c].notna(), None)
    return out


@pytest.mark.parametrize("level", ["episode", "preference", "shift"])
def test_categorical_read_has_the_same_values_with_sorted_categories(tmp_path, sample, level):
    store = _store_by_halves(tmp_path, sample, level)
    write_manifest(store, _halves(sample), modes={}, engine="test")
    got = read_scores(store, level=level, categorical=True)
    want = read_scores(store, level=level)
    assert list(got.columns) == list(want.columns)
    text = [c for c in got.columns if isinstance(got[c].dtype, pd.CategoricalDtype)]
    assert "episode_id" in text and "scenario_id" in text
    for c in text:
        assert got[c].cat.categories.is_monotonic_increasing, c
        # the codes sort and factorize as the strings do
        assert (pd.factorize(got[c], sort=True)[0]
                == pd.factorize(want[c].astype(object), sort=True)[0]).all(), c
    pd.testing.assert_frame_equal(_as_text(got), _as_text(want), check_dtype=False)
    numeric = [c for c in want.columns if c not in text]
    assert {c: str(got[c].dtype) for c in numeric} == {c: str(want[c].dtype) for c in numeric}


def test_categorical_read_sorts_parts_listed_out_of_order(tmp_path, sample):
    store = _store_by_halves(tmp_path, sample, "preference")
    write_manifest(store, [InputRecord(0, "a"), InputRecord(1, "b")], modes={}, engine="test")
    manifest = read_manifest(store)
    manifest["levels"]["preference"].reverse()
    (store / "manifest.json").write_text(json.dumps(manifest))
    got = read_scores(store, level="preference", categorical=True, columns=["satisfied"])
    want = read_scores(store, level="preference", columns=["satisfied"])
    pd.testing.assert_frame_equal(_as_text(got), _as_text(want), check_dtype=False)


def test_reading_a_store_with_the_report_views_imports_no_datasets(tmp_path, sample_dir):
    """Notebook kernels that read a store need neither ``datasets`` nor the loader (about
    0.5 s of each kernel's start): the names they use live in ``accordkit.names``."""
    import subprocess
    import sys

    from accordkit.engines import write_scores

    write_scores([str(sample_dir / "goalshift")], tmp_path / "store")
    code = (
        "import sys\n"
        "import accordkit as ak\n"
        "from accordkit.plots import plot_intervals\n"
        "from accordkit.report import NotebookContext\n"
        "from accordkit.tables import paired_comparisons, pass_k_table\n"
        f"frames = {{lv: ak.read_scores({str(tmp_path / 'store')!r}, level=lv)\n"
        "          for lv in ('episode', 'shift')}\n"  # (an empty level is scored afresh)
        "assert len(frames['episode']) and len(frames['shift'])\n"
        "pass_k_table(frames['episode'], by=['domain'], n_resamples=20)\n"
        "print(sorted(m for m in sys.modules if m == 'datasets' or m.startswith('accordkit.load')"
        " or m == 'accordkit.schema'))\n")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         check=True)
    assert out.stdout.strip().splitlines()[-1] == "[]"
