"""Paired comparisons only within one domain and task set (hand-computed frames)."""

from __future__ import annotations

import pandas as pd
import pytest

from accordkit.tables.comparisons import (
    benchmark_comparisons,
    comparison_plan,
    paired_comparisons,
)

OPTS = {"n_resamples": 200, "seed": 0, "method": "percentile"}


def _frame() -> pd.DataFrame:
    rows = []
    # airline: A and B ran t1..t3; C ran t1, t2, t9 (another task set)
    for config, tasks, reward in (("A", ["t1", "t2", "t3"], [1.0, 0.0, 1.0]),
                                  ("B", ["t1", "t2", "t3"], [1.0, 1.0, 1.0]),
                                  ("C", ["t1", "t2", "t9"], [0.0, 0.0, 0.0])):
        for task, value in zip(tasks, reward, strict=True):
            rows.append({"benchmark": "tau2", "domain": "airline", "configuration": config,
                         "scenario_id": task, "reward": value})
    # retail: only A
    rows += [{"benchmark": "tau2", "domain": "retail", "configuration": "A",
              "scenario_id": f"r{i}", "reward": 0.5} for i in range(3)]
    return pd.DataFrame(rows)


def test_plan_pairs_the_baseline_with_each_configuration_on_their_shared_tasks():
    plan = comparison_plan(_frame(), baseline="A").set_index(["domain", "between_value"])
    row = plan.loc[("airline", "B")]
    assert row["comparable"] and row["baseline"] == "A" and row["reason"] == ""
    assert row["n_compared"] == 3
    row = plan.loc[("airline", "C")]
    assert row["comparable"] and row["n_shared"] == 2 and row["n_compared"] == 2
    assert row["reason"] == "compared on the 2 tasks both ran (3 and 3 ran)"
    row = plan.loc[("retail", "A")]   # alone in its domain
    assert not row["comparable"] and row["reason"] == "the only configuration here"


def test_without_a_baseline_every_pair_that_shares_tasks_is_compared():
    plan = comparison_plan(_frame())
    airline = plan[plan["domain"] == "airline"]
    assert list(zip(airline["baseline"], airline["between_value"], airline["n_compared"],
                    strict=True)) == [("A", "B", 3), ("A", "C", 2), ("B", "C", 2)]
    frame = pd.concat([_frame(), pd.DataFrame([{"benchmark": "tau2", "domain": "airline",
                                                "configuration": "D", "scenario_id": "t9",
                                                "reward": 1.0}])])
    plan = comparison_plan(frame).set_index(["domain", "baseline", "between_value"])
    row = plan.loc[("airline", "C", "D")]
    assert not row["comparable"] and "shares 1 task(s) with C" in row["reason"]


def test_paired_comparisons_on_the_shared_tasks_of_each_pair():
    results, _ = paired_comparisons(_frame(), metrics=["reward"], baseline="A", **OPTS)
    got = results.set_index("configuration")
    assert sorted(got.index) == ["B", "C"] and got["paired"].all()
    assert got.loc["B", "n_pairs"] == 3 and got.loc["C", "n_pairs"] == 2
    assert got.loc["B", "delta"] == pytest.approx(1.0 - 2 / 3)    # on t1..t3
    assert got.loc["C", "delta"] == pytest.approx(0.0 - 0.5)      # on t1, t2
    # two task sets in the group: no tie groups, p-values adjusted over both (Holm)
    assert got["tie_group"].isna().all()
    p = sorted(got["p_value"])
    assert sorted(got["p_adjusted"]) == pytest.approx([min(1, 2 * p[0]),
                                                       min(1, max(2 * p[0], p[1]))])


def test_nothing_comparable_gives_an_empty_frame():
    frame = _frame()
    results, plan = paired_comparisons(frame[frame["domain"] == "retail"], metrics=["reward"],
                                       **OPTS)
    assert results.empty and len(plan) == 1


def test_benchmark_comparisons_use_each_benchmarks_default_metrics():
    frame = _frame().assign(success=lambda f: f["reward"] == 1.0)
    results, plan = benchmark_comparisons(frame, baseline="A", **OPTS)
    assert set(results["metric"]) == {"reward", "success"}
    assert plan.loc[plan["between_value"] == "C", "n_compared"].tolist() == [2]


