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
# Differences between agent configurations (agent model, agent implementation, user model,
# user implementation), within one benchmark and domain at a time: every two configurations
# that ran at least two tasks in common are compared on the tasks they share, or the
# `baseline` (`--set baseline=gpt-4.1`: an agent model or a full label) against each other
# one, or only the `pairs` named. Each bootstrap resample draws shared tasks and evaluates
# both configurations on the same draw, so task difficulty cancels out. p-values are
# adjusted over a domain's comparisons (Holm); where every comparison of a domain uses the
# same tasks, configurations in one tie group cannot be told apart from the best at that
# level. The comparison plan says, per pair, how many tasks each ran and how many it was
# compared on.

# %% tags=["parameters"]
# episodes: paths, folders or hub ids
source = ["../data/sample/accord", "../data/sample/goalshift"]
# stored judge verdict files (parquet)
verdicts = ["../data/sample/verdicts/usersim_tests.parquet"]
revision = None         # hub revision of hub sources
split = None            # only this split
models = None           # only these agent models (list)
domains = None          # only these domains (list)
metrics = None          # only these metrics (list of names)
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

# %%
from accordkit.plots import plot_forest_facets
from accordkit.report import NotebookContext
from accordkit.tables import benchmark_comparisons, with_configuration

nb = NotebookContext.from_parameters("compare_models", globals())
out = nb.out
episodes = with_configuration(nb.scores())
results, plan = benchmark_comparisons(
    episodes, metrics=metrics, between="configuration", cluster=cluster, baseline=baseline,
    pairs=pairs, method=ci_method, confidence=confidence, n_resamples=n_resamples,
    seed=seed)
out.frame(plan, "comparison_plan",
          caption="Pairs of configurations per benchmark and domain: the tasks each ran and "
                  "the shared tasks each comparison used, or why a pair was not compared.")

# %%
for (bench, domain, metric), part in results.groupby(["benchmark", "domain", "metric"],
                                                     sort=True):
    name = str(metric).replace("/", "_over_").replace(" ", "")
    low, high = int(part["n_pairs"].min()), int(part["n_pairs"].max())
    shared = f"{low}" if low == high else f"{low}–{high}"
    display(out.table(part, f"{bench}__{domain}__{name}", rows=["configuration", "baseline"],
                      columns=None, value="delta",
                      caption=f"{bench}, {domain}: {metric}, difference configuration − "
                              f"baseline, each pair paired on the {shared} tasks both ran."))

# %%
if len(results):
    cols = ["benchmark", "domain", "metric", "configuration", "baseline", "delta", "ci_low",
            "ci_high", "p_value", "p_adjusted", "prob_improvement", "tie_group", "n_pairs",
            "paired"]
    display(out.frame(results[cols], "all_comparisons",
                      caption="All paired comparisons (same benchmark and domain, each "
                              "pair on the tasks both ran: n_pairs)."))
    # one panel per benchmark, domain and metric: one long forest of every difference
    # repeated the domain and metric in each label
    out.figure(plot_forest_facets(results, label="configuration",
                                  title="Paired differences (configuration − baseline)"),
               "forest",
               data=results[cols])
else:
    print("No benchmark and domain has two configurations that share two or more tasks "
          "(the comparison plan says what each ran).")
