"""Tests of format_table: cells, pivots, marks, captions, the three formats, validation."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from accordkit.stats import compare, summarize
from accordkit.tables import format_table


@pytest.fixture
def summary() -> pd.DataFrame:
    out = pd.DataFrame({
        "agent_model": ["gpt_4o", "gpt_4o", "gpt_4o", "gpt_4o", "llama", "llama"],
        "method": ["react", "react", "uncreact", "uncreact", "react", "react"],
        "metric": ["success", "outcome", "success", "outcome", "success", "outcome"],
        "estimate": [0.6444, 0.5, 0.7, 0.41, 0.3, np.nan],
        "ci_low": [0.6123, 0.4, 0.65, 0.2, np.nan, np.nan],
        "ci_high": [0.6761, 0.6, 0.75, 0.62, np.nan, np.nan],
        "small_cell": [False, False, False, True, True, True],
        "ci_method": ["bca", "bca", "bca", "percentile", "bca", "bca"],
        "confidence": 0.95,
        "n_resamples": 10_000,
        "seed": 0,
    })
    out.attrs["provenance"] = {"function": "summarize", "method": "bca", "confidence": 0.95,
                               "n_resamples": 10_000, "seed": 0, "cluster": "scenario_id"}
    return out


def test_markdown_layout(summary):
    text = format_table(summary, rows=["agent_model", "method"], columns="metric")
    lines = text.splitlines()
    assert [c.strip() for c in lines[0].split("|")[1:-1]] == [
        "agent_model", "method", "success", "outcome"]
    assert lines[0] == "| agent_model | method   |              success |                outcome |"
    assert lines[1] == "| :---------- | :------- | -------------------: | ---------------------: |"
    assert "| 0.644 [0.612, 0.676]" in lines[2]
    assert "0.410 [0.200, 0.620] †" in lines[3]
    cells = [c.strip() for c in lines[4].split("|")[1:-1]]
    assert cells == ["llama", "react", "0.300 [–, –] †", "– [–, –] †"]
    assert text.splitlines()[-1] == "† Fewer than 10 clusters or 10 events: interpret with care."


def test_caption_from_provenance(summary):
    text = format_table(summary, rows=["agent_model", "method"], columns="metric")
    assert ("Estimate [95% BCa confidence interval]; percentile interval where BCa was "
            "undefined (10,000 bootstrap resamples, clusters: scenario_id, seed 0).") in text


def test_caption_from_columns_when_attrs_are_lost(summary):
    lost = pd.concat([summary.iloc[:2], summary.iloc[2:]])
    lost.attrs = {}
    text = format_table(lost, rows=["agent_model", "method"], columns="metric")
    assert "95% BCa confidence interval" not in text  # ci_method is mixed: no method named
    assert "10,000 bootstrap resamples" in text and "seed 0" in text


def test_caption_override_and_no_mark(summary):
    text = format_table(summary.iloc[:3], rows=["agent_model", "method"], columns="metric",
                        caption="Table 3.")
    assert text.endswith("\n\nTable 3.")
    assert "†" not in text


def test_pivot_keeps_order_of_appearance(summary):
    text = format_table(summary, rows="metric", columns=["agent_model", "method"])
    head = text.splitlines()[0]
    assert head.index("gpt_4o / react") < head.index("gpt_4o / uncreact") < head.index("llama")
    body = [line.split("|")[1].strip() for line in text.splitlines()[2:4]]
    assert body == ["success", "outcome"]


def test_missing_combination_is_blank(summary):
    text = format_table(summary.iloc[:5], rows=["agent_model", "method"], columns="metric")
    last = [c.strip() for c in text.splitlines()[4].split("|")[1:-1]]
    assert last == ["llama", "react", "0.300 [–, –] †", ""]


def test_digits_value_and_custom_mark(summary):
    text = format_table(summary, rows=["agent_model", "method"], columns="metric", digits=1,
                        small_mark="*")
    assert "0.6 [0.6, 0.7]" in text and "0.4 [0.2, 0.6] *" in text
    assert "* Fewer than 10 clusters" in text
    seeds = format_table(summary, rows=["agent_model", "method"], columns="metric",
                         value="n_resamples")
    assert [c.strip() for c in seeds.splitlines()[2].split("|")[1:-1]] == [
        "gpt_4o", "react", "10000", "10000"]


def test_no_columns(summary):
    text = format_table(summary[summary.metric == "success"], rows=["agent_model", "method"])
    assert text.splitlines()[0].split("|")[3].strip() == "estimate"


def test_markdown_escapes_pipes(summary):
    summary.loc[0, "agent_model"] = "a|b"
    text = format_table(summary, rows=["agent_model", "method"], columns="metric")
    assert r"a\|b" in text


def test_html(summary):
    text = format_table(summary, rows=["agent_model", "method"], columns="metric", fmt="html")
    assert text.count("<table") == 1 and "<caption>" in text
    assert "0.644 [0.612, 0.676]" in text and "0.410 [0.200, 0.620] †" in text
    assert "† Fewer than 10 clusters" in text


def test_html_escapes(summary):
    summary.loc[0, "agent_model"] = "<b>x</b>"
    text = format_table(summary, rows=["agent_model", "method"], columns="metric", fmt="html")
    assert "&lt;b&gt;x&lt;/b&gt;" in text and "<b>x</b>" not in text


def test_latex(summary):
    text = format_table(summary, rows=["agent_model", "method"], columns="metric", fmt="latex")
    assert text.startswith("\\begin{table}") and "\\toprule" in text
    assert r"gpt\_4o" in text
    assert r"0.410 [0.200, 0.620] $^\dagger$" in text
    assert "0.300 [--, --] $^\\dagger$" in text
    assert r"\caption{Estimate [95\% BCa confidence interval]" in text
    assert r"$^\dagger$ Fewer than 10 clusters" in text


def test_from_summarize_and_compare():
    rng = np.random.default_rng(0)
    frame = pd.DataFrame({
        "agent_model": np.repeat(["a", "b"], 60),
        "scenario_id": np.tile(np.repeat(np.arange(20), 3), 2),
        "success": (rng.random(120) < 0.6).astype(float),
    })
    s = summarize(frame, "success", "agent_model", n_resamples=200)
    text = format_table(s, rows="agent_model", columns="metric")
    assert "(200 bootstrap resamples, clusters: scenario_id, seed 0)" in text
    c = compare(frame, "success", baseline="a", n_resamples=200)
    text = format_table(c, rows=["agent_model", "baseline"], columns="metric", value="delta")
    assert text.splitlines()[0].startswith("| agent_model | baseline |")
    assert "Difference from baseline [95% BCa confidence interval]" in text
    assert "p-values: bootstrap, adjusted: holm" in text


class TestValidation:
    def test_summary_type(self):
        with pytest.raises(TypeError, match="`summary` must be a pandas DataFrame"):
            format_table({"a": 1}, rows="a")

    def test_unknown_rows(self, summary):
        with pytest.raises(ValueError, match="`rows` column 'model' is not in the summary"):
            format_table(summary, rows="model", columns="metric")

    def test_unknown_columns(self, summary):
        with pytest.raises(ValueError, match="`columns` column 'metrics' is not in the summary"):
            format_table(summary, rows="agent_model", columns="metrics")

    def test_rows_type(self, summary):
        with pytest.raises(TypeError, match="`rows` must be a column name or a non-empty list"):
            format_table(summary, rows=[])

    def test_overlap(self, summary):
        with pytest.raises(ValueError, match="is in both `rows` and `columns`"):
            format_table(summary, rows=["metric"], columns="metric")

    def test_not_a_single_row(self, summary):
        with pytest.raises(ValueError, match="do not pick a single row: 2 rows share"):
            format_table(summary, rows=["agent_model", "method"], columns=None)

    def test_fmt(self, summary):
        with pytest.raises(ValueError, match="`fmt` must be one of 'markdown', 'latex', 'html'"):
            format_table(summary, rows="metric", columns=["agent_model", "method"], fmt="csv")

    def test_digits(self, summary):
        with pytest.raises(ValueError, match="`digits` must be a non-negative integer"):
            format_table(summary, rows="metric", columns=["agent_model", "method"], digits=-1)

    def test_value(self, summary):
        with pytest.raises(ValueError, match="`value` column 'delta' is not in the summary"):
            format_table(summary, rows="metric", columns=["agent_model", "method"],
                         value="delta")

    def test_small_mark(self, summary):
        with pytest.raises(TypeError, match="`small_mark` must be a string"):
            format_table(summary, rows="metric", columns=["agent_model", "method"],
                         small_mark=None)
