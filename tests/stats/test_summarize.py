"""Tests of summarize: agreement with scipy, clustering, metrics forms, seeds, coverage."""

from __future__ import annotations

import warnings

import numpy as np
import pandas as pd
import pytest
from numpy.testing import assert_allclose, assert_equal
from scipy import stats

from accordkit.stats import (
    BCaFallbackWarning,
    DegenerateIntervalWarning,
    Metric,
    compare,
    summarize,
)
from accordkit.stats._resample import cell_rng, count_chunks, stable_key

from ._data import clustered_frame


def one_row_per_cluster(x: np.ndarray, **extra) -> pd.DataFrame:
    return pd.DataFrame({"scenario_id": [f"s{i:04d}" for i in range(len(x))], "x": x, **extra})


class TestAgreementWithScipy:
    """With one row per cluster, the cluster bootstrap is scipy's bootstrap of the mean."""

    @pytest.mark.parametrize("method", ["percentile", "bca", "basic"])
    def test_same_resamples_same_interval(self, method):
        # feed scipy the generator summarize derives for the cell: identical resamples
        x = np.random.default_rng(3).gamma(2.0, size=25)
        out = summarize(one_row_per_cluster(x), "x", method=method, n_resamples=2_000, seed=7)
        ref = stats.bootstrap((x,), np.mean, method=method, n_resamples=2_000,
                              rng=cell_rng(7, ()))
        ci = ref.confidence_interval
        assert_allclose([out.ci_low[0], out.ci_high[0]], [ci.low, ci.high], rtol=1e-12)
        assert out.estimate[0] == pytest.approx(x.mean(), rel=1e-14)

    @pytest.mark.parametrize("method", ["percentile", "bca"])
    def test_same_resamples_in_a_group(self, method):
        x = np.random.default_rng(4).normal(size=40)
        frame = one_row_per_cluster(x, agent_model="m1")
        out = summarize(frame, "x", "agent_model", method=method, n_resamples=1_000, seed=3)
        rng = cell_rng(3, stable_key(["agent_model"], ["m1"]))
        ref = stats.bootstrap((x,), np.mean, method=method, n_resamples=1_000, rng=rng)
        ci = ref.confidence_interval
        assert_allclose([out.ci_low[0], out.ci_high[0]], [ci.low, ci.high], rtol=1e-12)

    @pytest.mark.parametrize("method", ["percentile", "bca"])
    def test_independent_draws_within_monte_carlo_error(self, method):
        # different draws: the ends differ only by Monte-Carlo error, well under 2% of the
        # interval's width at 20,000 resamples
        x = np.random.default_rng(5).exponential(size=60)
        out = summarize(one_row_per_cluster(x), "x", method=method, n_resamples=20_000)
        ref = stats.bootstrap((x,), np.mean, method=method, n_resamples=20_000,
                              rng=np.random.default_rng(12345)).confidence_interval
        width = ref.high - ref.low
        assert abs(out.ci_low[0] - ref.low) < 0.03 * width
        assert abs(out.ci_high[0] - ref.high) < 0.03 * width

    def test_t_interval_is_the_one_sample_t_interval(self):
        x = np.random.default_rng(6).normal(10, 2, size=30)
        out = summarize(one_row_per_cluster(x), "x", method="t")
        low, high = stats.t.interval(0.95, len(x) - 1, loc=x.mean(), scale=stats.sem(x))
        assert_allclose([out.ci_low[0], out.ci_high[0]], [low, high], rtol=1e-12)
        assert out.ci_method[0] == "t"


