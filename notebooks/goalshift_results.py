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
# # Goal-shift results (AgentChangeBench)
#
# Task success (TSR and its three channels) next to tau2's own headline (the stored reward),
# tool-use efficiency (TUE = 0.6 T + 0.4 P), redundant tool calls (TCRR), recovery from goal
# shifts and the time it takes (GSRT), and pass^k — per domain and configuration (agent
# model, agent implementation, user model, user implementation), and per persona, for the
# AgentChangeBench runs (the runs with goal shifts; plain tau2 runs are on the tau2 page).
# Runs whose tasks have no goal shift skip the recovery and GSRT parts, saying so. TCRR is
# computed per conversation by default (`tcrr_mode="episode"`); the last section puts
# accordkit's definitions next to the upstream code's numbers. Intervals: cluster bootstrap
# over tasks (scenarios).

# %% tags=["parameters"]
source = ["../data/sample/goalshift"]  # episodes: paths, folders or hub ids
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
import pandas as pd

import accordkit as ak
from accordkit.plots import plot_gsrt, plot_intervals, plot_pass_curves, plot_recovery_curves
from accordkit.report import NotebookContext
from accordkit.tables import (
    goalshift_gsrt,
    goalshift_main,
    pass_k_table,
    reward_table,
    with_configuration,
)

nb = NotebookContext.from_parameters("goalshift_results", globals())
out, boot = nb.out, nb.boot
group = nb.group(["domain", "configuration"])
goalshift = ["agentchangebench"]   # plain tau2 runs have no goal shifts: the tau2 page
episodes = with_configuration(nb.scores(benchmarks=goalshift))
shifts = with_configuration(nb.scores("shift", benchmarks=goalshift))
has_shifts = len(shifts) > 0
NO_SHIFTS = ("Skipped: these runs contain no goal shifts, so there is no recovery or "
             "recovery time to measure.")
print(f"{len(episodes)} episodes on {episodes['scenario_id'].nunique()} tasks, "
      f"{len(shifts)} goal shifts; modes: tcrr_mode={tcrr_mode}, action_mode={action_mode}")
episodes.groupby(group).size().rename("episodes").to_frame()

# %% [markdown]
# ## Success, efficiency, redundancy and recovery by domain and configuration
# "mean reward" is the reward tau2 stored (tau2's headline); TSR weights the action,
# NL-assertion and communicate channels 0.45 / 0.30 / 0.25, renormalised over the channels a
# task has (AgentChangeBench's headline). T, P, TUE, TCRR and recovery rate are ratios of
# sums over all tool calls (or shifts) of the group.

# %%
main = goalshift_main(episodes, by=group, **boot)
if not has_shifts:
    print(f"Recovery rate: {NO_SHIFTS}")
    main = main[main["metric"] != "recovery rate"]
reward = reward_table(episodes, by=group, **boot)
main = pd.concat([reward[reward["metric"] == "mean reward"], main], ignore_index=True)
out.table(main, "main_by_domain_model", rows=group, columns="metric",
          caption="Stored reward and goal-shift metrics by domain and configuration.")

# %%
wanted = ["mean reward", "TSR", "TUE", "TCRR"] + (["recovery rate"] if has_shifts else [])
headline = main[main["metric"].isin(wanted)]
grid = plot_intervals(headline, x=group[0], hue=group[1] if len(group) > 1 else None,
                      col="metric", sharey=False, col_wrap=2, height=3, aspect=1.3,
                      palette=None,
                      title="Headline metrics with 95% intervals (hollow: small cell)")
out.figure(grid, "headline", data=headline)

# %%
# with `labels`: the NL-assertion judge's rate of assertions met (a channel of the reward)
# raw beside corrected for the judge, per group and judge model; each group is calibrated on
# its own labels (docs/statistics.md, "Numbers an LLM judge produced, corrected for the
# judge"). Goal-shift detection (the gsrt judge) gives shift turns, not a pass or fail: it is
# not corrected here.
if labels:
    from accordkit.tables import judge_tables

    nl = None if nb.verdicts is None else nb.verdicts[nb.verdicts["judge"] == "nl_assertions"]
    judged = judge_tables(nl, labels=labels, episodes=episodes, by=group, cluster=cluster,
                          confidence=confidence, n_resamples=min(n_resamples, 2000), seed=seed)
    for note in judged.notes:
        print(note)
    if len(judged.rates):
        display(out.frame(judged.rates, "judged_rates_corrected",
                          caption="NL assertions met, raw beside corrected for the judge "
                                  "(Rogan–Gladen and PPI++)."))

