"""Every table builder of :mod:`accordkit.tables` has one call shape:
``builder(frame, *, by, **bootstrap) -> long frame``.

The builders are found, not listed: every public function of every module of the package
whose return annotation names a table (a DataFrame, or a bundle of them). Each is held to
the shape: the frame its one positional parameter, every other parameter keyword-only,
``by`` among them; the interval options spelled as :func:`accordkit.summarize` spells them,
with its defaults, accepted in full by a builder whose table has a resampled interval and
not at all by one whose table has none. A function that is not a builder of that kind is
named below with the reason, so that a new one cannot slip past unnoticed.
"""

from __future__ import annotations

import importlib
import inspect
import pkgutil

import pytest

import accordkit.tables as tables
from accordkit.stats import summarize
from accordkit.tables import bootstrap_options

#: Return annotations that make a function a table builder.
TABLE_TYPES = ("DataFrame", "JudgeTables", "TaskDiscrimination")

#: Public functions returning a frame that are not table builders, and why.
NOT_BUILDERS = {
    "accord.preference_scores": "adds one column to the rows it is given; no groups",
    "shared.select": "a row filter of a score frame",
    "shared.with_tue_points": "adds one column to the rows it is given; no groups",
    "tau2.with_configuration": "adds the configuration label to the rows it is given",
    "tau2.tau2_episodes": "a row filter (the tau2-format episodes) with their label",
    "reliability.reliability_episodes": "adds the configuration label to the rows",
    "judge.judged_items": "a row filter (the verdicts that are a pass or a fail)",
    "passk.pass_hat_k": "the estimator's own public interface (accordkit.pass_hat_k: ks "
                        "positional, task and trial columns, ci switch, as "
                        "metrics.passk.pass_hat_k_tasks); the page's table of it is "
                        "tau2.pass_k_table",
    "format.format_table": "renders a table as text; builds none",
}

#: Builders whose table has no resampled interval: they take ``by`` but no interval
#: option (an option they would ignore is never accepted).
NO_INTERVAL = {
    "paper.accord_table",          # point estimates of the paper's tables
    "tau2.termination_table",      # counts and shares
    "tau2.cost_per_task",          # a mean per task
    "failures.failure_flags",      # one row per episode
    "failures.failure_rates",      # shares of the flags
    "comparisons.comparison_plan",  # which pairs, on which tasks
    "reliability.noise_floor_table",      # a power calculation
    "reliability.plan_trials_table",      # a power calculation
    "reliability.discrimination_tables",  # item-response fits
    "failure_figures.divergence_turns",   # counts per turn
    "failure_figures.cost_frontier",      # reads the intervals cost_per_success drew
    "passk.one_interval",          # reads the intervals pass^k and the reward drew
}

#: Interval options a builder does not take, because the statistics beneath it have no
#: such choice (an option it would ignore is never accepted).
WITHOUT = {
    "judge.judge_tables": {"method"},   # judge_calibration and ppi_mean fix their intervals
}

#: Defaults that differ from :func:`accordkit.summarize`'s on purpose.
OWN_DEFAULTS = {
    ("accord.accord_tables", "share_draws"): "the report's five tables share one set of "
                                             "resamples by default (False draws per cell, as "
                                             "summarize does)",
    ("judge.judge_tables", "n_resamples"): "judge_calibration's and ppi_mean's default "
                                           "(2,000: every resample refits the judge's "
                                           "sensitivity and specificity)",
}

#: Spellings of an interval option or of ``by`` that the house does not use.
ALIASES = {"within", "task", "groupby", "group_by", "confidence_level", "ci_level", "level",
           "alpha", "n_boot", "n_bootstrap", "n_samples", "resamples", "ci_method",
           "random_state", "rng"}

#: The interval options (:func:`bootstrap_options` gives every page's; ``cluster`` is the
#: task column, which a table without an interval may still group tasks by).
SUMMARIZE = inspect.signature(summarize).parameters
RESAMPLING = [name for name in bootstrap_options({}) if name != "cluster"]


