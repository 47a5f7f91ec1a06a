"""Drill-down pages: cells link to their episodes, episodes to their conversations, the
episodes page lists and searches every episode, a flip shows its two sides; names from the
data stay text; every page declares the policy and runs only its own scripts (by sha256)."""

from __future__ import annotations

import re

import pandas as pd
from bs4 import BeautifulSoup

from accordkit.analysis.failures import failure_taxonomy
from accordkit.analysis.flips import flips
from accordkit.metrics.action_diff import action_diff
from accordkit.report.drilldown import BACK_SCRIPT, DrillDown
from accordkit.report.episodes import EPISODES_SCRIPT
from accordkit.report.pages import PAGE_SCRIPT
from accordkit.schema.arrow import episode_dataset
from accordkit.testing import build_episode, criteria, episode_table, message

EVIL = '<img src=x onerror=alert(1)>'


def _records(n=6):
    recs = []
    for i in range(n):
        ok = i % 2 == 0
        recs.append(build_episode(
            [message("user", f"Cancel R1 {EVIL}"),
             message("assistant", calls=[("cancel_reservation", {"id": "R1" if ok else "R9"})]),
             message("tool", "done")],
            criteria=criteria(actions=[("cancel_reservation", {"id": "R1"})]),
            benchmark="tau2", domain=f"air{EVIL}", episode_id=f"tau2/e{i}{EVIL}",
            task_id=f"t{i % 3}", agent_model="m1" if i < 3 else f"m2{EVIL}",
            rollout=i, reward=float(ok)))
    return recs


def _setup(tmp_path, **kw):
    table = episode_table(*_records())
    ds = episode_dataset(table)
    episodes = pd.DataFrame({
        "episode_id": table.column("episode_id").to_pylist(),
        "scenario_id": table.column("scenario_id").to_pylist(),
        "domain": table.column("domain").to_pylist(),
        "agent_model": table.column("agent_model").to_pylist(),
        "reward": table.column("reward").to_pylist(),
        "rollout": table.column("rollout").to_pylist()})
    episodes["success"] = episodes["reward"] == 1.0
    actions = action_diff(table)
    index = {e: i for i, e in enumerate(ds["episode_id"])}
    dd = DrillDown(tmp_path, "error_analysis", lambda ids: ds.select([index[e] for e in ids]),
                   episodes, actions=actions, **kw)
    return dd, episodes, actions


#: The only scripts a drill-down page may run.
OWN_SCRIPTS = {PAGE_SCRIPT, BACK_SCRIPT, EPISODES_SCRIPT}


def _safe(page: str) -> None:
    soup = BeautifulSoup(page, "html.parser")
    for script in soup.find_all("script"):
        if script.get("type") == "application/json":   # data, never run: no "<" inside
            assert "<" not in script.string
        else:
            assert script.string in OWN_SCRIPTS and not script.get("src")
    assert not soup.find_all("img")
    assert not any(a.startswith("on") for t in soup.find_all(True) for a in t.attrs)
    assert "alert(1)" in soup.get_text()   # the name is there, as text
    meta = soup.find("meta", attrs={"http-equiv": "Content-Security-Policy"})
    if meta is not None:
        assert "unsafe-inline" not in meta["content"]


def test_taxonomy_cells_link_to_episode_pages_and_conversations(tmp_path):
    dd, episodes, actions = _setup(tmp_path)
    table = failure_taxonomy(episodes, actions=actions, by=["domain", "agent_model"],
                             n_resamples=100, method="percentile")
    shown = dd.linked_table(table, table.attrs["indicators"], rows=["domain", "agent_model"],
                            name="failure_taxonomy", caption="Failures.")
    _safe(shown.html)
    soup = BeautifulSoup(shown.html, "html.parser")
    links = [a["href"] for a in soup.find_all("a")]
    assert links and all(h.startswith("error_analysis_pages/episodes/") for h in links)
    # m1 cell: episodes e1 (wrong argument) failed
    failed = [h for h in links if "failed" in h]
    assert failed
    pages = sorted((tmp_path / "error_analysis_pages" / "episodes").glob("*.html"))
    assert pages and all(p.resolve().parent == (tmp_path / "error_analysis_pages" /
                                                "episodes").resolve() for p in pages)
    page = (tmp_path / failed[0]).read_text()
    _safe(page)
    meta = BeautifulSoup(page, "html.parser").find("meta", attrs={
        "http-equiv": "Content-Security-Policy"})
    assert "style-src 'sha256-" in meta["content"]
    assert "unsafe-inline" not in meta["content"]
    hrefs = [a["href"] for a in BeautifulSoup(page, "html.parser").find_all("a")]
    conv = [h.split("?")[0] for h in hrefs if h.startswith("../conversations/")]
    # the report's header first (the index, the notebook's page), then the breadcrumbs
    assert conv and hrefs[:2] == ["../../index.html", "../../error_analysis.html"]
    conversation = (tmp_path / "error_analysis_pages" / "episodes" / conv[0]).resolve()
    text = conversation.read_text()
    _safe(text)
    assert "first divergence (wrong_arguments)" in text
    # the expected value beside the one called, at the marked turn
    assert 'wrong arguments: cancel_reservation (id): expected "R1", called with "R9"' in text


