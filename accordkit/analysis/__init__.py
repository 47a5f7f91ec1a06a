"""Why it failed: failure taxonomies with intervals, flips between configurations, search.

Builders on the tidy frames of the lower layers (scores, the action diff, review tables),
with intervals from :mod:`accordkit.stats`; no I/O, no LLM calls:

- :func:`failure_indicators`, :func:`failure_taxonomy`: per episode, which failure statuses
  and fault types it shows; per cell, their shares with clustered bootstrap intervals;
- :func:`usersim_reliability`, :func:`without_user_errors`: the user simulator's
  critical-error rate, and reward and pass^k with and without the episodes it spoiled;
- :func:`flips`: tasks whose pass rate moved between two configurations, with the noise
  floor saying which moves trial noise explains;
- :func:`find`: episodes and turns matching text, a tool, a role or a status.
"""

from .failures import (
    FAILURE_COLUMNS,
    cell_episodes,
    failure_indicators,
    failure_taxonomy,
    taxonomy_groupings,
    with_goal_shift,
)
from .find import FIND_COLUMNS, find
from .flips import FLIP_COLUMNS, flip_pairs, flips
from .usersim import usersim_reliability, without_user_errors

__all__ = ["FAILURE_COLUMNS", "FIND_COLUMNS", "FLIP_COLUMNS", "cell_episodes", "find", "failure_indicators",
           "failure_taxonomy", "flips", "usersim_reliability", "without_user_errors", "flip_pairs",
           "taxonomy_groupings", "with_goal_shift"]
