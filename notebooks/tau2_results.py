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
# # tau2 results
#
# tau2-bench's own headline for every tau2-format run (tau2-bench, AgentChangeBench, τ-bench):
# the stored reward, per domain and configuration (agent model, agent implementation, user
# model, user implementation). Domains are never pooled. Intervals: cluster bootstrap over
# tasks, so the trials of one task move together.

# %% tags=["parameters"]
source = ["../data/sample/goalshift"]  # episodes: paths, folders or hub ids
revision = None         # hub revision of hub sources
split = None            # only this split
models = None           # only these agent models (list)
domains = None          # only these domains (list)
cluster = "scenario_id"  # resampled together: rollouts of a scenario
ci_method = "bca"       # bca, percentile, basic or t
confidence = 0.95       # of the intervals
n_resamples = 10_000    # bootstrap resamples
seed = 0                # of the resampling: same seed, same tables
baseline = None         # configuration compared against (None: most tasks)
shared_tasks = True     # kept for old parameter files: pairs use their shared tasks
out_dir = "../reports/interactive"  # tables go here (set by the report)
figures_dir = None      # figures go here (set by the report)
provenance_path = None  # provenance goes here (set by the report)
scores_dir = None       # read tables from this score store

# %%
from accordkit.plots import plot_intervals, plot_pass_curves
from accordkit.report import NotebookContext
from accordkit.tables import (
    TAU2_BENCHMARKS,
    cost_per_task,
    episode_tables,
    one_interval,
    paired_comparisons,
    pass_k_table,
    tau2_episodes,
    termination_table,
)

nb = NotebookContext.from_parameters("tau2_results", globals())
out, boot = nb.out, nb.boot
group = ["domain", "configuration"]
episodes = tau2_episodes(nb.scores(benchmarks=TAU2_BENCHMARKS))
print(f"{len(episodes)} episodes on {episodes['scenario_id'].nunique()} tasks in "
      f"{episodes['domain'].nunique()} domain(s), "
      f"{episodes['configuration'].nunique()} configuration(s)")
out.frame(episodes.groupby(group).agg(episodes=("episode_id", "size"),
                                      tasks=("scenario_id", "nunique")).reset_index(),
          "episodes", caption="Episodes and tasks per domain and configuration.")

# %% [markdown]
# ## Mean reward
# The reward tau2 stored for each episode, averaged per domain and configuration (tau2's
# headline). The success rate (a reward within 1e-6 of 1, tau2's rule) is pass^1 in the
# pass^k table below: one number, with one interval. Where every reward is 0 or 1 and the
# tasks ran equal trials, the mean reward *is* pass^1: the pass^k table then shows pass^1
# with this table's interval (one quantity, one interval), and says so in `interval_of`.

# %%
# reward, checks and cost tables have the same cells: one set of resamples for all three
tables = episode_tables(episodes, by=group, **boot)
reward = tables["reward"][tables["reward"]["metric"] == "mean reward"]
out.table(reward, "reward", rows=group, columns="metric",
          caption="Mean stored reward by domain and configuration.")

# %%
out.figure(plot_intervals(reward, x="domain", hue="configuration", col="metric",
                          palette=None, title="Stored reward with intervals"), "reward",
           data=reward)

# %% [markdown]
# ## pass^k and pass@k
# pass^k: the chance that k trials of a task all succeed; pass@k: that at least one does;
# both averaged over tasks. pass^1 is the success rate. The interval (and the band of the
# figure) resamples tasks, with the page's method and number of resamples.

# %%
passk = pass_k_table(episodes, by=group, n_resamples=n_resamples, seed=seed,
                     method=ci_method, confidence=confidence)
# rewards of 0 and 1 on equal trials: mean reward and pass^1 are one number, one interval
passk = one_interval(passk, reward=reward, frame=episodes, by=group)
same = passk["interval_of"].notna()
out.frame(passk, "pass_k",
          caption=f"pass^k and pass@k by domain and configuration (pass^1 = success rate; "
                  f"{confidence:.0%} {ci_method} intervals of pass^k, {n_resamples:,} "
                  "resamples of tasks"
                  + (f"; in {int(same.sum())} group(s) the rewards are 0 or 1, so pass^1 "
                     "is the mean reward and shows its interval (`interval_of`)"
                     if same.any() else "") + ").")

# %%
out.figure(plot_pass_curves(passk, title="pass^k (solid) and pass@k (dashed)"), "pass_k",
           data=passk)

# %% [markdown]
# ## The checks behind the reward
# What tau2 stored in `reward_info`: the database check (1 when the final database matched),
# and the share of environment assertions, expected actions, communicate checks and NL
# assertions met. Only the checks present in the run are shown. The reward is made of the
# checks in the run's `reward_basis` (the table's `in_reward_basis`: share of episodes); the
# others are diagnostics only. Episodes whose stored reward is not the product of their
# breakdown over that basis are marked `reward_consistent = False` in the scores.

# %%
checks = tables["checks"]
if len(checks):
    display(out.table(checks, "reward_checks", rows=group, columns="metric",
                      caption="Stored reward checks: pass rate by domain and configuration."))
else:
    print("No reward checks stored in these runs.")

# %% [markdown]
# ## How conversations ended

# %%
out.frame(termination_table(episodes, by=group), "termination",
          caption="Episodes per termination reason.")

# %% [markdown]
# ## Cost
# Mean agent and user (simulator) cost of one episode, then per task.

# %%
costs = tables["cost"]
out.table(costs, "cost", rows=group, columns="metric", digits=4,
          caption="Agent and user cost per episode (USD, as stored).")

# %%
out.frame(cost_per_task(episodes, by=group), "cost_per_task",
          caption="Mean agent and user cost of one run of each task.")

# %% [markdown]
# ## Paired comparisons within a domain
# Every two configurations of a domain (and task set) that share at least two tasks are
# compared on the tasks they share, paired on tasks (or the `baseline` against each other
# one: an agent model or a full label). The plan says, per pair, how many tasks each ran and
# how many the comparison used, or why a pair was not compared.

# %%
options = dict(method=ci_method, confidence=confidence, n_resamples=n_resamples, seed=seed)
diffs, plan = paired_comparisons(episodes, metrics=["reward"], by=("benchmark", "domain"),
                                 between="configuration", baseline=baseline, **options)
out.frame(plan, "comparison_plan", caption="Which configurations were compared, and why not.")

# %%
if len(diffs):
    display(out.frame(diffs, "paired_reward",
                      caption="Paired differences in mean reward (same domain, each pair on "
                              "the tasks both ran: n_pairs)."))
else:
    print("No domain has two configurations sharing two or more tasks: nothing to compare "
          "(the plan above says what each ran).")
