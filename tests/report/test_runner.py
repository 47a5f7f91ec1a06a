"""End-to-end: the report notebooks executed by papermill inside pytest (small parameters)."""

from __future__ import annotations

import json

import pytest

from accordkit.report.runner import build_report

from ..conftest import REPORT_KEY as FAKE_KEY
from ..conftest import SMALL_REPORT as SMALL

# sample_report and fixture_report: built once per session in tests/conftest.py (shared
# with tests/browser/); this module's tests start kernels, so they carry the notebook marker


def test_every_notebook_runs_on_the_sample(sample_report):
    _, results = sample_report
    assert {n: r.status for n, r in results.items()} == {
        "accord_results": "ok", "goalshift_results": "ok", "tau2_results": "ok",
        "usersim_unit_tests": "ok", "compare_models": "ok", "error_analysis": "ok",
        "reliability": "ok"}, {n: r.reason for n, r in results.items()}


@pytest.mark.parametrize("name", [
    "tables/accord_results__table3.csv", "tables/accord_results__table3.md",
    "tables/accord_results__table3.tex", "tables/accord_results__table4_dynamics.csv",
    "tables/accord_results__table4_cost.csv", "figures/accord_results__dynamics.png",
    "figures/accord_results__dynamics.svg",
    "tables/goalshift_results__main_by_domain_model.csv",
    "tables/goalshift_results__gsrt_by_domain_model.csv",
    "tables/goalshift_results__main_by_persona.csv",
    "tables/goalshift_results__pass_hat_k.csv", "tables/goalshift_results__default_vs_upstream.csv",
    "figures/goalshift_results__gsrt_distributions.png",
    "figures/goalshift_results__pass_hat_k.png", "figures/goalshift_results__recovery_by_persona.png",
    "figures/goalshift_results__redundancy_by_domain.png",
    "tables/usersim_unit_tests__table6_pass_rates.csv",
    "tables/usersim_unit_tests__judge_agreement.csv",
    "tables/compare_models__all_comparisons.csv", "figures/compare_models__forest.png",
    "tables/compare_models__comparison_plan.csv",
    "tables/tau2_results__reward.csv", "tables/tau2_results__pass_k.csv",
    "tables/tau2_results__termination.csv", "tables/tau2_results__cost_per_task.csv",
    "tables/tau2_results__comparison_plan.csv", "tables/tau2_results__paired_reward.csv",
    "figures/tau2_results__pass_k.png", "tau2_results.html",
    "tables/error_analysis__failure_rates.csv",
    "accord_results.html", "goalshift_results.html", "index.html", "provenance.json",
    "notebooks/accord_results.ipynb",
])
def test_expected_outputs_exist(sample_report, name):
    out, _ = sample_report
    assert (out / name).is_file(), name


def test_no_cell_errored_and_pages_have_figures(sample_report):
    import nbformat

    out, results = sample_report
    for name in results:
        nb = nbformat.read(out / "notebooks" / f"{name}.ipynb", as_version=4)
        errors = [o for c in nb.cells if c.cell_type == "code" for o in c.get("outputs", [])
                  if o.get("output_type") == "error"]
        assert not errors, f"{name}: {errors[0]['ename']}: {errors[0]['evalue']}"
    page = (out / "goalshift_results.html").read_text()
    assert page.count("data:image/png;base64") >= 4
    assert "Traceback" not in page


def test_every_figure_has_its_numbers_and_notes_read_plainly(sample_report):
    import re

    out, _ = sample_report
    figures = sorted((out / "figures").glob("*.png"))
    assert figures
    missing = [f.name for f in figures if not f.with_suffix(".csv").is_file()]
    assert not missing, f"figures without the CSV of their numbers: {missing}"
    for page in out.glob("*.html"):
        # a warning in a Notes box says what, not which file and line raised it
        assert not re.search(r"\.py:\d+: \w*Warning", page.read_text()), page.name


def test_tables_carry_their_provenance(sample_report):
    out, _ = sample_report
    md = (out / "tables/accord_results__table3.md").read_text()
    assert "cluster" in md and "n_resamples=200" in md and "accordkit" in md
    meta = json.loads((out / "tables/accord_results__table3.provenance.json").read_text())
    assert meta["provenance"]["parameters"]["seed"] == 1
    prov = json.loads((out / "provenance.json").read_text())
    assert {s["kind"] for s in prov["sources"]} == {"folder"}
    assert any(j["judge"] == "usersim_tests" for j in prov["judges"])
    tex = (out / "tables/accord_results__table3.tex").read_text()
    assert tex.startswith("% accordkit")


def test_index_links_every_page(sample_report):
    out, results = sample_report
    index = (out / "index.html").read_text()
    for r in results.values():
        assert f'href="{r.html}"' in index


