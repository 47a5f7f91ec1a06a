"""Kaplan–Meier recovery times: a textbook example, the resampling estimator, the sample."""

from __future__ import annotations

import re

import numpy as np
import pandas as pd
import pytest

from accordkit.stats import BCaFallbackWarning, DegenerateIntervalWarning, Metric, summarize
from accordkit.stats._km import KMMedianEstimator
from accordkit.stats.survival import (
    kaplan_meier,
    km_median,
    km_medians,
    recovery_curves,
    recovery_times,
)
from accordkit.tables import format_table

# Freireich et al. (1963), 6-MP arm: weeks in remission, "+" = censored
SIX_MP = [6, 6, 6, "6+", 7, "9+", 10, "10+", "11+", 13, 16, "17+", "19+", "20+", 22, 23,
          "25+", "32+", "32+", "34+", "35+"]


def _six_mp():
    time = np.array([float(str(v).rstrip("+")) for v in SIX_MP])
    observed = np.array([not str(v).endswith("+") for v in SIX_MP])
    return time, observed


def test_kaplan_meier_textbook_values():
    curve = kaplan_meier(*_six_mp()).set_index("time")
    # S(t) = prod (1 - d/n): 18/21, x 16/17, x 14/15, x 11/12, x 10/11, x 6/7, x 5/6
    expected = {6: 18 / 21}
    expected[7] = expected[6] * 16 / 17
    expected[10] = expected[7] * 14 / 15
    expected[13] = expected[10] * 11 / 12
    expected[16] = expected[13] * 10 / 11
    expected[22] = expected[16] * 6 / 7
    expected[23] = expected[22] * 5 / 6
    for t, s in expected.items():
        assert curve.loc[float(t), "survival"] == pytest.approx(s)
    assert curve.loc[23.0, "survival"] == pytest.approx(0.448, abs=5e-4)
    assert curve.loc[6.0, "at_risk"] == 21 and curve.loc[23.0, "at_risk"] == 6
    assert km_median(*_six_mp()) == 23.0
    # the observed-only median ignores the 12 censored patients
    time, observed = _six_mp()
    assert np.median(time[observed]) == 10.0


def test_median_not_reached_is_nan():
    assert np.isnan(km_median([1, 5, 6, 7], [True, False, False, False]))


def test_estimator_matches_scipy_on_repeated_rows():
    rng = np.random.default_rng(2)
    n_clusters = 12
    codes = rng.integers(0, n_clusters, 80)
    time = rng.integers(1, 10, 80).astype(float)
    observed = rng.random(80) < 0.7
    est = KMMedianEstimator(time, observed.astype(float), codes, n_clusters)
    assert est.estimate == km_median(time, observed)
    weights = rng.integers(0, 3, (20, n_clusters)).astype(float)
    got = est.on_counts(weights)
    for w, value in zip(weights, got, strict=True):
        reps = w[codes].astype(int)
        want = km_median(np.repeat(time, reps), np.repeat(observed, reps))
        assert value == want or (np.isnan(value) and np.isnan(want))


def test_km_medians_from_totals_equal_those_from_counts():
    """The totals path (the products alone) gives what the counts path gives."""
    rng = np.random.default_rng(3)
    n_clusters = 15
    codes = rng.integers(0, n_clusters, 120)
    time = rng.integers(1, 12, 120).astype(float)
    observed = (rng.random(120) < 0.6).astype(float)
    est = KMMedianEstimator(time, observed, codes, n_clusters)
    weights = rng.integers(0, 4, (50, n_clusters)).astype(float)
    assert est.totals_columns.shape == (n_clusters, 2 * len(est.times))
    np.testing.assert_array_equal(est.from_totals(weights @ est.totals_columns),
                                  est.on_counts(weights))


def test_summarize_draws_km_medians_from_totals_when_they_are_few(monkeypatch):
    """Few event times: totals of all resamples are small, so no counts are kept; many: the
    counts path, bounded in memory. Both give the same interval."""
    import warnings

    from accordkit.stats import _estimators

    time, observed = _six_mp()
    frame = pd.DataFrame({"scenario_id": np.arange(len(time)) // 2, "time": time,
                          "observed": observed})
    metric = Metric("km", ("time", "observed"), stat="km_median")
    calls = []
    real = _estimators.resample_totals
    monkeypatch.setattr(_estimators, "resample_totals",
                        lambda *a: calls.append(a) or real(*a))
    with warnings.catch_warnings():  # resamples with no median are reported, not the point
        warnings.simplefilter("ignore", DegenerateIntervalWarning)
        fast = summarize(frame, metric, method="percentile", n_resamples=400, seed=4)
        assert len(calls) == 1
        monkeypatch.setattr(_estimators, "CHUNK_ELEMENTS", 100)  # 400 x 14 columns: too many
        slow = summarize(frame, metric, method="percentile", n_resamples=400, seed=4)
    assert len(calls) == 1
    pd.testing.assert_frame_equal(fast, slow)


