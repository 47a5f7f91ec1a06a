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


def test_plan_marks_other_task_sets_not_comparable_with_the_reason():
    plan = comparison_plan(_frame(), baseline="A").set_index(["domain", "between_value"])
    assert plan.loc[("airline", "B"), "comparable"]
    row = plan.loc[("airline", "C")]
    assert not row["comparable"]
    assert row["n_shared"] == 2 and "3 task(s), 2 shared" in row["reason"]
    assert plan.loc[("retail", "A"), "baseline"] == "A"


def test_default_baseline_is_the_configuration_with_most_tasks():
    frame = _frame()
    frame = frame[~((frame["configuration"] == "A") & (frame["scenario_id"] == "t3"))]
    plan = comparison_plan(frame)
    assert set(plan.loc[plan["domain"] == "airline", "baseline"]) == {"B"}


def test_paired_comparisons_compare_only_within_domain_and_task_set():
    results, _ = paired_comparisons(_frame(), ["reward"], baseline="A", **OPTS)
    assert list(results["configuration"]) == ["B"]
    row = results.iloc[0]
    assert row["domain"] == "airline" and bool(row["paired"]) and row["n_pairs"] == 3
    assert row["delta"] == pytest.approx(1.0 - 2 / 3)


def test_nothing_comparable_gives_an_empty_frame():
    frame = _frame()
    results, plan = paired_comparisons(frame[frame["domain"] == "retail"], ["reward"], **OPTS)
    assert results.empty and len(plan) == 1


def test_benchmark_comparisons_use_each_benchmarks_default_metrics():
    frame = _frame().assign(success=lambda f: f["reward"] == 1.0)
    results, plan = benchmark_comparisons(frame, baseline="A", **OPTS)
    assert set(results["metric"]) == {"reward", "success"}
    assert not plan.loc[plan["between_value"] == "C", "comparable"].any()


def test_the_plan_offers_a_comparison_on_shared_tasks_and_shared_tasks_makes_it():
    # C differs from the baseline A by one task: not comparable, and the reason offers it
    plan = comparison_plan(_frame(), baseline="A").set_index(["domain", "between_value"])
    assert "shared_tasks=true compares them on the 2 shared tasks" in \
        plan.loc[("airline", "C"), "reason"]
    assert plan.loc[("airline", "C"), "n_compared"] == 0
    plan = comparison_plan(_frame(), baseline="A", shared_tasks=True).set_index(
        ["domain", "between_value"])
    assert plan.loc[("airline", "C"), "comparable"]
    assert "compared on the 2 tasks every compared configuration ran" in \
        plan.loc[("airline", "C"), "reason"]
    # the group is compared on t1, t2 (every compared configuration ran them)
    assert plan.loc[("airline", "A"), "n_compared"] == 2
    assert plan.loc[("retail", "A"), "n_compared"] == 0   # nothing to compare with


def test_shared_tasks_compares_on_the_tasks_all_compared_configurations_ran():
    results, _ = paired_comparisons(_frame(), ["reward"], baseline="A", shared_tasks=True,
                                    **OPTS)
    got = results.set_index("configuration")
    assert sorted(got.index) == ["B", "C"] and got["paired"].all()
    assert (got["n_pairs"] == 2).all()
    # on t1, t2: A = (1, 0), B = (1, 1), C = (0, 0)
    assert got.loc["B", "delta"] == pytest.approx(1.0 - 0.5)
    assert got.loc["C", "delta"] == pytest.approx(0.0 - 0.5)