def test_no_api_key_in_any_artifact(sample_report):
    out, _ = sample_report
    for path in out.rglob("*"):
        if path.is_file():
            assert FAKE_KEY.encode() not in path.read_bytes(), path


def test_fixture_report_skips_accord_notebooks_with_reason(fixture_report):
    _, results = fixture_report
    assert results["accord_results"].status == "skipped"
    assert results["accord_results"].reason == "no AcCoRD episodes in the sources"
    assert results["usersim_unit_tests"].status == "skipped"
    assert results["goalshift_results"].status == "ok", results["goalshift_results"].reason
    assert results["error_analysis"].status == "ok", results["error_analysis"].reason


def test_fixture_report_reads_real_files(fixture_report):
    import pandas as pd

    out, _ = fixture_report
    modes = pd.read_csv(out / "tables/goalshift_results__default_vs_upstream.csv")
    assert modes["source"].str.contains("banking_gpt-4.1_13sims").any()
    index = (out / "index.html").read_text()
    assert "skipped" in index and "no AcCoRD episodes in the sources" in index


def test_a_failed_notebook_does_not_stop_the_others(tmp_path, sample_dir, report_command):
    # (a bad ci_method no longer reaches a notebook: it is a usage error, see
    # test_parameters.py; a grouping column the data lacks fails accord_results alone)
    code = report_command("--out", str(tmp_path), "--notebooks", "accord_results",
                          "error_analysis", "--set", "by=no_such_column", "--set",
                          "n_resamples=50")
    saved = json.loads((tmp_path / "results.json").read_text())
    results = {r["notebook"]: r for r in saved["notebooks"]}
    assert code == 1
    assert results["accord_results"]["status"] == "failed"
    assert "no_such_column" in results["accord_results"]["reason"]
    assert results["error_analysis"]["status"] == "ok"
    assert "failed" in (tmp_path / "index.html").read_text()


@pytest.mark.parametrize("name", ["accord_results", "usersim_unit_tests", "goalshift_results",
                                  "tau2_results"])
def test_notebooks_run_with_their_default_sources_as_in_jupyterlab(tmp_path, sample_dir, name):
    """`make lab` opens notebooks/ : the default parameters must point at the sample."""
    import papermill as pm

    from accordkit.report.notebooks import NOTEBOOK_DIR

    pm.execute_notebook(NOTEBOOK_DIR / f"{name}.ipynb", tmp_path / "out.ipynb",
                        parameters={"n_resamples": 100, "out_dir": str(tmp_path),
                                    "figures_dir": str(tmp_path / "figures")},
                        kernel_name="python3", cwd=str(NOTEBOOK_DIR), progress_bar=False)
    assert any((tmp_path / "tables").glob(f"{name}__*.csv"))


def _no_cell_errors(out, name):
    import nbformat

    nb = nbformat.read(out / "notebooks" / f"{name}.ipynb", as_version=4)
    return [o for c in nb.cells if c.cell_type == "code" for o in c.get("outputs", [])
            if o.get("output_type") == "error"]


def test_sample_comparisons_stay_within_domain_and_are_paired(sample_report):
    import pandas as pd

    out, _ = sample_report
    comparisons = pd.read_csv(out / "tables/compare_models__all_comparisons.csv")
    assert comparisons["paired"].all()
    # every pair of a domain, each on the tasks both ran (the plan's n_compared)
    plan = pd.read_csv(out / "tables/compare_models__comparison_plan.csv")
    compared = plan[plan["comparable"]].set_index(["benchmark", "domain", "baseline",
                                                   "between_value"])["n_compared"]
    for row in comparisons.itertuples(index=False):
        key = (row.benchmark, row.domain, row.baseline, row.configuration)
        assert compared.loc[key] == row.n_pairs, key
    md = next((out / "tables").glob("compare_models__agentchangebench__airline__*.md"))
    assert "each pair paired on the 12 tasks both ran" in md.read_text()


def test_goalshift_shows_stored_reward_and_pass_k_by_configuration(sample_report):
    import pandas as pd

    out, _ = sample_report
    main = pd.read_csv(out / "tables/goalshift_results__main_by_domain_model.csv")
    assert {"mean reward", "TSR"} <= set(main["metric"])
    passk = pd.read_csv(out / "tables/goalshift_results__pass_hat_k.csv")
    assert {"domain", "configuration"} <= set(passk.columns)
    assert passk.groupby(["domain", "configuration"]).ngroups == 6


