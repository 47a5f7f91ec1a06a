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
# # Reliability: how far a number can be trusted
#
# Run-to-run noise per configuration (variance components, flip rate, minimum detectable
# difference), the number of tasks and trials a comparison needs, Kaplan–Meier recovery
# times after a goal shift (censored shifts kept, not dropped), the tasks that separate
# configurations, and which paired differences are larger than the noise floor.
# Statistics: `docs/statistics.md`, section "How far a number can be trusted".

# %% tags=["parameters"]
source = ["../data/sample/accord", "../data/sample/goalshift"]
verdicts = []
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
scores_dir = None

# %%
import pandas as pd

import accordkit as ak
from accordkit.plots_survival import plot_recovery_curves
from accordkit.report import NotebookContext

nb = NotebookContext.from_parameters("reliability", globals())
out = nb.out
episodes = nb.scores()
episodes["agent"] = episodes["agent_model"] + " / " + episodes["method"]
binary_metric = {"accord": "completed", "agentchangebench": "success", "tau2": "success"}
chosen = {bench: (metrics[0] if metrics else binary_metric.get(bench, "success"))
          for bench in sorted(episodes["benchmark"].unique())}
print(f"{len(episodes)} episodes; metric per benchmark: {chosen}")

# %% [markdown]
# ## Noise floor per configuration
# `var_between`: variance of task success probabilities (task difficulty); `var_within`:
# trial-to-trial variance; `icc`: the share of the variance due to the task; `flip_rate`: the
# share of tasks whose trials disagree; `se`: clustered standard error; `mdd`: the smallest
# difference a paired comparison on the same tasks and trials detects with power 0.8 at
# α = 0.05. `flag` says why a value is missing.

# %%
floors = []
for bench, part in episodes.groupby("benchmark"):
    floor = ak.noise_floor(part, metric=chosen[bench], by="agent", cluster=cluster)
    floors.append(floor.assign(benchmark=bench, metric=chosen[bench]))
floors = pd.concat(floors, ignore_index=True)
out.frame(floors, "noise_floor", caption="Noise floor per benchmark and configuration.")

# %% [markdown]
# ## How many tasks and trials?
# Designs (tasks × trials per task, per configuration) that detect a difference of 5, 10 or
# 20 points with power 0.8, from each configuration's fitted beta-binomial components,
# cheapest first (toward 0 for a configuration already above 50 %). A group missing here
# could not be planned (the reason is printed; see also the noise-floor flags).

# %%
plans = []
for bench, part in episodes.groupby("benchmark"):
    for agent, cfg in part.groupby("agent"):
        above = cfg[chosen[bench]].astype(float).mean() > 0.5
        for effect in (0.05, 0.10, 0.20):
            effect = -effect if above else effect
            try:
                plan = ak.plan_trials(cfg, effect=effect, metric=chosen[bench],
                                      cluster=cluster, trials=[1, 2, 3, 5, 10])
            except ValueError as err:  # a ceiling or an unfittable group: say so
                print(f"{bench} / {agent} / effect {effect}: {err}")
                continue
            plans.append(plan.assign(benchmark=bench, agent=agent))
plans = pd.concat(plans, ignore_index=True) if plans else pd.DataFrame()
out.frame(plans, "plan_trials", caption="Designs reaching power 0.8, cheapest first.")

# %% [markdown]
# ## Recovery after a goal shift (Kaplan–Meier)
# A shift that was never acknowledged before the conversation ended is censored at the
# number of messages left, not dropped: the KM median counts it as "slower than that". The
# observed-only median (over recovered shifts) is shown beside it for comparison.

# %%
shifts = nb.scores("shift", benchmarks=["agentchangebench", "tau2"])
if len(shifts):
    curves = ak.recovery_curves(shifts, by="agent_model")
    out.figure(plot_recovery_curves(curves, title="Shifts not yet recovered"),
               "recovery_curves")
    medians = ak.km_medians(shifts, by="agent_model", cluster=cluster,
                            n_resamples=min(n_resamples, 2000), seed=seed)
    display(out.table(medians, "km_medians", rows=["agent_model"], columns="metric",
                      caption="Recovery-time medians (messages after the shift): "
                              "Kaplan–Meier and observed-only."))
else:
    print("no goal-shift episodes: no recovery curves")

# %% [markdown]
# ## Task discrimination
# Per task: overall success, the spread between the best and worst configuration, its
# difficulty and discrimination (2PL fit with five or more configurations, else the
# point-biserial correlation with each configuration's overall success rate).

# %%
for bench, part in episodes.groupby("benchmark"):
    if part["agent"].nunique() < 2:
        print(f"{bench}: one configuration, no discrimination")
        continue
    disc = ak.task_discrimination(part, metric=chosen[bench], task=cluster, config="agent")
    print(f"{bench}: {len(disc.all_solve)} tasks every configuration solves, "
          f"{len(disc.none_solve)} none solves, of {len(disc.tasks)}")
    display(out.frame(disc.tasks, f"{bench}__task_discrimination",
                      caption=f"{bench}: tasks by how well they separate configurations."))

# %% [markdown]
# ## Which differences exceed the noise floor?
# Paired differences against the baseline (as in the `compare_models` notebook), next to the
# larger of the two configurations' minimum detectable differences. A difference below it
# is within what run-to-run noise produces at this design, even when its interval excludes 0.

# %%
rows = []
for bench, part in episodes.groupby("benchmark"):
    if part["agent"].nunique() < 2:
        continue
    base = baseline if baseline in set(part["agent"]) else sorted(part["agent"].unique())[0]
    res = ak.compare(part, chosen[bench], between="agent", baseline=base, pair_on=cluster,
                     method=ci_method, confidence=confidence,
                     n_resamples=min(n_resamples, 2000), seed=seed)
    mdd = floors[floors.benchmark == bench].set_index("agent")["mdd"]
    res["mdd"] = [max(mdd.get(a, float("nan")), mdd.get(b, float("nan")))
                  for a, b in zip(res["agent"], res["baseline"], strict=True)]
    res["exceeds_noise_floor"] = res["delta"].abs() >= res["mdd"]
    rows.append(res.assign(benchmark=bench))
if rows:
    cols = ["benchmark", "metric", "agent", "baseline", "delta", "ci_low", "ci_high",
            "p_adjusted", "mdd", "exceeds_noise_floor"]
    display(out.frame(pd.concat(rows, ignore_index=True)[cols], "differences_vs_noise",
                      caption="Paired differences and the noise floor."))
