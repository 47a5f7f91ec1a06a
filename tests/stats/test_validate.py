"""One test per input-validation message of summarize and compare."""

from __future__ import annotations

import re

import numpy as np
import pandas as pd
import pytest

from accordkit.stats import Metric, compare, summarize

from ._data import clustered_frame


@pytest.fixture
def frame() -> pd.DataFrame:
    return clustered_frame(12, 2, models=("a", "b"))


def msg(text: str) -> str:
    return re.escape(text)


class TestSummarizeValidation:
    def test_frame_type(self):
        with pytest.raises(TypeError, match="`frame` must be a pandas DataFrame, got list"):
            summarize([1, 2], "x")

    def test_empty_frame(self, frame):
        # issue 10: an empty frame is an empty table, not an error
        out = summarize(frame.iloc[:0], "success")
        assert out.empty and "estimate" in out.columns

    def test_metrics_type(self, frame):
        with pytest.raises(TypeError, match="`metrics` must be a column name"):
            summarize(frame, 3)

    def test_metrics_empty(self, frame):
        with pytest.raises(ValueError, match="`metrics` is empty"):
            summarize(frame, [])

    def test_metric_item_type(self, frame):
        with pytest.raises(TypeError, match="each metric must be a column name.*got int 3"):
            summarize(frame, ["success", 3])

    def test_ratio_pair_shape(self, frame):
        with pytest.raises(TypeError, match="a ratio metric is a \\(numerator, denominator\\)"):
            summarize(frame, [("n_num", "n_den", "x")])

    def test_duplicate_metric_names(self, frame):
        with pytest.raises(ValueError, match="metric name 'success' is used twice"):
            summarize(frame, ["success", Metric("success", "outcome")])

    def test_unknown_metric_column(self, frame):
        with pytest.raises(ValueError, match="metric 'sucess' reads column 'sucess', which is not"):
            summarize(frame, "sucess")

    def test_unknown_ratio_column(self, frame):
        with pytest.raises(ValueError, match="metric 'n_num/n_dem' reads column 'n_dem'"):
            summarize(frame, ("n_num", "n_dem"))

    def test_non_numeric_column(self, frame):
        with pytest.raises(TypeError, match="column 'domain' of metric 'domain' must be numeric"):
            summarize(frame, "domain")

    def test_infinite_values(self, frame):
        frame.loc[3, "outcome"] = np.inf
        with pytest.raises(ValueError, match="column 'outcome' of metric 'outcome' has 1 infinite"):
            summarize(frame, "outcome")

    def test_by_type(self, frame):
        with pytest.raises(TypeError, match="`by` must be a column name, a list of names or None"):
            summarize(frame, "success", by=3)

    def test_by_item_type(self, frame):
        with pytest.raises(TypeError, match="`by` must be a column name \\(str\\), got 3"):
            summarize(frame, "success", by=["agent_model", 3])

    def test_unknown_by_column(self, frame):
        with pytest.raises(ValueError, match="`by` column 'model' is not in the frame"):
            summarize(frame, "success", by="model")

    def test_by_twice(self, frame):
        with pytest.raises(ValueError, match="`by` names a column twice"):
            summarize(frame, "success", by=["domain", "domain"])

    def test_by_clashes_with_result_column(self, frame):
        frame["seed"] = 1
        with pytest.raises(ValueError, match=msg("`by` column 'seed' has the name of a result "
                                                 "column; rename it first")):
            summarize(frame, "success", by="seed")

    def test_unknown_cluster_column(self, frame):
        with pytest.raises(ValueError, match="`cluster` column 'scenario' is not in the frame"):
            summarize(frame, "success", cluster="scenario")

    def test_cluster_missing_values(self, frame):
        frame["scenario_id"] = frame.scenario_id.astype(object)
        frame.loc[[1, 2], "scenario_id"] = None
        with pytest.raises(ValueError, match="`cluster` column 'scenario_id' has 2 missing"):
            summarize(frame, "success")

    def test_unknown_strata_column(self, frame):
        with pytest.raises(ValueError, match="`strata` column 'domian' is not in the frame"):
            summarize(frame, "success", strata="domian")

    def test_strata_missing_values(self, frame):
        frame["domain"] = frame.domain.astype(object)
        frame.loc[0, "domain"] = None
        with pytest.raises(ValueError, match="`strata` column 'domain' has 1 missing"):
            summarize(frame, "success", strata="domain")

    def test_cluster_in_two_strata(self, frame):
        frame.loc[0, "domain"] = "y"  # s000 is in domain x otherwise
        with pytest.raises(ValueError, match="cluster 's000' of column 'scenario_id' lies in 2 "
                                             "strata of 'domain'"):
            summarize(frame, "success", strata="domain")

    def test_method(self, frame):
        with pytest.raises(ValueError, match=msg("`method` must be one of 'bca', 'percentile', "
                                                 "'basic', 't'; got 'bootstrap-t'")):
            summarize(frame, "success", method="bootstrap-t")

    @pytest.mark.parametrize("confidence", [0, 1, 95, -0.5])
    def test_confidence_range(self, frame, confidence):
        with pytest.raises(ValueError, match="`confidence` must be strictly between 0 and 1"):
            summarize(frame, "success", confidence=confidence)

    def test_confidence_type(self, frame):
        with pytest.raises(TypeError, match="`confidence` must be a number, got '95%'"):
            summarize(frame, "success", confidence="95%")

    @pytest.mark.parametrize("n", [0, -5])
    def test_n_resamples_range(self, frame, n):
        with pytest.raises(ValueError, match=f"`n_resamples` must be at least 1, got {n}"):
            summarize(frame, "success", n_resamples=n)

    def test_n_resamples_type(self, frame):
        with pytest.raises(TypeError, match="`n_resamples` must be an integer, got 1000.0"):
            summarize(frame, "success", n_resamples=1000.0)

    def test_seed_type(self, frame):
        with pytest.raises(TypeError, match="`seed` must be an integer"):
            summarize(frame, "success", seed=np.random.default_rng(0))

    def test_options_are_keyword_only(self, frame):
        with pytest.raises(TypeError):
            summarize(frame, "success", "agent_model", "scenario_id")


