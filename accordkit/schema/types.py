"""The type checks of one record, compiled from :data:`~accordkit.schema.EPISODE_FEATURES`.

:func:`record_problem` walks a record (from JSON / JSONL, or built by an adapter) and names the
first field whose value has the wrong type. Arrow itself is too lenient for this: it truncates
``1.5`` to an ``int32``, reads the text ``"abc"`` as the list ``["a", "b", "c"]`` and drops
unknown struct keys. :func:`validate_episode` adds the episode rules (:data:`RULES`).
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping
from typing import Any

import datasets

from .features import EPISODE_FEATURES, EpisodeValidationError
from .rules import fail, rule_problem

__all__ = ["FLOAT_EXACT_INT", "record_problem", "check_converted", "validate_episode",
           "int_text"]

_INT32 = (-(2**31), 2**31 - 1)
_INT64 = (-(2**63), 2**63 - 1)
#: The largest integer magnitude a float field takes: float64 holds every integer up to
#: ``2**53`` exactly, and Arrow refuses (rather than rounds) an integer beyond it, from JSON
#: and from a parquet integer column alike. Larger values must be written as floats.
FLOAT_EXACT_INT = 2**53


def int_text(v: int) -> str:
    """An integer for a message: its digits, or its size when it is very long.

    Examples
    --------
    >>> int_text(2**64)
    '18446744073709551616'
    >>> int_text(-(10**400))
    '-1000...0000 (401 digits)'
    """
    if v.bit_length() <= 200:
        return str(v)
    digits = int(abs(v).bit_length() * math.log10(2)) + 1
    if 10 ** (digits - 1) > abs(v):
        digits -= 1
    head = "-" if v < 0 else ""
    return f"{head}{abs(v) // 10 ** (digits - 4)}...{abs(v) % 10_000:04d} ({digits} digits)"


_Check = Callable[[Any, str], "tuple[str, str] | None"]


def _value_check(dtype: str) -> _Check:
    def check_str(v: Any, where: str) -> tuple[str, str] | None:
        if v is None or isinstance(v, str):
            return None
        return where, f"expected text, got {type(v).__name__} {v!r:.60}"

    def check_bool(v: Any, where: str) -> tuple[str, str] | None:
        if v is None or isinstance(v, bool):
            return None
        return where, f"expected true or false, got {type(v).__name__} {v!r:.60}"

    def check_int(lo: int, hi: int, what: str) -> _Check:
        def check(v: Any, where: str) -> tuple[str, str] | None:
            if v is None:
                return None
            if isinstance(v, bool) or not isinstance(v, int):
                return where, f"expected an integer, got {type(v).__name__} {v!r:.60}"
            if not lo <= v <= hi:
                return where, f"integer {int_text(v)} does not fit in {what}"
            return None
        return check

    def check_float(v: Any, where: str) -> tuple[str, str] | None:
        if v is None:
            return None
        if isinstance(v, int) and not isinstance(v, bool):
            if -FLOAT_EXACT_INT <= v <= FLOAT_EXACT_INT:
                return None
            return where, (f"integer {int_text(v)} is out of range for a float field "
                           "(integers are taken up to ±2**53, what float64 holds exactly; "
                           "write a larger value as a float, e.g. 1e20)")
        if isinstance(v, float):
            return None if math.isfinite(v) else (where, f"expected a finite number, got {v!r}")
        return where, f"expected a number, got {type(v).__name__} {v!r:.60}"

    checks: dict[str, _Check] = {
        "string": check_str, "large_string": check_str, "bool": check_bool,
        "int32": check_int(*_INT32, "int32"), "int64": check_int(*_INT64, "int64"),
        "float64": check_float, "float32": check_float,
    }
    if dtype not in checks:  # pragma: no cover - the schema uses only the types above
        raise TypeError(f"no check for dtype {dtype}")
    return checks[dtype]


def _struct_check(fields: Mapping[str, Any]) -> _Check:
    children = {name: _compile(feature) for name, feature in fields.items()}

    def check(v: Any, where: str) -> tuple[str, str] | None:
        if v is None:
            return None
        if not isinstance(v, Mapping):
            return where, f"expected an object, got {type(v).__name__} {v!r:.60}"
        for key in v:
            if key not in children:
                return (f"{where}.{key}" if where else str(key),
                        f"unknown field {key!r}; expected one of {sorted(children)}")
        for name, child in children.items():
            found = child(v.get(name), f"{where}.{name}" if where else name)
            if found:
                return found
        return None
    return check


def _list_check(feature: Any) -> _Check:
    child = _compile(feature)

    def check(v: Any, where: str) -> tuple[str, str] | None:
        if v is None:
            return None
        if not isinstance(v, list | tuple):
            return where, f"expected a list, got {type(v).__name__} {v!r:.60}"
        for i, item in enumerate(v):
            found = child(item, f"{where}[{i}]")
            if found:
                return found
        return None
    return check


def _compile(feature: Any) -> _Check:
    if isinstance(feature, datasets.Value):
        return _value_check(feature.dtype)
    if isinstance(feature, datasets.List | datasets.LargeList):
        return _list_check(feature.feature)
    if isinstance(feature, Mapping):
        return _struct_check(feature)
    raise TypeError(f"no check for feature {feature!r}")  # pragma: no cover


_RECORD_CHECK = _struct_check(EPISODE_FEATURES)


def check_converted(rec: Any, fail: Callable[[str, str], EpisodeValidationError], *,
                    whole: str, messages_typed: bool = False) -> None:
    """Check a record an adapter built: schema types (:func:`record_problem`), then the
    episode rules (:data:`~accordkit.schema.RULES`).

    ``fail(reason, field)`` makes the error naming the adapter's file and record; ``whole``
    is the field named when a rule concerns the record as a whole. ``messages_typed`` says
    the messages were built from values a typed decoder already checked
    (:mod:`accordkit.ingest.formats.tau2.typed`), so their types are not walked again; the
    episode rules still see them.
    """
    problem = (record_problem(dict(rec, messages=None) if messages_typed else rec)
               or rule_problem(rec))
    if problem:
        raise fail(problem[1], problem[0] or whole)


def record_problem(rec: Any) -> tuple[str, str] | None:
    """The first field of ``rec`` whose value does not fit the canonical schema.

    Types are checked strictly (no ``1.5`` for an integer, no ``true`` for a number, no
    text for a list); unknown keys are problems at any depth.

    Returns
    -------
    tuple of (field path, reason), or None
        None when every value fits.

    Examples
    --------
    >>> from accordkit.schema import empty_episode
    >>> rec = empty_episode()
    >>> rec["messages"] = [{"role": "user", "turn_idx": "0"}]
    >>> record_problem(rec)
    ('messages[0].turn_idx', "expected an integer, got str '0'")
    """
    return _RECORD_CHECK(rec, "")


def validate_episode(rec: Mapping[str, Any]) -> None:
    """Check one canonical record; raise :class:`EpisodeValidationError` on the first problem.

    The rules are those of :data:`RULES` (required ids, known roles, kinds and dynamics,
    message positions, a non-empty conversation, finite numbers, JSON objects where JSON
    text is stored), after the types of every field (:func:`record_problem`).

    Parameters
    ----------
    rec : mapping
        A record with the columns of :data:`EPISODE_FEATURES`.

    Examples
    --------
    >>> from accordkit.schema import empty_episode
    >>> rec = empty_episode()
    >>> validate_episode(rec)
    Traceback (most recent call last):
    ...
    accordkit.schema.EpisodeValidationError: record None, field benchmark: missing required value
    """
    found = record_problem(rec) or rule_problem(rec)
    if found:
        raise fail(found[1], rec, found[0])
