"""Tests of compare: paired deltas, p-values and their adjustment, wins, tie groups."""

from __future__ import annotations

import warnings

import numpy as np
import pandas as pd
import pytest
from numpy.testing import assert_allclose
from scipy import stats

from accordkit.stats import (
    BCaFallbackWarning,
    DegenerateIntervalWarning,
    Metric,
    UnpairedComparisonWarning,
    compare,
    compare_metrics,
)
from accordkit.stats._adjust import holm
from accordkit.stats._resample import cell_rng, digest

from ._data import clustered_frame


def paired_frame(a: np.ndarray, b: np.ndarray, names=("a", "b")) -> pd.DataFrame:
    """One row per scenario per model."""
    ids = [f"s{i:03d}" for i in range(len(a))]
    return pd.DataFrame({
        "agent_model": np.repeat(names, len(a)),
        "scenario_id": ids * 2,
        "y": np.concatenate([a, b]),
    })


class TestPairedDelta:
    def test_delta_is_difference_of_means_on_shared_scenarios(self):
        frame = clustered_frame(25, 3, models=("a", "b"), effect={"b": 0.1})
        frame = frame.drop(index=[0, 1, 80])  # unequal rollouts per scenario, same sets
        out = compare(frame, "success", baseline="a", n_resamples=300)
        means = frame.groupby("agent_model").success.mean()
        assert out.delta[0] == pytest.approx(means["b"] - means["a"], rel=1e-13)
        assert out.estimate[0] == pytest.approx(means["b"])
        assert out.baseline_estimate[0] == pytest.approx(means["a"])
        assert bool(out.paired[0]) and out.n_pairs[0] == 25

    @pytest.mark.parametrize("method", ["percentile", "bca"])
    def test_agrees_with_scipy_paired_bootstrap(self, method):
        # one row per scenario: the paired cluster bootstrap is scipy's paired bootstrap
        rng = np.random.default_rng(1)
        a = rng.normal(0, 1, 30)
        b = a + rng.normal(0.3, 0.5, 30)
        frame = paired_frame(a, b)
        out = compare(frame, "y", baseline="a", method=method, n_resamples=2_000, seed=4)
        ids = tuple(sorted(frame.scenario_id.unique()))
        gen = cell_rng(4, (("__scenarios__", digest(ids)),))
        ref = stats.bootstrap((b, a), lambda x, y, axis: x.mean(axis) - y.mean(axis),
                              paired=True, method=method, n_resamples=2_000, rng=gen)
        ci = ref.confidence_interval
        assert_allclose([out.ci_low[0], out.ci_high[0]], [ci.low, ci.high], rtol=1e-10)

    def test_t_interval_is_the_paired_t_interval(self):
        rng = np.random.default_rng(2)
        a = rng.normal(0, 1, 20)
        b = a + rng.normal(0.2, 0.4, 20)
        out = compare(paired_frame(a, b), "y", baseline="a", method="t", n_resamples=100)
        d = b - a
        low, high = stats.t.interval(0.95, len(d) - 1, loc=d.mean(), scale=stats.sem(d))
        assert_allclose([out.ci_low[0], out.ci_high[0]], [low, high], rtol=1e-12)

    def test_pairing_narrows_the_interval(self):
        frame = clustered_frame(40, 3, models=("a", "b"), effect={"b": 0.05}, seed=3)
        paired = compare(frame, "success", baseline="a", n_resamples=2_000)
        # break the pairing by renaming b's scenarios: same data, unpaired
        unpaired = frame.copy()
        is_b = unpaired.agent_model == "b"
        unpaired.loc[is_b, "scenario_id"] = "b-" + unpaired.loc[is_b, "scenario_id"]
        with pytest.warns(UnpairedComparisonWarning):
            loose = compare(unpaired, "success", baseline="a", n_resamples=2_000)
        assert paired.delta[0] == pytest.approx(loose.delta[0])
        assert (paired.ci_high - paired.ci_low)[0] < 0.8 * (loose.ci_high - loose.ci_low)[0]

    def test_ratio_and_median_metrics(self):
        frame = clustered_frame(30, 3, models=("a", "b"), seed=4)
        ratio = compare(frame, ("n_num", "n_den"), baseline="a", n_resamples=300)
        sums = frame.groupby("agent_model")[["n_num", "n_den"]].sum()
        r = sums.n_num / sums.n_den
        assert ratio.delta[0] == pytest.approx(r["b"] - r["a"], rel=1e-13)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", BCaFallbackWarning)
            med = compare(frame, Metric("turns", "turns", stat="median"), baseline="a",
                          n_resamples=300)
        meds = frame.groupby("agent_model").turns.median()
        assert med.delta[0] == meds["b"] - meds["a"]