class TestClustering:
    def test_one_row_per_cluster_equals_unclustered(self):
        x = np.random.default_rng(8).normal(size=50)
        frame = one_row_per_cluster(x)
        clustered = summarize(frame, "x", cluster="scenario_id", n_resamples=1_000, seed=2)
        rows = summarize(frame, "x", cluster=None, n_resamples=1_000, seed=2)
        pd.testing.assert_frame_equal(clustered, rows)

    @pytest.mark.filterwarnings("ignore::accordkit.stats.BCaFallbackWarning")
    def test_row_order_does_not_matter(self):
        frame = clustered_frame(20, 3, models=("a", "b"))
        shuffled = frame.sample(frac=1.0, random_state=1)
        metrics = ["success", "outcome", ("n_num", "n_den"), Metric("t", "turns", stat="median")]
        a = summarize(frame, metrics, "agent_model", n_resamples=500)
        b = summarize(shuffled, metrics, "agent_model", n_resamples=500)
        pd.testing.assert_frame_equal(a, b)

    def test_clustered_interval_is_wider_than_row_interval(self):
        # within-scenario correlation (ICC 0.2, design effect 1.8, so about 1.34 times
        # wider): resampling rows understates the spread
        frame = clustered_frame(40, 5, seed=1)
        clustered = summarize(frame, "success", n_resamples=2_000)
        rows = summarize(frame, "success", cluster=None, n_resamples=2_000)
        width = (clustered.ci_high - clustered.ci_low)[0]
        assert width > 1.15 * (rows.ci_high - rows.ci_low)[0]

    def test_cluster_t_interval_matches_hand_computation(self):
        frame = clustered_frame(15, 4, seed=2)
        out = summarize(frame, "success", method="t")
        sums = frame.groupby("scenario_id")["success"].agg(["sum", "count"])
        r = sums["sum"].sum() / sums["count"].sum()
        e = (sums["sum"] - r * sums["count"]) / sums["count"].sum()
        c = len(sums)
        se = np.sqrt(c / (c - 1) * np.sum(e**2))
        half = stats.t.ppf(0.975, c - 1) * se
        assert_allclose([out.ci_low[0], out.ci_high[0]], [r - half, r + half], rtol=1e-12)

    def test_strata_keep_cluster_counts_and_change_the_draws(self):
        frame = clustered_frame(30, 2, seed=3)
        plain = summarize(frame, "success", n_resamples=1_000)
        strat = summarize(frame, "success", strata="domain", n_resamples=1_000)
        again = summarize(frame, "success", strata="domain", n_resamples=1_000)
        assert plain.estimate[0] == strat.estimate[0]
        assert (plain.ci_low[0], plain.ci_high[0]) != (strat.ci_low[0], strat.ci_high[0])
        pd.testing.assert_frame_equal(strat, again)

    def test_stratified_t_interval_centres_within_strata(self):
        frame = clustered_frame(20, 2, seed=4)
        out = summarize(frame, "success", method="t", strata="domain")
        totals = frame.groupby(["domain", "scenario_id"])["success"].agg(["sum", "count"])
        r = totals["sum"].sum() / totals["count"].sum()
        e = (totals["sum"] - r * totals["count"]) / totals["count"].sum()
        var = sum(len(g) / (len(g) - 1) * np.sum((g - g.mean()) ** 2)
                  for _, g in e.groupby(level="domain"))
        half = stats.t.ppf(0.975, len(e) - 2) * np.sqrt(var)
        assert_allclose([out.ci_low[0], out.ci_high[0]], [r - half, r + half], rtol=1e-12)


