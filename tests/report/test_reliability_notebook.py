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


def test_reliability_notebook_with_labels_shows_the_judge(tmp_path, sample_dir):
    # issue 44: with `labels`, the judge's calibration and the corrected rates are tables
    import numpy as np
    import papermill as pm

    from accordkit.judges.verdicts import read_verdicts
    from accordkit.tables.judge import judged_items

    verdict_file = sample_dir / "verdicts" / "usersim_tests.parquet"
    items = judged_items(read_verdicts(verdict_file))
    items = items[items.judge_model == items.judge_model.iloc[0]].sample(150, random_state=0)
    flip = np.random.default_rng(0).random(len(items)) < 0.1
    labels = items[["episode_id", "judge", "judge_model", "item", "turn_idx"]].assign(
        label=np.where(flip, ~items.verdict, items.verdict))
    labels.to_csv(tmp_path / "labels.csv", index=False)
    pm.execute_notebook(NOTEBOOK_DIR / "reliability.ipynb", tmp_path / "out.ipynb",
                        parameters={"n_resamples": 100, "out_dir": str(tmp_path),
                                    "figures_dir": str(tmp_path / "figures"),
                                    "verdicts": [str(verdict_file)],
                                    "labels": str(tmp_path / "labels.csv")},
                        kernel_name="python3", cwd=str(NOTEBOOK_DIR), progress_bar=False)
    tables = tmp_path / "tables"
    calibration = pd.read_csv(tables / "reliability__judge_calibration.csv")
    assert set(calibration.measure) == {"sensitivity", "specificity", "accuracy", "kappa"}
    labelled = calibration.dropna(subset=["estimate"])
    assert (labelled.groupby("judge_model").n.max() == 150).all()
    rates = pd.read_csv(tables / "reliability__judged_rates_corrected.csv")
    assert {"judged_rate", "corrected", "corrected_low", "corrected_high", "ppi",
            "sensitivity", "specificity", "note"} <= set(rates.columns)
