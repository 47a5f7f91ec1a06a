"""ak.judge_calibration and ak.corrected_rate (issue 44): hand-computed values, the interval
of Lee et al. (arXiv 2511.21140) to 1e-9, clusters, and clear errors on bad input."""

from __future__ import annotations

import math

import numpy as np
import pandas as pd
import pytest
from scipy import stats as sps

import accordkit as ak
from accordkit.stats.judge_correction import (
    WEAK_JUDGE_NOTE,
    rogan_gladen,
    rogan_gladen_interval,
)


def lee_reference(p, q0, q1, n, m0, m1, alpha=0.05):
    """What the reference's ``confidence_interval`` computes, written out again here: add
    z²/2 passes and z²/2 failures to the test set and one of each to both calibration
    halves, take the delta-method standard error of the three independent proportions,
    move the centre by the second-order term, clip to [0, 1]."""
    z = sps.norm.isf(alpha / 2)
    k = z ** 2
    shrunk = np.array([(p * n + k / 2) / (n + k), (q0 * m0 + 1) / (m0 + 2),
                       (q1 * m1 + 1) / (m1 + 2)])
    sizes = np.array([n + k, m0 + 2.0, m1 + 2.0])
    var = shrunk * (1 - shrunk) / sizes
    j = shrunk[1] + shrunk[2] - 1
    th = (shrunk[0] + shrunk[1] - 1) / j
    grad = np.array([1.0, th - 1.0, -th]) / j  # dθ/dp, dθ/dq0, dθ/dq1
    se = math.sqrt(float(np.sum(grad ** 2 * var)))
    centre = th + 2 * k * (th * var[2] - (1 - th) * var[1])
    return tuple(float(np.clip(c, 0, 1)) for c in (centre - z * se, centre + z * se))


def _simulated(rng, *, n, m, sens, spec, rate, scenarios=None):
    """n + m judged items; the first m labelled; iid unless ``scenarios`` is given."""
    total = n + m
    if scenarios is None:
        truth = rng.random(total) < rate
        scen = np.arange(total)
    else:
        scen = rng.integers(0, scenarios, total)
        pi = rng.beta(2 * rate, 2 * (1 - rate), scenarios)
        truth = rng.random(total) < pi[scen]
    right = np.where(truth, rng.random(total) < sens, rng.random(total) < spec)
    verdict = np.where(right, truth, ~truth)
    verdicts = pd.DataFrame({"episode_id": [f"e{i}" for i in range(total)],
                             "scenario_id": scen, "verdict": verdict})
    labels = pd.DataFrame({"episode_id": verdicts.episode_id[:m], "label": truth[:m]})
    return verdicts, labels


# --------------------------------------------------------------------------- calibration


def test_calibration_by_hand():
    # truth:   P P P P N N N N N N ; judge: P P P N P N N N N P  -> tp 3, fn 1, fp 2, tn 4
    verdicts = pd.DataFrame({"episode_id": range(12),
                             "verdict": [1, 1, 1, 0, 1, 0, 0, 0, 0, 1, 1, 0]})
    labels = pd.DataFrame({"episode_id": range(10),
                           "label": ["true"] * 4 + ["false"] * 6})
    table = ak.judge_calibration(verdicts, labels).set_index("measure")
    assert table.loc["sensitivity", ["successes", "n"]].tolist() == [3, 4]
    assert table.loc["specificity", ["successes", "n"]].tolist() == [4, 6]
    assert table.loc["sensitivity", "estimate"] == 0.75
    assert table.loc["specificity", "estimate"] == pytest.approx(4 / 6)
    assert table.loc["accuracy", "estimate"] == 0.7
    chance = (5 / 10) * (4 / 10) + (5 / 10) * (6 / 10)  # judge P 5, truth P 4
    assert table.loc["kappa", "estimate"] == pytest.approx((0.7 - chance) / (1 - chance))
    for measure, (x, n) in {"sensitivity": (3, 4), "specificity": (4, 6),
                            "accuracy": (7, 10)}.items():
        ci = sps.binomtest(x, n).proportion_ci(0.95, method="exact")
        assert table.loc[measure, "ci_low"] == pytest.approx(ci.low, abs=1e-12)
        assert table.loc[measure, "ci_high"] == pytest.approx(ci.high, abs=1e-12)
        assert table.loc[measure, "ci_method"] == "Clopper-Pearson"
    assert table.loc["kappa", "ci_method"] == "bootstrap percentile"
    assert table.loc["kappa", "ci_low"] <= table.loc["kappa", "estimate"]


