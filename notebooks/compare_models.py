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
# user implementation) against a baseline, within one benchmark and domain at a time and
# only between configurations that ran the same tasks (the parameter `baseline`, or the
# configuration with the most tasks). Each bootstrap resample draws tasks and evaluates every
# configuration on the same draw, so task difficulty cancels out. p-values are adjusted for
# the number of comparisons (Holm); configurations in one tie group cannot be told apart
# from the best at that level. Configurations that ran other tasks are listed as not
# comparable, with the reason; with `shared_tasks=True` (`--set shared_tasks=true`) they are
# compared on the tasks they all ran instead, and the captions say on how many.

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
baseline = None         # configuration compared against (None: most tasks)
shared_tasks = False    # compare configurations that ran other task sets on shared tasks
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
    episodes, metrics, between="configuration", task=cluster, baseline=baseline,
    shared_tasks=shared_tasks, method=ci_method, confidence=confidence,
    n_resamples=n_resamples, seed=seed)
out.frame(plan, "comparison_plan",
          caption="Configurations per benchmark and domain: compared with the baseline, or "
                  "not comparable and why.")

# %%
for (bench, domain, metric), part in results.groupby(["benchmark", "domain", "metric"],
                                                     sort=True):
    name = str(metric).replace("/", "_over_").replace(" ", "")
    display(out.table(part, f"{bench}__{domain}__{name}", rows="configuration", columns=None,
                      value="delta",
                      caption=f"{bench}, {domain}: {metric}, difference vs "
                              f"{part['baseline'].iloc[0]}, paired on "
                              f"{int(part['n_pairs'].max())} shared tasks."))

# %%
if len(results):
    cols = ["benchmark", "domain", "metric", "configuration", "baseline", "delta", "ci_low",
            "ci_high", "p_value", "p_adjusted", "prob_improvement", "tie_group", "n_pairs",
            "paired"]
    display(out.frame(results[cols], "all_comparisons",
                      caption="All paired comparisons (same benchmark, domain and "
                              f"{'shared tasks' if shared_tasks else 'tasks'})."))
    # one panel per benchmark, domain and metric: one long forest of every difference
    # repeated the domain and metric in each label
    out.figure(plot_forest_facets(results, label="configuration",
                                  title="Paired differences vs baseline"), "forest",
               data=results[cols])
else:
    print("No benchmark and domain has two configurations that ran the same tasks.")
