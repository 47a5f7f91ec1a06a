"""summarize_tables: several tables of the same clusters from one resampling (issue 30)."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
from numpy.testing import assert_array_equal

from accordkit.stats import summarize
from accordkit.stats._bootstrap import _column_spans, exact_parts
from accordkit.stats.metrics import as_metric
from accordkit.stats.summarize import summarize_tables

from .test_bootstrap import METRICS, _frame

pytestmark = [pytest.mark.filterwarnings("ignore::accordkit.stats.BCaFallbackWarning"),
              pytest.mark.filterwarnings("ignore::accordkit.stats.DegenerateIntervalWarning")]


def _with_domain(frame: pd.DataFrame) -> pd.DataFrame:
    # scenario ids s00..s14 in one domain, s15..s29 in the other: they sort together
    number = frame["scenario_id"].str[1:].astype(int)
    return frame.assign(domain=np.where(number < 15, "shop", "travel"))


def test_a_table_over_every_cluster_is_the_one_it_gives_alone_to_the_bit():
    frame = _with_domain(_frame())
    rows = frame[frame["done"] > 0].reset_index(drop=True)    # another frame, same clusters
    out = summarize_tables({"main": (frame, METRICS, ["model", "method"]),
                            "domain": (frame, METRICS, ["domain", "model", "method"]),
                            "done": (rows, ["score"], ["model"])}, n_resamples=600, seed=3,
                           share_draws=True)
    alone = summarize(frame, METRICS, by=["model", "method"], n_resamples=600, seed=3,
                      share_draws=True)
    pd.testing.assert_frame_equal(out["main"], alone, check_like=False, check_exact=True)
    # rows of completed episodes still touch every scenario: the same draws, the same bits
    assert rows["scenario_id"].nunique() == frame["scenario_id"].nunique()
    done_alone = summarize(rows, ["score"], by=["model"], n_resamples=600, seed=3,
                           share_draws=True)
    pd.testing.assert_frame_equal(out["done"], done_alone, check_exact=True)
    assert "shared by the tables" in out["main"].attrs["provenance"]["draws"]


def test_a_table_over_part_of_the_clusters_is_within_monte_carlo_error():
    """Per domain, a cell now draws with all the scenarios: same estimates, intervals as
    another seed's (the documented tolerance of shared draws)."""
    frame = _with_domain(_frame())
    by = ["domain", "model", "method"]
    out = summarize_tables({"main": (frame, METRICS, ["model", "method"]),
                            "domain": (frame, METRICS, by)}, n_resamples=4000,
                           share_draws=True)
    alone = summarize(frame, METRICS, by=by, n_resamples=4000, share_draws=True)
    assert_array_equal(out["domain"]["estimate"], alone["estimate"])
    width = alone["ci_high"] - alone["ci_low"]
    # a median of turn counts moves by whole turns: one turn is within its error too
    allowed = np.where(alone["stat"] == "median", np.maximum(0.2 * width, 1.0), 0.2 * width)
    for end in ("ci_low", "ci_high"):
        assert ((out["domain"][end] - alone[end]).abs() <= allowed).all()


def test_an_empty_frame_gives_its_empty_table_and_the_order_is_kept():
    frame = _frame(n_scen=8)
    out = summarize_tables({"none": (frame.iloc[:0], ["done"], ["model"]),
                            "all": (frame, ["done"], ["model"])}, n_resamples=200)
    assert list(out) == ["none", "all"]
    assert out["none"].empty and list(out["all"]["model"]) == ["a", "b"]


def test_the_span_products_are_the_bits_of_the_full_product():
    """Multiplying only the range of clusters where a column is not zero gives the same
    bits as the product with every cluster (the parts are exact)."""
    rng = np.random.default_rng(0)
    n = 500
    columns = [np.where(np.arange(n) < 200, rng.random(n), 0.0),
               np.where(np.arange(n) >= 230, rng.integers(0, 9, n).astype(float), 0.0),
               rng.random(n)]
    stacked = [p for c in columns for p in exact_parts(c, n)]
    counts = rng.multinomial(n, np.full(n, 1 / n), size=64).astype(float)
    full = counts @ np.column_stack(stacked)
    spans = _column_spans(stacked, n)
    assert (0, n) in spans and any(hi - lo < n for lo, hi in spans)   # some narrower
    out = np.empty_like(full)
    for (lo, hi), (cols, matrix) in spans.items():
        out[:, cols] = counts[:, lo:hi] @ matrix
    assert_array_equal(out, full)


