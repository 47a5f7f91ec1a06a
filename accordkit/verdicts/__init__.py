"""Judge verdicts as data: a judge's reply read strictly, and verdict rows into episode fields.

No LLM, no files: the judges (which obtain verdicts, :mod:`accordkit.judges`) and the metrics
and :func:`accordkit.score` (which read the fields the verdicts fill) both sit on this package.

- :mod:`~accordkit.verdicts.parse`: strict parsers for judge replies (a verdict or
  ``"invalid"``, never a guess) and the goal-shift output's canonical struct.
- :mod:`~accordkit.verdicts.attach`: :func:`attach_verdicts`, the one rule by which verdict
  rows fill the episodes' canonical fields.
"""

from .attach import (
    CHECK_ITEMS,
    EPISODE_FIELDS,
    attach_verdicts,
    gsrt_from_verdicts,
    nl_verdicts_from_verdicts,
)
from .parse import INVALID, gsrt_struct

__all__ = ["attach_verdicts", "gsrt_from_verdicts", "nl_verdicts_from_verdicts",
           "EPISODE_FIELDS", "CHECK_ITEMS", "INVALID", "gsrt_struct"]
