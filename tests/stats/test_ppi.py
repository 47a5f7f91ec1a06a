"""ak.ppi_mean (issue 44): equal to ppi_py's PPI++ mean and interval for independent items
(ppi-python is a test dependency only), and a cluster bootstrap when rollouts share a
scenario."""

from __future__ import annotations

import math

import numpy as np
import pandas as pd
import pytest
from scipy import stats as sps

import accordkit as ak
from accordkit.stats.ppi import ppi_mean_estimate

ppi_py = pytest.importorskip("ppi_py")


def _frames(y, yhat, u):
    n = len(y)
    verdicts = pd.DataFrame({"episode_id": range(n + len(u)),
                             "verdict": np.concatenate([yhat, u])})
    labels = pd.DataFrame({"episode_id": range(n), "label": y})
    return verdicts, labels


@pytest.mark.parametrize("seed", range(30))
def test_equal_to_ppi_py(seed):
    rng = np.random.default_rng(seed)
    n, big_n = int(rng.integers(20, 500)), int(rng.integers(100, 5000))
    binary = seed % 3 != 0
    if binary:
        sens, spec = rng.uniform(0.6, 0.98, 2)
        y = rng.random(n + big_n) < rng.uniform(0.1, 0.9)
        judged = np.where(y, rng.random(n + big_n) < sens, rng.random(n + big_n) > spec)
        y, judged = y.astype(float), judged.astype(float)
    else:  # a judge's score against a graded human label
        y = rng.normal(3, 1, n + big_n)
        judged = 0.7 * y + rng.normal(0.5, 0.8, n + big_n)
    y, yhat, u = y[:n], judged[:n], judged[n:]
    alpha = float(rng.choice([0.05, 0.1]))
    verdicts, labels = _frames(y, yhat, u)
    row = ak.ppi_mean(verdicts, labels, confidence=1 - alpha).iloc[0]
    point = float(np.squeeze(ppi_py.ppi_mean_pointestimate(y, yhat, u)))
    low, high = (float(np.squeeze(x)) for x in ppi_py.ppi_mean_ci(y, yhat, u, alpha=alpha))
    assert row.estimate == pytest.approx(point, abs=1e-9)
    assert (row.ci_low, row.ci_high) == pytest.approx((low, high), abs=1e-9)
    assert 0 <= row.lam <= 1
    assert (row.n_labelled, row.n_unlabelled) == (n, big_n)
    assert row.raw == pytest.approx(judged.mean())


def test_lambda_by_hand():
    # Y = 1 0 0 1, Ŷ = 1 1 0 1, Ŷu = 1 0 1 0: cov0(Y, Ŷ) = 0.5 - 0.5 * 0.75 = 0.125;
    # all eight Ŷ: five ones, sample variance (5 - 25/8) / 7 = 15/56; λ = 0.125 / (2 * 15/56)
    y, yhat, u = np.array([1, 0, 0, 1.]), np.array([1, 1, 0, 1.]), np.array([1, 0, 1, 0.])
    theta, low, high, lam = ppi_mean_estimate(y, yhat, u)
    assert lam == pytest.approx(0.125 / (2 * 15 / 56))
    assert theta == pytest.approx(lam * 0.5 + 0.5 - lam * 0.75)
    se = math.sqrt(np.var(lam * u) / 4 + np.var(y - lam * yhat) / 4)
    assert (low, high) == pytest.approx((theta - 1.959963984540054 * se,
                                         theta + 1.959963984540054 * se))


def test_constant_judge_falls_back_to_the_labels():
    y, yhat, u = np.array([1, 0, 1, 1.]), np.ones(4), np.ones(10)
    theta, low, high, lam = ppi_mean_estimate(y, yhat, u)
    assert lam == 0.0 and theta == 0.75