class TestPValues:
    def test_identical_models(self):
        a = np.random.default_rng(3).random(20)
        with pytest.warns(BCaFallbackWarning):
            out = compare(paired_frame(a, a.copy()), "y", baseline="a", n_resamples=500)
        assert out.delta[0] == 0 and out.p_value[0] == 1.0
        assert out.prob_improvement[0] == 0.5
        assert (out.ci_low[0], out.ci_high[0]) == (0.0, 0.0)

    def test_clear_difference_is_significant(self):
        rng = np.random.default_rng(4)
        a = rng.normal(0, 1, 40)
        out = compare(paired_frame(a, a + 1 + rng.normal(0, 0.2, 40)), "y", n_resamples=2_000)
        assert out.p_value[0] == pytest.approx(2 / 2_001)
        assert out.ci_low[0] > 0

    def test_bootstrap_p_value_formula(self):
        # p = min(1, 2 * min(1 + #{d* <= 0}, 1 + #{d* >= 0}) / (B + 1)), on the same draws
        rng = np.random.default_rng(5)
        a = rng.normal(0, 1, 25)
        b = a + rng.normal(0.15, 0.6, 25)
        frame = paired_frame(a, b)
        out = compare(frame, "y", baseline="a", n_resamples=4_000, seed=2)
        ids = tuple(sorted(frame.scenario_id.unique()))
        gen = cell_rng(2, (("__scenarios__", digest(ids)),))
        idx = gen.integers(0, 25, (4_000, 25))
        d = b[idx].mean(axis=1) - a[idx].mean(axis=1)
        tail = min((d <= 0).sum(), (d >= 0).sum()) + 1
        assert out.p_value[0] == pytest.approx(min(1, 2 * tail / 4_001), rel=1e-12)

    def test_permutation_matches_exact_sign_flip_test(self):
        rng = np.random.default_rng(6)
        a = rng.normal(0, 1, 9)
        b = a + rng.normal(0.5, 1.0, 9)
        out = compare(paired_frame(a, b), "y", test="permutation", n_resamples=20_000)
        exact = stats.permutation_test(
            (b, a), lambda x, y, axis: np.mean(x - y, axis=axis),
            permutation_type="samples", n_resamples=np.inf,
        ).pvalue
        assert out.p_value[0] == pytest.approx(exact, abs=0.01)

    def test_unpaired_permutation(self):
        rng = np.random.default_rng(7)
        frame = pd.DataFrame({
            "agent_model": ["a"] * 12 + ["b"] * 10,
            "scenario_id": [f"a{i}" for i in range(12)] + [f"b{i}" for i in range(10)],
            "y": np.concatenate([rng.normal(0, 1, 12), rng.normal(1.0, 1, 10)]),
        })
        with pytest.warns(UnpairedComparisonWarning):
            out = compare(frame, "y", test="permutation", n_resamples=20_000)
        x = frame.y[frame.agent_model == "b"].to_numpy()
        y = frame.y[frame.agent_model == "a"].to_numpy()
        ref = stats.permutation_test((x, y), lambda u, v, axis: u.mean(axis) - v.mean(axis),
                                     n_resamples=20_000, rng=np.random.default_rng(0)).pvalue
        assert out.p_value[0] == pytest.approx(ref, abs=0.01)
        assert not out.paired[0]

    def test_holm_adjustment_of_the_family(self):
        frame = clustered_frame(30, 2, models=("a", "b", "c", "d"),
                                effect={"b": 0.12, "c": 0.05, "d": -0.15}, seed=8)
        out = compare(frame, "success", baseline="a", n_resamples=2_000)
        assert_allclose(out.p_adjusted, holm(out.p_value.to_numpy()))
        # Holm by hand: sort, multiply by m - i, running max, cap at 1
        p = out.p_value.to_numpy()
        order = np.argsort(p)
        by_hand = np.minimum(1, np.maximum.accumulate((3 - np.arange(3)) * p[order]))
        assert_allclose(out.p_adjusted.to_numpy()[order], by_hand)

    def test_bh_and_none(self):
        frame = clustered_frame(30, 2, models=("a", "b", "c", "d"),
                                effect={"b": 0.12, "c": 0.05, "d": -0.15}, seed=8)
        bh = compare(frame, "success", adjust="bh", n_resamples=2_000)
        assert_allclose(bh.p_adjusted, stats.false_discovery_control(bh.p_value))
        none = compare(frame, "success", adjust="none", n_resamples=2_000)
        assert_allclose(none.p_adjusted, none.p_value)

    def test_each_cell_is_its_own_family(self):
        frame = clustered_frame(30, 2, models=("a", "b", "c"), effect={"b": 0.1}, seed=9)
        out = compare(frame, "success", baseline="a", by="domain", n_resamples=1_000)
        for _, cell in out.groupby("domain"):
            assert_allclose(cell.p_adjusted, holm(cell.p_value.to_numpy()))


