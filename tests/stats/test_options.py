"""One name per option: deprecated aliases warn and still work; empty frames give empty tables."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from accordkit.stats import compare, summarize
from accordkit.stats._validate import COMPARE_COLUMNS, SUMMARY_COLUMNS


@pytest.fixture
def frame() -> pd.DataFrame:
    rng = np.random.default_rng(3)
    return pd.DataFrame({"agent_model": np.repeat(["a", "b"], 40),
                         "scenario_id": np.tile(np.arange(20), 4),
                         "task_id": np.tile(np.arange(20), 4) // 2,
                         "success": rng.random(80) < 0.6})


def test_compare_pair_on_is_a_deprecated_cluster(frame):
    new = compare(frame, "success", cluster="task_id", n_resamples=200)
    with pytest.warns(DeprecationWarning, match=r"compare\(pair_on=...\) is deprecated.*use cluster="):
        old = compare(frame, "success", pair_on="task_id", n_resamples=200)
    pd.testing.assert_frame_equal(new, old)
    assert new.loc[0, "n_pairs"] == 10


def test_summarize_aliases(frame):
    new = summarize(frame, "success", "agent_model", cluster="task_id", method="percentile",
                    n_resamples=200)
    with pytest.warns(DeprecationWarning):
        old = summarize(frame, "success", "agent_model", task="task_id",
                        ci_method="percentile", n_resamples=200)
    pd.testing.assert_frame_equal(new, old)
    assert set(new["ci_method"]) == {"percentile"}        # the output column keeps its name


def test_alias_errors(frame):
    with pytest.raises(TypeError, match="unexpected keyword argument 'pairs'"):
        summarize(frame, "success", pairs="x")
    with pytest.raises(TypeError, match="both 'cluster' and its deprecated name 'pair_on'"):
        compare(frame, "success", cluster="task_id", pair_on="task_id")


@pytest.mark.parametrize("empty", [pd.DataFrame(), pd.DataFrame(columns=["agent_model"])])
def test_empty_frames_give_empty_typed_tables(empty):
    s = summarize(empty, ["success", ("n", "d")], by="agent_model")
    assert list(s.columns) == ["agent_model", *SUMMARY_COLUMNS] and s.empty
    assert s["estimate"].dtype == float and s["n_clusters"].dtype == np.int64
    c = compare(empty, "success", by="domain")
    assert list(c.columns) == ["domain", "metric", "agent_model", *COMPARE_COLUMNS[1:]]
    assert c.empty and c["delta"].dtype == float and str(c["tie_group"].dtype) == "Int64"
