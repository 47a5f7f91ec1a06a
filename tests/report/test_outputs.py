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
