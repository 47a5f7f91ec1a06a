"""Three configurations of one domain, as researchers have them (issue 40, items 4 and 5):
gpt-4.1 and a fine-tuned gpt-4.1 on the same 20 airline tasks, claude on 50, one trial
each. Every shared-task pair is compared without a parameter, a baseline is spelled as on
every page, an unknown one is refused with the choices, and the flips say how many trials
the noise test needs instead of a count."""

from __future__ import annotations

import json

import pandas as pd
import pytest

from accordkit.cli import main

from ..ingest.formats.test_tau2_reviews import _results, _sim

pytestmark = pytest.mark.slow

RUNS = {"gpt-4.1": 20, "ft:gpt-4.1:org::x1": 20, "claude-sonnet-4-5": 50}


def _task(i: int) -> dict:
    return {"id": f"t{i}", "user_scenario": {"persona": None, "instructions": "Cancel R1."},
            "evaluation_criteria": {"actions": [{"action_id": "a0", "requestor": "assistant",
                                                 "name": "cancel_reservation",
                                                 "arguments": {"id": "R1"}}],
                                    "reward_basis": ["DB"]}}


def _files(folder) -> list[str]:
    paths = []
    for k, (model, n_tasks) in enumerate(RUNS.items()):
        sims = []
        for i in range(n_tasks):
            sim = _sim(f"{k}-{i}", task=f"t{i}")
            if (i + k) % 3 == 0:   # the right reservation: reward 1
                sim["messages"][2]["tool_calls"][0]["arguments"] = {"id": "R1"}
                sim["reward_info"]["reward"] = 1.0
                sim["reward_info"]["action_checks"][0]["action_match"] = True
                sim["reward_info"]["reward_breakdown"] = {"DB": 1.0}
            sims.append(sim)
        results = _results(sims, tasks=[_task(i) for i in range(n_tasks)])
        results["info"]["agent_info"]["llm"] = model
        path = folder / f"run_{k}.json"
        path.write_text(json.dumps(results))
        paths.append(str(path))
    return paths


def test_every_shared_task_pair_is_compared_and_flips_say_what_they_need(tmp_path):
    out = tmp_path / "rep"
    code = main(["report", "--source", *_files(tmp_path), "--out", str(out), "--notebooks",
                 "compare_models", "error_analysis", "--set", "n_resamples=200"])
    assert code == 0
    plan = pd.read_csv(out / "tables" / "compare_models__comparison_plan.csv")
    assert len(plan) == 3 and plan["comparable"].all() and set(plan["n_compared"]) == {20}
    both = pd.read_csv(out / "tables" / "compare_models__all_comparisons.csv")
    assert len(both[both["metric"] == "reward"]) == 3 and set(both["n_pairs"]) == {20}
    flips = sorted(p.name for p in (out / "tables").glob("error_analysis__flips_*.csv"))
    assert len(flips) == 3, flips
    page = (out / "error_analysis.html").read_text()
    assert page.count("shared task(s) moved") >= 3
    assert "needs ≥ 6 trials per task on each side (here 1): not tested" in page
    assert "beyond noise" not in page.split("Flips between configurations")[1].split(
        "The user simulator")[0]


def test_a_baseline_is_spelled_as_on_every_page_and_an_unknown_one_is_refused(tmp_path,
                                                                              capsys):
    files = _files(tmp_path)
    out = tmp_path / "rep"
    assert main(["report", "--source", *files, "--out", str(out), "--notebooks",
                 "compare_models", "--set", "n_resamples=200", "--set",
                 "baseline=gpt-4.1"]) == 0
    plan = pd.read_csv(out / "tables" / "compare_models__comparison_plan.csv")
    assert set(plan["baseline"]) == {"gpt-4.1 (llm_agent) | user: sim-u (user_simulator)"}
    assert len(plan) == 2
    # a usage error, said before any notebook runs, with the choices
    bad = tmp_path / "bad"
    assert main(["report", "--source", *files, "--out", str(bad), "--notebooks",
                 "compare_models", "--set", "n_resamples=200", "--set",
                 "baseline=gpt-4"]) == 64
    err = capsys.readouterr().err
    assert "baseline 'gpt-4' names no configuration; choose an agent model " \
           "(claude-sonnet-4-5, ft:gpt-4.1:org::x1, gpt-4.1)" in err
    assert not bad.exists()
    assert main(["report", "--source", *files, "--out", str(bad), "--notebooks",
                 "compare_models", "--set", "pairs=[[gpt-4.1, o1]]"]) == 64
    assert "pairs: 'o1' names no configuration" in capsys.readouterr().err