def test_flips_rows_link_to_the_task_episodes(tmp_path):
    dd, episodes, actions = _setup(tmp_path)
    moved = flips(episodes, actions=actions, include_unmoved=True)
    shown = dd.linked_frame(moved, name="flips", link="scenario_id",
                            episodes_of=lambda row: episodes.loc[
                                episodes["scenario_id"] == row["scenario_id"], "episode_id"],
                            caption="flips")
    _safe(shown.html)
    links = re.findall(r'href="([^"]+)"', shown.html)
    assert len(links) == len(moved) == 3


def test_caps_on_listed_episodes_and_conversations(tmp_path):
    dd, episodes, _ = _setup(tmp_path, max_conversations=1, max_listed=2)
    path = dd.episode_list("all", "all episodes", episodes["episode_id"])
    page = path.read_text()
    assert "The first 2 of 6 episodes are listed." in page
    assert "Conversations are linked for 1 of 6 episodes" in page
    assert len(list((tmp_path / "error_analysis_pages" / "conversations").glob("*"))) == 1


def test_review_column_says_not_reviewed_and_review_failed(tmp_path):
    """An episode no review covers reads "not reviewed", one whose review failed (tau2's
    placeholder) "review failed": never a count of 0 errors."""
    from accordkit.ingest.formats.tau2.reviews import stored_reviews
    from accordkit.metrics.reviews import reviews_from_json

    from ..metrics.test_reviews import FAILED_REVIEW

    table = episode_table(*_records())
    ids = table.column("episode_id").to_pylist()
    reviews = reviews_from_json(ids[:2], ['{"review": {"has_errors": false}}',
                                          stored_reviews({"review": FAILED_REVIEW})])
    dd, episodes, _ = _setup(tmp_path, reviews=reviews)
    page = dd.episode_list("all", "all episodes", episodes["episode_id"]).read_text()
    cells = [tr.find_all("td")[-1].get_text() for tr in
             BeautifulSoup(page, "html.parser").find("tbody").find_all("tr")]
    assert cells == ["0", "review failed", *["not reviewed"] * 4]
    dd.episodes_page()   # the episodes page says the same
    page = (tmp_path / "error_analysis_pages" / "episodes.html").read_text()
    cells = [tr.find_all("td")[-1].get_text() for tr in
             BeautifulSoup(page, "html.parser").find("tbody").find_all("tr")]
    assert cells == ["0", "review failed", *["not reviewed"] * 4]
    # no review at all: every row says so
    dd, episodes, _ = _setup(tmp_path / "none")
    page = dd.episode_list("all", "all episodes", episodes["episode_id"]).read_text()
    cells = [tr.find_all("td")[-1].get_text() for tr in
             BeautifulSoup(page, "html.parser").find("tbody").find_all("tr")]
    assert cells == ["not reviewed"] * 6


def test_the_episodes_page_lists_every_episode_and_writes_every_conversation(tmp_path):
    import json

    dd, episodes, _ = _setup(tmp_path)
    shown = dd.episodes_page()
    assert 'href="error_analysis_pages/episodes.html"' in shown.html
    root = tmp_path / "error_analysis_pages"
    page = (root / "episodes.html").read_text()
    _safe(page)
    soup = BeautifulSoup(page, "html.parser")
    rows = soup.find("table", id="ak-episodes").find("tbody").find_all("tr")
    assert len(rows) == 6 == len(list((root / "conversations").glob("*.html")))
    cells = [[td.get_text() for td in tr.find_all("td")] for tr in rows]
    # episode, configuration, domain, task, trial, reward, outcome, divergence, turn, review
    assert [c[4] for c in cells] == ["0", "1", "2", "3", "4", "5"]
    assert [c[6] for c in cells] == ["pass", "fail"] * 3
    assert [c[7] for c in cells] == ["", "wrong_arguments"] * 3
    assert [c[8] for c in cells] == ["–", "1"] * 3
    assert cells[0][1] == "m1 (?) | user: ? (?)" and cells[3][1].startswith("m2<img")
    for tr in rows:   # each links to its conversation, which exists
        href = tr.find("a")["href"]
        assert href.endswith("?from=episodes")
        assert (root / href.split("?")[0]).is_file()
    data = json.loads(soup.find("script", id="ak-episodes-data").string)
    # the search reads what ak.find reads: content and the calls' arguments, with tools
    assert data["messages"][1][1] == [1, "assistant", '{"id": "R9"}', ["cancel_reservation"]]
    assert data["statuses"][1] == [["wrong_arguments", "cancel_reservation", 1]]
    assert data["messages"][0][0][2] == f"Cancel R1 {EVIL}"
    # a conversation page: header, breadcrumbs back to the list, anchors for the hits
    conv = BeautifulSoup((root / rows[1].find("a")["href"].split("?")[0]).read_text(),
                         "html.parser")
    assert [a.get_text() for a in conv.find("nav", class_="ak-pages").find_all("a")] == \
        ["Report index", "Error analysis", "All episodes"]
    back = conv.find(id="ak-back")
    assert back["href"] == "../episodes.html"
    assert conv.find(id="turn-1") is not None


