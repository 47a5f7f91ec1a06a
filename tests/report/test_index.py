"""The index's headline tables: short configuration labels, full ones on hover (issue 36)."""

from __future__ import annotations

from bs4 import BeautifulSoup

from accordkit.report.index import _headline_section


def _row(domain: str, config: str, estimate: float) -> dict:
    return {"benchmark": "tau2 format", "metric": "mean reward", "what": "mean reward",
            "group": {"domain": domain, "configuration": config}, "estimate": estimate,
            "ci_low": 0.1, "ci_high": 0.9, "n_clusters": 12, "small_cell": False,
            "confidence": 0.95, "href": "tau2_results.html#tbl-x"}


def test_configuration_labels_are_short_with_the_full_label_on_hover():
    full = ["m1 (llm_agent) | user: u (user_simulator)",
            "m2 <b> (llm_agent) | user: u (user_simulator)"]
    soup = BeautifulSoup(_headline_section([_row("airline", full[0], 0.5),
                                            _row("airline", full[1], 0.6)]), "html.parser")
    spans = soup.select("tr.headline-row span[title]")
    assert [(s.get_text(), s["title"]) for s in spans] == [("m1", full[0]), ("m2 <b>", full[1])]
    assert "every configuration here: agent implementation llm_agent; user u " \
           "(user_simulator)" in soup.select_one("p.what").get_text()
    assert soup.find("b") is None                          # the name stays text
