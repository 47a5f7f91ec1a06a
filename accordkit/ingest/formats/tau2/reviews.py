"""tau2's stored conversation reviews -> the canonical ``reviews_json`` value.

A tau2 ``SimulationRun`` may carry three LLM reviews of its conversation (tau2's data model,
``tau2/data_model/simulation.py``; spec ``tau2-format.md`` §5):

* ``review``: agent and user errors, each with a ``source`` (agent / user / unknown), tags,
  a ``severity`` (minor / critical / critical_helped / critical_hindered), the message
  (``turn_idx``) and the reasoning;
* ``user_only_review``: the user simulator's errors only (severity minor / critical);
* ``hallucination_check``: what the user simulator made up.

:func:`stored_reviews` checks them against that model (required fields present, known
severities and sources, lists where lists belong) and returns them as one JSON object with
every field filled (tau2's defaults where a field was left out), which the adapter stores as
the episode's ``reviews_json``. A review that breaks the model raises
:class:`~accordkit.schema.EpisodeValidationError` naming the field (``review.errors[2].
severity``); the adapter adds the file and the simulation, so the other simulations load.

Pure: no I/O, no knowledge of the loader.
"""

from __future__ import annotations

import json
import math
from collections.abc import Mapping
from typing import Any

from ....faults import SEVERITIES
from ....schema import EpisodeValidationError

__all__ = ["REVIEW_FIELDS", "stored_reviews"]

#: The simulation fields read here.
REVIEW_FIELDS = ("review", "user_only_review", "hallucination_check")
_SOURCES = ("user", "agent", "unknown")
_USER_ONLY_SEVERITIES = ("minor", "critical")


def _fail(reason: str, field: str) -> EpisodeValidationError:
    return EpisodeValidationError(reason, field=field)


def _obj(value: Any, field: str) -> Mapping[str, Any]:
    if not isinstance(value, Mapping):
        raise _fail(f"expected an object, got {type(value).__name__}", field)
    return value


def _text(value: Any, field: str, *, required: bool = False, default: str | None = None
          ) -> str | None:
    if value is None:
        if required:
            raise _fail("missing required value", field)
        return default
    if not isinstance(value, str):
        raise _fail(f"expected text, got {type(value).__name__} {value!r:.40}", field)
    return value


def _flag(value: Any, field: str, *, required: bool = False, default: bool = False) -> bool:
    if value is None:
        if required:
            raise _fail("missing required value", field)
        return default
    if not isinstance(value, bool):
        raise _fail(f"expected true or false, got {value!r:.40}", field)
    return value


def _turn(value: Any, field: str) -> int | None:
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, int | float) \
            or (isinstance(value, float) and (not math.isfinite(value) or value != int(value))):
        raise _fail(f"expected an integer message index, got {value!r:.40}", field)
    return int(value)


def _cost(value: Any, field: str) -> float | None:
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, int | float) \
            or not math.isfinite(value):
        raise _fail(f"expected a number, got {value!r:.40}", field)
    return float(value)


def _tags(value: Any, field: str) -> list[str]:
    if value is None:
        return []
    if not isinstance(value, list):
        raise _fail(f"expected a list of tags, got {type(value).__name__}", field)
    for i, tag in enumerate(value):
        if not isinstance(tag, str):
            raise _fail(f"expected a tag (text), got {tag!r:.40}", f"{field}[{i}]")
    return list(value)


def _one_of(value: Any, allowed: tuple[str, ...], field: str, what: str) -> str | None:
    if value is None:
        return None
    if value not in allowed:
        raise _fail(f"unknown {what} {value!r:.40}; expected one of {allowed} or null", field)
    return value


def _errors(value: Any, field: str) -> list[Any]:
    if value is None:
        return []
    if not isinstance(value, list):
        raise _fail(f"expected a list of errors, got {type(value).__name__}", field)
    return value


def _review(raw: Any) -> dict[str, Any]:
    f = "review"
    obj = _obj(raw, f)
    errors = []
    for i, err in enumerate(_errors(obj.get("errors"), f"{f}.errors")):
        e = f"{f}.errors[{i}]"
        err = _obj(err, e)
        source = err.get("source")
        if source is None:
            raise _fail("missing required value", f"{e}.source")
        errors.append({
            "source": _one_of(source, _SOURCES, f"{e}.source", "error source"),
            "error_type": _text(err.get("error_type"), f"{e}.error_type"),
            "error_tags": _tags(err.get("error_tags"), f"{e}.error_tags"),
            "severity": _one_of(err.get("severity"), SEVERITIES, f"{e}.severity", "severity"),
            "turn_idx": _turn(err.get("turn_idx"), f"{e}.turn_idx"),
            "reasoning": _text(err.get("reasoning"), f"{e}.reasoning", required=True),
            "correct_behavior": _text(err.get("correct_behavior"), f"{e}.correct_behavior"),
            "user_message": None,
        })
    return {
        "summary": _text(obj.get("summary"), f"{f}.summary", default=""),
        "has_errors": _flag(obj.get("has_errors"), f"{f}.has_errors", required=True),
        "agent_error": _flag(obj.get("agent_error"), f"{f}.agent_error"),
        "user_error": _flag(obj.get("user_error"), f"{f}.user_error"),
        "critical_user_error": _flag(obj.get("critical_user_error"),
                                     f"{f}.critical_user_error"),
        "cost": _cost(obj.get("cost"), f"{f}.cost"),
        "errors": errors,
    }


