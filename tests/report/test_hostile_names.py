"""Names from the data are text, never markup or paths (issue 35, items 1 and 5).

The report is built from result files whose agent model, method, user implementation,
domain, task ids, termination reasons and tool names are scripts, and whose domain also
climbs out of the report folder (``tests/payloads.py``). The browser tests open the same
report in Chromium (tests/browser/test_hostile_names.py).
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from accordkit.report.pages import strip_active_content

pytestmark = pytest.mark.slow


def test_every_notebook_ran_on_the_hostile_names(hostile_report):
    results = json.loads((hostile_report / "results.json").read_text())["notebooks"]
    ran = {r["notebook"]: r["status"] for r in results if r["status"] != "skipped"}
    assert ran == {n: "ok" for n in ("accord_results", "goalshift_results", "tau2_results",
                                     "compare_models", "reliability", "error_analysis")}


def test_nothing_is_written_outside_the_report(hostile_report):
    work = hostile_report.parent
    outside = [p for p in work.parent.rglob("*") if p.is_file()
               and work not in p.parents and "inputs" not in p.parts]
    assert outside == []
    assert not any(p.name == "escaped" for p in work.parent.rglob("*"))
    for p in hostile_report.rglob("*"):
        assert p.resolve().is_relative_to(hostile_report.resolve())


def test_tables_of_a_domain_with_a_dot_do_not_overwrite_each_other(hostile_report):
    tables = hostile_report / "tables"
    per_metric = sorted(p.name for p in tables.glob("compare_models__*.csv"))
    assert len(per_metric) >= 2
    # one CSV per (benchmark, domain, metric): each has its own metric
    metrics = {json.dumps(sorted(set(__import__("pandas").read_csv(tables / n)["metric"])))
               for n in per_metric if n != "compare_models__all_comparisons.csv"
               and n != "compare_models__comparison_plan.csv"}
    assert len(metrics) == len(per_metric) - 2
    assert all(n.replace(".csv", "").count(".") == 0 for n in per_metric)


def _html_outputs(notebook: Path):
    import nbformat

    for cell in nbformat.read(notebook, as_version=4).cells:
        for out in cell.get("outputs", []):
            html = out.get("data", {}).get("text/html")
            if html:
                yield "".join(html) if isinstance(html, list) else html


def test_notebook_outputs_hold_no_active_markup(hostile_report):
    """What JupyterLab would render live (where no page-level policy protects the reader):
    every HTML output of every executed notebook is inert."""
    from bs4 import BeautifulSoup

    notebooks = sorted((hostile_report / "notebooks").glob("*.ipynb"))
    assert len(notebooks) == 6
    shown = 0
    for nb in notebooks:
        for html in _html_outputs(nb):
            soup = BeautifulSoup(html, "html.parser")
            assert strip_active_content(soup) == 0, (nb.name, html[:300])
            shown += "onerror=" in soup.get_text()
    assert shown >= 6      # the payloads are there, as text


def test_pages_declare_a_policy_and_hold_no_active_markup(hostile_report):
    from bs4 import BeautifulSoup

    pages = sorted(hostile_report.glob("*.html"))
    assert len(pages) == 7
    for page in pages:
        soup = BeautifulSoup(page.read_text("utf-8"), "html.parser")
        policy = soup.find("meta", attrs={"http-equiv": "Content-Security-Policy"})
        assert policy is not None and "default-src 'none'" in policy["content"], page.name
        assert not any("__akx" in (s.string or "") for s in soup.find_all("script"))
        own = len(soup.body.find_all("script"))    # the paging script, on long pages only
        assert own <= 1 and strip_active_content(soup.body) == own, page.name
        # no inline style is trusted and no image is loaded from a file (issue 41, item 9)
        assert "'unsafe-inline'" not in policy["content"] and "file:" not in policy["content"]
        assert not soup.find_all(style=True), page.name
        assert all(s.find_parent("head") for s in soup.find_all("style")), page.name
        assert all(i["src"].startswith("data:image/") for i in soup.find_all("img")), page.name
    for page in sorted((hostile_report / "error_analysis_pages").rglob("*.html")):
        soup = BeautifulSoup(page.read_text("utf-8"), "html.parser")
        policy = soup.find("meta", attrs={"http-equiv": "Content-Security-Policy"})
        assert "'unsafe-inline'" not in policy["content"] and not soup.find_all(style=True)


def test_exports_escape_their_format(hostile_report):
    tables = hostile_report / "tables"
    for md in tables.glob("*.md"):
        text = md.read_text("utf-8")
        assert "<img" not in text and "<script" not in text, md.name
    for tex in tables.glob("*.tex"):
        body = tex.read_text("utf-8").split("\n", 1)[1]
        assert "\\input" not in body.replace("\\textbackslash", "")
        assert "_" not in body.replace("\\_", ""), tex.name


def test_conversations_show_agent_text_instructions_and_checks_as_text(hostile_report):
    """Issue 36, item 4: what a conversation now renders (agent text as Markdown, the user's
    instructions, the expected actions, tau2's checks, NL verdicts) stays text."""
    from bs4 import BeautifulSoup

    pages = sorted((hostile_report / "error_analysis_pages" / "conversations").glob("*.html"))
    assert pages
    seen = set()
    from accordkit.report.drilldown import BACK_SCRIPT

    for page in pages:
        soup = BeautifulSoup(page.read_text("utf-8"), "html.parser")
        # the page's own "back" script (named by its sha256 in the policy), and nothing else
        own = [s for s in soup.find_all("script") if s.string == BACK_SCRIPT]
        assert len(own) == 1, page.name
        own[0].decompose()
        assert strip_active_content(soup.body) == 0, page.name
        assert not soup.find_all(["img", "script", "svg"]), page.name
        text = soup.get_text(" ")
        seen |= {tag for tag in ("agenttext", "instructions", "persona", "expected",
                                 "nlverdict", "justification")
                 if f"{tag}<img src=x onerror=" in text}
    assert seen == {"agenttext", "instructions", "persona", "expected", "nlverdict",
                    "justification"}