# %% [markdown]
# ## Recovery time after a goal shift (GSRT)
# Medians of the per-shift times in messages (all roles counted) from the user's shift to the
# agent's acknowledgement, first relevant tool call and the goal being reached. A shift whose
# event never happens within the conversation is censored at the messages left after it.
# The table shows the **Kaplan–Meier median**, which counts censored shifts as "not yet";
# the median over observed shifts only (`median="observed"`) leaves out the slowest
# recoveries and reads too fast (see docs/statistics.md).

# %%
if has_shifts:
    gsrt = goalshift_gsrt(shifts, by=group, **{**boot, "method": "percentile"})
    display(out.table(gsrt, "gsrt_by_domain_model", rows=group, columns="metric",
                      caption="GSRT Kaplan–Meier medians (messages after the shift; censored "
                      "shifts counted as not yet recovered)."))
    out.figure(plot_gsrt(shifts, title="Goal-shift recovery times"), "gsrt_distributions",
               data=shifts)
    curves = ak.recovery_curves(shifts, by="agent_model")
    out.figure(plot_recovery_curves(curves, title="Share of shifts not yet recovered"),
               "recovery_curves", data=curves)
else:
    print(f"GSRT: {NO_SHIFTS}")

# %% [markdown]
# ## By persona
# Within each domain (configurations pooled); runs without personas show "none".

# %%
by_persona = goalshift_main(episodes.assign(persona=episodes["persona"].fillna("none")),
                            by=["domain", "persona"], **boot)
if not has_shifts:
    by_persona = by_persona[by_persona["metric"] != "recovery rate"]
out.table(by_persona, "main_by_persona", rows=["domain", "persona"], columns="metric",
          caption="Goal-shift metrics by domain and persona (configurations pooled).")

# %%
rec = by_persona[by_persona["metric"].isin(["TSR", "recovery rate"])]
out.figure(plot_intervals(rec, x="persona", hue="metric", col="domain", palette=None,
                          ylabel="estimate", title="TSR and recovery by persona"),
           "recovery_by_persona", data=rec)

# %%
tcrr = main[main["metric"] == "TCRR"]
if len(group) > 1:
    out.figure(plot_intervals(tcrr, x=group[0], hue=group[1], palette=None, ylabel="TCRR",
                              title="Redundant tool calls by domain"), "redundancy_by_domain",
               data=tcrr)

# %% [markdown]
# ## pass^k
# Success is the stored reward within 1e-6 of 1 (the upstream rule). pass^k is the chance
# that k trials of a task all succeed, averaged over tasks, per domain and configuration
# (domains are never pooled); intervals and bands resample tasks, with the page's method and
# number of resamples.

# %%
passk = pass_k_table(episodes, by=["domain", "configuration"],
                     n_resamples=n_resamples, seed=seed, method=ci_method,
                     confidence=confidence)
out.frame(passk, "pass_hat_k",
          caption=f"pass^k and pass@k per domain and configuration ({confidence:.0%} "
                  f"{ci_method} intervals of pass^k, {n_resamples:,} resamples of tasks).")

# %%
out.figure(plot_pass_curves(passk, title="pass^k (solid) and pass@k (dashed)"), "pass_hat_k",
           data=passk)

# %% [markdown]
# ## accordkit's definitions next to the upstream numbers
# The upstream code pools tool calls of different conversations when it counts redundant
# calls, and credits only the first call of each tool when it matches expected actions.
# Each row is a file-level value under accordkit's default and under the upstream mode.

# %%
modes = nb.modes()
out.frame(modes, "default_vs_upstream",
          caption="File-level metrics: accordkit default vs upstream modes.")