def _user_only(raw: Any) -> dict[str, Any]:
    f = "user_only_review"
    obj = _obj(raw, f)
    errors = []
    for i, err in enumerate(_errors(obj.get("errors"), f"{f}.errors")):
        e = f"{f}.errors[{i}]"
        err = _obj(err, e)
        errors.append({
            "source": "user",
            "error_type": _text(err.get("error_type"), f"{e}.error_type",
                                default="content_error"),
            "error_tags": _tags(err.get("error_tags"), f"{e}.error_tags"),
            "severity": _one_of(err.get("severity"), _USER_ONLY_SEVERITIES, f"{e}.severity",
                                "severity"),
            "turn_idx": _turn(err.get("turn_idx"), f"{e}.turn_idx"),
            "reasoning": _text(err.get("reasoning"), f"{e}.reasoning", required=True),
            "correct_behavior": _text(err.get("correct_behavior"), f"{e}.correct_behavior"),
            "user_message": _text(err.get("user_message"), f"{e}.user_message"),
        })
    return {
        "summary": _text(obj.get("summary"), f"{f}.summary", default=""),
        "has_errors": _flag(obj.get("has_errors"), f"{f}.has_errors", required=True),
        "agent_error": False,
        "user_error": _flag(obj.get("user_error"), f"{f}.user_error"),
        "critical_user_error": _flag(obj.get("critical_user_error"),
                                     f"{f}.critical_user_error"),
        "cost": _cost(obj.get("cost"), f"{f}.cost"),
        "errors": errors,
    }


def _hallucinations(raw: Any) -> dict[str, Any]:
    f = "hallucination_check"
    obj = _obj(raw, f)
    errors = []
    for i, err in enumerate(_errors(obj.get("errors"), f"{f}.errors")):
        e = f"{f}.errors[{i}]"
        err = _obj(err, e)
        errors.append({
            "source": "user", "error_type": None, "error_tags": ["hallucination"],
            "severity": None, "turn_idx": None,
            "reasoning": _text(err.get("reasoning"), f"{e}.reasoning", required=True),
            "correct_behavior": _text(err.get("correct_behavior"), f"{e}.correct_behavior"),
            "user_message": _text(err.get("user_message"), f"{e}.user_message"),
        })
    found = _flag(obj.get("hallucination_found"), f"{f}.hallucination_found")
    return {
        "summary": _text(obj.get("summary"), f"{f}.summary", default=""),
        "has_errors": found,
        "agent_error": False,
        "user_error": found,
        "critical_user_error": False,
        "cost": _cost(obj.get("cost"), f"{f}.cost"),
        "reasoning": _text(obj.get("reasoning"), f"{f}.reasoning", default=""),
        "errors": errors,
    }


_READERS = {"review": _review, "user_only_review": _user_only,
            "hallucination_check": _hallucinations}


def stored_reviews(sim: Mapping[str, Any]) -> str | None:
    """The canonical ``reviews_json`` of a tau2 simulation, or None when it stores no review.

    Parameters
    ----------
    sim : mapping
        A parsed ``SimulationRun`` (only :data:`REVIEW_FIELDS` are read).

    Returns
    -------
    str or None
        JSON text of an object with a key per stored review (``review``,
        ``user_only_review``, ``hallucination_check``); each review has ``summary``,
        ``has_errors``, ``agent_error``, ``user_error``, ``critical_user_error``, ``cost``
        and ``errors``, and each error ``source``, ``error_type``, ``error_tags``,
        ``severity``, ``turn_idx``, ``reasoning``, ``correct_behavior`` and
        ``user_message`` (null where the review has no such field).

    Raises
    ------
    EpisodeValidationError
        Naming the field (without file or record: the caller adds them).

    Examples
    --------
    >>> text = stored_reviews({"review": {"has_errors": True, "errors": [
    ...     {"source": "agent", "severity": "critical", "error_tags": ["wrong_sequence"],
    ...      "turn_idx": 7, "reasoning": "cancelled before asking"}]}})
    >>> json.loads(text)["review"]["errors"][0]["severity"]
    'critical'
    >>> stored_reviews({"review": {"has_errors": True, "errors": [
    ...     {"source": "agent", "severity": "fatal", "reasoning": "x"}]}})
    Traceback (most recent call last):
    ...
    accordkit.schema.EpisodeValidationError: field review.errors[0].severity: unknown severity 'fatal'; expected one of ('minor', 'critical', 'critical_helped', 'critical_hindered') or null
    >>> stored_reviews({"id": "s1"}) is None
    True
    """
    out = {}
    for name in REVIEW_FIELDS:
        raw = sim.get(name)
        if raw is not None:
            out[name] = _READERS[name](raw)
    return json.dumps(out, ensure_ascii=False) if out else None
