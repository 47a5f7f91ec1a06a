"""Runs that would overwrite each other, and filters that select nothing (issue 41.5)."""

from __future__ import annotations

import json
import re

import pytest

from accordkit.cli import main
from accordkit.report.grid import expand_grid
from accordkit.report.notebooks import InputFacts
from accordkit.report.runs import empty_selection


@pytest.mark.parametrize("grid, shared", [
    ({"models": [["a", "b"], ["a+b"]]}, "'models=a+b'"),               # the reproduction
    ({"domains": [["Shop"], ["shop"]]}, "write one folder"),           # case-blind disks
])
def test_runs_that_would_share_a_name_or_folder_are_refused(grid, shared):
    with pytest.raises(ValueError, match=f"grid: two runs would both .*{re.escape(shared)}"):
        expand_grid({"grid": grid})


def test_colliding_runs_are_a_usage_error_that_writes_nothing(tmp_path, capsys):
    params = tmp_path / "p.yaml"
    params.write_text('grid:\n  models: [[a, "b"], ["a+b"]]\n')
    out = tmp_path / "rep"
    assert main(["report", "--params", str(params), "--out", str(out)]) == 64
    err = capsys.readouterr().err
    assert "two runs would both be named 'models=a+b'" in err
    assert "models=['a', 'b'] and models=['a+b']" in err
    assert not out.exists()


def test_distinct_runs_keep_their_names():
    runs = expand_grid({"grid": {"models": [["a", "b"], ["c"]], "seed": [0, 1]}})
    assert [name for name, _ in runs] == ["models=a+b,seed=0", "models=a+b,seed=1",
                                          "models=c,seed=0", "models=c,seed=1"]


FACTS = InputFacts(3, frozenset({"tau2"}), {"tau2": 2}, frozenset(),
                   frozenset({("gpt-4o", "airline"), ("grok-3", "telecom")}))


@pytest.mark.parametrize("params, empty", [
    ({}, False),
    ({"models": ["gpt-4o"]}, False),
    ({"models": "gpt-4o"}, False),                     # one name as text
    ({"models": ["gpt-4o", "nosuch"]}, False),
    ({"models": ["nosuch"]}, True),
    ({"domains": ["retail"]}, True),
    ({"models": ["gpt-4o"], "domains": ["telecom"]}, True),   # each exists, never together
])
def test_a_filter_selects_nothing_only_when_no_episode_matches(params, empty):
    reason = empty_selection(params, FACTS)
    assert (reason is not None) == empty
    if empty:
        assert "select no episode" in reason
        assert "'gpt-4o', 'grok-3'" in reason and "'airline', 'telecom'" in reason


def test_a_report_whose_filter_selects_nothing_fails_naming_what_exists(tau2_dir, tmp_path,
                                                                       capsys):
    """The reproduction: ``models: [nosuch]`` gave a page of 0 episodes marked "ok"."""
    out = tmp_path / "rep"
    source = tau2_dir / "telecom_grok-3_5tasks_1trial.json"
    assert main(["report", "--source", str(source), "--set", "models=[nosuch]",
                 "--notebooks", "tau2_results", "--out", str(out)]) == 1
    capsys.readouterr()
    (result,) = json.loads((out / "results.json").read_text())["notebooks"]
    assert result["status"] == "failed"
    assert "models ['nosuch'] select no episode" in result["reason"]
    assert "grok-3" in result["reason"] and "telecom" in result["reason"]
