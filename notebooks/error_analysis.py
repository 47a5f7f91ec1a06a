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
# # Error analysis: why it failed
#
# How the episodes failed, with intervals: the action diff (each expected action matched,
# called with wrong arguments or missing, and writes nobody asked for), where each
# conversation first left the expected path, and the faults the conversation reviews found
# (tau2's stored reviews and accordkit's `review` judge). Then the tasks whose outcome
# flipped between two configurations, and whether trial noise explains each flip. Every
# table cell links to the episodes behind it, every episode to its conversation, rendered
# with the first divergence and every review error marked.

# %% tags=["parameters"]
# episodes: paths, folders or hub ids
source = ["../data/sample/accord", "../data/sample/goalshift"]
# stored judge verdict files (parquet): usersim_tests, review, ...
verdicts = ["../data/sample/verdicts/usersim_tests.parquet"]
revision = None         # hub revision of hub sources
split = None            # only this split
models = None           # only these agent models (list)
domains = None          # only these domains (list)
tcrr_mode = "episode"   # redundant calls: episode or an upstream mode
action_mode = "best_match"  # TSR action matching: best_match or upstream
cluster = "scenario_id"  # bootstrap resampling unit
ci_method = "bca"       # interval method
confidence = 0.95       # interval confidence level
n_resamples = 10_000    # bootstrap resamples
seed = 0                # bootstrap seed
baseline = None         # flips: compared with every other agent model (None: every pair)
pairs = None            # flips: only these [baseline, other] pairs (list)
out_dir = "../reports/interactive"  # tables go here (set by the report)
figures_dir = None      # figures go here (set by the report)
provenance_path = None  # provenance goes here (set by the report)
scores_dir = None       # read tables from this score store

failure = None          # failure type to drill into (None: the first that applies)
cell = {}               # column values of the cell to list
show = 2                # conversations shown in full

# %%
import warnings

from IPython.display import display

import accordkit as ak
from accordkit import (
    combine_reviews,
    compare_reviews,
    review_tables_from_verdicts,
    tables_from_levels,
)
from accordkit.analysis import flip_caption, flip_pairs, taxonomy_groupings, with_goal_shift
from accordkit.report import DrillDown, NotebookContext
from accordkit.tables import FAILURES, agent_model_named, failure_flags, failure_rates

nb = NotebookContext.from_parameters("error_analysis", globals())
out = nb.out
episodes = nb.scores()
actions = nb.scores("action")
stored = tables_from_levels(nb.scores("review"), nb.scores("review_error"))
judged = None
if nb.verdicts is not None and (nb.verdicts["judge"] == "review").any():
    judged = review_tables_from_verdicts(nb.verdicts)
reviews = combine_reviews(stored, judged)
tool_use = episodes[episodes["benchmark"].isin(["tau2", "agentchangebench", "taubench"])]
pages = DrillDown(out.out_dir, "error_analysis", nb.episodes_by_id, episodes,
                  actions=actions, reviews=reviews)
print(f"{len(tool_use)} episodes of tool-using benchmarks, {len(actions)} action-diff rows, "
      f"{len(reviews.reviews)} reviews ({len(stored.reviews)} stored, "
      f"{0 if judged is None else len(judged.reviews)} judged)")

# %% [markdown]
# ## All episodes
# Every episode in one list (configuration, task, trial, reward, pass or fail, first
# divergence, review errors), sortable and filterable, each linking to its conversation;
# the page searches the transcripts as `ak.find` does (text, tool, role, action-diff
# status), offline.

# %%
display(pages.episodes_page())

# %% [markdown]
# ## Failure taxonomy
# Share of episodes with each failure status (from the action diff) and fault type (from
# the reviews), per cell, with clustered bootstrap intervals (tasks resampled); † marks a
# cell of fewer than 10 tasks or events. An action share counts only episodes with expected
# actions, a review share only reviewed episodes (`n_events`). Click a cell for its
# episodes.

