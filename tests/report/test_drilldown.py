"""Drill-down pages: cells link to their episodes, episodes to their conversations; names
from the data stay text; every page declares the policy and runs nothing."""

from __future__ import annotations

import re

import pandas as pd
from bs4 import BeautifulSoup

from accordkit.analysis.failures import failure_taxonomy
from accordkit.analysis.flips import flips
from accordkit.metrics.action_diff import action_diff
from accordkit.report.drilldown import DrillDown
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
        "reward": table.column("reward").to_pylist()})
    episodes["success"] = episodes["reward"] == 1.0
    actions = action_diff(table)
    index = {e: i for i, e in enumerate(ds["episode_id"])}
    dd = DrillDown(tmp_path, "error_analysis", lambda ids: ds.select([index[e] for e in ids]),
                   episodes, actions=actions, **kw)
    return dd, episodes, actions


def _safe(page: str) -> None:
    soup = BeautifulSoup(page, "html.parser")
    assert not soup.find_all("script") and not soup.find_all("img")
    assert not any(a.startswith("on") for t in soup.find_all(True) for a in t.attrs)
    assert "alert(1)" in soup.get_text()   # the name is there, as text


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
    assert "script-src 'none'" in meta["content"]
    hrefs = [a["href"] for a in BeautifulSoup(page, "html.parser").find_all("a")]
    conv = [h for h in hrefs if h.startswith("../conversations/")]
    assert conv and hrefs[0] == "../../error_analysis.html"
    conversation = (tmp_path / "error_analysis_pages" / "episodes" / conv[0]).resolve()
    text = conversation.read_text()
    _safe(text)
    assert "first divergence (wrong_arguments)" in text
    assert "wrong arguments: cancel_reservation (id)" in text


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
    assert "Conversations are linked for the first 1 of 6 episodes" in page
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
    # no review at all: every row says so
    dd, episodes, _ = _setup(tmp_path / "none")
    page = dd.episode_list("all", "all episodes", episodes["episode_id"]).read_text()
    cells = [tr.find_all("td")[-1].get_text() for tr in
             BeautifulSoup(page, "html.parser").find("tbody").find_all("tr")]
    assert cells == ["not reviewed"] * 6