def test_per_cell_by_default_each_table_is_the_one_it_gives_alone_to_the_bit():
    frame = _with_domain(_frame())
    rows = frame[frame["done"] > 0].reset_index(drop=True)
    out = summarize_tables({"main": (frame, METRICS, ["model", "method"]),
                            "done": (rows, ["score"], ["model"])}, n_resamples=300, seed=2)
    alone = {"main": summarize(frame, METRICS, by=["model", "method"], n_resamples=300, seed=2),
             "done": summarize(rows, ["score"], by=["model"], n_resamples=300, seed=2)}
    for name, table in alone.items():
        pd.testing.assert_frame_equal(out[name], table, check_exact=True)
        assert out[name].attrs["provenance"]["draws"] == "per cell"


@pytest.mark.parametrize("share_draws", [False, True])
def test_tables_of_one_frame_and_by_are_one_table_split_back(share_draws):
    """Tables of the same frame grouped alike are computed as one table of all their
    metrics (each cell draws once for all), whether or not the cells share draws."""
    frame = _with_domain(_frame())
    by = ["model", "method"]
    options = {"n_resamples": 300, "seed": 5, "share_draws": share_draws}
    out = summarize_tables({"outcomes": (frame, METRICS[:2], by),
                            "domain": (frame, ["done"], ["domain", *by]),
                            "cost": (frame, METRICS[2:], by)}, **options)
    whole = summarize(frame, METRICS, by=by, **options)
    names = [as_metric(m).name for m in METRICS]
    for table, own in ((out["outcomes"], names[:2]), (out["cost"], names[2:])):
        part = whole[whole["metric"].isin(own)].reset_index(drop=True)
        pd.testing.assert_frame_equal(table, part, check_exact=True)
        assert table.attrs["provenance"]["metrics"] == own
    assert list(out) == ["outcomes", "domain", "cost"]
    said = out["cost"].attrs["provenance"]["draws"]
    assert said == ("shared by the tables 'outcomes', 'cost', 'domain'" if share_draws
                    else "per cell")


def test_tables_that_name_a_metric_alike_are_computed_apart():
    frame = _frame(n_scen=12)
    out = summarize_tables({"a": (frame, ["done", "score"], "model"),
                            "b": (frame, ["done"], "model")}, n_resamples=200)
    pd.testing.assert_frame_equal(out["b"], summarize(frame, "done", by="model",
                                                      n_resamples=200), check_exact=True)
    assert out["a"]["metric"].tolist() == ["done", "score"] * 2


def test_only_empty_tables_and_a_bad_share_draws():
    frame = _frame(n_scen=8).iloc[:0]
    out = summarize_tables({"none": (frame, ["done"], ["model"])}, share_draws=True)
    assert out["none"].empty and "model" in out["none"].columns
    with pytest.raises(TypeError, match="share_draws must be True or False"):
        summarize_tables({"all": (_frame(n_scen=8), ["done"], "model")}, share_draws=1)


@pytest.mark.parametrize("share_draws", [False, True])
def test_summarize_is_summarize_tables_of_one_table(share_draws):
    frame = _with_domain(_frame())
    options = {"n_resamples": 300, "seed": 7, "strata": "domain", "share_draws": share_draws}
    one = summarize_tables({"t": (frame, METRICS, "model")}, **options)["t"]
    pd.testing.assert_frame_equal(one, summarize(frame, METRICS, by="model", **options),
                                  check_exact=True)
    assert one.attrs["provenance"]["draws"] == ("shared by all cells" if share_draws
                                                else "per cell")