class TestMetricForms:
    def test_ratio_point_estimate_is_ratio_of_sums(self):
        frame = clustered_frame(25, 4, seed=5)
        out = summarize(frame, ("n_num", "n_den"), n_resamples=200)
        assert out.estimate[0] == frame.n_num.sum() / frame.n_den.sum()
        assert out.n_events[0] == frame.n_den.sum()
        assert out.metric[0] == "n_num/n_den"
        assert out.stat[0] == "ratio"

    def test_ratio_skips_rows_with_a_missing_side(self):
        frame = clustered_frame(25, 4, seed=5)
        frame.loc[[0, 5], "n_num"] = np.nan
        frame.loc[[9], "n_den"] = np.nan
        keep = frame.n_num.notna() & frame.n_den.notna()
        out = summarize(frame, ("n_num", "n_den"), n_resamples=200)
        assert out.estimate[0] == frame.n_num[keep].sum() / frame.n_den[keep].sum()

    def test_mean_ignores_nan_rows(self):
        frame = clustered_frame(25, 4, seed=6)
        assert frame.outcome.isna().any()
        out = summarize(frame, "outcome", n_resamples=200)
        assert out.estimate[0] == pytest.approx(np.nanmean(frame.outcome), rel=1e-13)
        assert out.n_events[0] == frame.outcome.notna().sum()
        assert out.n_rows[0] == len(frame)
        assert pd.isna(out.n_censored[0])

    def test_nan_aware_mean_is_recomputed_on_every_resample(self):
        # vectorised equals looped: rebuild each resample's rows and take nanmean
        frame = clustered_frame(12, 3, seed=7)
        b = 300
        out = summarize(frame, "outcome", method="percentile", n_resamples=b, seed=4)
        ids = np.sort(frame.scenario_id.unique())
        (counts,) = count_chunks([(cell_rng(4, ()), np.arange(len(ids)))], len(ids), b)
        by_id = {s: g.outcome.to_numpy() for s, g in frame.groupby("scenario_id")}
        theta = [np.nanmean(np.concatenate([np.repeat(by_id[s], int(k)) for s, k in
                                            zip(ids, row, strict=True)])) for row in counts]
        low, high = np.quantile(theta, [0.025, 0.975])
        assert_allclose([out.ci_low[0], out.ci_high[0]], [low, high], rtol=1e-12)

    def test_bool_and_nullable_columns(self):
        frame = clustered_frame(20, 2, seed=8)
        frame["ok"] = frame.success.astype(bool)
        frame["okn"] = frame.success.astype("Int64").astype("boolean")
        frame.loc[3, "okn"] = pd.NA
        out = summarize(frame, ["ok", "okn"], n_resamples=200)
        assert out.estimate[0] == pytest.approx(frame.success.mean())
        assert out.n_events[1] == len(frame) - 1

    def test_metric_names_and_order(self):
        frame = clustered_frame(10, 2)
        out = summarize(frame, [Metric("Outcome", "outcome"), "success", ("n_num", "n_den")],
                        n_resamples=100)
        assert out.metric.tolist() == ["Outcome", "success", "n_num/n_den"]


class TestMedians:
    def test_median_with_censored_rows(self):
        frame = clustered_frame(30, 3, seed=9)
        frame.loc[frame.index % 7 == 0, "turns"] = np.nan
        out = summarize(frame, Metric("turns", "turns", stat="median"), n_resamples=500)
        assert out.estimate[0] == np.nanmedian(frame.turns)
        assert out.n_censored[0] == frame.turns.isna().sum()
        assert out.n_events[0] == frame.turns.notna().sum()
        assert out.stat[0] == "median"

    @pytest.mark.parametrize("continuous", [False, True])
    def test_median_bootstrap_equals_looped_resampling(self, continuous):
        # integer turns use the count-table path, continuous values the gather path
        frame = clustered_frame(10, 4, seed=10)
        if continuous:
            frame["turns"] = frame.turns + np.random.default_rng(0).random(len(frame))
        frame.loc[[1, 2, 3], "turns"] = np.nan
        b = 200
        out = summarize(frame, Metric("m", "turns", stat="median"), method="percentile",
                        n_resamples=b, seed=1)
        ids = np.sort(frame.scenario_id.unique())
        (counts,) = count_chunks([(cell_rng(1, ()), np.arange(len(ids)))], len(ids), b)
        by_id = {s: g.turns.to_numpy() for s, g in frame.groupby("scenario_id")}
        theta = [np.nanmedian(np.concatenate([np.repeat(by_id[s], int(k)) for s, k in
                                              zip(ids, row, strict=True)])) for row in counts]
        low, high = np.quantile(theta, [0.025, 0.975])
        assert_allclose([out.ci_low[0], out.ci_high[0]], [low, high], rtol=1e-12)

    def test_all_censored_median_is_nan(self):
        frame = clustered_frame(12, 2, seed=11)
        frame["turns"] = np.nan
        with pytest.warns(DegenerateIntervalWarning):
            out = summarize(frame, Metric("m", "turns", stat="median"), n_resamples=100)
        assert np.isnan(out.estimate[0]) and np.isnan(out.ci_low[0])
        assert out.n_censored[0] == len(frame)
        assert out.small_cell[0]


