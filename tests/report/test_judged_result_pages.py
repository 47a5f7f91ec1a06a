"""The result pages with `labels` (issue 44): the judged rate raw beside corrected."""

from __future__ import annotations

import numpy as np
import pandas as pd

from accordkit.report.notebooks import NOTEBOOK_DIR


def test_unit_test_page_with_labels_adds_the_corrected_rates_and_nothing_else(tmp_path,
                                                                               sample_dir):
    import papermill as pm

    from accordkit.judges.verdicts import read_verdicts
    from accordkit.tables.judge import judged_items

    verdict_file = sample_dir / "verdicts" / "usersim_tests.parquet"
    items = judged_items(read_verdicts(verdict_file))
    # 200 labels of each judge model: its verdict, one in ten flipped (a judge that errs)
    items = items.groupby("judge_model").sample(200, random_state=0)
    flip = np.random.default_rng(0).random(len(items)) < 0.1
    labels = items[["episode_id", "judge", "judge_model", "item", "turn_idx"]].assign(
        label=np.where(flip, ~items.verdict, items.verdict))
    labels.to_csv(tmp_path / "labels.csv", index=False)
    made = {}
    for name, extra in (("plain", {}), ("labelled", {"labels": str(tmp_path / "labels.csv")})):
        out = tmp_path / name
        out.mkdir()
        pm.execute_notebook(NOTEBOOK_DIR / "usersim_unit_tests.ipynb", out / "out.ipynb",
                            parameters={"verdicts": [str(verdict_file)], "out_dir": str(out),
                                        "n_resamples": 200, **extra},
                            kernel_name="python3", cwd=str(NOTEBOOK_DIR), progress_bar=False)
        made[name] = {p.name for p in (out / "tables").glob("*.csv")}
    # without labels the page is as before; with them it gains one table
    assert "usersim_unit_tests__judged_rates_corrected.csv" not in made["plain"]
    assert made["labelled"] - made["plain"] == {"usersim_unit_tests__judged_rates_corrected.csv"}
    rates = pd.read_csv(tmp_path / "labelled" / "tables"
                        / "usersim_unit_tests__judged_rates_corrected.csv")
    assert {"judge_model", "judged_rate", "judged_low", "judged_high", "corrected",
            "corrected_low", "corrected_high", "ppi", "ppi_low", "ppi_high"} <= set(rates.columns)
    assert sorted(rates.judge_model) == ["standin/judge-a", "standin/judge-b"]
    assert (rates.n_labelled == 200).all()
    # the labels' uncertainty widens the interval beyond the judge's word alone
    assert ((rates.corrected_high - rates.corrected_low)
            > (rates.judged_high - rates.judged_low)).all()
    assert (rates.judged_low <= rates.judged_rate).all()
    assert (rates.judged_rate <= rates.judged_high).all()
