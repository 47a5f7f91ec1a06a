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
# # AcCoRD results
#
# Re-scored AcCoRD episodes: **Table 3** (task completion, outcome, perfect outcome and task
# score per agent model and prompting method, overall and per domain) and **Table 4**
# (preference scores per preference dynamic, and interaction cost). Every interval is a
# cluster bootstrap over scenarios: all rollouts and preferences of a scenario are resampled
# together. Outcome is averaged over completed episodes, perfect outcome over all episodes,
# task score is completion × outcome per episode (see `docs/metrics.md`).

# %% tags=["parameters"]
source = ["../data/sample/accord"]  # episodes: paths, folders or hub ids
verdicts = []           # stored judge verdict files (parquet)
revision = None         # hub revision of hub sources
split = None            # only this split
models = None           # only these agent models (list)
domains = None          # only these domains (list)
by = None               # group the tables by these columns
cluster = "scenario_id"  # resampled together: rollouts of a scenario
ci_method = "bca"       # bca, percentile, basic or t
confidence = 0.95       # of the intervals
n_resamples = 10_000    # bootstrap resamples
seed = 0                # of the resampling: same seed, same tables
tcrr_mode = "episode"   # redundant calls: episode or an upstream mode
action_mode = "best_match"  # TSR action matching: best_match or upstream
out_dir = "../reports/interactive"  # tables go here (set by the report)
figures_dir = None      # figures go here (set by the report)
provenance_path = None  # provenance goes here (set by the report)
scores_dir = None       # read tables from this score store
labels = None           # CSV of human labels of judged items: rates corrected for the judge

# %%
import accordkit as ak
from accordkit.plots import plot_intervals
from accordkit.report import NotebookContext
from accordkit.tables import ACCORD_DYNAMICS, accord_tables

nb = NotebookContext.from_parameters("accord_results", globals())
out = nb.out
group = nb.group(["agent_model", "method"])
episodes = nb.scores(benchmarks=["accord"])
# preferences: millions of rows, so only the ids the tables group and resample by
prefs = nb.scores("preference", benchmarks=["accord"],
                  columns=["pref_id", "dynamic", "satisfied", "completed", *group],
                  ids=["scenario_id", cluster])
print(f"{len(episodes)} episodes, {episodes['scenario_id'].nunique()} scenarios, "
      f"{len(prefs)} (episode, preference) pairs")
episodes.groupby(["domain", *group]).size().rename("episodes").to_frame()

# %%
# Table 3, the cost and Table 4, pooled and per domain, are cuts of the same scenarios: their
# cells draw one set of resamples instead of one each (same estimates; intervals within
# Monte Carlo error of per-cell draws; docs/statistics.md, "Shared draws")
tables = accord_tables(episodes, preferences=prefs, by=group, **nb.boot)

# %% [markdown]
# ## Table 3 — main results
# Completion and perfect outcome are shares of all episodes; outcome is the mean over
# completed episodes of the share of judged preferences satisfied; task score is its
# per-episode product with completion (0 when not completed).

# %%
main, cost = tables["main"], tables["cost"]
out.table(main, "table3", rows=group, columns="metric",
          caption="AcCoRD Table 3 (all domains pooled).")

# %%
main_domain = tables["main_by_domain"]
out.table(main_domain, "table3_by_domain", rows=["domain", *group], columns="metric",
          caption="AcCoRD Table 3 per domain.")

# %%
# with `labels`: the outcome judge's pass rate (the preferences it judged satisfied) raw
# beside corrected for the judge, per configuration and judge model; each configuration is
# calibrated on its own labels (docs/statistics.md, "Numbers an LLM judge produced,
# corrected for the judge")
if labels:
    from accordkit.tables import judge_tables

    outcome = None if nb.verdicts is None else nb.verdicts[nb.verdicts["judge"] == "outcome"]
    judged = judge_tables(outcome, labels=labels, episodes=episodes, by=group, cluster=cluster,
                          confidence=confidence, n_resamples=min(n_resamples, 2000), seed=seed)
    for note in judged.notes:
        print(note)
    if len(judged.rates):
        display(out.frame(judged.rates, "judged_rates_corrected",
                          caption="Outcome judge: share of judged preferences satisfied, raw "
                                  "beside corrected for the judge (Rogan–Gladen and PPI++)."))

# %% [markdown]
# ## Table 4 — preference scores per dynamic
# Pooled over (episode, preference) pairs of completed episodes. `stated` preferences (given
# up front) are shown apart from the four dynamics.

# %%
dyn = tables["dynamics"]
out.table(dyn, "table4_dynamics", rows=group, columns="dynamic",
          caption="AcCoRD Table 4: preference score by dynamic (completed episodes).")

# %%
grid = plot_intervals(dyn, x="dynamic", hue="agent_model", col="method",
                      order=[d for d in ACCORD_DYNAMICS if d in set(dyn["dynamic"])],
                      ylabel="preference score",
                      title="Preference score by dynamic (hollow: small cell)")
out.figure(grid, "dynamics", data=dyn)

# %%
dyn_domain = tables["dynamics_by_domain"]
out.table(dyn_domain, "table4_dynamics_by_domain", rows=["domain", *group], columns="dynamic",
          caption="Preference score by dynamic, per domain (completed episodes).")

# %% [markdown]
# ## Interaction cost
# Environment actions (search, click, buy / search, book) and the agent's utterances to the
# user per episode, as mean and median.

# %%
out.table(cost, "table4_cost", rows=group, columns="metric",
          caption="Interaction cost per episode.")

# %% [markdown]
# ## Point estimates as in the paper (no intervals)
# `ak.accord_table` computes the paper's numbers directly; with `agg="episode"` the task
# score equals completion × outcome exactly.

# %%
paper = ak.accord_table(episodes, preferences=prefs, by=tuple(group), agg="episode")
wide = paper.pivot_table(index=group, columns="metric", values="estimate", sort=False)
out.frame(wide.reset_index(), "paper_point_estimates",
          caption="Point estimates pooled over episodes (long form in the CSV).")