class TestDegenerateData:
    def test_constant_metric_falls_back_to_percentile(self):
        frame = clustered_frame(20, 3)
        frame["success"] = 1.0
        with pytest.warns(BCaFallbackWarning, match="'success' in \\(all rows\\)"):
            out = summarize(frame, "success", n_resamples=500)
        assert out.ci_method[0] == "percentile"
        assert (out.estimate[0], out.ci_low[0], out.ci_high[0]) == (1.0, 1.0, 1.0)

    def test_fallback_is_per_metric(self):
        frame = clustered_frame(20, 3)
        frame["const"] = 0.0
        with pytest.warns(BCaFallbackWarning):
            out = summarize(frame, ["const", "success"], n_resamples=500)
        assert out.ci_method.tolist() == ["percentile", "bca"]

    def test_single_cluster_has_no_interval(self):
        frame = clustered_frame(1, 6)
        with pytest.warns(DegenerateIntervalWarning, match="fewer than two clusters"):
            out = summarize(frame, "success", n_resamples=100)
        assert out.n_clusters[0] == 1
        assert np.isnan(out.ci_low[0]) and np.isnan(out.ci_high[0])
        assert out.estimate[0] == frame.success.mean()
        assert out.small_cell[0]

    def test_single_cluster_t_interval(self):
        frame = clustered_frame(1, 6)
        with pytest.warns(DegenerateIntervalWarning):
            out = summarize(frame, "success", method="t")
        assert np.isnan(out.ci_low[0])

    def test_empty_resamples_are_left_out_with_a_warning(self):
        frame = clustered_frame(12, 2, seed=12)
        frame["rare"] = np.nan
        frame.loc[frame.scenario_id.isin(["s000", "s001"]), "rare"] = 1.0
        frame.loc[0, "rare"] = 0.0
        with pytest.warns(DegenerateIntervalWarning, match="resamples drew no rows"):
            out = summarize(frame, "rare", method="percentile", n_resamples=500)
        assert 0 <= out.ci_low[0] <= out.ci_high[0] <= 1


class TestSeeds:
    def test_same_seed_same_numbers(self):
        frame = clustered_frame(20, 3)
        a = summarize(frame, "success", n_resamples=300, seed=5)
        b = summarize(frame, "success", n_resamples=300, seed=5)
        c = summarize(frame, "success", n_resamples=300, seed=6)
        pd.testing.assert_frame_equal(a, b)
        assert a.ci_low[0] != c.ci_low[0]

    def test_adding_a_group_leaves_a_cell_unchanged(self):
        frame = clustered_frame(20, 3, models=("a", "b", "c"))
        alone = summarize(frame[frame.agent_model == "a"], "success", "agent_model",
                          n_resamples=500)
        together = summarize(frame, "success", "agent_model", n_resamples=500)
        cols = ["estimate", "ci_low", "ci_high"]
        assert_equal(alone[cols].to_numpy(), together[cols].to_numpy()[:1])

    @pytest.mark.filterwarnings("ignore::accordkit.stats.BCaFallbackWarning")
    def test_adding_a_metric_leaves_an_interval_unchanged(self):
        frame = clustered_frame(20, 3)
        alone = summarize(frame, "success", n_resamples=500)
        many = summarize(frame, ["outcome", ("n_num", "n_den"), "success",
                                 Metric("t", "turns", stat="median")], n_resamples=500)
        row = many[many.metric == "success"]
        assert_equal(row[["ci_low", "ci_high"]].to_numpy(),
                     alone[["ci_low", "ci_high"]].to_numpy())

    def test_global_rng_is_not_touched(self):
        # the legacy global state must neither be advanced nor consulted
        frame = clustered_frame(15, 2)
        before = np.random.get_state()[1].copy()  # noqa: NPY002 - checking it is unused
        summarize(frame, ["success", Metric("t", "turns", stat="median")], n_resamples=200)
        compare(clustered_frame(15, 2, models=("a", "b")), "success", n_resamples=200,
                test="permutation")
        assert_equal(np.random.get_state()[1], before)  # noqa: NPY002


