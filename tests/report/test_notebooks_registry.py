import pytest

from accordkit.report.notebooks import NOTEBOOKS, InputFacts, skip_reason
from accordkit.report.runner import expand_grid


def facts(benchmarks=(), configs=None, judges=(), n=10):
    return InputFacts(n, frozenset(benchmarks), configs or {}, frozenset(judges))


def spec(name):
    return next(n for n in NOTEBOOKS if n.name == name)


def test_every_notebook_file_exists():
    for nb in NOTEBOOKS:
        assert nb.path.is_file(), nb.path
        assert nb.path.with_suffix(".py").is_file(), "paired jupytext file missing"


def test_accord_notebook_skipped_without_accord_episodes():
    reason = skip_reason(spec("accord_results"), facts({"agentchangebench"}))
    assert reason == "no AcCoRD episodes in the sources"


def test_goalshift_notebook_is_for_runs_with_goal_shifts_not_plain_tau2_runs():
    # issue 36, item 3: it ran on plain tau2 runs, which have no goal shift
    reason = skip_reason(spec("goalshift_results"), facts({"tau2"}))
    assert "no AgentChangeBench episodes" in reason and "tau2 page" in reason
    assert skip_reason(spec("goalshift_results"), facts({"tau2", "agentchangebench"})) is None


def test_unit_test_notebook_needs_usersim_verdicts():
    assert "usersim_tests" in skip_reason(spec("usersim_unit_tests"), facts({"accord"},
                                                                           judges={"outcome"}))
    assert skip_reason(spec("usersim_unit_tests"), facts(judges={"usersim_tests"})) is None


def test_compare_needs_two_configurations_within_a_benchmark():
    one_each = facts({"accord", "tau2"}, {"accord": 1, "tau2": 1})
    assert "fewer than two" in skip_reason(spec("compare_models"), one_each)
    assert skip_reason(spec("compare_models"), facts({"accord"}, {"accord": 4})) is None


def test_unknown_requirement_is_an_error():
    with pytest.raises(ValueError, match="unknown notebook requirement"):
        facts().has("nothing")


def test_expand_grid_without_grid_is_one_run():
    assert expand_grid({"seed": 1}) == [("main", {"seed": 1})]


def test_expand_grid_makes_every_combination():
    runs = expand_grid({"seed": 1, "grid": {"domains": [["shop"], ["travel"]],
                                            "ci_method": ["bca", "percentile"]}})
    assert [name for name, _ in runs] == [
        "domains=shop,ci_method=bca", "domains=shop,ci_method=percentile",
        "domains=travel,ci_method=bca", "domains=travel,ci_method=percentile"]
    assert runs[1][1] == {"seed": 1, "domains": ["shop"], "ci_method": "percentile"}


def test_paired_py_and_ipynb_hold_the_same_cells():
    import jupytext
    import nbformat

    def cells(nb):
        return [(c.cell_type, c.source.strip(), tuple(c.metadata.get("tags", ())))
                for c in nb.cells]

    for nb in NOTEBOOKS:
        py = jupytext.read(nb.path.with_suffix(".py"))
        ipynb = nbformat.read(nb.path, as_version=4)
        assert cells(py) == cells(ipynb), f"{nb.name}: run `jupytext --sync notebooks/*.py`"
        tagged = [c for c in ipynb.cells if "parameters" in c.metadata.get("tags", ())]
        assert len(tagged) == 1, f"{nb.name} needs exactly one cell tagged 'parameters'"


def test_tau2_results_runs_whenever_tau2_format_episodes_are_present():
    for bench in ("tau2", "agentchangebench", "taubench"):
        assert skip_reason(spec("tau2_results"), facts({bench})) is None
    assert "tau2-format" in skip_reason(spec("tau2_results"), facts({"accord"}))


def test_each_notebook_gets_only_the_parameters_it_declares():
    from accordkit.report.notebooks import declared_parameters, notebook_parameters
    from accordkit.report.runner import DEFAULT_PARAMETERS

    everything = {**DEFAULT_PARAMETERS, "source": ["x"], "verdicts": [], "out_dir": "o",
                  "provenance_path": "p.json"}
    for nb in NOTEBOOKS:
        declared = declared_parameters(nb.path)
        assert "out_dir" in declared, nb.name
        passed = notebook_parameters(nb, everything)
        assert set(passed) == set(declared) & set(everything), nb.name
    usersim = notebook_parameters(spec("usersim_unit_tests"), everything)
    assert "seed" in usersim   # of the corrected rates, with labels (issue 44)
    assert "ci_method" not in usersim and "source" not in usersim and "verdicts" in usersim
    assert "baseline" in notebook_parameters(spec("compare_models"), everything)
    assert "baseline" not in notebook_parameters(spec("goalshift_results"), everything)


def test_declared_parameters_reads_the_tagged_cell(tmp_path):
    import nbformat

    from accordkit.report.notebooks import declared_parameters

    node = nbformat.v4.new_notebook(cells=[
        nbformat.v4.new_code_cell("x = 1"),
        nbformat.v4.new_code_cell("a = 1\nb: int = 2\nc = d = 3",
                                  metadata={"tags": ["parameters"]})])
    nbformat.write(node, tmp_path / "n.ipynb")
    assert declared_parameters(tmp_path / "n.ipynb") == ("a", "b", "c", "d")
    nbformat.write(nbformat.v4.new_notebook(), tmp_path / "none.ipynb")
    with pytest.raises(ValueError, match="no cell tagged 'parameters'"):
        declared_parameters(tmp_path / "none.ipynb")
