"""The canonical episode schema: one row per conversation, for every benchmark.

Every adapter turns its raw format into records that match :data:`EPISODE_FEATURES`;
everything downstream (metrics, judges, statistics, notebooks) reads only these columns.
The full field-by-field description lives in ``docs/schema.md``.

Conventions
-----------
* Values whose type varies between records (tool-call arguments, expected parameters,
  purchased items, the raw ``reward_info``) are stored as JSON text in columns whose
  name ends in ``_json``. JSON text keeps the distinction between ``1`` and ``1.0`` and
  the key order, which the upstream metric code depends on.
* ``None`` means "not recorded"; an empty list means "recorded, and empty". Stored
  judge output that lists zero goal shifts is therefore different from no judge output.
* ``turn_idx`` is the 0-based position of a message in the source transcript. Messages
  made by splitting one source message share its ``turn_idx`` and get ``sub_idx`` 0, 1, ...

Modules
-------
- :mod:`~accordkit.schema.features`: the columns (:data:`EPISODE_FEATURES`), the error that
  names a record's problem, the empty record.
- :mod:`~accordkit.schema.rules`: the episode rules beyond types (:data:`RULES`), declared once.
- :mod:`~accordkit.schema.types`: the type checks of one record, compiled from the features.
- :mod:`~accordkit.schema.arrow`: the schema as Arrow, tables of records, the dataset wrapper.
"""

from __future__ import annotations

# the names (benchmarks, roles, dynamics, kinds, id columns) live in a module of their own,
# free of datasets, and are part of this package's interface
from ..names import BENCHMARKS, CONFIG_COLUMNS, DYNAMICS, ID_COLUMNS, KINDS, ROLES
from .features import (
    EPISODE_FEATURES,
    LATER_COLUMNS,
    SCHEMA_VERSION,
    EpisodeValidationError,
    empty_episode,
)
from .rules import (
    JSON_OBJECT_FIELDS,
    RULES,
    Rule,
    check_json_objects,
    json_object_problem,
    named_path,
    rule_problem,
)
from .types import FLOAT_EXACT_INT, check_converted, record_problem, validate_episode

__all__ = [
    "EPISODE_FEATURES",
    "ID_COLUMNS",
    "CONFIG_COLUMNS",
    "BENCHMARKS",
    "ROLES",
    "DYNAMICS",
    "KINDS",
    "SCHEMA_VERSION",
    "LATER_COLUMNS",
    "check_json_objects",
    "JSON_OBJECT_FIELDS",
    "RULES",
    "Rule",
    "rule_problem",
    "named_path",
    "json_object_problem",
    "EpisodeValidationError",
    "validate_episode",
    "record_problem",
    "check_converted",
    "FLOAT_EXACT_INT",
    "empty_episode",
]
