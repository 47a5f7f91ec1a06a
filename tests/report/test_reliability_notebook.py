"""The reliability notebook: paired with its .py, one parameters cell, runs on the sample."""

from __future__ import annotations

import pandas as pd

from accordkit.report.notebooks import NOTEBOOK_DIR


def test_reliability_notebook_is_paired_and_parameterised():
    import jupytext
    import nbformat

    def cells(nb):
        return [(c.cell_type, c.source.strip(), tuple(c.metadata.get("tags", ())))
                for c in nb.cells]

    py = jupytext.read(NOTEBOOK_DIR / "reliability.py")
    ipynb = nbformat.read(NOTEBOOK_DIR / "reliability.ipynb", as_version=4)
    assert cells(py) == cells(ipynb), "run `jupytext --sync notebooks/reliability.py`"
    assert sum("parameters" in c.metadata.get("tags", ()) for c in ipynb.cells) == 1


def test_reliability_notebook_runs_on_the_sample(tmp_path, sample_dir):
    import papermill as pm

    pm.execute_notebook(NOTEBOOK_DIR / "reliability.ipynb", tmp_path / "out.ipynb",
                        parameters={"n_resamples": 100, "out_dir": str(tmp_path),
                                    "figures_dir": str(tmp_path / "figures")},
                        kernel_name="python3", cwd=str(NOTEBOOK_DIR), progress_bar=False)
    tables = tmp_path / "tables"
    floor = pd.read_csv(tables / "reliability__noise_floor.csv")
    assert {"benchmark", "domain", "configuration", "n_tasks", "icc", "mdd",
            "flag"} <= set(floor.columns)
    assert not floor.duplicated(["benchmark", "domain", "configuration"]).any()
    assert (floor.n_tasks > 1).all()
    diffs = pd.read_csv(tables / "reliability__differences_vs_noise.csv")
    # True / False where the noise floor is known; missing, with the reason, where it is
    # not (this asserted a bool column, i.e. False for a test that could not be made)
    known = diffs["mdd"].notna()
    assert diffs.loc[known, "exceeds_noise_floor"].isin([True, False]).all()
    assert diffs.loc[~known, "exceeds_noise_floor"].isna().all()
    assert (diffs.loc[~known, "noise_floor_note"].fillna("") != "").all()
    assert diffs.loc[known, "noise_floor_note"].isna().all()   # "" reads back as missing
    assert (tables / "reliability__km_medians.csv").exists()
    assert (tmp_path / "figures" / "reliability__recovery_curves.png").exists()