def test_summarize_resamples_the_km_median_by_cluster():
    time, observed = _six_mp()
    frame = pd.DataFrame({"scenario_id": np.arange(len(time)) // 3, "time": time,
                          "observed": observed})
    # resamples in which fewer than half recover have no median: +inf, with a warning
    with pytest.warns(DegenerateIntervalWarning, match="the median was not reached in"):
        res = summarize(frame, Metric("km", ("time", "observed"), stat="km_median"),
                        method="percentile", n_resamples=500, seed=1)
    row = res.iloc[0]
    assert row.stat == "km_median" and row.estimate == 23.0
    assert row.n_clusters == 7 and row.n_events == 9
    assert row.ci_low <= 23.0 <= row.ci_high


def test_six_mp_interval_is_open_above_as_lifelines_gives_it():
    """Issue 32: 6-MP, one patient per cluster. lifelines' median interval is [13, inf]
    (exponential Greenwood); resamples whose median is not reached (about 35 %) count as
    +inf, so the bootstrap's upper end is open too (it was 23 when they were dropped)."""
    time, observed = _six_mp()
    frame = pd.DataFrame({"time": time, "observed": observed})
    metric = Metric("km", ("time", "observed"), stat="km_median")
    with pytest.warns(DegenerateIntervalWarning,
                      match=r"'km' in \(all rows\): the median was not reached in "
                            r"(\d+) of 10000 resamples") as record:
        res = summarize(frame, metric, cluster=None, method="percentile", seed=0)
    n_open = int(re.search(r"not reached in (\d+) of", str(record[0].message)).group(1))
    assert 0.30 < n_open / 10_000 < 0.40
    row = res.iloc[0]
    assert (row.estimate, row.ci_low, row.ci_high) == (23.0, 13.0, np.inf)
    shown = format_table(res, rows="metric", caption="6-MP")
    assert "23.000 [13.000, not reached]" in shown


def test_km_resamples_not_reached_are_inf_and_empty_ones_nan():
    # cluster 0: one recovery at 1 and one censored at 5; cluster 1: censored at 2 and 3;
    # cluster 2: only a missing time (no rows)
    est = KMMedianEstimator(np.array([1.0, 5.0, 2.0, 3.0, np.nan]),
                            np.array([1.0, 0.0, 0.0, 0.0, 1.0]), np.array([0, 0, 1, 1, 2]), 3)
    weights = np.array([[2.0, 0, 0], [0, 2.0, 0], [0, 0, 3.0], [1.0, 1.0, 0]])
    # S drops to 1/2 at t=1 with cluster 0 alone; never with cluster 1 (no event); no rows;
    # all four rows: S(1) = 3/4 > 1/2, then no event: not reached
    np.testing.assert_array_equal(est.on_counts(weights), [1.0, np.inf, np.nan, np.inf])
    np.testing.assert_array_equal(est.from_totals(weights @ est.totals_columns),
                                  [1.0, np.inf, np.nan, np.inf])
    assert est.estimate == np.inf  # not reached on all rows (the scalar km_median: NaN)
    assert np.isnan(km_median([1.0, 5.0, 2.0, 3.0], [True, False, False, False]))


def test_a_median_not_reached_has_an_interval_open_above():
    """45 % of the shifts recover (at 1 to 5 messages), the others are censored at 6: the
    median is not reached on all rows, yet some resamples bound it from below."""
    rng = np.random.default_rng(2)
    observed = (rng.random(120) < 0.45).astype(float)
    frame = pd.DataFrame({"scenario_id": np.arange(40).repeat(3), "observed": observed,
                          "time": np.where(observed > 0, rng.integers(1, 6, 120), 6.0)})
    metric = Metric("km", ("time", "observed"), stat="km_median")
    with pytest.warns(DegenerateIntervalWarning, match="not reached in"):
        pct = summarize(frame, metric, method="percentile", n_resamples=2_000).iloc[0]
    assert pct.estimate == np.inf and pct.ci_high == np.inf
    assert pct.ci_method == "percentile" and pct.ci_low == 5.0
    # BCa needs a finite estimate: the percentile interval, with the fallback warning
    with pytest.warns(BCaFallbackWarning, match="BCa interval undefined"), \
            pytest.warns(DegenerateIntervalWarning, match="not reached in"):
        bca = summarize(frame, metric, n_resamples=2_000).iloc[0]
    assert (bca.ci_low, bca.ci_high, bca.ci_method) == (pct.ci_low, np.inf, "percentile")
    with pytest.warns(DegenerateIntervalWarning, match="not reached in"):
        table = summarize(frame, metric, method="percentile", n_resamples=2_000)
    assert "not reached [" in format_table(table, rows="metric")