class TestOutput:
    @pytest.mark.filterwarnings("ignore::UserWarning")
    def test_columns_and_provenance(self):
        frame = clustered_frame(12, 2, models=("a", "b"))
        out = summarize(frame, ["success", "outcome"], ["agent_model", "domain"],
                        n_resamples=200, seed=3, confidence=0.9)
        assert list(out.columns) == [
            "agent_model", "domain", "metric", "stat", "estimate", "ci_low", "ci_high",
            "n_clusters", "n_rows", "n_events", "n_censored", "ci_method", "small_cell",
            "confidence", "n_resamples", "seed",
        ]
        assert len(out) == 2 * 2 * 2
        prov = out.attrs["provenance"]
        assert prov["method"] == "bca" and prov["confidence"] == 0.9
        assert prov["n_resamples"] == 200 and prov["seed"] == 3
        assert prov["cluster"] == "scenario_id" and prov["by"] == ["agent_model", "domain"]
        assert (out.confidence == 0.9).all() and (out.seed == 3).all()

    @pytest.mark.parametrize("by", [None, (), []])
    def test_no_grouping_gives_one_cell(self, by):
        out = summarize(clustered_frame(12, 2, models=("a", "b")), "success", by,
                        n_resamples=100)
        assert len(out) == 1 and out.n_rows[0] == 48 and out.n_clusters[0] == 12

    def test_by_as_string_or_list(self):
        frame = clustered_frame(12, 2, models=("a", "b"))
        a = summarize(frame, "success", "agent_model", n_resamples=100)
        b = summarize(frame, "success", ["agent_model"], n_resamples=100)
        pd.testing.assert_frame_equal(a, b)

    def test_missing_group_values_form_their_own_cell(self):
        frame = clustered_frame(12, 2, models=("a", "b"))
        frame["agent_model"] = frame.agent_model.astype(object)
        frame.loc[frame.agent_model == "b", "agent_model"] = None
        out = summarize(frame, "success", "agent_model", n_resamples=100)
        assert len(out) == 2 and out.n_rows.sum() == len(frame)

    @pytest.mark.filterwarnings("ignore::UserWarning")
    def test_small_cell_flag(self):
        frame = clustered_frame(19, 2)
        frame["group"] = np.where(frame.scenario_id < "s009", "nine", "ten")
        frame["few"] = np.where(frame.index < 8, 1.0, np.nan)
        out = summarize(frame, ["success", "few"], "group", n_resamples=100)
        flags = out.set_index(["group", "metric"]).small_cell
        assert flags[("nine", "success")] and not flags[("ten", "success")]
        assert flags[("nine", "few")]  # 8 events

    def test_small_ratio_denominator(self):
        frame = clustered_frame(26, 1)
        frame["shifts"] = 0.0
        frame.loc[[0, 1], "shifts"] = 1.0
        frame["recovered"] = frame.shifts
        with pytest.warns(DegenerateIntervalWarning), warnings.catch_warnings():
            warnings.simplefilter("ignore", BCaFallbackWarning)
            out = summarize(frame, ("recovered", "shifts"), n_resamples=100)
        assert out.n_events[0] == 2 and out.small_cell[0] and out.n_clusters[0] == 2

    def test_basic_is_the_reflected_percentile(self):
        frame = clustered_frame(20, 3)
        p = summarize(frame, "success", method="percentile", n_resamples=500)
        b = summarize(frame, "success", method="basic", n_resamples=500)
        est = p.estimate[0]
        assert_allclose([b.ci_low[0], b.ci_high[0]],
                        [2 * est - p.ci_high[0], 2 * est - p.ci_low[0]], rtol=1e-12)

    def test_method_name_is_case_insensitive(self):
        frame = clustered_frame(12, 2)
        out = summarize(frame, "success", method="BCa", n_resamples=100)
        assert out.ci_method[0] == "bca"


