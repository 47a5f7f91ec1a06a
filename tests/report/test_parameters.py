"""The report's parameter table, its check, and the report CLI's usage errors (exit 64)."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from accordkit.cli import main
from accordkit.report.parameters import PARAMETERS, check_parameters
from accordkit.report.runner import DEFAULT_PARAMETERS

NOTEBOOKS = Path(__file__).resolve().parents[2] / "notebooks"


def _cell_names(path: Path) -> set[str]:
    text = path.read_text("utf-8")
    cell = text.split('# %% tags=["parameters"]', 1)[1].split("\n# %%", 1)[0]
    return set(re.findall(r"^([a-z_]+) =", cell, flags=re.MULTILINE))


def test_every_notebook_parameter_is_in_the_table():
    names = set(DEFAULT_PARAMETERS)
    for path in sorted(NOTEBOOKS.glob("*.py")):
        names |= _cell_names(path)
    assert names <= set(PARAMETERS), sorted(names - set(PARAMETERS))


def test_every_notebook_parameter_has_a_comment_in_its_cell():
    for path in sorted(NOTEBOOKS.glob("*.py")):
        cell = path.read_text("utf-8").split('# %% tags=["parameters"]', 1)[1].split(
            "\n# %%", 1)[0]
        lines = cell.splitlines()
        bare = [line for before, line in zip(["", *lines], lines, strict=False)
                if re.match(r"^[a-z_]+ =", line) and "#" not in line
                and not before.startswith("#")]
        assert not bare, f"{path.name}: {bare}"


@pytest.mark.parametrize("params, match", [
    ({"n_resample": 5}, r"unknown report parameter 'n_resample' \(did you mean 'n_resamples'"),
    ({"grid": {"seed": 3}}, "grid: seed must be a non-empty list"),
    ({"grid": [1, 2]}, "grid must be a mapping"),
    ({"grid": {"sead": [1]}}, "unknown report parameter 'sead'"),
])
def test_check_refuses_what_the_report_does_not_take(params, match):
    with pytest.raises(ValueError, match=match):
        check_parameters(params)


@pytest.mark.parametrize("args, match", [
    (["--set", "n_resamples"], "--set takes KEY=VALUE"),
    (["--set", "nosuch=3"], "unknown report parameter 'nosuch'"),
    (["--notebooks", "nosuch"], r"unknown notebook\(s\) \['nosuch'\]"),
    (["--params", "missing.yaml"], "--params missing.yaml"),
    (["--jobs", "0"], "--jobs must be at least 1"),
])
def test_usage_errors_exit_64_in_one_line_and_write_nothing(tmp_path, capsys, args, match,
                                                             monkeypatch):
    monkeypatch.chdir(tmp_path)
    out = tmp_path / "rep"
    assert main(["report", *args, "--out", str(out)]) == 64
    err = capsys.readouterr().err
    assert re.search(match, err) and "Traceback" not in err and len(err.splitlines()) == 1
    assert not out.exists()


def test_a_params_file_that_is_not_yaml_or_an_out_that_is_a_file_are_usage_errors(
        tmp_path, capsys):
    bad = tmp_path / "grid.yaml"
    bad.write_text("grid: [unclosed\n")
    assert main(["report", "--params", str(bad), "--out", str(tmp_path / "r")]) == 64
    assert "not valid YAML" in capsys.readouterr().err
    afile = tmp_path / "afile"
    afile.write_text("x")
    assert main(["report", "--out", str(afile)]) == 64
    assert "exists and is not a folder" in capsys.readouterr().err


def test_sources_that_give_no_episode_at_all_exit_1(tmp_path, capsys):
    bad = tmp_path / "notjson.json"
    bad.write_text("this is not json")
    assert main(["report", "--source", str(bad), "--out", str(tmp_path / "r")]) == 1
    err = capsys.readouterr().err
    assert "no episode could be read" in err and "notjson.json" in err


# --- parameters never become code (issue 35, item 3) -------------------------------------

@pytest.mark.parametrize("text, match", [
    ('seed: !!binary IjsgaW1wb3J0IG9zOyBvcGVuKCJQV05FRCIsICJ3IikgIw==\n',
     r"seed: a !!binary value \(bytes\) is not a plain value"),
    ('domains: !!set {"x\\"; open(\\"PWNED\\", \\"w\\") #": null}\n',
     "domains: a set is not a plain value"),
    ('grid:\n  models: [a, !!binary IjsgMSAj]\n', r"grid.models\[1\]: a !!binary value"),
    ('metadata: {when: 2024-01-01}\n', r"metadata.when: a date \(2024-01-01: quote it"),
    ('revision: 2024-01-01\n', "revision: a date"),
    ('n_resamples: "1e9; import os"\n', "n_resamples: expected a whole number"),
    ('confidence: .nan\n', "confidence: nan is not a finite number"),
    ('ci_method: bca2\n', "ci_method: expected one of bca, percentile, basic, t"),
    ('out_dir: /tmp/elsewhere\n', "out_dir: set by the report"),
    ('figures_dir: /tmp/elsewhere\n', "figures_dir: set by the report"),
    ('grid:\n  seed: [0, true]\n', r"grid.seed\[1\]: expected a whole number"),
])
def test_a_params_file_with_values_that_are_not_plain_data_is_refused_before_any_run(
        tmp_path, capsys, monkeypatch, text, match):
    monkeypatch.chdir(tmp_path)
    grid = tmp_path / "grid.yaml"
    grid.write_text(text)
    out = tmp_path / "rep"
    assert main(["report", "--params", str(grid), "--out", str(out)]) == 64
    err = capsys.readouterr().err
    assert re.search(match, err), err
    assert len(err.splitlines()) == 1 and not out.exists()
    assert not (tmp_path / "PWNED").exists()


@pytest.mark.parametrize("item, match", [
    ("seed=!!binary IjsgMSAj", "seed: a !!binary value"),
    ("models=!!set {a: null}", "models: a set"),
    ("show=-1", "show: expected a whole number of at least 0"),
])
def test_set_values_that_are_not_plain_data_are_refused(tmp_path, capsys, item, match):
    out = tmp_path / "rep"
    assert main(["report", "--set", item, "--out", str(out)]) == 64
    assert re.search(match, capsys.readouterr().err) and not out.exists()


def test_the_library_route_checks_parameters_too(tmp_path):
    from accordkit.report.runner import build_report

    with pytest.raises(ValueError, match="seed: a !!binary value"):
        build_report(out=tmp_path / "rep", params={"seed": b'"; 1 #'})
    assert not (tmp_path / "rep").exists()


@pytest.mark.parametrize("hostile", [
    'x"; open("PWNED", "w") #', "x\\", 'a\\"; 1 #', "line\nbreak\"\"\"", "\u2028'\u0085",
])
def test_text_that_passes_the_check_stays_text_in_the_notebook(hostile, tmp_path):
    """papermill writes accepted text values as string literals: parsing the injected cell
    gives back the very text, and no other statement."""
    import ast

    import nbformat
    from papermill.parameterize import parameterize_notebook

    nb = nbformat.v4.new_notebook()
    nb.metadata["kernelspec"] = {"name": "python3", "language": "python"}
    nb.metadata["papermill"] = {}
    nb.cells = [nbformat.v4.new_code_cell("baseline = None", metadata={"tags": ["parameters"]})]
    values = {"baseline": hostile, "models": [hostile], "metadata": {"k": hostile}}
    check_parameters(values)
    cell = parameterize_notebook(nb, values, kernel_name="python3").cells[1].source
    body = ast.parse(cell).body
    assert [type(s) for s in body] == [ast.Assign] * 3
    assert {s.targets[0].id: ast.literal_eval(s.value) for s in body} == values


# --- the inputs may be named by parameters (issue 36, item 1) ----------------------------

def _report_of_goalshift_only(tmp_path, args):
    """A report asked, by parameters, for the goal-shift sample alone: the AcCoRD notebook
    is then skipped (no AcCoRD episodes), and provenance names that source only."""
    import json

    out = tmp_path / "rep"
    assert main(["report", *args, "--notebooks", "accord_results", "--out", str(out)]) == 0
    results = json.loads((out / "results.json").read_text())["notebooks"]
    assert [(r["notebook"], r["status"], r["reason"]) for r in results] == [
        ("accord_results", "skipped", "no AcCoRD episodes in the sources")]
    prov = json.loads((out / "provenance.json").read_text())
    assert [Path(s["source"]).name for s in prov["sources"]] == ["goalshift"]
    assert "source" not in prov["parameters"]
    return out


def test_source_given_by_set_is_the_source_analysed(tmp_path, sample_dir):
    _report_of_goalshift_only(tmp_path, ["--set", f"source={sample_dir / 'goalshift'}"])


def test_source_given_in_a_params_file_is_the_source_analysed(tmp_path, sample_dir,
                                                              monkeypatch):
    # relative to the working folder, as on the command line
    monkeypatch.chdir(sample_dir.parent)
    params = tmp_path / "params.yaml"
    params.write_text("source: [sample/goalshift]\nn_resamples: 500\n")
    out = _report_of_goalshift_only(tmp_path, ["--params", str(params)])
    assert "sample/goalshift" in (out / "index.html").read_text()


@pytest.mark.parametrize("args, match", [
    (["--set", "source=a.json", "--source", "b.json"],
     r"source \['a.json'\] and --source \['b.json'\] name different inputs"),
    (["--set", "verdicts=x.parquet", "--verdicts", "y.parquet"],
     r"verdicts \['x.parquet'\] and --verdicts \['y.parquet'\]"),
    (["--set", "grid={source: [a.json, b.json]}"], "grid: source cannot vary"),
])
def test_inputs_named_two_ways_or_in_a_grid_are_usage_errors(tmp_path, capsys, args, match):
    out = tmp_path / "rep"
    assert main(["report", *args, "--out", str(out)]) == 64
    err = capsys.readouterr().err
    assert re.search(match, err) and len(err.splitlines()) == 1 and not out.exists()


def test_a_source_parameter_that_does_not_exist_exits_2_as_the_option_does(tmp_path, capsys):
    out = tmp_path / "rep"
    assert main(["report", "--set", "source=no/such/file.json", "--out", str(out)]) == 2
    assert "no/such/file.json" in capsys.readouterr().err and not out.exists()


def test_the_library_route_honours_the_source_parameter(tmp_path, sample_dir):
    from accordkit.report.runner import build_report

    results = build_report(out=tmp_path / "rep", notebooks=["accord_results"],
                           params={"source": str(sample_dir / "goalshift")}, progress=False)
    assert [r.status for r in results] == ["skipped"]


def _alias_bomb(levels: int = 12) -> str:
    lines = ['a0: &a0 ["lol", "lol", "lol", "lol", "lol", "lol", "lol", "lol", "lol"]']
    for i in range(1, levels):
        refs = ", ".join([f"*a{i - 1}"] * 9)
        lines.append(f"a{i}: &a{i} [{refs}]")
    lines.append(f"models: *a{levels - 1}")
    return "\n".join(lines) + "\n"


#: Issue 41.6: parameter files that asked for unbounded work (or crashed with a traceback).
UNBOUNDED = {
    "alias_bomb": (_alias_bomb(), r"more than 100,000 values \(YAML aliases counted"),
    "self_alias": ("models: &m [a, *m]\n", "nested more than 32 levels deep"),
    "deep_list": ("models: " + "[" * 5000 + "]" * 5000 + "\n",
                  "nested more than 32 levels deep"),
    "resamples": ("n_resamples: 1000000000000\n", r"n_resamples: expected a whole number "
                  r"from 1 to 1,000,000"),
    "grid": ("grid:\n  seed: [" + ", ".join(map(str, range(1600))) + "]\n"
             "  n_resamples: [" + ", ".join(map(str, range(1, 1601))) + "]\n",
             r"grid: 2,560,000 runs \(seed 1600 x n_resamples 1600\); at most 1,000"),
    "big_file": ("# " + "x" * (1 << 20) + "\nseed: 1\n", "larger than 1,048,576 bytes"),
}


@pytest.mark.parametrize("case", sorted(UNBOUNDED))
def test_parameter_files_asking_for_unbounded_work_are_usage_errors(tmp_path, capsys, case):
    text, match = UNBOUNDED[case]
    path = tmp_path / "p.yaml"
    path.write_text(text)
    out = tmp_path / "rep"
    assert main(["report", "--params", str(path), "--out", str(out)]) == 64
    err = capsys.readouterr().err
    assert re.search(match, err), err
    assert "Traceback" not in err and len(err.splitlines()) == 1
    assert not out.exists()


def test_the_library_route_bounds_parameters_too():
    loop: list = ["a"]
    loop.append(loop)
    with pytest.raises(ValueError, match="nested more than 32 levels deep"):
        check_parameters({"models": loop})
    with pytest.raises(ValueError, match=r"grid.n_resamples\[1\]: expected a whole number from 1"):
        check_parameters({"grid": {"n_resamples": [500, 10**12]}})
    check_parameters({"n_resamples": 1_000_000, "grid": {"seed": list(range(1000))}})