def test_calibration_by_group_and_csv(tmp_path):
    rng = np.random.default_rng(3)
    verdicts, labels = _simulated(rng, n=100, m=200, sens=0.9, spec=0.8, rate=0.5)
    verdicts["judge"] = np.where(np.arange(len(verdicts)) % 2, "a", "b")
    path = tmp_path / "labels.csv"
    labels.to_csv(path, index=False)
    from_csv = ak.judge_calibration(verdicts, path, by="judge")
    from_frame = ak.judge_calibration(verdicts, labels, by="judge")
    pd.testing.assert_frame_equal(from_csv, from_frame)
    assert from_frame.judge.tolist() == ["a"] * 4 + ["b"] * 4
    accuracy = from_frame[from_frame.measure == "accuracy"]
    assert accuracy.n.sum() == 200  # every labelled item in one judge's group
    sens = from_frame[from_frame.measure == "sensitivity"].set_index("judge").estimate
    assert sens.between(0.8, 0.98).all()


def test_calibration_cluster_bootstrap_is_reproducible_and_wider():
    rng = np.random.default_rng(5)
    verdicts, labels = _simulated(rng, n=10, m=400, sens=0.85, spec=0.8, rate=0.6,
                                  scenarios=40)
    # a judge whose errors come in whole scenarios: clusters matter
    bad = verdicts.scenario_id.isin(range(8))
    verdicts.loc[bad, "verdict"] = ~verdicts.loc[bad, "verdict"]
    a = ak.judge_calibration(verdicts, labels, cluster="scenario_id", seed=1)
    b = ak.judge_calibration(verdicts, labels, cluster="scenario_id", seed=1)
    pd.testing.assert_frame_equal(a, b)
    iid = ak.judge_calibration(verdicts, labels, method="bootstrap", seed=1)
    width = lambda t: (t.ci_high - t.ci_low).to_numpy()  # noqa: E731
    assert (width(a) > width(iid)).all()
    assert set(a.ci_method) == {"cluster bootstrap percentile"}
    assert (a.n_clusters <= 40).all()
    with pytest.raises(ValueError, match="independent items"):
        ak.judge_calibration(verdicts, labels, cluster="scenario_id", method="exact")


def test_calibration_without_labelled_failures_is_nan():
    verdicts = pd.DataFrame({"episode_id": range(4), "verdict": [1, 0, 1, 1]})
    labels = pd.DataFrame({"episode_id": range(3), "label": [True, True, True]})
    table = ak.judge_calibration(verdicts, labels).set_index("measure")
    assert math.isnan(table.loc["specificity", "estimate"])
    assert table.loc["specificity", "n"] == 0
    assert table.loc["sensitivity", "estimate"] == pytest.approx(2 / 3)


# --------------------------------------------------------------------------- corrected rate


@pytest.mark.parametrize("seed", range(40))
def test_interval_equals_reference_formula(seed):
    rng = np.random.default_rng(seed)
    p, q0, q1 = rng.uniform(0.05, 0.95), rng.uniform(0.6, 0.99), rng.uniform(0.6, 0.99)
    n, m0, m1 = (int(x) for x in rng.integers([50, 10, 10], [5000, 500, 500]))
    alpha = float(rng.choice([0.05, 0.1, 0.2]))
    got = rogan_gladen_interval(p, q0, q1, n, m0, m1, confidence=1 - alpha)
    assert got == pytest.approx(lee_reference(p, q0, q1, n, m0, m1, alpha), abs=1e-9)


