"""The score store: score once, analyse many times.

A folder of parquet parts, one subfolder per level, and a manifest written last; see
:mod:`accordkit.store.format` for the layout. The package's modules each hold one job: the
format (:mod:`.format`: parts, manifest, their checks), reading the tables back
(:mod:`.read`), whether the inputs are still the files scored (:mod:`.inputs`) and the
drill-down to a few episodes' transcripts (:mod:`.fetch`). Every name is importable from
``accordkit.store``.
"""

from __future__ import annotations

from .._internal.files import file_sha256  # noqa: F401 - the parts' digest, patched in tests
from .fetch import fetch_episodes
from .format import (  # noqa: F401 - the private names are the engines' and the tests'
    _DTYPES_KEY,
    _LATER_LEVELS,
    LEVEL_DIRS,
    ORDER_COLUMNS,
    PART_DIRS,
    STORE_VERSION,
    IncompleteStoreError,
    InputRecord,
    RepeatedEpisodesError,
    StoreIntegrityError,
    _check_part_name,
    _checked_part,
    _manifest_problem,
    _part_facts,
    _part_rows,
    _parts,
    part_name,
    read_manifest,
    write_manifest,
    write_part,
)
from .inputs import (  # noqa: F401
    PartialStoreWarning,
    StoreChangedWarning,
    _sha256_now,
    scored_inputs,
)
from .inputs import warn_about_inputs as _warn_about_inputs  # noqa: F401
from .inputs import warn_if_changed as _warn_if_changed  # noqa: F401
from .read import _check_unique_episodes, _has_accord, _read_categorical, read_modes, read_scores  # noqa: F401

__all__ = [
    "STORE_VERSION",
    "LEVEL_DIRS",
    "InputRecord",
    "IncompleteStoreError",
    "StoreIntegrityError",
    "RepeatedEpisodesError",
    "PartialStoreWarning",
    "StoreChangedWarning",
    "scored_inputs",
    "part_name",
    "write_part",
    "write_manifest",
    "read_manifest",
    "read_scores",
    "read_modes",
    "fetch_episodes",
]
