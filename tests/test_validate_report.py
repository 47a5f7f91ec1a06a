"""``validation_summary``: counts per benchmark/domain/model and every problem."""

from __future__ import annotations

import json
import warnings

import pytest

from accordkit.schema import EpisodeValidationError
from accordkit.validate_report import SUMMARY_COLUMNS, validation_summary


@pytest.fixture(autouse=True)
def _quiet():
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        yield


def test_counts_for_fixture_files(acb_dir, tau2_dir):
    counts, problems = validation_summary([
        acb_dir / "banking_gpt-4.1_13sims_tasks-trimmed.json",
        acb_dir / "airline_gemini-2.5-flash_old_checkpoint_1sim.json",
        tau2_dir / "airline_grok-3_4tasks_4trials.json",
        tau2_dir / "telecom_grok-3_5tasks_1trial.json",
    ])
    assert problems == []
    assert list(counts.columns) == list(SUMMARY_COLUMNS)
    rows = counts.astype({c: int for c in ("n_episodes", "n_scenarios", "n_sources")})
    assert rows.values.tolist() == [
        ["agentchangebench", "airline", "gemini/gemini-2.5-flash", 1, 1, 1],
        ["agentchangebench", "banking", "gpt-4.1", 13, 13, 1],
        ["tau2", "airline", "xai/grok-3", 16, 4, 1],
        ["tau2", "telecom", "xai/grok-3", 5, 5, 1],
    ]
    assert str(counts["n_episodes"].dtype) == "Int64"


def test_every_problem_is_listed(acb_dir, tmp_path):
    bad = tmp_path / "bad.json"
    raw = json.loads((acb_dir / "airline_gemini-2.5-flash_old_checkpoint_1sim.json").read_text())
    raw["simulations"][0]["trial"] = "zero"
    bad.write_text(json.dumps(raw))
    counts, problems = validation_summary(
        [acb_dir / "retail_gemini-2.5-flash_old_checkpoint_1sim.json", bad,
         tmp_path / "missing.json"])
    assert counts["n_episodes"].tolist() == [1]
    assert [(p.source, p.field) for p in problems] == [
        (str(bad), "trial"), (str(tmp_path / "missing.json"), "(path)")]
    assert all(str(p).startswith(f"file {p.source}, record ") for p in problems)


def test_empty_sources_give_empty_counts(acb_dir):
    counts, problems = validation_summary(acb_dir / "retail_gpt-4.1_header-only_0sims.json")
    assert counts.empty and list(counts.columns) == list(SUMMARY_COLUMNS)
    assert problems == []


def test_raise_mode_stops_at_the_first_problem(tmp_path):
    with pytest.raises(EpisodeValidationError, match="no such file"):
        validation_summary(tmp_path / "nope.json", errors="raise")
