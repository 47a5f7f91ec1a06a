"""Deprecated location of ``accord_table``: it lives in :mod:`accordkit.tables.paper`, the
point-estimate form of the table catalogue. Kept as a re-export for one release."""

from ..tables.paper import (  # noqa: F401
    ACCORD_TABLE_METRICS,
    AGGREGATIONS,
    DYNAMIC_ORDER,
    __all__,
    accord_table,
)