def _functions():
    for info in pkgutil.iter_modules(tables.__path__):
        module = importlib.import_module(f"{tables.__name__}.{info.name}")
        for name in getattr(module, "__all__", ()):
            obj = getattr(module, name)
            if inspect.isfunction(obj) and obj.__module__ == module.__name__:
                yield f"{info.name}.{name}", obj


def _builders():
    out = {}
    for name, func in _functions():
        returns = str(inspect.signature(func).return_annotation)
        if any(t in returns for t in TABLE_TYPES) and name not in NOT_BUILDERS:
            out[name] = func
    return out


BUILDERS = _builders()


def test_the_builders_are_found():
    # the package's own builders, from each module, are among those checked
    for name in ("tau2.reward_table", "tau2.pass_k_table", "comparisons.paired_comparisons",
                 "reliability.differences_vs_noise", "failures.failure_rates",
                 "accord.accord_main", "goalshift.goalshift_gsrt",
                 "failure_figures.cost_per_success", "judge.judge_tables"):
        assert name in BUILDERS, name
    assert len(BUILDERS) >= 25


def test_the_lists_of_exceptions_name_real_functions():
    public = dict(_functions())
    for name in [*NOT_BUILDERS, *NO_INTERVAL, *WITHOUT, *(n for n, _ in OWN_DEFAULTS)]:
        assert name in public, f"{name}: no such public function in accordkit.tables"
    assert not set(NOT_BUILDERS) & set(BUILDERS)


def test_the_page_options_are_the_statistics_defaults():
    """Every page's interval options (:func:`bootstrap_options`) start from
    :func:`accordkit.summarize`'s defaults."""
    assert bootstrap_options({}) == {name: SUMMARIZE[name].default
                                     for name in bootstrap_options({})}


@pytest.mark.parametrize("name", sorted(BUILDERS))
def test_one_positional_frame_then_keywords(name):
    params = list(inspect.signature(BUILDERS[name]).parameters.values())
    first, rest = params[0], params[1:]
    assert first.kind is inspect.Parameter.POSITIONAL_OR_KEYWORD, name
    assert "DataFrame" in str(first.annotation), f"{name}: first parameter is not a frame"
    positional = [p.name for p in rest if p.kind is not inspect.Parameter.KEYWORD_ONLY
                  and p.kind is not inspect.Parameter.VAR_KEYWORD]
    assert not positional, f"{name}: {positional} should be keyword-only"
    assert "by" in {p.name for p in rest}, f"{name}: no `by`"
    aliases = ALIASES & {p.name for p in params}
    assert not aliases, f"{name}: spelled {aliases}; the house says `by` and summarize's names"


@pytest.mark.parametrize("name", sorted(BUILDERS))
def test_interval_options_all_or_none(name):
    params = inspect.signature(BUILDERS[name]).parameters
    explicit = {p for p in params if p in SUMMARIZE and p not in ("frame", "metrics", "by")}
    catch_all = any(p.kind is inspect.Parameter.VAR_KEYWORD for p in params.values())
    for option in explicit:
        if (name, option) in OWN_DEFAULTS:
            continue
        assert params[option].default == SUMMARIZE[option].default, (
            f"{name}: {option}={params[option].default!r}, summarize's is "
            f"{SUMMARIZE[option].default!r}")
    if name in NO_INTERVAL:
        taken = [o for o in RESAMPLING if o in explicit]
        assert not taken and not catch_all, (
            f"{name} draws no interval but accepts {taken or '**options'}")
        return
    wanted = ["cluster", *RESAMPLING]
    missing = [o for o in wanted if o not in explicit and o not in WITHOUT.get(name, set())]
    assert catch_all or not missing, f"{name}: no {missing}"
    refused = WITHOUT.get(name, set()) & (explicit | ({"*"} if catch_all else set()))
    assert not refused, f"{name} accepts {refused}, which it cannot use"