# %%
taxonomy = {}
if len(tool_use):
    frame = with_goal_shift(tool_use)
    for layout, by in taxonomy_groupings(frame).items():
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")   # constant shares: percentile intervals, said
            table = ak.failure_taxonomy(frame, actions=actions, reviews=reviews, by=by,
                                        **nb.boot)
        taxonomy[layout] = table
        out.table(table, f"failure_taxonomy_by_{layout}", rows=by,
                  caption=f"Failure statuses and fault types by {layout}.")
        display(pages.linked_table(table, table.attrs["indicators"], rows=by,
                                   name=f"failure_taxonomy_by_{layout}",
                                   caption=f"Failure statuses and fault types by {layout}."))
else:
    print("no tool-using episodes: no action diff or review to tabulate")

# %% [markdown]
# ## Flips between configurations
# Tasks whose pass rate moved between two agent models on the same benchmark, domain and
# tasks, largest moves first, with what went wrong on each side: every two agent models that
# share tasks (on the tasks they share), or the `baseline` against each other one, or the
# `pairs` named. Each task's move is tested on its own trials (Fisher's exact test), and the
# tests of a comparison are adjusted together (Holm, 5%): `noise_explains` is true when noise
# can explain the move, NA when the task has too few trials for the test. The caption says
# how many moves noise alone would make. Click a task for its episodes under both.

# %%
# a baseline or pair is spelled as on the other pages; one naming nothing is refused
base_model = agent_model_named(episodes, baseline)
named = None if pairs is None else [[agent_model_named(episodes, a),
                                     agent_model_named(episodes, b)] for a, b in pairs]
present = set(tool_use["agent_model"].dropna())
if base_model is not None and base_model not in present:
    print(f"{base_model} ran no tool-using benchmark: no flips against it")
    compared = []
else:
    compared = flip_pairs(tool_use, between="agent_model", baseline=base_model,
                          pairs=None if named is None else
                          [p for p in named if set(p) <= present],
                          by=["benchmark", "domain"])
for base, other in compared:
    moved = ak.flips(tool_use, between="agent_model", baseline=base, other=other,
                     by=["benchmark", "domain"], actions=actions)
    name = f"flips_{base}_vs_{other}"
    out.frame(moved, name, caption=flip_caption(moved) + ".")
    ids = tool_use[tool_use["agent_model"].isin([base, other])]
    display(pages.linked_frame(
        moved, name=name, link="scenario_id",
        episodes_of=lambda row, ids=ids: ids.loc[ids["scenario_id"] == row["scenario_id"],
                                                  "episode_id"].tolist(),
        caption=flip_caption(moved) + "."))

# %% [markdown]
# ## Failures drawn
# The failure shares of the configuration table above with their intervals (a hollow dot:
# fewer than 10 tasks or events), where each configuration's conversations first left the
# expected path (a histogram of the turn), and, for runs that store a cost, what one solved
# task costs with its interval and the cost–success frontier (no configuration on it is
# beaten on both). Each figure is drawn from the frame written beside it as CSV.

# %%
from accordkit.plots import (plot_cost_frontier, plot_cost_per_success,
                             plot_divergence_turns, plot_failure_shares)
from accordkit.tables import cost_frontier, cost_per_success, divergence_turns
from accordkit.tables import with_configuration as _with_configuration

if "configuration" in taxonomy:
    by = taxonomy_groupings(with_goal_shift(tool_use))["configuration"]
    shares = taxonomy["configuration"]
    out.figure(plot_failure_shares(shares, rows=by, group=[c for c in by if c != "domain"]),
               "failure_shares", data=shares)
    configured = _with_configuration(tool_use)
    turns = divergence_turns(actions, episodes=configured, by="configuration")
    out.figure(plot_divergence_turns(turns), "divergence_turns", data=turns)
    if configured.get("agent_cost") is not None and configured["agent_cost"].notna().any():
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")   # constant cells: percentile intervals, said
            cost = cost_per_success(configured, by="configuration", **nb.boot)
        out.figure(plot_cost_per_success(cost), "cost_per_success", data=cost)
        frontier = cost_frontier(cost)
        out.figure(plot_cost_frontier(frontier), "cost_frontier", data=frontier)
    else:
        print("no episode stores a cost: no cost figures")