def _three_configurations() -> pd.DataFrame:
    """gpt-4.1 and a fine-tuned gpt-4.1 ran the same 20 airline tasks, claude 50 (one
    trial each), labelled as the report labels configurations."""
    from accordkit.tables.tau2 import with_configuration

    rows = []
    for model, n_tasks in (("gpt-4.1", 20), ("ft:gpt-4.1:org::x1", 20),
                           ("claude-sonnet-4-5", 50)):
        rows += [{"benchmark": "tau2", "domain": "airline", "agent_model": model,
                  "method": "llm_agent", "user_model": "gpt-4.1",
                  "user_implementation": "user_simulator", "scenario_id": str(i),
                  "reward": float((i * 7 + len(model)) % 3 == 0)} for i in range(n_tasks)]
    return with_configuration(pd.DataFrame(rows))


def test_three_configurations_give_every_shared_task_comparison():
    frame = _three_configurations()
    results, plan = benchmark_comparisons(frame, metrics=["reward"], **OPTS)
    assert len(results) == 3 and plan["comparable"].all()
    assert set(plan["n_compared"]) == {20} and set(results["n_pairs"]) == {20}
    labels = set(frame["configuration"])
    assert {frozenset(p) for p in zip(results["configuration"], results["baseline"],
                                      strict=True)} == {
        frozenset(p) for p in [(a, b) for a in labels for b in labels if a < b]}
    claude = plan[plan["n_tasks"].eq(50) | plan["n_baseline_tasks"].eq(50)]
    assert claude["reason"].str.startswith("compared on the 20 tasks both ran").all()


@pytest.mark.parametrize("spelling", ["gpt-4.1", "gpt-4.1 (llm_agent) | user: gpt-4.1 "
                                                 "(user_simulator)"])
def test_a_baseline_may_be_the_model_or_the_full_label(spelling):
    results, plan = benchmark_comparisons(_three_configurations(), metrics=["reward"],
                                          baseline=spelling, **OPTS)
    assert set(results["baseline"]) == {"gpt-4.1 (llm_agent) | user: gpt-4.1 "
                                        "(user_simulator)"}
    assert len(results) == 2


def test_an_unknown_baseline_is_refused_with_the_choices():
    with pytest.raises(ValueError, match=r"baseline 'gpt-4' names no configuration; choose "
                                         r"an agent model \(claude-sonnet-4-5, "
                                         r"ft:gpt-4.1:org::x1, gpt-4.1\) or a full label"):
        benchmark_comparisons(_three_configurations(), metrics=["reward"], baseline="gpt-4", **OPTS)
    with pytest.raises(ValueError, match="pairs: 'x' names no configuration"):
        benchmark_comparisons(_three_configurations(), metrics=["reward"],
                              pairs=[["gpt-4.1", "x"]], **OPTS)


def test_named_pairs_only():
    results, plan = benchmark_comparisons(_three_configurations(), metrics=["reward"],
                                          pairs=[["gpt-4.1", "ft:gpt-4.1:org::x1"]], **OPTS)
    assert len(results) == 1 and results["configuration"].iloc[0].startswith("ft:gpt-4.1")
    assert results["baseline"].iloc[0].startswith("gpt-4.1")
    assert not plan.loc[plan["between_value"].str.startswith("claude"), "comparable"].any()


def test_two_configurations_of_one_model_need_the_full_label():
    frame = _three_configurations()
    other_user = frame[frame["agent_model"] == "gpt-4.1"].assign(user_model="claude")
    from accordkit.tables.tau2 import with_configuration

    frame = with_configuration(pd.concat([frame, other_user]).drop(columns="configuration"))
    with pytest.raises(ValueError, match="'gpt-4.1' names 2 configurations of one group"):
        comparison_plan(frame, baseline="gpt-4.1")


def test_benchmark_comparisons_need_the_benchmark_among_by():
    """``by`` names the groups within which configurations are compared; the metrics are
    chosen per benchmark, so ``benchmark`` must be one of them."""
    with pytest.raises(ValueError, match="needs 'benchmark' among `by`"):
        benchmark_comparisons(_three_configurations(), by=("domain",), **OPTS)
