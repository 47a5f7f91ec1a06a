"""accordkit: load, re-score and report user-agent collaboration benchmarks.

The data flows one way::

    load (sources -> canonical episodes) -> score (pure metric functions)
        -> summarize / compare (clustered bootstrap statistics) -> tables, figures, reports

Public names are imported lazily on first use, so ``import accordkit`` and the
``accordkit`` command start quickly and litellm is only imported when a judge runs.

Examples
--------
>>> import accordkit as ak
>>> ds = ak.load("data/sample/accord")                                # doctest: +SKIP
>>> table = ak.summarize(ak.score(ds), ["completed", "task_score"],
...                      by=["agent_model", "method"])                 # doctest: +SKIP
"""

from __future__ import annotations

import sys
import types
from importlib import import_module
from typing import TYPE_CHECKING, Any

from ._internal import env as _env

_env.apply_defaults()

from ._internal import quiet as _quiet  # noqa: F401,E402  (tqdm's widget notice off notebook pages)

__version__ = "0.1.0"

#: public name -> "module" or "module:attribute" that defines it
_EXPORTS = {
    # schema and loading
    "EPISODE_FEATURES": "accordkit.schema",
    "ID_COLUMNS": "accordkit.schema",
    "EpisodeValidationError": "accordkit.schema",
    "load": "accordkit.load",
    "load_with_report": "accordkit.load",
    "is_hub_id": "accordkit.load",
    "SkippedRecordsWarning": "accordkit.ingest.report",
    "DuplicateEpisodesWarning": "accordkit.ingest.report",
    "validation_summary": "accordkit.validate_report",
    "to_frame": "accordkit.frame",
    "save": "accordkit.save",
    "read_published": "accordkit.ingest.formats.eee",
    "push_to_hub": "accordkit.save",
    "SourceNotFoundError": "accordkit.load",
    # scoring
    "score": "accordkit.score",
    "accord_table": "accordkit.tables",
    "ACCORD_TABLE_METRICS": "accordkit.tables",
    "pass_hat_k": "accordkit.tables",
    "pass_hat_k_tasks": "accordkit.metrics.passk",
    "compare_modes": "accordkit.metrics.compare_modes",
    # why it failed (issue 31)
    "action_diff": "accordkit.metrics.action_diff",
    "action_summary": "accordkit.metrics.action_diff",
    "review_tables": "accordkit.metrics.reviews",
    "combine_reviews": "accordkit.metrics.reviews",
    "tables_from_levels": "accordkit.metrics.reviews",
    "compare_reviews": "accordkit.judges.review",
    "review_tables_from_verdicts": "accordkit.judges.review",
    "failure_indicators": "accordkit.analysis",
    "failure_taxonomy": "accordkit.analysis",
    "usersim_reliability": "accordkit.analysis",
    "without_user_errors": "accordkit.analysis",
    "flips": "accordkit.analysis",
    "find": "accordkit.analysis",
    "write_scores": "accordkit.engines",
    "read_scores": "accordkit.store",
    "read_modes": "accordkit.store",
    # judges
    "judge": "accordkit.judges",
    "run_judge": "accordkit.judges",
    "JudgeRun": "accordkit.judges",
    "read_verdicts": "accordkit.judges",
    "write_verdicts": "accordkit.judges",
    "judge_costs": "accordkit.judges",
    "pass_rates": "accordkit.judges",
    "judge_agreement": "accordkit.judges:agreement",
    # statistics and tables
    "summarize": "accordkit.stats",
    "summarize_tables": "accordkit.stats",
    "compare": "accordkit.stats",
    "compare_metrics": "accordkit.stats",
    "Metric": "accordkit.stats",
    "format_table": "accordkit.tables",
    "accord_main": "accordkit.tables",
    "accord_dynamics": "accordkit.tables",
    "accord_cost": "accordkit.tables",
    "accord_main_and_cost": "accordkit.tables",
    "accord_tables": "accordkit.tables",
    "goalshift_main": "accordkit.tables",
    "goalshift_gsrt": "accordkit.tables",
    "failure_flags": "accordkit.tables",
    "plot_intervals": "accordkit.plots",
    "plot_forest": "accordkit.plots",
    "plot_passk": "accordkit.plots",
    "plot_gsrt": "accordkit.plots",
    "model_palette": "accordkit.plots",
    "save_figure": "accordkit.plots",
    "BCaFallbackWarning": "accordkit.stats",
    "DegenerateIntervalWarning": "accordkit.stats",
    "MixedBenchmarksWarning": "accordkit.stats",
    "UnpairedComparisonWarning": "accordkit.stats",
    # reliability (issue 15)
    "noise_floor": "accordkit.stats",
    "plan_trials": "accordkit.stats",
    "recovery_curves": "accordkit.stats",
    "recovery_times": "accordkit.stats",
    "km_medians": "accordkit.stats",
    "task_discrimination": "accordkit.stats",
    "plot_recovery_curves": "accordkit.plots",
    # numbers an LLM judge produced, corrected for the judge (issue 44)
    "judge_calibration": "accordkit.stats",
    "corrected_rate": "accordkit.stats",
    "ppi_mean": "accordkit.stats",
    # reporting
    "build_report": "accordkit.report",
    "render_conversation": "accordkit.report.conversation",
    "show": "accordkit.show",
}

__all__ = sorted(_EXPORTS)


def __getattr__(name: str) -> Any:
    target = _EXPORTS.get(name)
    if target is None:
        raise AttributeError(f"module 'accordkit' has no attribute {name!r}")
    module, _, attr = target.partition(":")
    value = getattr(import_module(module), attr or name)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted(set(globals()) | set(__all__))


class _Package(types.ModuleType):
    """Keeps ``accordkit.load`` (and ``save``, ``score``) the functions.

    Importing a submodule makes Python bind it as an attribute of its package, and three
    submodules share their name with the function they define. When that happens the
    function is bound instead, so ``ak.load`` stays callable however the package was imported.
    """

    def __setattr__(self, name: str, value: Any) -> None:
        target = _EXPORTS.get(name, "")
        module, _, attr = target.partition(":")
        if isinstance(value, types.ModuleType) and value.__name__ == module:
            value = getattr(value, attr or name)
        super().__setattr__(name, value)


sys.modules[__name__].__class__ = _Package


if TYPE_CHECKING:  # for type checkers and IDEs
    from .frame import to_frame  # noqa: F401
    from .ingest.report import DuplicateEpisodesWarning, SkippedRecordsWarning  # noqa: F401
    from .load import is_hub_id, load, load_with_report  # noqa: F401
    from .plots import *  # noqa: F403
    from .save import push_to_hub, save  # noqa: F401
    from .schema import EPISODE_FEATURES, ID_COLUMNS, EpisodeValidationError  # noqa: F401
    from .score import score  # noqa: F401
    from .stats import Metric, compare, summarize  # noqa: F401
    from .tables import *  # noqa: F403