else:
    print("no tool-using episodes: no failure to draw")

# %% [markdown]
# ## The user simulator
# How often the reviews found the user simulator at fault, per user model, and the results
# with and without the episodes it spoiled (a critical user-simulator error). Both rows are
# shown; `n_left_out` says how many episodes the second drops.

# %%
if len(reviews.reviews):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        reliability = ak.usersim_reliability(tool_use, reviews, **nb.boot)
        without = ak.without_user_errors(tool_use, reviews, **nb.boot)
    display(out.table(reliability, "usersim_reliability",
                      rows=[c for c in ("user_model", "user_implementation")
                            if c in reliability.columns],
                      caption="User-simulator error rates among reviewed episodes."))
    display(out.frame(without, "without_user_errors",
                      caption="Reward and pass^k, all episodes and without critical "
                              "user-simulator errors."))
    if judged is not None and len(stored.reviews):
        display(out.frame(compare_reviews(stored, judged), "review_agreement",
                          caption="Stored against judged reviews, episodes reviewed by both."))
else:
    print("no review stored or judged (accordkit judge --task review writes them)")

# %% [markdown]
# ## Failure flags per benchmark and agent
# Incomplete AcCoRD episodes, triggered preferences left unsatisfied, goal shifts never
# recovered from, redundant tool calls and hand-offs to a human. Each row shows only the
# flags its benchmark can show (a blank cell: the flag does not apply there, e.g. goal
# shifts in a plain tau2 run); a flag no row can show is left out.

# %%
prefs = (nb.scores("preference", columns=["dynamic", "satisfied"], ids=["episode_id"])
         if "accord" in set(episodes["benchmark"]) else None)
shifts = nb.scores("shift")
table = failure_flags(episodes, by=["benchmark", "domain", "agent_model", "method", "persona",
                                   "scenario_id"], preferences=prefs, shifts=shifts)
# an agent or method the run does not name is "?", not a group left out; a flag its
# benchmark cannot show is blank, not 0
counts = failure_rates(table, by=["benchmark", "agent_model", "method"])
out.frame(counts, "failure_rates",
          caption="Share of episodes with each failure type (blank: it does not apply to "
                  "the benchmark).")

# %% [markdown]
# ## Drill down: the episodes behind a flag
# Set `failure` to one of the types above and `cell` to column values
# (e.g. `{"agent_model": "...", "domain": "..."}`).

# %%
print("failure types:", ", ".join(f"{k} ({v})" for k, v in FAILURES.items()))
if failure is None:   # the first flag the data's benchmarks can show, the most frequent
    shown = [c for c in counts.columns if c in FAILURES]
    failure = max(shown, key=lambda c: counts[c].fillna(0).mul(counts["episodes"]).sum(),
                  default="redundant_calls")
hits = table[table[failure]]
for column, value in cell.items():
    hits = hits[hits[column] == value]
print(f"{len(hits)} episode(s) with {failure} in {cell or 'all cells'}")
if len(hits):   # no empty table
    out.frame(hits[["episode_id", "benchmark", "domain", "agent_model", "method", "persona",
                    "scenario_id"]], f"episodes_{failure}",
              caption=f"Episodes with {failure}.")

# %% [markdown]
# ## Conversations
# With the first divergence, the action diff's findings and the review errors marked.

# %%
# only the episodes shown are read (from a score store: only their rows of their inputs)
for episode in nb.episodes_by_id(hits["episode_id"].head(show)):
    display(ak.show(episode, actions=actions, reviews=reviews))
