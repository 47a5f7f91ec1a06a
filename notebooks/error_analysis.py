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
# # Error analysis
#
# Which episodes fail, and how: incomplete AcCoRD episodes, triggered preferences left
# unsatisfied, goal shifts the agent never recovered from, redundant tool calls and hand-offs
# to a human. Pick a failure type and a table cell to list the episodes behind it, then read
# a conversation with its preference reveals, goal shifts and tool calls marked.

# %% tags=["parameters"]
# episodes: paths, folders or hub ids
source = ["../data/sample/accord", "../data/sample/goalshift"]
# stored judge verdict files (parquet)
verdicts = ["../data/sample/verdicts/usersim_tests.parquet"]
revision = None         # hub revision of hub sources
split = None            # only this split
models = None           # only these agent models (list)
domains = None          # only these domains (list)
tcrr_mode = "episode"   # redundant calls: episode or an upstream mode
action_mode = "best_match"  # TSR action matching: best_match or upstream
out_dir = "../reports/interactive"  # tables go here (set by the report)
figures_dir = None      # figures go here (set by the report)
provenance_path = None  # provenance goes here (set by the report)
scores_dir = None       # read tables from this score store

failure = "unrecovered_shift"  # failure type to drill into
cell = {}               # column values of the cell to list
show = 2                # conversations shown in full

# %%
import accordkit as ak
from accordkit.report import NotebookContext, views

nb = NotebookContext.from_parameters("error_analysis", globals())
out = nb.out
episodes = nb.scores()
prefs = (nb.scores("preference", columns=["dynamic", "satisfied"])
         if "accord" in set(episodes["benchmark"]) else None)
shifts = nb.scores("shift")
flags = views.failure_flags(episodes, prefs, shifts)
table = episodes[["episode_id", "benchmark", "domain", "agent_model", "method", "persona",
                  "scenario_id"]].merge(flags, on="episode_id")

# %% [markdown]
# ## How often each failure occurs, per benchmark and agent

# %%
keys = ["benchmark", "agent_model", "method"]
# an agent or method the run does not name is "?", not a group left out
counts = (table.assign(**{k: table[k].fillna("?") for k in keys})
          .groupby(keys)[list(views.FAILURES)].mean())
out.frame(counts.reset_index(), "failure_rates",
          caption="Share of episodes with each failure type.")

# %% [markdown]
# ## Drill down: the episodes behind a cell
# Set `failure` to one of the types above and `cell` to column values
# (e.g. `{"agent_model": "...", "domain": "..."}`).

# %%
print("failure types:", ", ".join(f"{k} ({v})" for k, v in views.FAILURES.items()))
hits = table[table[failure]]
for column, value in cell.items():
    hits = hits[hits[column] == value]
print(f"{len(hits)} episode(s) with {failure} in {cell or 'all cells'}")
out.frame(hits[["episode_id", "benchmark", "domain", "agent_model", "method", "persona",
                "scenario_id"]], f"episodes_{failure}", caption=f"Episodes with {failure}.")

# %% [markdown]
# ## Conversations

# %%
# only the episodes shown are read (from a score store: only their rows of their inputs)
for episode in nb.episodes_by_id(hits["episode_id"].head(show)):
    display(ak.render_conversation(episode))
