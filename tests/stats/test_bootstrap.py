"""summarize(share_draws=True): one resampling of all clusters for the table, exact products."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
from numpy.testing import assert_array_equal

from accordkit.stats import Metric, summarize
from accordkit.stats._bootstrap import exact_parts
from accordkit.stats._resample import cell_rng, count_chunks, digest

# medians of a few turn counts fall back from BCa, and the Kaplan–Meier median is not
# reached in some resamples: both warned about elsewhere (tests/stats/test_survival.py)
pytestmark = [pytest.mark.filterwarnings("ignore::accordkit.stats.BCaFallbackWarning"),
              pytest.mark.filterwarnings("ignore::accordkit.stats.DegenerateIntervalWarning")]


def _frame(seed=0, n_scen=30, rollouts=3):
    rng = np.random.default_rng(seed)
    n = n_scen * rollouts * 4
    frame = pd.DataFrame({
        "scenario_id": np.tile(np.repeat([f"s{i:02d}" for i in range(n_scen)], rollouts), 4),
        "model": np.repeat(["a", "a", "b", "b"], n_scen * rollouts),
        "method": np.repeat(["x", "y", "x", "y"], n_scen * rollouts),
    })
    frame["done"] = (rng.random(n) < 0.7).astype(float)
    frame["score"] = np.where(frame["done"] > 0, rng.integers(0, 4, n) / 3, np.nan)
    frame["turns"] = rng.poisson(6, n).astype(float)
    frame["frac"] = rng.random(n)
    return frame


METRICS = ["done", "score", ("frac", "turns"), Metric("turns (median)", "turns", stat="median")]


def test_estimates_equal_and_intervals_within_monte_carlo_error():
    """The documented tolerance: the same estimates; interval ends as another seed's."""
    frame = _frame()
    per_cell = summarize(frame, METRICS, by=["model", "method"], n_resamples=4000)
    shared = summarize(frame, METRICS, by=["model", "method"], n_resamples=4000,
                       share_draws=True)
    assert_array_equal(shared["estimate"], per_cell["estimate"])
    width = per_cell["ci_high"] - per_cell["ci_low"]
    for end in ("ci_low", "ci_high"):
        # at 4,000 resamples an end moves by a few percent of the width between seeds
        assert ((shared[end] - per_cell[end]).abs() <= 0.15 * width).all()
    assert shared.attrs["provenance"]["draws"] == "shared by all cells"
    assert per_cell.attrs["provenance"]["draws"] == "per cell"


def test_cells_over_the_same_clusters_draw_the_same_resamples_seeded_from_the_set():
    """Each cell's interval is the one its own draws give: the counts of one stream seeded
    from the set of scenario ids, whatever the cell."""
    frame = _frame(n_scen=12)
    b = 300
    shared = summarize(frame, "frac", by=["model", "method"], method="percentile",
                       n_resamples=b, seed=5, share_draws=True)
    ids = sorted(frame["scenario_id"].unique())
    rng = cell_rng(5, (("__clusters__", digest(ids)),))
    (counts,) = count_chunks([(rng, np.arange(len(ids)))], len(ids), b)
    for (model, method), part in frame.groupby(["model", "method"]):
        sums = part.groupby("scenario_id")["frac"].agg(["sum", "count"]).loc[ids]
        theta = (counts @ sums["sum"].to_numpy()) / (counts @ sums["count"].to_numpy())
        row = shared[(shared.model == model) & (shared.method == method)].iloc[0]
        low, high = np.quantile(theta, [0.025, 0.975])
        assert row.ci_low == pytest.approx(low, rel=1e-12)
        assert row.ci_high == pytest.approx(high, rel=1e-12)