def test_light_coverage_clustered_versus_rows():
    """200 data sets with strong within-scenario correlation, true mean 0.5.

    The cluster BCa interval should cover close to 95% (loose bound for 200 reps); the
    naive row interval must do visibly worse. Full study: benchmarks/stats_coverage.py.
    """
    rng = np.random.default_rng(2024)
    n_scen, n_roll, reps = 30, 3, 200
    scen = np.repeat(np.arange(n_scen), n_roll)
    hits = {"cluster": 0, "rows": 0}
    for _ in range(reps):
        p = rng.beta(1.0, 1.0, n_scen)  # E p = 0.5, ICC = 1/3
        frame = pd.DataFrame({"scenario_id": scen,
                              "y": (rng.random(n_scen * n_roll) < p[scen]).astype(float)})
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", BCaFallbackWarning)
            c = summarize(frame, "y", n_resamples=999)
            r = summarize(frame, "y", cluster=None, n_resamples=999)
        hits["cluster"] += bool(c.ci_low[0] <= 0.5 <= c.ci_high[0])
        hits["rows"] += bool(r.ci_low[0] <= 0.5 <= r.ci_high[0])
    assert hits["cluster"] / reps >= 0.90
    assert hits["rows"] / reps <= hits["cluster"] / reps - 0.05


def test_median_bca_past_the_jackknife_cap_uses_percentile_and_says_so(monkeypatch):
    """A median over very many clusters would need a clusters x clusters jackknife: past
    the cap the interval is the percentile one, flagged in ``ci_method`` and warned."""
    import importlib

    from accordkit.stats import BCaFallbackWarning, Metric

    summ = importlib.import_module("accordkit.stats.summarize")   # the module, not ak.summarize
    est = importlib.import_module("accordkit.stats._estimators")

    rng = np.random.default_rng(3)
    frame = pd.DataFrame({"scenario_id": np.repeat(np.arange(40), 3),
                          "x": rng.integers(0, 9, 120).astype(float)})
    # below the cap either interval may come out (the check allows both): a fallback for a
    # degenerate jackknife is not what this test is about
    with warnings.catch_warnings():
        warnings.filterwarnings("ignore", "BCa interval undefined .constant metric",
                                BCaFallbackWarning)
        below = summ.summarize(frame, [Metric("m", "x", stat="median")], n_resamples=300)
    assert below["ci_method"].iloc[0] in ("bca", "percentile")
    monkeypatch.setattr(est, "DENSE_JACKKNIFE_MAX_CLUSTERS", 10)
    with pytest.warns(BCaFallbackWarning, match="jackknife median per cluster"):
        above = summ.summarize(frame, [Metric("m", "x", stat="median")], n_resamples=300)
    assert above["ci_method"].iloc[0] == "percentile"
    pct = summ.summarize(frame, [Metric("m", "x", stat="median")], n_resamples=300,
                         method="percentile")
    assert (above["ci_low"].iloc[0], above["ci_high"].iloc[0]) == \
        (pct["ci_low"].iloc[0], pct["ci_high"].iloc[0])


