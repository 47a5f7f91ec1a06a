"""accordkit: load, re-score and report user-agent collaboration benchmarks.

The data flows one way: ``load`` (sources -> canonical episodes) -> ``score`` (pure metric
functions) -> ``summarize`` / ``compare`` (clustered bootstrap statistics) -> tables,
figures and notebook reports.
"""

from . import _env

_env.apply_defaults()

from .frame import to_frame  # noqa: E402
from .load import is_hub_id, load, load_with_report  # noqa: E402
from .save import push_to_hub, save  # noqa: E402
from .schema import EPISODE_FEATURES, ID_COLUMNS, EpisodeValidationError  # noqa: E402
from .validate import DuplicateEpisodesWarning, SkippedRecordsWarning  # noqa: E402

__version__ = "0.1.0"

__all__ = [
    "EPISODE_FEATURES",
    "ID_COLUMNS",
    "DuplicateEpisodesWarning",
    "EpisodeValidationError",
    "SkippedRecordsWarning",
    "is_hub_id",
    "load",
    "load_with_report",
    "push_to_hub",
    "save",
    "to_frame",
]
