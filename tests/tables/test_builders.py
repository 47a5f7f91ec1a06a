"""Every table builder on a small frame whose numbers are computed by hand (no papermill)."""

from __future__ import annotations

import math

import numpy as np
import pandas as pd
import pytest

import accordkit as ak
from accordkit.metrics.tue import TUE_WEIGHTS
from accordkit.schema import DYNAMICS
from accordkit.stats import summarize
from accordkit.stats._point import point_estimates
from accordkit.tables import (
    ACCORD_DYNAMICS,
    ACCORD_TABLE_METRICS,
    CATALOGUE,
    accord_cost,
    accord_dynamics,
    accord_main,
    accord_main_and_cost,
    failure_flags,
    goalshift_gsrt,
    goalshift_main,
    paper_id,
    preference_scores,
)

FAST = {"n_resamples": 300, "seed": 1}
# hand-sized frames: few clusters, so interval warnings are expected and not the point here
pytestmark = pytest.mark.filterwarnings("ignore::accordkit.stats.BCaFallbackWarning",
                                        "ignore::accordkit.stats.DegenerateIntervalWarning")


def est(table: pd.DataFrame, **where) -> float:
    sel = np.ones(len(table), dtype=bool)
    for k, v in where.items():
        sel &= (table[k] == v).to_numpy()
    (value,) = table.loc[sel, "estimate"]
    return float(value)


@pytest.fixture
def episodes() -> pd.DataFrame:
    # model a: 4 scenarios, 3 completed; model b: 4 scenarios, all completed.
    return pd.DataFrame({
        "agent_model": ["a"] * 4 + ["b"] * 4, "method": "react",
        "scenario_id": ["s1", "s2", "s3", "s4"] * 2,
        "completed": [True, True, True, False, True, True, True, True],
        "outcome_score": [1.0, 0.5, 0.0, np.nan, 1.0, 1.0, 0.5, 0.5],
        "perfect_outcome": [True, False, False, False, True, True, False, False],
        "task_score": [1.0, 0.5, 0.0, 0.0, 1.0, 1.0, 0.5, 0.5],
        "n_env_actions": [2, 4, 6, 20, 1, 1, 3, 3],
        "n_utterances": [1, 1, 2, 3, 0, 0, 0, 4],
        "episode_id": [f"e{i}" for i in range(8)],
        "n_redundant_calls": [0, 1, 0, 0, 0, 0, 0, 2],
    })


def test_accord_main_by_hand(episodes):
    t = accord_main(episodes, **FAST)
    assert list(t["metric"].unique()) == ["task completion rate", "outcome score",
                                          "perfect outcome rate", "task score"]
    assert est(t, agent_model="a", metric="task completion rate") == 0.75
    assert est(t, agent_model="a", metric="outcome score") == 0.5     # over completed only
    assert est(t, agent_model="a", metric="perfect outcome rate") == 0.25
    assert est(t, agent_model="a", metric="task score") == 0.375
    assert est(t, agent_model="b", metric="outcome score") == 0.75
    a = t[(t.agent_model == "a") & (t.metric == "outcome score")].iloc[0]
    assert (a.n_clusters, a.n_events) == (3, 3.0) and a.ci_low <= 0.5 <= a.ci_high


def test_accord_main_and_cost_draw_once_and_equal_the_separate_tables(episodes):
    options = {**FAST, "method": "bca"}
    main, cost = accord_main_and_cost(episodes, by=["agent_model"], **options)
    pd.testing.assert_frame_equal(main, accord_main(episodes, by=["agent_model"], **options))
    pd.testing.assert_frame_equal(cost, accord_cost(episodes, by=["agent_model"], **options))


def test_accord_cost_by_hand(episodes):
    t = accord_cost(episodes, by=["agent_model"], **FAST)
    assert est(t, agent_model="a", metric="# env actions (mean)") == 8.0
    assert est(t, agent_model="a", metric="# env actions (median)") == 5.0
    assert est(t, agent_model="b", metric="# utterances (mean)") == 1.0
    assert est(t, agent_model="b", metric="# utterances (median)") == 0.0


