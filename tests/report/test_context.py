import warnings

import pandas as pd
import pytest

from accordkit.report.context import PARAMETER_NAMES, NotebookContext
from accordkit.report.runner import DEFAULT_PARAMETERS


@pytest.fixture(autouse=True)
def _restore_global_settings():
    """notebook_setup changes pandas display options and warning filters for a notebook;
    keep them from leaking into other tests of this process."""
    with warnings.catch_warnings(), pd.option_context("display.max_rows", 60,
                                                      "display.precision", 6):
        yield


def _namespace(**over):
    ns = {**DEFAULT_PARAMETERS, "source": [], "verdicts": [], "out_dir": "out",
          "figures_dir": None, "provenance_path": None}
    ns.update(over)
    return ns


def test_missing_required_parameter_is_named():
    ns = _namespace()
    del ns["out_dir"]
    with pytest.raises(NameError, match=r"does not define \['out_dir'\]"):
        NotebookContext.from_parameters("x", ns)


def test_undeclared_parameters_take_their_defaults(tmp_path):
    ctx = NotebookContext.from_parameters("x", {"out_dir": str(tmp_path)})
    assert ctx["seed"] == DEFAULT_PARAMETERS["seed"]
    assert ctx["verdicts"] is None and ctx["provenance_path"] is None
    with pytest.raises(NameError, match="does not define `source`"):
        _ = ctx.dataset


def test_parameters_and_bootstrap_options(tmp_path):
    ctx = NotebookContext.from_parameters("x", _namespace(out_dir=str(tmp_path), seed=5,
                                                          ci_method="percentile", by="domain"))
    assert set(ctx.params) == set(PARAMETER_NAMES)
    assert ctx.boot == {"cluster": "scenario_id", "method": "percentile", "confidence": 0.95,
                        "n_resamples": 10_000, "seed": 5}
    assert ctx.group(["agent_model"]) == ["domain"]
    assert ctx.interactive and str(ctx.out.figures_dir) == "../figures"
    assert ctx.verdicts is None


def test_scores_are_filtered_by_model_and_domain(tmp_path, sample_dir):
    ctx = NotebookContext.from_parameters("x", _namespace(
        source=[str(sample_dir / "accord")], out_dir=str(tmp_path), models=["sim-basic-1"],
        domains=["shop"], provenance_path=str(tmp_path / "none.json")))
    frame = ctx.scores()
    assert set(frame["agent_model"]) == {"sim-basic-1"} and set(frame["domain"]) == {"shop"}
    assert not ctx.interactive