class TestProbImprovement:
    def hand_frame(self) -> pd.DataFrame:
        # per-scenario means: candidate b = [0.8, 0.5, 0.2, 1.0], baseline a =
        # [0.5, 0.5, 0.4, 0.0]: win, tie, loss, win -> (2 + 0.5) / 4 = 0.625
        b = {"s0": [1.0, 0.6], "s1": [0.5, 0.5], "s2": [0.0, 0.4], "s3": [1.0, 1.0]}
        a = {"s0": [0.5, 0.5], "s1": [0.0, 1.0], "s2": [0.4, 0.4], "s3": [0.0, 0.0]}
        rows = [(m, s, v) for m, d in (("a", a), ("b", b)) for s, vs in d.items() for v in vs]
        return pd.DataFrame(rows, columns=["agent_model", "scenario_id", "y"])

    def test_hand_example(self):
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", UserWarning)
            out = compare(self.hand_frame(), "y", baseline="a", n_resamples=200)
        assert out.prob_improvement[0] == 0.625

    def test_lower_is_better(self):
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", UserWarning)
            out = compare(self.hand_frame(), Metric("y", "y", higher_is_better=False),
                          baseline="a", n_resamples=200)
        assert out.prob_improvement[0] == 0.375

    def test_unpaired_is_mann_whitney(self):
        frame = clustered_frame(20, 1, models=("a", "b"), seed=10)
        frame = frame[~((frame.agent_model == "b") & (frame.scenario_id < "s004"))]
        with pytest.warns(UnpairedComparisonWarning, match="16 and 20 scenarios, 16 shared"):
            out = compare(frame, "turns", baseline="a", n_resamples=200)
        x = frame.turns[frame.agent_model == "b"]
        y = frame.turns[frame.agent_model == "a"]
        u = stats.mannwhitneyu(x, y).statistic
        assert out.prob_improvement[0] == pytest.approx(u / (len(x) * len(y)))
        assert out.n_pairs[0] == 16 and not out.paired[0]
        assert out.delta[0] == pytest.approx(x.mean() - y.mean())