def test_km_metric_needs_a_pair():
    with pytest.raises(ValueError, match="needs a \\(time, observed\\) pair"):
        Metric("km", "time", stat="km_median")


def _shifts():
    return pd.DataFrame({
        "agent_model": ["a"] * 4 + ["b"] * 3,
        "scenario_id": ["s1", "s1", "s2", "s3", "s1", "s2", "s3"],
        "gsrt_ack": [1.0, np.nan, 2.0, np.nan, 3.0, np.nan, np.nan],
        "censored_ack": pd.array([False, True, False, True, False, True, pd.NA],
                                 dtype="boolean"),
        "messages_after_shift": pd.array([5, 4, 6, 1, 8, 9, 3], dtype="Int64"),
    })


def test_recovery_times_censor_at_messages_after_shift():
    times = recovery_times(_shifts(), event="ack")
    assert times["time"].tolist() == [1.0, 4.0, 2.0, 1.0, 3.0, 9.0]
    assert times["observed"].tolist() == [True, False, True, False, True, False]
    assert times.attrs["n_unjudged"] == 1  # the meta shift: reaction unknown


def test_transfers_are_censored_and_inconsistent_shifts_left_out():
    shifts = _shifts()
    shifts["transferred"] = pd.array([False, False, False, False, False, True, pd.NA],
                                     dtype="boolean")
    shifts["censored_ack"] = pd.array([False, False, False, True, False, False, pd.NA],
                                      dtype="boolean")
    times = recovery_times(shifts, event="ack")
    # row 1: no ack, not censored, not transferred -> judge inconsistency, left out
    assert times.index.tolist() == [0, 2, 3, 4, 5]
    assert times.attrs["n_inconsistent"] == 1
    # row 5: transferred without acknowledgement -> censored at messages_after_shift
    assert times.loc[5, "time"] == 9.0 and not times.loc[5, "observed"]


def test_recovery_times_bad_input():
    with pytest.raises(ValueError, match="lacks column"):
        recovery_times(_shifts().drop(columns="messages_after_shift"))
    bad = _shifts().astype({"messages_after_shift": "Float64"})
    bad.loc[1, "messages_after_shift"] = pd.NA
    with pytest.raises(ValueError, match="frame index 1 has no 'gsrt_ack'"):
        recovery_times(bad)
    with pytest.raises(ValueError, match="`event` must be one of"):
        recovery_times(_shifts(), event="lunch")


def test_curves_and_medians_per_group():
    curves = recovery_curves(_shifts(), events=["ack"])
    a = curves[curves.agent_model == "a"]
    # a: times 1, 4+, 2, 1+ -> S(1) = 3/4, S(2) = 3/4 * 1/2, flat to the last time 4
    assert a.time.tolist() == [0.0, 1.0, 2.0, 4.0]
    assert a.survival.tolist() == pytest.approx([1.0, 0.75, 0.375, 0.375])
    assert set(a.n_censored) == {2}
    with pytest.warns(DegenerateIntervalWarning):  # b has one cluster; unreached medians
        med = km_medians(_shifts(), events=["ack"], n_resamples=200)
    km = med[med.stat == "km_median"].set_index("agent_model")
    assert km.loc["a", "estimate"] == 2.0 and km.loc["a", "n_censored"] == 2
    assert km.loc["b", "estimate"] == 3.0  # 3, then 9+: S(3) = 0.5 exactly
    assert np.isnan(km_median([3.0, 9.0, 9.0], [True, False, False]))


def test_km_medians_keeps_a_missing_label_in_a_cell_of_several_columns():
    # AgentChangeBench's retail-old tasks have no persona
    shifts = _shifts().assign(domain="retail", persona=["p1"] * 4 + [None] * 3)
    # seven shifts in two cells: small cells, medians not reached in some resamples, said
    said = "fewer than two clusters|median not reached|some resamples drew no rows"
    with pytest.warns(DegenerateIntervalWarning, match=said):
        out = km_medians(shifts, by=["domain", "persona"], events=["ack"], n_resamples=200)
    km = out[out["stat"] == "km_median"]
    assert km["persona"].isna().sum() == 1
    counts = dict(zip(km["persona"].fillna("(none)"), km["n_censored"], strict=True))
    assert counts == {"p1": 2, "(none)": 1}      # an unjudged shift (NA) is left out
