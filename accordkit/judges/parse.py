"""The judges' reply parsers; they live in :mod:`accordkit.verdicts.parse` (the metrics read
goal-shift verdicts with them too, and may not import the judges)."""

from ..verdicts.parse import (  # noqa: F401
    INVALID,
    __all__,
    gsrt_struct,
    parse_gsrt,
    parse_json_object,
    parse_label,
    parse_nl_results,
)