class TestTieGroups:
    def frame(self) -> pd.DataFrame:
        return clustered_frame(40, 3, models=("a", "b", "c"),
                               effect={"a": 0.3, "b": 0.28, "c": -0.3}, seed=11)

    def test_groups(self):
        out = compare(self.frame(), "success", n_resamples=2_000)
        groups = dict(zip(out.agent_model, out.tie_group, strict=True))
        groups.update(zip(out.baseline, out.baseline_tie_group, strict=True))
        assert groups == {"a": 1, "b": 1, "c": 2}

    def test_groups_do_not_depend_on_the_baseline(self):
        frame = self.frame()
        all_pairs = compare(frame, "success", n_resamples=2_000)
        for base in ("a", "b", "c"):
            out = compare(frame, "success", baseline=base, n_resamples=2_000)
            groups = dict(zip(out.agent_model, out.tie_group, strict=True))
            groups[base] = out.baseline_tie_group.iloc[0]
            expected = dict(zip(all_pairs.agent_model, all_pairs.tie_group, strict=True))
            expected.update(zip(all_pairs.baseline, all_pairs.baseline_tie_group, strict=True))
            assert groups == expected

    def test_lower_is_better_reverses_the_ranking(self):
        out = compare(self.frame(), Metric("s", "success", higher_is_better=False),
                      n_resamples=2_000)
        groups = dict(zip(out.agent_model, out.tie_group, strict=True))
        groups.update(zip(out.baseline, out.baseline_tie_group, strict=True))
        assert groups == {"c": 1, "a": 2, "b": 2}


class TestShape:
    def test_all_pairs(self):
        frame = clustered_frame(12, 2, models=("c", "a", "b"))
        out = compare(frame, "success", n_resamples=200)
        pairs = list(zip(out.baseline, out.agent_model, strict=True))
        assert pairs == [("a", "b"), ("a", "c"), ("b", "c")]
        assert list(out.columns[:3]) == ["metric", "agent_model", "baseline"]
        assert out.attrs["provenance"]["function"] == "compare"
        assert out.attrs["provenance"]["adjust"] == "holm"

    def test_between_another_column(self):
        frame = clustered_frame(12, 2, models=("a", "b"))
        frame["method"] = frame.agent_model.map({"a": "react", "b": "uncreact"})
        out = compare(frame, "success", between="method", baseline="react", n_resamples=200)
        assert out.method.tolist() == ["uncreact"] and out.baseline.tolist() == ["react"]

    def test_baseline_missing_in_a_cell(self):
        frame = clustered_frame(12, 2, models=("a", "b", "c"))
        frame = frame[~((frame.agent_model == "a") & (frame.domain == "y"))]
        with pytest.warns(DegenerateIntervalWarning, match="baseline 'a' has no rows"):
            out = compare(frame, "success", baseline="a", by="domain", n_resamples=200)
        assert out.domain.unique().tolist() == ["x"]

    def test_small_cell(self):
        frame = clustered_frame(8, 3, models=("a", "b"))
        out = compare(frame, "success", n_resamples=200)
        assert out.small_cell[0] and out.n_pairs[0] == 8

    def test_adding_a_model_leaves_a_pair_unchanged(self):
        frame = clustered_frame(20, 2, models=("a", "b", "c"), seed=12)
        two = compare(frame[frame.agent_model != "c"], "success", baseline="a",
                      n_resamples=500)
        three = compare(frame, "success", baseline="a", n_resamples=500)
        row = three[three.agent_model == "b"]
        assert (row.ci_low.iloc[0], row.ci_high.iloc[0]) == (two.ci_low[0], two.ci_high[0])
        assert row.p_value.iloc[0] == two.p_value[0]