class TestMetricValidation:
    def test_name(self):
        with pytest.raises(TypeError, match="Metric name must be a non-empty string"):
            Metric("", "x")

    def test_column_type(self):
        with pytest.raises(TypeError, match="column must be a column name or a"):
            Metric("m", 3)

    def test_pair_length(self):
        with pytest.raises(TypeError, match="a ratio needs a \\(numerator, denominator\\) pair"):
            Metric("m", ("a", "b", "c"))

    def test_stat(self):
        with pytest.raises(ValueError, match="stat must be 'mean' or 'median', got 'mode'"):
            Metric("m", "x", stat="mode")

    def test_median_of_ratio(self):
        with pytest.raises(ValueError, match="a median needs one column"):
            Metric("m", ("a", "b"), stat="median")

    def test_direction(self):
        with pytest.raises(TypeError, match="higher_is_better must be True or False"):
            Metric("m", "x", higher_is_better="yes")

    def test_list_column_becomes_tuple(self):
        assert Metric("m", ["a", "b"]).column == ("a", "b")

    def test_frozen(self):
        with pytest.raises(AttributeError):
            Metric("m", "x").name = "n"


class TestCompareValidation:
    def test_one_metric(self, frame):
        with pytest.raises(TypeError, match="`compare` takes one metric, not a list"):
            compare(frame, ["success", "outcome"])

    def test_unknown_metric(self, frame):
        with pytest.raises(ValueError, match="metric 'sucess' reads column 'sucess'"):
            compare(frame, "sucess")

    def test_unknown_between(self, frame):
        with pytest.raises(ValueError, match="`between` column 'model' is not in the frame"):
            compare(frame, "success", between="model")

    def test_between_missing_values(self, frame):
        frame["agent_model"] = frame.agent_model.astype(object)
        frame.loc[0, "agent_model"] = None
        with pytest.raises(ValueError, match="`between` column 'agent_model' has 1 missing"):
            compare(frame, "success")

    def test_between_clashes_with_result_column(self, frame):
        frame["test"] = frame.agent_model
        with pytest.raises(ValueError, match="`between` column 'test' has the name of a result"):
            compare(frame, "success", between="test")

    def test_one_value(self, frame):
        with pytest.raises(ValueError, match="`between` column 'agent_model' has 1 distinct "
                                             "value\\(s\\); a comparison needs at least two"):
            compare(frame[frame.agent_model == "a"], "success")

    def test_unknown_baseline(self, frame):
        with pytest.raises(ValueError, match="`baseline` 'gpt' is not a value of 'agent_model'; "
                                             "values are 'a', 'b'"):
            compare(frame, "success", baseline="gpt")

    def test_unknown_pair_on(self, frame):
        with pytest.raises(ValueError, match="`cluster` column 'task' is not in the frame"):
            compare(frame, "success", cluster="task")

    def test_pair_on_missing_values(self, frame):
        frame["scenario_id"] = frame.scenario_id.astype(object)
        frame.loc[0, "scenario_id"] = None
        with pytest.raises(ValueError, match="`cluster` column 'scenario_id' has 1 missing"):
            compare(frame, "success")

    def test_by_contains_between(self, frame):
        with pytest.raises(ValueError, match="`by` must not contain the `between` column"):
            compare(frame, "success", by=["domain", "agent_model"])

    def test_adjust(self, frame):
        with pytest.raises(ValueError, match=msg("`adjust` must be one of 'holm', 'bh', 'none'; "
                                                 "got 'bonferroni'")):
            compare(frame, "success", adjust="bonferroni")

    def test_test(self, frame):
        with pytest.raises(ValueError, match=msg("`test` must be one of 'bootstrap', "
                                                 "'permutation'; got 'wilcoxon'")):
            compare(frame, "success", test="wilcoxon")

    def test_method(self, frame):
        with pytest.raises(ValueError, match="`method` must be one of"):
            compare(frame, "success", method="bc")

    def test_confidence(self, frame):
        with pytest.raises(ValueError, match="`confidence` must be strictly between 0 and 1"):
            compare(frame, "success", confidence=1.5)

    def test_n_resamples(self, frame):
        with pytest.raises(ValueError, match="`n_resamples` must be at least 1"):
            compare(frame, "success", n_resamples=0)

    def test_seed(self, frame):
        with pytest.raises(TypeError, match="`seed` must be an integer"):
            compare(frame, "success", seed="0")