def test_cluster_bootstrap():
    rng = np.random.default_rng(7)
    scenarios, per = 60, 5
    scen = np.repeat(np.arange(scenarios), per)
    pi = rng.beta(1.2, 0.8, scenarios)
    truth = rng.random(len(scen)) < pi[scen]
    judged = np.where(truth, rng.random(len(scen)) < 0.85, rng.random(len(scen)) > 0.8)
    labelled = rng.random(len(scen)) < 0.2
    verdicts = pd.DataFrame({"episode_id": range(len(scen)), "scenario_id": scen,
                             "verdict": judged})
    labels = pd.DataFrame({"episode_id": np.flatnonzero(labelled),
                           "label": truth[labelled]})
    iid = ak.ppi_mean(verdicts, labels).iloc[0]
    a = ak.ppi_mean(verdicts, labels, cluster="scenario_id", n_resamples=1000, seed=3)
    b = ak.ppi_mean(verdicts, labels, cluster="scenario_id", n_resamples=1000, seed=3)
    pd.testing.assert_frame_equal(a, b)
    row = a.iloc[0]
    assert row.estimate == iid.estimate  # the point estimate does not depend on clusters
    assert row.ci_method == "cluster bootstrap SE, t" and row.n_clusters == scenarios
    # scenarios differ a lot (Beta(1.2, 0.8)): the cluster interval is wider
    assert row.ci_high - row.ci_low > iid.ci_high - iid.ci_low
    assert row.ci_low < row.estimate < row.ci_high
    assert row.note == ""


def test_by_groups_and_too_few_labels():
    verdicts = pd.DataFrame({"episode_id": range(8), "agent": ["a"] * 4 + ["b"] * 4,
                             "verdict": [1, 0, 1, 1, 0, 1, 1, 0]})
    labels = pd.DataFrame({"episode_id": [0, 1, 4], "label": [1, 0, 0]})
    table = ak.ppi_mean(verdicts, labels, by="agent").set_index("agent")
    assert table.loc["a", "n_labelled"] == 2 and np.isfinite(table.loc["a", "estimate"])
    assert math.isnan(table.loc["b", "estimate"])
    assert table.loc["b", "note"] == "fewer than 2 labelled items"


def test_numeric_labels_from_csv(tmp_path):
    verdicts = pd.DataFrame({"episode_id": ["a", "b", "c", "d"], "verdict": [0.9, 0.2, 0.4, 0.7]})
    path = tmp_path / "scores.csv"
    path.write_text("episode_id,label\na,1.0\nb,0.0\nc,0.5\n")
    row = ak.ppi_mean(verdicts, path).iloc[0]
    y, yhat, u = np.array([1.0, 0.0, 0.5]), np.array([0.9, 0.2, 0.4]), np.array([0.7])
    assert row.estimate == pytest.approx(ppi_mean_estimate(y, yhat, u)[0])
    path.write_text("episode_id,label\na,1.0\nb,high\n")
    with pytest.raises(ValueError, match=r"labels file .*'b' is 'high'; expected a number"):
        ak.ppi_mean(verdicts, path)



def test_cluster_interval_by_hand():
    # θ ± t(G_L - 1) times the standard deviation of the resampled estimates
    from accordkit.stats._labels import resample_counts
    from accordkit.stats.ppi import _tuned

    rng = np.random.default_rng(4)
    scen = np.repeat(np.arange(30), 3)
    truth = rng.random(90) < 0.6
    judged = np.where(rng.random(90) < 0.8, truth, ~truth)
    labelled = np.arange(90) % 3 == 0   # one label in every scenario
    verdicts = pd.DataFrame({"episode_id": range(90), "verdict": judged,
                             "scenario_id": [f"s{c:02d}" for c in scen]})  # sorted as scen
    labels = pd.DataFrame({"episode_id": np.flatnonzero(labelled), "label": truth[labelled]})
    row = ak.ppi_mean(verdicts, labels, cluster="scenario_id", n_resamples=300, seed=5).iloc[0]
    y, v, lab = truth.astype(float), judged.astype(float), labelled.astype(float)
    y0, yh, u = y * lab, v * lab, v * (1 - lab)
    cols = np.stack([np.bincount(scen, weights=c) for c in
                     (y0, yh, y0 * y0, yh * yh, y0 * yh, lab, u, u * u, 1 - lab)])
    draws = np.random.default_rng([5])
    drawn = resample_counts(draws, 30, 256) @ cols.T
    drawn = np.vstack([drawn, resample_counts(draws, 30, 44) @ cols.T])
    theta_b = _tuned(*drawn.T)[1]
    half = sps.t.ppf(0.975, 29) * np.std(theta_b, ddof=1)
    assert (row.ci_low, row.ci_high) == pytest.approx((row.estimate - half,
                                                       row.estimate + half), abs=1e-12)
