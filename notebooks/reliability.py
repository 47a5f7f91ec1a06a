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
#
# Everything is grouped by benchmark × domain × configuration (agent model, agent
# implementation, user model, user implementation; `?` where the files do not say), as in
# the other notebooks; domains are never pooled. Differences are paired, between every two
# configurations of one benchmark and domain that share tasks, on the tasks they share (the
# plan of `compare_models`); a pair sharing fewer than two is listed with the reason.
# Statistics: `docs/statistics.md`, section "How far a number can be trusted".

# %% tags=["parameters"]
# episodes: paths, folders or hub ids
source = ["../data/sample/accord", "../data/sample/goalshift"]
verdicts = []           # stored judge verdict files (parquet)
revision = None         # hub revision of hub sources
split = None            # only this split
models = None           # only these agent models (list)
domains = None          # only these domains (list)
metrics = None          # only these metrics (list of names)
by = None               # group the tables by these columns
cluster = "scenario_id"  # resampled together: rollouts of a scenario
ci_method = "bca"       # bca, percentile, basic or t
confidence = 0.95       # of the intervals
n_resamples = 10_000    # bootstrap resamples
seed = 0                # of the resampling: same seed, same tables
tcrr_mode = "episode"   # redundant calls: episode or an upstream mode
action_mode = "best_match"  # TSR action matching: best_match or upstream
baseline = None         # compared with every other configuration (None: every pair)
pairs = None            # only these [baseline, other] pairs (list)
shared_tasks = True     # kept for old parameter files: pairs use their shared tasks
out_dir = "../reports/interactive"  # tables go here (set by the report)
figures_dir = None      # figures go here (set by the report)
provenance_path = None  # provenance goes here (set by the report)
scores_dir = None       # read tables from this score store
labels = None           # CSV of human labels of judged items: the judge section

# %%
import accordkit as ak
from accordkit.plots import plot_recovery_curves
from accordkit.report import NotebookContext
from accordkit.tables import reliability as rv

nb = NotebookContext.from_parameters("reliability", globals())
out = nb.out
episodes = rv.reliability_episodes(nb.scores())
chosen = rv.chosen_metrics(episodes, metrics)
print(f"{len(episodes)} episodes; the metric of each benchmark: "
      + ", ".join(f"{bench}: {metric}" for bench, metric in chosen.items()))

# %% [markdown]
# ## Noise floor per configuration
# `var_between`: variance of task success probabilities (task difficulty); `var_within`:
# trial-to-trial variance; `icc`: the share of the variance due to the task; `flip_rate`: the
# share of tasks whose trials disagree; `se`: clustered standard error; `mdd`: the smallest
# difference a paired comparison on the same tasks and trials detects with power 0.8 at
# α = 0.05. `flag` says why a value is missing.

# %%
floors = rv.noise_floor_table(episodes, chosen=chosen, cluster=cluster)
out.frame(floors, "noise_floor",
          caption="Noise floor per benchmark, domain and configuration.")

# %%
# said once: what a run of one trial per task cannot tell
single = rv.single_trial_groups(episodes, cluster=cluster)
if single:
    print(f"{len(single)} of {episodes.groupby(list(rv.GROUP), dropna=False).ngroups} "
          f"group(s) ran one trial per task: trial-to-trial variance, flip rate, minimum "
          f"detectable difference, trial plans and the noise-floor test of a difference "
          f"{rv.NEEDS_TRIALS} (missing there, with that reason).")

# %% [markdown]
# ## How many tasks and trials?
# Designs (tasks × trials per task, per configuration) that detect a difference of 5, 10 or
# 20 points with power 0.8, from each configuration's fitted beta-binomial components,
# cheapest first (toward 0 for a configuration already above 50 %). A group missing here
# could not be planned (the reason is printed; see also the noise-floor flags).

# %%
plans, notes = rv.plan_trials_table(episodes, chosen=chosen, cluster=cluster)
for note in notes:
    print(note)
if len(plans):   # no empty table: the notes say why nothing was planned
    out.frame(plans, "plan_trials", caption="Designs reaching power 0.8, cheapest first.")

# %% [markdown]
# ## Recovery after a goal shift (Kaplan–Meier)
# A shift that was never acknowledged before the conversation ended is censored at the
# number of messages left, not dropped: the KM median counts it as "slower than that". The
# observed-only median (over recovered shifts) is shown beside it for comparison. One curve
# per domain and configuration.