def test_a_flip_shows_both_configurations_side_by_side(tmp_path):
    dd, episodes, _ = _setup(tmp_path)
    ids = episodes.loc[episodes["scenario_id"] == episodes["scenario_id"].iloc[0],
                       "episode_id"].tolist()   # e0 (m1, passed) and e3 (m2, failed)
    listed = dd.episode_list("flip_t0", "t0", ids).read_text()
    _safe(listed)
    link = BeautifulSoup(listed, "html.parser").select_one("p.ak-flip-link a")["href"]
    assert link.startswith("../flips/") and "?from=list:" in link
    page = (tmp_path / "error_analysis_pages" / "episodes" / link.split("?")[0]).resolve()
    soup = BeautifulSoup(page.read_text(), "html.parser")
    _safe(page.read_text())
    heads = [h.get_text(" ") for h in soup.select(".ak-flip > .ak-side-head")]
    assert len(heads) == 2
    assert heads[0].startswith("m1 (?)") and "pass" in heads[0]
    assert heads[1].startswith("m2<img") and "fail" in heads[1]
    diffs = [d.get_text(" ") for d in soup.select(".ak-side-diff")]
    assert "matched: cancel_reservation" in diffs[0]
    assert 'expected "R1", called with "R9"' in diffs[1]
    # aligned: the messages before the divergence (turn 1) in one row, the rest after it
    sides = soup.select(".ak-flip > .ak-side")
    assert len(sides) == 4
    before, after = sides[:2], sides[2:]
    assert [len(s.select(".ak-msg")) for s in before] == [1, 1]
    assert [len(s.select(".ak-msg")) for s in after] == [2, 2]
    assert "wrong_arguments at turn 1" in soup.select_one(".ak-divergence").get_text()


def test_a_large_report_lists_as_many_episodes_of_each_configuration_and_says_so(tmp_path):
    dd, episodes, _ = _setup(tmp_path)
    shown = dd.episodes_page(max_episodes=4)
    assert "4 of the 6 episodes" in shown.html
    root = tmp_path / "error_analysis_pages"
    soup = BeautifulSoup((root / "episodes.html").read_text(), "html.parser")
    assert "4 of the report's 6 episodes are listed" in soup.get_text()
    rows = soup.find("table", id="ak-episodes").find("tbody").find_all("tr")
    configs = [tr.find_all("td")[1].get_text()[:2] for tr in rows]
    assert configs == ["m1", "m1", "m2", "m2"]   # two of each, the first of each
    assert len(list((root / "conversations").glob("*.html"))) == 4


def test_every_drill_down_page_gets_the_reports_whole_header(tmp_path):
    from accordkit.report.drilldown import fill_headers

    dd, episodes, _ = _setup(tmp_path)
    dd.episodes_page()
    dd.episode_list("flip_t0", "t0", episodes["episode_id"].tolist()[::3])
    root = tmp_path / "error_analysis_pages"
    before = {p: p.read_text() for p in root.rglob("*.html")}
    pages = [("index.html", "Report index"), ("tau2_results.html", "tau2 <results>"),
             ("error_analysis.html", "Error analysis")]
    assert fill_headers(tmp_path, pages) == len(before)
    for path, old in before.items():
        soup = BeautifulSoup(path.read_text(), "html.parser")
        nav = soup.find("nav", class_="ak-pages")
        links = [(a["href"], a.get_text()) for a in nav.find_all("a")]
        up = "../" * (len(path.relative_to(tmp_path).parts) - 1)
        episodes_href = "episodes.html" if path.parent == root else "../episodes.html"
        assert links == [(up + "index.html", "Report index"),
                         (up + "tau2_results.html", "tau2 <results>"),
                         (up + "error_analysis.html", "Error analysis"),
                         (episodes_href, "All episodes")]
        # only the header changed: the policy (its hashes) and the rest are as they were
        old_soup = BeautifulSoup(old, "html.parser")
        old_soup.find("nav", class_="ak-pages").decompose()
        nav.decompose()
        assert str(soup) == str(old_soup)
    assert fill_headers(tmp_path, pages) == 0   # twice: nothing more to do