def test_accord_dynamics_rule_and_order():
    prefs = pd.DataFrame({
        "agent_model": "a", "method": "react", "scenario_id": ["s1", "s1", "s2", "s2", "s3"],
        "dynamic": ["stated", "triggered", "triggered", "hard_underspec", "triggered"],
        "satisfied": [True, True, False, None, True],
        "completed": [True, True, True, True, False],
    })
    t = accord_dynamics(prefs, **FAST)
    assert t["dynamic"].tolist() == ["hard_underspec", "triggered", "stated"]  # catalogue order
    assert math.isnan(est(t, dynamic="hard_underspec"))                  # nothing judged
    assert est(t, dynamic="triggered") == 0.5                            # s3 incomplete: out
    assert est(t, dynamic="stated") == 1.0
    t0 = accord_dynamics(prefs, include_incomplete=True, **FAST)
    assert est(t0, dynamic="triggered") == pytest.approx(1 / 3)          # s3 counts as 0
    with pytest.raises(TypeError, match="include_incomplete"):
        preference_scores(prefs, include_incomplete="yes")


def test_goalshift_main_ratios_of_sums():
    ep = pd.DataFrame({
        "domain": "banking", "agent_model": "m", "scenario_id": ["t1", "t2", "t3"],
        "tsr": [1.0, 0.5, np.nan], "tsr_action": [1.0, 0.0, 0.5], "tsr_nl": np.nan,
        "tsr_communicate": [1.0, 1.0, 0.0],
        "n_tool_calls": [4, 0, 6], "n_correct_calls": [4, 0, 3],
        "n_valid_param_calls": [3, 0, 6], "n_redundant_calls": [1, 0, 2],
        "n_tcrr_calls": [4, 0, 6], "n_recovered": [1, 0, 1], "n_shifts": [1, 1, 2],
    })
    t = goalshift_main(ep, **FAST)
    w_t, w_p = TUE_WEIGHTS
    assert est(t, metric="TSR") == 0.75
    assert est(t, metric="tool correctness T") == 7 / 10
    assert est(t, metric="parameter validity P") == 9 / 10
    assert est(t, metric="TUE") == pytest.approx((w_t * 7 + w_p * 9) / 10)
    assert est(t, metric="TCRR") == 3 / 10
    assert est(t, metric="recovery rate") == 2 / 4
    assert math.isnan(est(t, metric="TSR NL"))


def test_goalshift_gsrt_medians_count_censored():
    shifts = pd.DataFrame({"domain": "d", "agent_model": "m",
                           "scenario_id": ["t1", "t1", "t2", "t3"],
                           "gsrt_ack": [1.0, 3.0, np.nan, 2.0],
                           "gsrt_tool": [np.nan, np.nan, np.nan, 4.0],
                           "gsrt_outcome": [5.0, 1.0, 2.0, 7.0]})
    t = goalshift_gsrt(shifts, median="observed", **FAST)
    row = t.set_index("metric").loc["GSRT ack (median)"]
    assert row.estimate == 2.0 and row.n_censored == 1
    assert est(t, metric="GSRT outcome (median)") == 3.5
    assert est(t, metric="GSRT tool (median)") == 4.0


def test_failure_flags(episodes):
    prefs = pd.DataFrame({"episode_id": ["e0", "e1"], "dynamic": ["triggered", "stated"],
                          "satisfied": [False, False]})
    shifts = pd.DataFrame({"episode_id": ["e5", "e6"], "recovered": [False, True],
                           "transferred": [True, None]})
    f = failure_flags(episodes, preferences=prefs, shifts=shifts).set_index("episode_id")
    assert f.index[f["not_completed"]].tolist() == ["e3"]
    assert f.index[f["unsatisfied_triggered"]].tolist() == ["e0"]
    assert f.index[f["unrecovered_shift"]].tolist() == ["e5"]
    assert f.index[f["transfer"]].tolist() == ["e5"]
    assert f.index[f["redundant_calls"]].tolist() == ["e1", "e7"]


def test_not_completed_is_an_accord_failure_only(episodes):
    # tau2 rows carry `completed` (a user/agent stop) too; only AcCoRD's is "no purchase"
    mixed = episodes.assign(benchmark=["accord"] * 4 + ["tau2"] * 4,
                            completed=[True, True, True, False] + [False] * 4)
    f = failure_flags(mixed).set_index("episode_id")
    assert f.index[f["not_completed"]].tolist() == ["e3"]