# %%
shifts = rv.reliability_episodes(nb.scores("shift", benchmarks=["agentchangebench", "tau2"]))
if len(shifts):
    group = ["domain", "configuration"]
    curves = ak.recovery_curves(shifts, by=group)
    curves["curve"] = curves["domain"].astype(str) + ": " + curves["configuration"]
    out.figure(plot_recovery_curves(curves, hue="curve", title="Shifts not yet recovered"),
               "recovery_curves", data=curves)
    km_resamples = min(n_resamples, 2000)   # each resample refits every curve
    medians = ak.km_medians(shifts, by=group, cluster=cluster,
                            n_resamples=km_resamples, seed=seed)
    display(out.table(medians, "km_medians", rows=group, columns="metric",
                      caption="Recovery-time medians (messages after the shift): "
                              "Kaplan–Meier and observed-only (intervals from "
                              f"{km_resamples:,} resamples of tasks, at most 2,000 here)."))
else:
    print("no goal-shift episodes: no recovery curves")

# %% [markdown]
# ## Task discrimination
# Per task of one benchmark and domain: overall success, the spread between the best and
# worst configuration, its difficulty and discrimination (2PL fit with five or more
# configurations, else the point-biserial correlation with each configuration's overall
# success rate).

# %%
for (bench, domain), disc in rv.discrimination_tables(episodes, chosen=chosen,
                                                      cluster=cluster).items():
    if isinstance(disc, str):
        print(f"{bench} / {domain}: {disc}")
        continue
    print(f"{bench} / {domain}: {len(disc.all_solve)} tasks every configuration solves, "
          f"{len(disc.none_solve)} none solves, of {len(disc.tasks)}")
    display(out.frame(disc.tasks, f"{bench}__{domain}__task_discrimination",
                      caption=f"{bench}, {domain}: tasks by how well they separate "
                              "configurations."))

# %% [markdown]
# ## Which differences exceed the noise floor?
# Paired differences of every two configurations that share tasks (or the `baseline`'s, or
# the `pairs` named), within one benchmark and domain and on the tasks each pair shares,
# as in the `compare_models` notebook, next to the larger of the
# two configurations' minimum detectable differences. A difference below it is within what
# run-to-run noise produces at this design, even when its interval excludes 0. Where either
# configuration ran one trial per task there is no noise floor: `exceeds_noise_floor` is
# then missing and `noise_floor_note` says it needs ≥ 2 trials per task (never "no").

# %%
diff_resamples = min(n_resamples, 2000)
diffs, plan = rv.differences_vs_noise(episodes, floors=floors, chosen=chosen, cluster=cluster,
                                      baseline=baseline, pairs=pairs,
                                      method=ci_method, confidence=confidence,
                                      n_resamples=diff_resamples, seed=seed)
out.frame(plan, "comparison_plan",
          caption="Pairs of configurations per benchmark and domain: the tasks each ran and "
                  "the shared tasks each comparison used, or why a pair was not compared.")
for row in plan[~plan["comparable"] & plan["baseline"].notna()].itertuples(index=False):
    print(f"{row.benchmark} / {row.domain}: {row.between_value} not compared with "
          f"{row.baseline}: {row.reason}")
if not len(diffs):
    print("No benchmark and domain has two configurations that share two or more tasks.")
else:
    display(out.frame(diffs, "differences_vs_noise",
                      caption="Paired differences (same benchmark and domain, each pair on "
                              "the tasks both ran: n_pairs) and the noise floor (intervals "
                              f"from {diff_resamples:,} resamples of tasks, at most 2,000 "
                              "here)."))

# %% [markdown]
# ## The judge against human labels
# Only with the `labels` parameter (a CSV of judged items: `episode_id`, `judge`, `item`,
# and `turn_idx` / `judge_model` where needed, with a boolean `label`). Per judge and judge
# model: its sensitivity (true passes called pass), specificity (true failures called
# fail), accuracy and kappa against the labels; then the judged pass rate of the unlabelled
# items beside the rate corrected for the judge (Rogan–Gladen, with the interval of Lee et
# al. that carries the labels' uncertainty) and the prediction-powered (PPI++) mean.
# Intervals resample scenarios. Statistics: `docs/statistics.md`, section "Numbers an LLM
# judge produced, corrected for the judge".

# %%
if labels:
    from accordkit.tables import judge_tables

    judge_resamples = min(n_resamples, 2000)
    judged = judge_tables(nb.verdicts, labels=labels, episodes=episodes, cluster=cluster,
                          confidence=confidence, n_resamples=judge_resamples, seed=seed)
    for note in judged.notes:
        print(note)
    if len(judged.calibration):
        out.frame(judged.calibration, "judge_calibration",
                  caption="The judge against human labels: sensitivity, specificity, "
                          "accuracy and kappa.")
        display(out.frame(judged.rates, "judged_rates_corrected",
                          caption="Judged pass rate, raw beside corrected for the judge "
                                  "(Rogan–Gladen and PPI++)."))
else:
    print("no labels: the judge's verdicts are taken at their word (set `labels` to "
          "calibrate them)")
