"""LLM judges through litellm: cached on disk, resumable, costed; verdicts stored as data.

Judges: ``usersim_tests`` (AcCoRD user-simulator unit tests), ``outcome`` (AcCoRD-Shop
purchase criteria), ``nl_assertions`` (AgentChangeBench NL assertions), ``gsrt`` (goal-shift
detection), ``review`` (conversation review: fault source, type, severity). See
``docs/judges.md``.
"""

from ..verdicts.parse import gsrt_struct
from .cache import CacheNotWritableError
from .merge import IncompleteMergeError, MergeConflictError, merge_caches, merge_verdicts
from .options import JudgeOptions
from .pricing import UnknownPriceWarning
from .registry import JUDGES, get_judge
from .reliability import agreement, pass_rates
from .runner import JudgeCacheWarning, JudgeRun, arun_judge, judge, run_judge
from .verdicts import (
    VERDICT_COLUMNS,
    check_verdicts,
    gsrt_from_verdicts,
    judge_costs,
    nl_verdicts_from_verdicts,
    read_verdicts,
    write_verdicts,
)

__all__ = [
    "JUDGES",
    "CacheNotWritableError",
    "JudgeCacheWarning",
    "VERDICT_COLUMNS",
    "JudgeOptions",
    "JudgeRun",
    "MergeConflictError",
    "IncompleteMergeError",
    "UnknownPriceWarning",
    "agreement",
    "arun_judge",
    "check_verdicts",
    "get_judge",
    "gsrt_from_verdicts",
    "gsrt_struct",
    "judge",
    "judge_costs",
    "merge_caches",
    "merge_verdicts",
    "nl_verdicts_from_verdicts",
    "pass_rates",
    "read_verdicts",
    "run_judge",
    "write_verdicts",
]
