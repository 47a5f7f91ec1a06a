"""The array helpers the goal-shift metrics share, checked against pandas on random keys."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pyarrow as pa
import pytest

from accordkit.metrics._calls import join_positions, last_positions, text_codes
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
