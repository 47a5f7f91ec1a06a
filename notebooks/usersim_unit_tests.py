# ---
# jupyter:
#   jupytext:
#     formats: ipynb,py:percent
#     text_representation:
#       extension: .py
#       format_name: percent
#       format_version: '1.3'
#       jupytext_version: 1.19.6
#   kernelspec:
#     display_name: Python 3 (ipykernel)
#     language: python
#     name: python3
# ---

# %% [markdown]
# # User-simulator unit tests
#
# AcCoRD checks its user simulator with six LLM-judged unit tests (test000–test005: response
# relevance, preference value consistency, contradiction acknowledgment, backoff acceptance,
# premature backoff disclosure, triggered preference revelation). Each user turn gets
# yes / no / n/a. The **pass rate** is yes / (yes + no), with n/a left out and its share shown
# (the paper's Table 6). The second table measures how far two judge models agree, per test:
# percent agreement and Cohen's kappa on the items both judged. Everything here is read from
# stored verdicts: no API key is needed.

# %% tags=["parameters"]
# stored judge verdict files (parquet)
verdicts = ["../data/sample/verdicts/usersim_tests.parquet"]
out_dir = "../reports/interactive"  # tables go here (set by the report)
figures_dir = None      # figures go here (set by the report)
provenance_path = None  # provenance goes here (set by the report)
confidence = 0.95       # of the intervals (of the corrected rates, with labels)
n_resamples = 2000      # bootstrap resamples (of the corrected rates, with labels)
seed = 0                # of the resampling: same seed, same tables
labels = None           # CSV of human labels of judged items: rates corrected for the judge

# %%
import accordkit as ak
from accordkit.report import NotebookContext

nb = NotebookContext.from_parameters("usersim_unit_tests", globals())
out = nb.out
table = nb.verdicts[nb.verdicts["judge"] == "usersim_tests"]
print(f"{len(table)} verdicts on {table['episode_id'].nunique()} episodes from judge models "
      f"{sorted(table['judge_model'].unique())}; prompt versions "
      f"{sorted(table['prompt_version'].astype(str).unique())}")

# %% [markdown]
# ## Table 6 analog — pass rate per test and judge model

# %%
rates = ak.pass_rates(table)
layout = rates.pivot(index="item", columns="judge_model", values="pass_rate")
display(out.frame(layout.reset_index(), "table6_layout",
                  caption="Pass rate per unit test (rows) and judge model (columns), as in "
                          "the paper's Table 6."))
out.frame(rates, "table6_pass_rates",
          caption="Counts behind the pass rates: pass rate = yes / (yes + no); "
                  "n/a share = n/a / all verdicts.")

# %%
# with `labels`: the pass rate raw beside corrected for the judge, per judge model (the items
# of one episode resampled together; docs/statistics.md, "Numbers an LLM judge produced,
# corrected for the judge")
if labels:
    from accordkit.tables import judge_tables

    judged = judge_tables(table, labels=labels, cluster="episode_id", confidence=confidence,
                          n_resamples=min(n_resamples, 2000), seed=seed)
    for note in judged.notes:
        print(note)
    if len(judged.rates):
        display(out.frame(judged.rates, "judged_rates_corrected",
                          caption="Pass rate (yes / (yes + no)) of the unlabelled items, raw "
                                  "beside corrected for the judge (Rogan–Gladen and PPI++)."))

# %% [markdown]
# ## Agreement between judge models

# %%
judges = sorted(table["judge_model"].unique())
if len(judges) >= 2:
    agree = ak.judge_agreement(table, judges[0], judges[1])
    display(out.frame(agree, "judge_agreement",
                      caption=f"Agreement between {judges[0]} and {judges[1]} per test."))
else:
    print("only one judge model: no agreement table")