def test_readme_example_of_the_reference():
    # the reference's README example: p 0.4, n 1000, q0 0.7, q1 0.9, m0 = m1 = 200
    assert rogan_gladen(0.4, 0.7, 0.9) == pytest.approx(0.1 / 0.6)
    low, high = rogan_gladen_interval(0.4, 0.7, 0.9, 1000, 200, 200)
    assert (low, high) == pytest.approx(lee_reference(0.4, 0.7, 0.9, 1000, 200, 200),
                                        abs=1e-12)
    assert 0.05 < low < 0.1 / 0.6 < high < 0.3


def test_corrected_rate_from_frames_equals_reference():
    rng = np.random.default_rng(11)
    verdicts, labels = _simulated(rng, n=3000, m=300, sens=0.95, spec=0.7, rate=0.3)
    row = ak.corrected_rate(verdicts, labels).iloc[0]
    test = verdicts.verdict.to_numpy()[300:]
    truth, judged = labels.label.to_numpy(), verdicts.verdict.to_numpy()[:300]
    p, q1, q0 = test.mean(), judged[truth].mean(), 1 - judged[~truth].mean()
    assert (row.raw, row.sensitivity, row.specificity) == pytest.approx((p, q1, q0))
    assert (row.n_test, row.n_labelled_pass, row.n_labelled_fail) == (
        3000, truth.sum(), (~truth).sum())
    assert row.estimate == pytest.approx((p + q0 - 1) / (q0 + q1 - 1), abs=1e-12)
    ref = lee_reference(p, q0, q1, 3000, int((~truth).sum()), int(truth.sum()))
    assert (row.ci_low, row.ci_high) == pytest.approx(ref, abs=1e-9)
    assert row.design_effect == 1.0 and row.note == ""
    # the judge is lenient (specificity 0.7): the raw rate (about 0.3 * 0.95 + 0.7 * 0.3)
    # overstates the true 0.3, which the corrected interval holds
    assert row.raw > row.ci_high and row.ci_low < 0.3 < row.ci_high


def test_weak_judge_gets_nan_and_a_note():
    verdicts = pd.DataFrame({"episode_id": range(8), "verdict": [1, 0, 1, 0, 1, 1, 0, 1]})
    labels = pd.DataFrame({"episode_id": range(4), "label": [1, 1, 0, 0]})
    row = ak.corrected_rate(verdicts, labels).iloc[0]  # q1 = 0.5, q0 = 0.5
    assert math.isnan(row.estimate) and (row.ci_low, row.ci_high) == (0.0, 1.0)
    assert row.note == WEAK_JUDGE_NOTE
    assert row.raw == 0.75


def test_clipped_estimate_has_a_note():
    # judged rate 0.1 below the judge's false-pass rate 0.2: the correction goes below 0
    verdicts = pd.DataFrame({"episode_id": range(30),
                             "verdict": [1] * 9 + [0] + [1] * 2 + [0] * 8 + [1] + [0] * 9})
    labels = pd.DataFrame({"episode_id": range(20), "label": [1] * 10 + [0] * 10})
    row = ak.corrected_rate(verdicts, labels).iloc[0]
    assert row.raw == pytest.approx(0.1) and row.specificity == pytest.approx(0.8)
    assert row.estimate == 0.0 and "clipped" in row.note