@pytest.fixture(scope="module")
def tau2_report(tmp_path_factory, tau2_dir):
    out = tmp_path_factory.mktemp("tau2_report") / "rep"
    results = build_report(sorted(str(p) for p in tau2_dir.glob("*.json")), out=out,
                           params=SMALL, jobs=2, progress=False)
    return out, {r.notebook: r for r in results}


def test_plain_tau2_runs_report_with_exit_0(tau2_report):
    out, results = tau2_report
    assert not [n for n, r in results.items() if r.status == "failed"], \
        {n: r.reason for n, r in results.items()}
    assert results["tau2_results"].status == "ok"
    # plain tau2 runs have no goal shifts: no goal-shift page (issue 36, item 3)
    assert results["goalshift_results"].status == "skipped"
    assert "no AgentChangeBench episodes" in results["goalshift_results"].reason
    assert not _no_cell_errors(out, "tau2_results")


def test_tau2_report_numbers_match_the_fixture_readme(tau2_report):
    import pandas as pd

    out, _ = tau2_report
    reward = pd.read_csv(out / "tables/tau2_results__reward.csv")
    mean = reward[reward["metric"] == "mean reward"].set_index("domain")["estimate"]
    assert mean["airline"] == pytest.approx(0.4375)
    passk = pd.read_csv(out / "tables/tau2_results__pass_k.csv")
    airline = passk[passk["domain"] == "airline"].set_index("k")["pass_hat_k"]
    assert airline.round(4).tolist() == [0.4375, 0.25, 0.25, 0.25]
    checks = pd.read_csv(out / "tables/tau2_results__reward_checks.csv")
    assert {"DB check", "action checks"} <= set(checks["metric"])
    assert not (out / "goalshift_results.html").exists()
    assert not (out / "tables/goalshift_results__gsrt_by_domain_model.csv").exists()


def test_a_plain_tau2_report_leads_with_tau2s_own_reward_and_gives_one_interval_each(
        tau2_report):
    """Issue 36, item 3: the index led with accordkit's re-scored TSR for tau2 runs; the
    success rate and pass^1 had two intervals on one page; pass^k used 2,000 resamples."""
    import pandas as pd

    out, _ = tau2_report
    headline = json.loads((out / "results.json").read_text())["headline"]
    assert [r["metric"] for r in headline] == ["mean reward", "mean reward"]
    assert headline[0]["href"].startswith("tau2_results.html#")
    reward = pd.read_csv(out / "tables/tau2_results__reward.csv")
    assert set(reward["metric"]) == {"mean reward"}
    passk = pd.read_csv(out / "tables/tau2_results__pass_k.csv")
    page = (out / "tau2_results.html").read_text()
    assert "pass^1 = success rate" in page and f"{SMALL['n_resamples']:,} resamples" in page
    # pass^1 is the stored success rate: 7 of 16 airline episodes succeeded (README)
    airline = passk[(passk["domain"] == "airline") & (passk["k"] == 1)]
    assert airline["pass_hat_k"].iloc[0] == pytest.approx(7 / 16)


def test_two_runs_differing_by_one_task_are_compared_on_their_shared_tasks(tmp_path,
                                                                             tau2_dir):
    import pandas as pd

    data = json.loads((tau2_dir / "airline_grok-3_4tasks_4trials.json").read_text())
    first = tmp_path / "run_a.json"
    first.write_text(json.dumps(data))
    dropped = data["tasks"][0]["id"]
    data["simulations"] = [s for s in data["simulations"] if s["task_id"] != dropped]
    for sim in data["simulations"]:
        sim["id"] = f"{sim['id']}-b"
    data["info"]["agent_info"]["llm"] = "other-model"
    second = tmp_path / "run_b.json"
    second.write_text(json.dumps(data))
    out = tmp_path / "rep"
    results = build_report([str(first), str(second)], out=out,
                           params={**SMALL, "shared_tasks": True},
                           notebooks=["tau2_results"], progress=False)
    assert [r.status for r in results] == ["ok"], [r.reason for r in results]
    plan = pd.read_csv(out / "tables/tau2_results__comparison_plan.csv")
    assert plan["comparable"].all() and set(plan["n_compared"]) == {3}
    assert plan["reason"].str.contains("compared on the 3 tasks").any()
    diffs = pd.read_csv(out / "tables/tau2_results__paired_reward.csv")
    assert len(diffs) == 1 and diffs["n_pairs"].iloc[0] == 3 and diffs["paired"].all()


@pytest.mark.parametrize("name", ["airline_grok-3_4tasks_4trials.json",
                                  "telecom_grok-3_5tasks_1trial.json"])
