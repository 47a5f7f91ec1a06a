"""Input checks shared by the metric modules."""

from __future__ import annotations

from collections.abc import Sequence

import pyarrow as pa


def check_episode_table(table: object, required: Sequence[str], *, what: str) -> None:
    """Raise when ``table`` is not an Arrow table holding the ``required`` canonical columns.

    ``what`` names the scorer in the message (e.g. ``"AcCoRD scoring"``).
    """
    if not isinstance(table, pa.Table):
        raise TypeError(f"expected a pyarrow.Table of canonical episodes, got "
                        f"{type(table).__name__}")
    present = set(table.column_names)
    missing = [c for c in required if c not in present]
    if missing:
        raise ValueError(f"{what} needs the canonical columns {missing}, which the table lacks "
                         "(see accordkit.schema.EPISODE_FEATURES)")