def test_clusters_widen_the_interval_by_the_design_effect():
    verdicts = pd.DataFrame({"episode_id": range(16),
                             "scenario_id": np.repeat(range(8), 2),
                             "verdict": [1, 1, 0, 0, 1, 1, 0, 0, 1, 1, 1, 1, 0, 0, 1, 1]})
    labels = pd.DataFrame({"episode_id": range(8), "label": [1, 1, 0, 0, 1, 1, 0, 0]})
    iid = ak.corrected_rate(verdicts, labels).iloc[0]
    clustered = ak.corrected_rate(verdicts, labels, cluster="scenario_id").iloc[0]
    # test set: scenarios 4..7 with verdict pairs (1,1) (1,1) (0,0) (1,1): p = 0.75,
    # CR1 variance 4/3 * sum_c (s_c - 2p)^2 / n^2 = 4/3 * (3 * 0.25 + 2.25) / 64
    robust = 4 / 3 * (3 * 0.5 ** 2 + 1.5 ** 2) / 64
    deff = robust / (0.75 * 0.25 / 8)
    assert clustered.design_effect == pytest.approx(deff)
    ref = rogan_gladen_interval(0.75, 1.0, 1.0, 8 / deff, 4, 4)
    assert (clustered.ci_low, clustered.ci_high) == pytest.approx(ref, abs=1e-12)
    assert clustered.ci_high - clustered.ci_low > iid.ci_high - iid.ci_low
    assert clustered.estimate == iid.estimate


def test_missing_calibration_half_is_named():
    verdicts = pd.DataFrame({"episode_id": range(5), "verdict": [1, 0, 1, 1, 0]})
    labels = pd.DataFrame({"episode_id": [0, 1], "label": [True, True]})
    row = ak.corrected_rate(verdicts, labels).iloc[0]
    assert math.isnan(row.estimate) and row.note == "no labelled failure to calibrate on"


# --------------------------------------------------------------------------- bad input


def test_bad_labels_are_named(tmp_path):
    verdicts = pd.DataFrame({"episode_id": ["a", "b", "c"], "verdict": [True, False, True]})
    path = tmp_path / "labels.csv"
    path.write_text("episode_id,label\na,true\nb,maybe\n")
    with pytest.raises(ValueError, match=r"labels file .*labels\.csv.*'b'.*'maybe'"):
        ak.corrected_rate(verdicts, path)
    path.write_text("episode_id,label\na,true\nzz,false\n")
    with pytest.raises(ValueError, match=r"have no verdict, e\.g\. \['zz'\]"):
        ak.judge_calibration(verdicts, path)
    path.write_text("episode_id,label\na,true\na,false\n")
    with pytest.raises(ValueError, match=r"labels the item\(s\) \['a'\] more than once"):
        ak.judge_calibration(verdicts, path)
    path.write_text("episode_id,truth\na,true\n")
    with pytest.raises(ValueError, match="no label column 'label'"):
        ak.judge_calibration(verdicts, path)
    with pytest.raises(FileNotFoundError, match="does not exist"):
        ak.judge_calibration(verdicts, tmp_path / "none.csv")
    with pytest.raises(ValueError, match="share none of the id columns"):
        ak.judge_calibration(verdicts.rename(columns={"episode_id": "id"}),
                             pd.DataFrame({"id": ["a"], "label": [True]}))
    with pytest.raises(ValueError, match=r"`verdicts`: the verdict 'verdict' of 'b' is 0\.5"):
        ak.corrected_rate(verdicts.assign(verdict=[1, 0.5, 0]),
                          pd.DataFrame({"episode_id": ["a"], "label": [True]}))


def test_on_accepts_several_columns():
    verdicts = pd.DataFrame({"run": ["x", "x", "y", "y"], "item_id": [1, 2, 1, 2],
                             "verdict": [1, 0, 1, 1]})
    labels = pd.DataFrame({"run": ["x", "y"], "item_id": [1, 1], "label": [1, 0]})
    table = ak.judge_calibration(verdicts, labels, on=["run", "item_id"]).set_index("measure")
    assert table.loc["sensitivity", "estimate"] == 1.0
    assert table.loc["specificity", "estimate"] == 0.0