def test_each_tau2_fixture_alone(tmp_path, tau2_dir, name):
    results = build_report([str(tau2_dir / name)], out=tmp_path / "rep", params=SMALL,
                           notebooks=["goalshift_results", "tau2_results"], progress=False)
    assert {r.notebook: r.status for r in results} == {
        "goalshift_results": "skipped", "tau2_results": "ok"}, [r.reason for r in results]


def test_header_only_tau2_file_reports_with_exit_0(tmp_path, tau2_dir):
    from accordkit.cli import main

    data = json.loads((tau2_dir / "telecom_grok-3_5tasks_1trial.json").read_text())
    data["simulations"] = []
    path = tmp_path / "header_only.json"
    path.write_text(json.dumps(data))
    assert main(["report", "--source", str(path), "--out", str(tmp_path / "rep")]) == 0
    saved = json.loads((tmp_path / "rep" / "results.json").read_text())
    assert {r["status"] for r in saved["notebooks"]} == {"skipped"}
    assert saved["skipped_records"][0]["episodes"] == 0


def test_store_skipped_summary_counts_an_unreadable_input_and_groups_by_source(tmp_path):
    from accordkit.report.runner import store_skipped_summary

    folder = tmp_path / "runs"
    (folder / "sub").mkdir(parents=True)
    good, bad = folder / "a.parquet", folder / "sub" / "b.parquet"
    good.write_bytes(b"x")
    bad.write_bytes(b"y")
    manifest = {"inputs": [
        {"source": str(good), "episodes": 10, "skipped": 2, "error": None,
         "problems": ["file a, record r1, field f: why", "file a, record r2, field f: why"]},
        {"source": str(bad), "episodes": 0, "skipped": 0, "error": "unreadable parquet file",
         "problems": []},
        {"source": "org/name", "episodes": 3, "skipped": 0, "error": None, "problems": []}]}
    by_source = store_skipped_summary(manifest, [str(folder), "org/name"])
    assert by_source == [
        {"source": str(folder), "episodes": 10, "skipped": 3,
         "reasons": ["file a, record r1, field f: why", "file a, record r2, field f: why",
                     f"file {bad}, whole input: unreadable parquet file"]},
        {"source": "org/name", "episodes": 3, "skipped": 0, "reasons": []}]
    per_input = store_skipped_summary(manifest)
    assert [e["skipped"] for e in per_input] == [2, 1, 0]


def test_a_report_of_an_unreadable_input_lists_it_and_strict_refuses_it(tmp_path, sample_dir):
    from accordkit.report.runner import SkippedRecordsError

    src = tmp_path / "in"
    src.mkdir()
    good = sorted((sample_dir / "goalshift").rglob("*.parquet"))[0]
    (src / "good.parquet").write_bytes(good.read_bytes())
    (src / "broken.parquet").write_bytes(b"PAR1 not really")
    res = build_report([str(src)], out=tmp_path / "rep", params={"n_resamples": 100},
                       notebooks=["reliability"], progress=False)
    assert res.n_skipped == 1
    (entry,) = res.skipped
    assert entry["skipped"] == 1 and entry["reasons"][0].startswith(
        f"file {src / 'broken.parquet'}, whole input: unreadable parquet file")
    assert "broken.parquet" in (tmp_path / "rep" / "index.html").read_text()
    with pytest.raises(SkippedRecordsError, match="1 bad record"):
        build_report([str(src)], out=tmp_path / "strict", params={"n_resamples": 100},
                     notebooks=["reliability"], progress=False, strict=True)
    assert not (tmp_path / "strict").exists()


def test_tau2_report_says_only_what_the_data_supports(tau2_report):
    """Issue 40 item 5 on the real fixtures: the airline run's 0/1 rewards give mean reward
    and pass^1 one interval; plain tau2 rows show no goal-shift flags; the telecom run of one
    trial per task says once that the noise tests need two trials, with no "cannot fit"
    lines and no False for a test that was not made."""
    import pandas as pd

    out, _ = tau2_report
    reward = pd.read_csv(out / "tables/tau2_results__reward.csv").set_index("domain")
    passk = pd.read_csv(out / "tables/tau2_results__pass_k.csv")
    one = passk[(passk["domain"] == "airline") & (passk["k"] == 1)].iloc[0]
    assert one["interval_of"] == "mean reward"
    assert (one["ci_low"], one["ci_high"]) == pytest.approx(
        (reward.loc["airline", "ci_low"], reward.loc["airline", "ci_high"]))
    rates = pd.read_csv(out / "tables/error_analysis__failure_rates.csv")
    assert "unrecovered_shift" not in rates and "transfer" not in rates
    assert "redundant_calls" in rates
    page = (out / "reliability.html").read_text()
    assert page.count("ran one trial per task:") == 1 and "needs ≥ 2 trials per task" in page
    assert "cannot fit variance components" not in page
