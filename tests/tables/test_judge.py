"""The reliability page's judge section (issue 44): verdicts joined to a labels CSV."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from accordkit.report.parameters import check_parameters
from accordkit.tables.judge import judge_tables, judged_items


def _verdicts() -> pd.DataFrame:
    # two judge models on the same 40 unit-test items of 20 episodes (2 scenarios each)
    rows = []
    for model, flip in (("judge-a", 0), ("judge-b", 3)):
        for e in range(20):
            for item in ("t0", "t1"):
                truth = (e + (item == "t1")) % 4 != 0
                said = truth if (e + flip) % 7 else not truth
                rows.append({"episode_id": f"ep{e}", "judge": "usersim_tests",
                             "judge_model": model, "item": item, "turn_idx": 1,
                             "verdict": "yes" if said else "no"})
        rows.append({"episode_id": "ep0", "judge": "usersim_tests", "judge_model": model,
                     "item": "t9", "turn_idx": 1, "verdict": "n/a"})
    return pd.DataFrame(rows)


def _episodes() -> pd.DataFrame:
    return pd.DataFrame({"episode_id": [f"ep{e}" for e in range(20)],
                         "scenario_id": [f"s{e // 2}" for e in range(20)]})


def test_judged_items_keep_pass_and_fail_only():
    items = judged_items(_verdicts())
    assert len(items) == 80 and items.verdict.dtype == bool
    assert items.verdict.sum() == (_verdicts().verdict == "yes").sum()


def test_tables_per_judge_model(tmp_path):
    labels = pd.DataFrame({"episode_id": [f"ep{e}" for e in range(10)], "judge": "usersim_tests",
                           "item": "t0", "label": [(e % 4) != 0 for e in range(10)]})
    labels.loc[len(labels)] = ["ep99", "usersim_tests", "t0", True]   # no such verdict
    path = tmp_path / "labels.csv"
    labels.to_csv(path, index=False)
    tables = judge_tables(_verdicts(), labels=path, episodes=_episodes(), n_resamples=200)
    assert tables.notes == ("1 of 11 labels name no judged pass or fail of the verdict files "
                            "and were left out",)
    cal = tables.calibration.set_index(["judge_model", "measure"])
    # each label applies to both judge models' verdict of the item
    assert cal.loc[("judge-a", "accuracy"), "n"] == cal.loc[("judge-b", "accuracy"), "n"] == 10
    # judge-a errs where e % 7 == 0 (episodes 0 and 7 among the labelled t0 items)
    assert cal.loc[("judge-a", "accuracy"), "successes"] == 8
    assert set(tables.calibration.ci_method) == {"cluster bootstrap percentile"}
    rates = tables.rates.set_index("judge_model")
    assert rates.loc["judge-a", "n_test"] == 30 and rates.loc["judge-a", "n_labelled"] == 10
    items = judged_items(_verdicts())
    rest = items[(items.judge_model == "judge-a")
                 & ~((items.item == "t0") & items.episode_id.isin([f"ep{e}" for e in range(10)]))]
    assert rates.loc["judge-a", "judged_rate"] == pytest.approx(rest.verdict.mean())
    assert {"corrected", "corrected_low", "corrected_high", "ppi", "ppi_low",
            "ppi_high"} <= set(rates.columns)


def test_bad_labels_file_is_named(tmp_path):
    path = tmp_path / "labels.csv"
    path.write_text("episode_id,item,label\nep0,t0,true\n")
    with pytest.raises(ValueError, match=r"labels\.csv.*lacks the columns \['judge'\]"):
        judge_tables(_verdicts(), labels=path, episodes=_episodes())
    path.write_text("episode_id,judge,item,label\nep0,usersim_tests,t0,perhaps\n")
    with pytest.raises(ValueError, match=r"'perhaps'"):
        judge_tables(_verdicts(), labels=path, episodes=_episodes())
    with pytest.raises(FileNotFoundError):
        judge_tables(_verdicts(), labels=tmp_path / "none.csv", episodes=_episodes())
    tables = judge_tables(None, labels=tmp_path / "labels.csv", episodes=_episodes())
    assert tables.notes == ("no verdict files: nothing to calibrate against the labels",)


def test_labels_is_a_report_parameter():
    check_parameters({"labels": "labels.csv"})
    check_parameters({"labels": None})
    with pytest.raises(ValueError, match="labels"):
        check_parameters({"labels": 3})


def test_same_input_same_tables(tmp_path):
    path = tmp_path / "labels.csv"
    pd.DataFrame({"episode_id": ["ep1", "ep2", "ep4", "ep5", "ep8", "ep9"],
                  "judge": "usersim_tests", "item": "t1", "judge_model": "judge-a",
                  "label": [True, False, True, True, False, True]}).to_csv(path, index=False)
    a = judge_tables(_verdicts(), labels=path, episodes=_episodes(), n_resamples=100, seed=4)
    b = judge_tables(_verdicts(), labels=path, episodes=_episodes(), n_resamples=100, seed=4)
    pd.testing.assert_frame_equal(a.calibration, b.calibration)
    pd.testing.assert_frame_equal(a.rates, b.rates)
    # the file names judge-a: judge-b has no label, and its row says so
    rates = a.rates.set_index("judge_model")
    assert rates.loc["judge-a", "n_labelled"] == 6
    assert np.isnan(rates.loc["judge-b", "corrected"])
    assert rates.loc["judge-b", "note"] == "no labelled item to calibrate on"


def test_tables_per_configuration_calibrate_each_on_its_own_labels(tmp_path):
    # the result pages: by= a column of the episodes splits labels and verdicts alike
    episodes = _episodes().assign(configuration=[("A" if e < 10 else "B") for e in range(20)])
    path = tmp_path / "labels.csv"
    pd.DataFrame({"episode_id": [f"ep{e}" for e in (0, 1, 2, 3, 4, 5)], "judge": "usersim_tests",
                  "item": "t0", "judge_model": "judge-a",
                  "label": [False, True, True, True, False, True]}).to_csv(path, index=False)
    tables = judge_tables(_verdicts(), labels=path, episodes=episodes, by="configuration",
                          n_resamples=100)
    rates = tables.rates.set_index(["configuration", "judge_model"])
    assert list(tables.rates.columns[:4]) == ["configuration", "judge", "judge_model",
                                              "judged_rate"]
    # A holds the six labels; B has none, and says so rather than borrowing A's
    assert rates.loc[("A", "judge-a"), "n_labelled"] == 6
    assert rates.loc[("A", "judge-a"), "n_test"] == 20 - 6
    assert rates.loc[("B", "judge-a"), "note"] == "no labelled item to calibrate on"
    items = judged_items(_verdicts()).merge(episodes, on="episode_id")
    b = items[(items.configuration == "B") & (items.judge_model == "judge-a")]
    assert rates.loc[("B", "judge-a"), "judged_rate"] == pytest.approx(b.verdict.mean())
    # a page's judge absent from the verdict files (e.g. no outcome verdicts): said, no rows
    none = judge_tables(_verdicts().iloc[:0], labels=path, episodes=episodes, by="configuration")
    assert none.notes == ("the verdict files hold no verdict of this judge: nothing to "
                          "calibrate against the labels",) and none.rates.empty
    with pytest.raises(ValueError, match=r"by \['persona'\]"):
        judge_tables(_verdicts(), labels=path, episodes=episodes, by="persona")


def test_items_of_one_episode_resampled_together_without_episodes(tmp_path):
    # the unit-test page has verdicts only: cluster="episode_id" needs no episode frame
    path = tmp_path / "labels.csv"
    pd.DataFrame({"episode_id": [f"ep{e}" for e in range(12)], "judge": "usersim_tests",
                  "item": "t0", "label": [(e % 4) != 0 for e in range(12)]}).to_csv(
        path, index=False)
    tables = judge_tables(_verdicts(), labels=path, episodes=pd.DataFrame(), cluster="episode_id",
                          n_resamples=100)
    assert tables.notes == ()
    assert set(tables.calibration.ci_method) == {"cluster bootstrap percentile"}
    iid = judge_tables(_verdicts(), labels=path, episodes=pd.DataFrame(), cluster=None,
                       n_resamples=100)
    assert set(iid.calibration.ci_method) != {"cluster bootstrap percentile"}
    assert tables.rates.n_test.tolist() == iid.rates.n_test.tolist()
    # the raw rate's own interval: Agresti–Coull on n_test (design effect 1 without clusters)
    row = iid.rates.iloc[0]
    assert row.design_effect == 1.0
    z2 = 1.959963984540054 ** 2
    size = row.n_test + z2
    centre = (row.n_test * row.judged_rate + z2 / 2) / size
    half = 1.959963984540054 * (centre * (1 - centre) / size) ** 0.5
    assert (row.judged_low, row.judged_high) == pytest.approx((centre - half, centre + half))
    assert row.judged_low < row.judged_rate < row.judged_high
