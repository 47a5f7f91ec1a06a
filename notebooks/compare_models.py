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
# # Paired model comparisons
#
# Differences between agent configurations on the scenarios they share, against a baseline
# (the parameter `baseline`, or the first configuration in alphabetical order). Each bootstrap
# resample draws scenarios and evaluates every configuration on the same draw, so scenario
# difficulty cancels out. p-values are adjusted for the number of comparisons (Holm);
# configurations in one tie group cannot be told apart from the best at that level.

# %% tags=["parameters"]
source = ["../data/sample/accord", "../data/sample/goalshift"]
verdicts = ["../data/sample/verdicts/usersim_tests.parquet"]
revision = None
split = None
models = None
domains = None
metrics = None
by = None
cluster = "scenario_id"
ci_method = "bca"
confidence = 0.95
n_resamples = 10_000
seed = 0
tcrr_mode = "episode"
action_mode = "best_match"
baseline = None
out_dir = "../reports/interactive"
figures_dir = None
provenance_path = None

# %%
import accordkit as ak
from accordkit.plots import plot_forest
from accordkit.report import NotebookContext

nb = NotebookContext.from_parameters("compare_models", globals())
out = nb.out
options = dict(method=ci_method, confidence=confidence, n_resamples=n_resamples, seed=seed,
               pair_on=cluster)
episodes = nb.scores()
episodes["agent"] = episodes["agent_model"] + " / " + episodes["method"]
default_metrics = {"accord": ["task_score", "outcome_score", "completed"],
                   "agentchangebench": ["tsr", ("n_recovered", "n_shifts")],
                   "tau2": ["success"]}

# %%
results = []
for bench, part in episodes.groupby("benchmark"):
    if part["agent"].nunique() < 2:
        print(f"{bench}: only one agent configuration, nothing to compare")
        continue
    base = baseline if baseline in set(part["agent"]) else sorted(part["agent"].unique())[0]
    for metric in (metrics or default_metrics.get(bench, ["success"])):
        if isinstance(metric, list):
            metric = tuple(metric)
        res = ak.compare(part, metric, between="agent", baseline=base, **options)
        results.append(res.assign(benchmark=bench))
        name = metric if isinstance(metric, str) else f"{metric[0]}_over_{metric[1]}"
        display(out.table(res, f"{bench}__{name}", rows="agent", columns=None, value="delta",
                          caption=f"{bench}: {name}, paired difference vs {base}."))

# %%
import pandas as pd

if results:
    allres = pd.concat(results, ignore_index=True)
    cols = ["benchmark", "metric", "agent", "baseline", "delta", "ci_low", "ci_high",
            "p_value", "p_adjusted", "prob_improvement", "tie_group", "n_pairs", "paired"]
    display(out.frame(allres[cols], "all_comparisons", caption="All paired comparisons."))
    out.figure(plot_forest(allres, label="agent", title="Paired differences vs baseline"),
               "forest")