def test_catalogue_is_built_from_the_single_constants():
    assert sorted(ACCORD_DYNAMICS) == sorted(DYNAMICS) and ACCORD_DYNAMICS[-1] == "stated"
    assert ACCORD_TABLE_METRICS == (
        "task_completion_rate", "outcome_score", "perfect_outcome_rate", "task_score",
        "score_hard_underspec", "score_soft_underspec", "score_unachievable",
        "score_triggered", "score_stated", "env_actions_mean", "env_actions_median",
        "utterances_mean", "utterances_median", "user_utterances_mean",
        "user_utterances_median")
    names = [m.name for table in CATALOGUE.values() for m in table]
    assert len(set(map(paper_id, names))) == len(names)


def test_point_estimates_are_summarize_estimates(episodes):
    metrics = [m for m in CATALOGUE["accord_main"]]
    point = point_estimates(episodes, metrics, "agent_model")
    boot = summarize(episodes, metrics, "agent_model", **FAST)
    pd.testing.assert_series_equal(point["estimate"], boot["estimate"])
    assert (point["n_clusters"] == boot["n_clusters"]).all()


def test_public_api_exports_the_builders():
    for name in ("accord_main", "accord_dynamics", "accord_cost", "goalshift_main",
                 "goalshift_gsrt", "failure_flags", "plot_intervals", "plot_forest",
                 "accord_table", "format_table"):
        assert callable(getattr(ak, name)), name
    from accordkit import plots, tables

    assert tables.accord_main is accord_main and plots.plot_intervals is ak.plot_intervals


@pytest.mark.parametrize("path", ["accordkit.report.views", "accordkit.plots_survival",
                                  "accordkit.tables.plots", "accordkit.report.tau2_views",
                                  "accordkit.report.tau2_plots"])
def test_the_old_homes_of_tables_and_figures_are_gone(path):
    import importlib

    with pytest.raises(ModuleNotFoundError):
        importlib.import_module(path)


@pytest.fixture(scope="module")
def sample_scores(sample_dir):
    """The embedded AcCoRD sample's episode and preference scores."""
    ds = ak.load(str(sample_dir / "accord"), cache=False)
    return ak.score(ds), ak.score(ds, level="preference")


def test_accord_tables_pooled_equal_the_shared_draw_builders_to_the_bit(sample_scores):
    """One resampling for the report's five AcCoRD tables: the pooled ones are the bits of
    their own builders with share_draws=True (their cells cover every scenario); with
    share_draws=False every table is its builder's."""
    from accordkit.tables import accord_tables

    episodes, prefs = sample_scores
    options = {"n_resamples": 400, "seed": 4, "method": "bca"}
    tables = accord_tables(episodes, preferences=prefs, by=["agent_model", "method"], **options)
    main, cost = accord_main_and_cost(episodes, by=["agent_model", "method"],
                                      share_draws=True, **options)
    pd.testing.assert_frame_equal(tables["main"], main, check_exact=True)
    pd.testing.assert_frame_equal(tables["cost"], cost, check_exact=True)
    dyn = accord_dynamics(prefs, by=["agent_model", "method"], share_draws=True, **options)
    pd.testing.assert_frame_equal(tables["dynamics"], dyn, check_exact=True)
    # per domain: the same estimates; intervals from the larger resampling
    by_domain = accord_main(episodes, by=["domain", "agent_model", "method"], **options)
    np.testing.assert_array_equal(tables["main_by_domain"]["estimate"], by_domain["estimate"])
    dyn_domain = accord_dynamics(prefs, by=["domain", "agent_model", "method"], **options)
    np.testing.assert_array_equal(tables["dynamics_by_domain"]["estimate"],
                                  dyn_domain["estimate"])
    # drawn per cell, every table is its own builder's
    apart = accord_tables(episodes, preferences=prefs, by=["agent_model", "method"],
                          share_draws=False,
                          **options)
    main, cost = accord_main_and_cost(episodes, by=["agent_model", "method"], **options)
    builders = {"main": main, "cost": cost, "main_by_domain": by_domain,
                "dynamics": accord_dynamics(prefs, by=["agent_model", "method"], **options),
                "dynamics_by_domain": dyn_domain}
    assert list(apart) == list(tables)
    for name, table in builders.items():
        pd.testing.assert_frame_equal(apart[name], table, check_exact=True)
        assert apart[name].attrs["provenance"]["draws"] == "per cell"
