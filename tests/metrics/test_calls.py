"""The array helpers the goal-shift metrics share, checked against pandas on random keys."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pyarrow as pa
import pytest

from accordkit.metrics.calls import join_positions, last_positions, text_codes
from accordkit.metrics.gsrt import _group_medians


@pytest.mark.parametrize("seed", range(5))
def test_join_positions_gives_the_pairs_of_an_inner_merge_in_its_order(seed):
    rng = np.random.default_rng(seed)
    left = rng.integers(0, 12, size=rng.integers(0, 40))
    right = rng.integers(0, 12, size=rng.integers(0, 40))
    li, ri = join_positions(left, right)
    merged = pd.DataFrame({"k": left, "i": np.arange(len(left))}).merge(
        pd.DataFrame({"k": right, "j": np.arange(len(right))}), on="k", how="inner", sort=False)
    assert list(zip(li.tolist(), ri.tolist(), strict=True)) == list(
        zip(merged["i"].tolist(), merged["j"].tolist(), strict=True))


@pytest.mark.parametrize("seed", range(5))
def test_last_positions_keeps_the_last_of_each_key_as_drop_duplicates_does(seed):
    keys = np.random.default_rng(seed).integers(0, 9, size=30)
    expected = pd.Series(keys).drop_duplicates(keep="last").index.to_numpy()
    assert last_positions(keys).tolist() == sorted(expected.tolist())


def test_text_codes_share_one_code_per_text_across_arrays_and_mark_nulls():
    (a, b), texts = text_codes(pa.array(["x", None, "y", "x"]), pa.array(["y", "z", None]))
    assert a.tolist() == [0, -1, 1, 0] and b.tolist() == [1, 2, -1]
    assert texts.to_pylist() == ["x", "y", "z"]
    (empty,), none = text_codes(pa.array([], pa.string()))
    assert empty.tolist() == [] and len(none) == 0


@pytest.mark.parametrize("seed", range(5))
def test_group_medians_equal_pandas_groupby_median(seed):
    rng = np.random.default_rng(seed)
    rows = np.sort(rng.integers(0, 8, size=50))
    values = rng.integers(0, 20, size=50).astype(float)
    values[rng.random(50) < 0.3] = np.nan
    expected = pd.Series(values).groupby(rows).median().reindex(range(10))
    got = _group_medians(rows, values, 10)
    np.testing.assert_array_equal(got, expected.to_numpy(dtype=float))


def _chunked_and_joined(acb_dir, tau2_dir):
    """Real result files loaded as one table of many chunks (one or more per file), and the
    same table joined into one chunk."""
    import warnings

    import accordkit as ak
    from accordkit._internal.arrow import arrow_table

    files = sorted(p for d in (acb_dir, tau2_dir) for p in d.glob("*.json")
                   if p.name != "expected_upstream.json")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        table = arrow_table(ak.load(files, cache=False))
    assert table.column("messages").num_chunks > 1
    return table, table.combine_chunks()


def test_transcripts_read_chunk_by_chunk_as_from_one_chunk(acb_dir, tau2_dir):
    from accordkit.metrics.calls import Transcripts

    chunked, joined = _chunked_and_joined(acb_dir, tau2_dir)
    a, b = Transcripts(chunked), Transcripts(joined)
    for name in ("msg_counts", "msg_episode", "msg_turn_idx", "msg_assistant_turn", "msg_role",
                 "call_message", "call_episode", "call_order", "call_name_codes"):
        assert np.array_equal(getattr(a, name), getattr(b, name)), name
    assert a.call_field("arguments_json").equals(b.call_field("arguments_json"))
    assert a.message_field("event").equals(b.message_field("event"))
    rows = np.random.default_rng(0).permutation(len(a.msg_episode))[:200]
    for name in ("content", "tool_call_id", "error", "event_json"):
        assert a.message_values(name, rows).equals(b.message_field(name).take(pa.array(rows))), name
    assert isinstance(a.message_chunks("content"), pa.ChunkedArray)


def test_scores_of_a_chunked_table_are_those_of_one_chunk(acb_dir, tau2_dir):
    from accordkit.metrics.goalshift import score_episodes

    chunked, joined = _chunked_and_joined(acb_dir, tau2_dir)
    pd.testing.assert_frame_equal(score_episodes(chunked), score_episodes(joined),
                                  check_exact=True)


@pytest.mark.parametrize("seed", range(5))
def test_take_rows_takes_from_each_chunk_as_take_from_the_joined_column(seed):
    from accordkit._internal.arrow import take_rows

    rng = np.random.default_rng(seed)
    chunks = [[f"v{i}-{j}" if rng.random() > 0.2 else None for j in range(rng.integers(0, 5))]
              for i in range(rng.integers(1, 6))]
    column = pa.chunked_array(chunks, type=pa.string())
    n = len(column)
    rows = rng.integers(0, n, size=rng.integers(0, 12)) if n else np.zeros(0, dtype=np.int64)
    expected = column.combine_chunks().take(pa.array(rows, type=pa.int64()))
    assert take_rows(column, rows).equals(expected)
    if n:
        with pytest.raises(IndexError):
            take_rows(column, np.array([n]))