@pytest.mark.parametrize("method", ["bca", "percentile"])
def test_a_cell_and_a_metric_do_not_depend_on_the_others_bit_for_bit(method):
    """Stacked products are exact: alone or beside other cells and metrics, the same bits."""
    frame = _frame(seed=3)
    every = summarize(frame, METRICS, by=["model", "method"], method=method,
                      n_resamples=700, share_draws=True)
    one = frame[(frame.model == "b") & (frame.method == "x")]
    for metric in METRICS:
        alone = summarize(one, metric, by=["model", "method"], method=method,
                          n_resamples=700, share_draws=True)
        mine = every[(every.model == "b") & (every.method == "x")
                     & (every.metric == alone.metric.iloc[0])]
        for col in ("estimate", "ci_low", "ci_high"):
            assert_array_equal(mine[col].to_numpy(), alone[col].to_numpy())


def test_a_cell_over_part_of_the_clusters_is_a_domain_of_their_resampling():
    """Model b ran 8 of model a's 12 scenarios: every resample draws all 12, and b's
    statistic uses the drawn ones that are b's (their number varies)."""
    frame = _frame(n_scen=12)
    frame = frame[(frame.model == "a") | (frame.scenario_id < "s08")]
    b = 400
    shared = summarize(frame, "frac", by="model", method="percentile", n_resamples=b,
                       seed=2, share_draws=True)
    ids = sorted(frame["scenario_id"].unique())
    rng = cell_rng(2, (("__clusters__", digest(ids)),))
    (counts,) = count_chunks([(rng, np.arange(len(ids)))], len(ids), b)
    part = frame[frame.model == "b"]
    sums = part.groupby("scenario_id")["frac"].agg(["sum", "count"]).reindex(ids, fill_value=0)
    theta = (counts @ sums["sum"].to_numpy()) / (counts @ sums["count"].to_numpy())
    low, high = np.quantile(theta[np.isfinite(theta)], [0.025, 0.975])
    row = shared[shared.model == "b"].iloc[0]
    assert (row.ci_low, row.ci_high) == (pytest.approx(low, rel=1e-12),
                                         pytest.approx(high, rel=1e-12))
    assert row.n_clusters == 8  # the cell's own clusters, not the drawn ones


def test_cells_over_clusters_no_other_cell_touches_draw_apart():
    frame = _frame()
    frame.loc[frame.model == "b", "scenario_id"] += "-b"  # b ran other scenarios
    shared = summarize(frame, "frac", by="model", n_resamples=500, share_draws=True)
    alone = summarize(frame[frame.model == "b"], "frac", by="model", n_resamples=500,
                      share_draws=True)
    assert_array_equal(shared.iloc[[1]][["ci_low", "ci_high"]].to_numpy(),
                       alone[["ci_low", "ci_high"]].to_numpy())


def test_strata_and_a_kaplan_meier_median_share_draws_too():
    frame = _frame(n_scen=40)
    frame["domain"] = np.where(frame["scenario_id"] < "s20", "d1", "d2")
    frame["observed"] = (frame["turns"] < 7).astype(float)
    km = Metric("km", ("turns", "observed"), stat="km_median")
    kwargs = {"by": ["model"], "strata": "domain", "n_resamples": 1000, "method": "percentile"}
    per_cell = summarize(frame, ["frac", km], **kwargs)
    shared = summarize(frame, ["frac", km], share_draws=True, **kwargs)
    assert_array_equal(shared["estimate"], per_cell["estimate"])
    assert (shared["ci_low"] <= shared["estimate"]).all()
    assert (shared["estimate"] <= shared["ci_high"]).all()


def test_share_draws_must_be_a_bool():
    with pytest.raises(TypeError, match="share_draws must be True or False"):
        summarize(_frame(), "frac", share_draws="yes")


def test_exact_parts_add_up_and_multiply_exactly():
    rng = np.random.default_rng(1)
    column = np.concatenate([rng.random(500) * 7, [1e-9, 0.0, -2.5]])
    parts = exact_parts(column, 503)
    assert_array_equal(sum(parts[1:], parts[0]), column)
    counts = rng.integers(0, 4, (20, 503)).astype(float)
    # each part's product is exact: the same in any order of summation
    for part in parts:
        assert_array_equal(counts @ part, counts[:, ::-1] @ part[::-1])
        assert_array_equal(counts @ part, np.array([sum(sorted(c * part)) for c in counts]))
