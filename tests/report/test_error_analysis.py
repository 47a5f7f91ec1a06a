"""The error_analysis notebook from a score store: taxonomy with stored reviews, flips, the
drill-down pages (issue 31)."""

from __future__ import annotations

import json
import re

import pytest
from bs4 import BeautifulSoup

from accordkit.cli import main

from ..ingest.formats.test_tau2_reviews import REVIEW, USER_ONLY, _results, _sim

pytestmark = pytest.mark.slow


def _run(model: str, ok_trials: set[int]) -> dict:
    sims = []
    for trial in range(4):
        sim = _sim(f"{model}-{trial}", trial=trial,
                   review=REVIEW if trial == 0 else {"has_errors": False},
                   user_only_review=USER_ONLY if trial == 1 else None)
        if trial in ok_trials:   # the right reservation: the action matches, reward 1
            sim["messages"][2]["tool_calls"][0]["arguments"] = {"id": "R1"}
            sim["reward_info"]["reward"] = 1.0
            sim["reward_info"]["action_checks"][0]["action_match"] = True
            sim["reward_info"]["reward_breakdown"] = {"DB": 1.0}
        sims.append(sim)
    results = _results(sims)
    results["info"]["agent_info"]["llm"] = model
    results["info"]["num_trials"] = 4
    return results


def test_error_analysis_from_a_score_store(tmp_path):
    paths = []
    for model, ok in (("agent-a", {0, 1, 2, 3}), ("agent-b", {3})):
        path = tmp_path / f"{model}.json"
        path.write_text(json.dumps(_run(model, ok)))
        paths.append(str(path))
    store = tmp_path / "store"
    assert main(["score", *paths, "--out", str(store)]) == 0
    out = tmp_path / "report"
    assert main(["report", "--scores", str(store), "--out", str(out), "--notebooks",
                 "error_analysis", "--set", "n_resamples=200"]) == 0
    page = (out / "error_analysis.html").read_text()
    # the taxonomy leads, with the stored reviews' faults, and its cells link to episodes
    assert page.index("Failure taxonomy") < page.index("Flips between configurations")
    text = BeautifulSoup(page, "html.parser").get_text()   # headers may break at "_"
    assert "fault_policy_violation" in text and "critical_user_error" in text
    links = re.findall(r'href="(error_analysis_pages/episodes/[^"]+)"', page)
    assert links and all((out / link).is_file() for link in links)
    # the only task flipped (1.0 -> 0.25) beyond trial noise
    flips = (out / "tables" / "error_analysis__flips_agent-a_vs_agent-b.csv").read_text()
    assert "lost" in flips
    conversations = list((out / "error_analysis_pages" / "conversations").glob("*.html"))
    assert conversations
    marked = [c.read_text() for c in conversations if "first divergence" in c.read_text()]
    assert marked and any("review · agent · critical · policy_violation" in m for m in marked)
    # every episode listed and searchable, each with its conversation (issue 43)
    listed = (out / "error_analysis_pages" / "episodes.html").read_text()
    assert 'href="error_analysis_pages/episodes.html"' in page
    assert listed.count("?from=episodes") == 8 == len(conversations)
    # the failures drawn, each beside its CSV
    figures = {p.name for p in (out / "figures").glob("error_analysis__*")}
    for name in ("failure_shares", "divergence_turns"):
        assert {f"error_analysis__{name}.png", f"error_analysis__{name}.csv"} <= figures
    tables = {p.name for p in (out / "tables").glob("error_analysis__*.csv")}
    assert {"error_analysis__failure_taxonomy_by_configuration.csv",
            "error_analysis__usersim_reliability.csv",
            "error_analysis__without_user_errors.csv"} <= tables