class TestCompareMetrics:
    METRICS = ["success", Metric("turns (median)", "turns", stat="median",
                                 higher_is_better=False),
               ("n_num", "n_den"), "outcome"]

    @pytest.mark.parametrize(("method", "test", "baseline", "by"), [
        ("bca", "bootstrap", "a", None),
        ("percentile", "bootstrap", None, "domain"),
        ("t", "permutation", "a", "domain"),
    ])
    def test_equals_compare_one_metric_at_a_time(self, method, test, baseline, by):
        frame = clustered_frame(20, 3, models=("a", "b", "c"), effect={"b": 0.1})
        options = dict(baseline=baseline, by=by, method=method, test=test,
                       n_resamples=300, seed=3)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            got = compare_metrics(frame, self.METRICS, **options)
            want = pd.concat([compare(frame, m, **options) for m in self.METRICS],
                             ignore_index=True)
        pd.testing.assert_frame_equal(got, want)
        assert got.attrs["provenance"]["function"] == "compare_metrics"
        assert got.attrs["provenance"]["metric"] == list(want["metric"].unique())

    def test_unpaired_scenario_sets_and_warnings_per_metric(self):
        frame = clustered_frame(20, 2, models=("a", "b"))
        frame = frame[~((frame.agent_model == "b") & (frame.scenario_id == "s000"))]
        with pytest.warns(UnpairedComparisonWarning) as caught:
            got = compare_metrics(frame, ["success", "turns"], baseline="a",
                                  n_resamples=200)
        assert len([w for w in caught if issubclass(w.category,
                                                    UnpairedComparisonWarning)]) == 2
        with pytest.warns(UnpairedComparisonWarning, match="compared unpaired"):
            want = pd.concat([compare(frame, m, baseline="a", n_resamples=200)
                              for m in ("success", "turns")], ignore_index=True)
        pd.testing.assert_frame_equal(got, want)
        assert not got["paired"].any()

    def test_one_metric_or_none_is_refused_and_empty_frames_give_empty_results(self):
        frame = clustered_frame(5, 2, models=("a", "b"))
        with pytest.raises(TypeError, match="sequence of metrics"):
            compare_metrics(frame, "success")
        with pytest.raises(TypeError, match="sequence of metrics"):
            compare_metrics(frame, ("n_num", "n_den"))
        with pytest.raises(ValueError, match="empty"):
            compare_metrics(frame, [])
        empty = compare_metrics(frame.iloc[:0], ["success", "turns"])
        assert empty.empty and list(empty.columns) == list(compare(frame.iloc[:0],
                                                                   "success").columns)


def test_prob_improvement_counts_a_last_bit_difference_as_a_tie():
    # the same three scores per scenario in reversed order: 0.1+0.2+0.3 != 0.3+0.2+0.1
    rows = [(model, f"s{s}", r, v) for s in range(10)
            for model, values in (("a", (0.1, 0.2, 0.3)), ("b", (0.3, 0.2, 0.1)))
            for r, v in enumerate(values)]
    frame = pd.DataFrame(rows, columns=["agent_model", "scenario_id", "rollout", "tsr"])
    for test in ("bootstrap", "permutation"):
        # every resampled difference is 0: BCa is undefined, the percentile interval is used
        with pytest.warns(BCaFallbackWarning, match="'b' vs 'a'"):
            row = compare(frame, "tsr", baseline="a", n_resamples=500, test=test).iloc[0]
        assert row.delta == 0.0 and row.prob_improvement == 0.5 and row.p_value == 1.0


def test_unpaired_prob_improvement_ties_values_equal_up_to_rounding():
    from accordkit.stats._paired import snap_ties as _snap_ties

    values = np.array([0.6, 0.30000000000000004, 0.6000000000000001, 0.3, 0.7])
    snapped = _snap_ties(values)
    assert snapped.tolist() == [0.6, 0.3, 0.6, 0.3, 0.7]      # each run takes its smallest
    assert stats.rankdata(snapped).tolist() == [3.5, 1.5, 3.5, 1.5, 5.0]


