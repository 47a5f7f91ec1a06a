"""Deprecated location of the report tables: they live in :mod:`accordkit.tables`.

Kept as thin re-exports for one release so notebooks and report code keep working.
"""

from ..tables.builders import (  # noqa: F401
    FAILURES,
    accord_cost,
    accord_dynamics,
    accord_main,
    bootstrap_options,
    failure_flags,
    goalshift_gsrt,
    goalshift_main,
    select,
)
from ..tables.catalogue import (  # noqa: F401
    ACCORD_DYNAMICS,
    ACCORD_MAIN,
    GOALSHIFT_GSRT,
    GOALSHIFT_MAIN,
)

__all__ = [
    "ACCORD_MAIN",
    "ACCORD_DYNAMICS",
    "GOALSHIFT_MAIN",
    "GOALSHIFT_GSRT",
    "bootstrap_options",
    "select",
    "accord_main",
    "accord_dynamics",
    "accord_cost",
    "goalshift_main",
    "goalshift_gsrt",
    "failure_flags",
    "FAILURES",
]