def test_compare_of_medians_past_the_jackknife_cap_uses_percentile_and_says_so(monkeypatch):
    import importlib

    from accordkit.stats import BCaFallbackWarning, Metric, compare

    est = importlib.import_module("accordkit.stats._estimators")
    rng = np.random.default_rng(4)
    frame = pd.DataFrame({"scenario_id": np.tile(np.repeat(np.arange(30), 2), 2),
                          "agent_model": np.repeat(["a", "b"], 60),
                          "x": rng.integers(0, 9, 120).astype(float)})
    metric = Metric("m", "x", stat="median")
    monkeypatch.setattr(est, "DENSE_JACKKNIFE_MAX_CLUSTERS", 10)
    with pytest.warns(BCaFallbackWarning, match="jackknife median per cluster"):
        above = compare(frame, metric, baseline="a", n_resamples=300)
    assert above["ci_method"].iloc[0] == "percentile"
    pct = compare(frame, metric, baseline="a", n_resamples=300, method="percentile")
    assert (above["ci_low"].iloc[0], above["ci_high"].iloc[0]) == \
        (pct["ci_low"].iloc[0], pct["ci_high"].iloc[0])


def test_row_order_does_not_change_a_bit_of_the_sums():
    # floating-point addition is not associative: the cluster sums are taken in value order
    frame = pd.DataFrame({"scenario_id": ["s1"] * 3 + ["s2"] * 3,
                          "x": [0.1, 0.2, 0.3, 0.7, 0.1, 0.2]})
    want = summarize(frame, "x", n_resamples=300)
    rng = np.random.default_rng(0)
    for _ in range(10):
        shuffled = frame.iloc[rng.permutation(len(frame))].reset_index(drop=True)
        got = summarize(shuffled, "x", n_resamples=300)
        assert got.equals(want)


def test_a_cell_pooling_benchmarks_warns_and_grouping_by_benchmark_does_not():
    from accordkit.stats import MixedBenchmarksWarning

    frame = pd.DataFrame({
        "benchmark": ["agentchangebench"] * 4 + ["tau2"] * 4 + ["accord"] * 2,
        "domain": ["airline"] * 8 + ["shop"] * 2,
        "scenario_id": ["t0", "t1", "t2", "t3"] * 2 + ["a0", "a1"],
        "tsr": [1.0, 0.5, 0.0, 1.0, 0.0, 0.0, 1.0, 0.0, np.nan, np.nan],
        "outcome": [np.nan] * 8 + [1.0, 0.0],
    })
    # cells where a metric has no rows at all have no interval, and say so
    with pytest.warns(MixedBenchmarksWarning, match=r"domain='airline' \(tsr\)"), \
            pytest.warns(DegenerateIntervalWarning, match="fewer than two clusters"):
        summarize(frame, ["tsr", "outcome"], by="domain", n_resamples=200)
    with warnings.catch_warnings():
        warnings.simplefilter("error", MixedBenchmarksWarning)
        with pytest.warns(DegenerateIntervalWarning, match="fewer than two clusters"):
            summarize(frame, ["tsr", "outcome"], by=["benchmark", "domain"], n_resamples=200)
        # rows of another benchmark that have no value of the metric pool nothing
        with pytest.warns(DegenerateIntervalWarning, match="some resamples drew no rows"):
            summarize(frame[frame["benchmark"] != "tau2"], ["tsr", "outcome"],
                      n_resamples=200)


@pytest.mark.parametrize("method", ["bca", "percentile"])
def test_a_metrics_interval_is_the_same_alone_and_beside_others(method):
    """Bit for bit: with six float metrics in one call, each product used to be one BLAS
    product of all their columns, whose sums run in another order than a product of two
    (OpenBLAS on AVX-512: intervals one unit in the last place apart)."""
    rng = np.random.default_rng(3)
    n = 40 * 5
    frame = pd.DataFrame({"scenario_id": np.repeat(np.arange(40), 5),
                          "model": np.tile(["a", "b"], n // 2)})
    names = [f"m{k}" for k in range(6)]
    for name in names:
        frame[name] = rng.random(n)
    together = summarize(frame, names, by="model", method=method, n_resamples=700, seed=1)
    for name in names:
        alone = summarize(frame, name, by="model", method=method, n_resamples=700, seed=1)
        mine = together[together["metric"] == name].reset_index(drop=True)
        for col in ("estimate", "ci_low", "ci_high"):
            assert_equal(mine[col].to_numpy(), alone[col].to_numpy())