def test_small_cell_counts_the_scenarios_the_metric_can_use_on_both_sides():
    rng = np.random.default_rng(0)
    rows = []
    for s in range(40):
        for r in range(3):
            # the baseline's outcome is defined (a completed episode) in 4 scenarios only
            rows.append(("a", f"s{s}", r, rng.random() if s < 4 else np.nan))
            rows.append(("b", f"s{s}", r, rng.random()))
    frame = pd.DataFrame(rows, columns=["agent_model", "scenario_id", "rollout", "outcome"])
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        row = compare(frame, "outcome", baseline="a", n_resamples=500).iloc[0]
    assert row.paired and row.n_pairs == 40
    assert row.small_cell          # 4 scenarios carry the baseline's estimate
    full = frame.assign(outcome=frame["outcome"].fillna(0.5))
    assert not compare(full, "outcome", baseline="a", n_resamples=500).iloc[0].small_cell


def test_compare_metrics_equals_compare_bit_for_bit_with_six_float_metrics():
    """Each metric's rows are summed in its own value order and multiplied on their own:
    the rows of ``compare_metrics`` are those of ``compare``, to the last digit."""
    rng = np.random.default_rng(8)
    frame = pd.DataFrame({"agent_model": np.repeat(["a", "b", "c"], 120),
                          "scenario_id": np.tile(np.arange(40).repeat(3), 3)})
    names = [f"m{k}" for k in range(6)]
    for name in names:
        frame[name] = rng.random(len(frame))
    both = compare_metrics(frame, names, baseline="a", n_resamples=600)
    one = pd.concat([compare(frame, m, baseline="a", n_resamples=600) for m in names],
                    ignore_index=True)
    pd.testing.assert_frame_equal(both, one, check_exact=True)


def test_cluster_ids_as_unsorted_categories_give_the_tables_of_strings():
    """pd.factorize numbers a categorical in the order of its categories: ids as
    categories in another order used to draw other clusters, so other intervals."""
    from accordkit.stats import summarize

    rng = np.random.default_rng(0)
    ids = [f"s{i:02d}" for i in range(12)]
    frame = pd.DataFrame({"agent_model": np.repeat(["a", "b"], 24), "scenario_id": ids * 4,
                          "x": rng.random(48).round(2)})
    cats = frame.assign(scenario_id=pd.Categorical(frame["scenario_id"],
                                                   categories=ids[::-1]),
                        agent_model=pd.Categorical(frame["agent_model"],
                                                   categories=["b", "a"]))
    for table in (lambda f: summarize(f, "x", "agent_model", method="percentile",
                                      n_resamples=499, seed=0),
                  lambda f: compare(f, "x", baseline="a", method="percentile",
                                    n_resamples=499, seed=0)):
        want, got = table(frame), table(cats)
        # rows follow the categories' order (as pandas groups them); the numbers are the same
        key = "agent_model"
        want = want.assign(**{key: want[key].astype(str)}).set_index(key).sort_index()
        got = got.assign(**{key: got[key].astype(str)}).set_index(key).sort_index()
        for col in ("ci_low", "ci_high"):
            np.testing.assert_array_equal(got[col].to_numpy(), want[col].to_numpy())


def test_the_bootstrap_p_value_does_not_hang_on_rounding():
    """Resampled differences that are zero in exact arithmetic count as ties, whatever unit
    in the last place the order of their sums left. A median metric beside it sends the
    cell to larger blocks of resamples, whose sums round otherwise: the p-value of the
    first metric moved by 0.0012."""
    from accordkit.stats import Metric, compare_metrics

    rng = np.random.default_rng(2)
    n = 300
    frame = pd.DataFrame({"agent_model": np.repeat(["a", "b"], 3 * n),
                          "scenario_id": np.tile(np.repeat(np.arange(n), 3), 2),
                          "x": rng.integers(0, 7, 6 * n) / 6, "t": rng.random(6 * n)})
    alone = compare(frame, "x", baseline="a", n_resamples=10_000, seed=0)
    beside = compare_metrics(frame, ["x", Metric("mt", "t", stat="median")], baseline="a",
                             n_resamples=10_000, seed=0)
    assert alone["p_value"].iloc[0] == beside["p_value"].iloc[0]
