"""Conversation reviews as data: one row per review and one per error it found.

Reviews come from two places, in the same form (the canonical ``reviews_json`` object, see
:mod:`accordkit.ingest.formats.tau2.reviews`):

* stored by tau2 with each simulation (``review``, ``user_only_review``,
  ``hallucination_check``), read from the episodes' ``reviews_json`` column;
* made by accordkit's ``review`` judge (:mod:`accordkit.judges.review`), read from its
  verdict table (:func:`review_tables_from_verdicts`).

A review tau2 could not make (its reviewer failed to parse the judge's reply and stored a
placeholder: one error at ``turn_idx`` -1 whose reasoning starts "Failed to parse LLM
response", see :func:`is_placeholder_error`) is a *failed review*: its row has
``review_failed`` True and its flags missing, and its placeholder is no error of any source
(it adds no row to the error table). An episode whose reviews all failed counts as not
reviewed wherever a share of reviewed episodes is taken.

Each error gets a ``fault_type`` from the taxonomy of :mod:`accordkit.faults` (read from its
tags) and ``critical`` (its severity is one of
:data:`~accordkit.faults.CRITICAL_SEVERITIES`). The tables are tidy: group them, count
them, join them to the scores on ``episode_id``.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any

import numpy as np
import pandas as pd

from .._internal.jsontext import loads
from ..faults import CRITICAL_SEVERITIES, fault_type_of

__all__ = ["REVIEW_COLUMNS", "ERROR_COLUMNS", "ReviewTables", "review_tables",
           "reviews_from_json", "user_critical", "review_level", "tables_from_levels",
           "combine_reviews", "is_placeholder_error", "PLACEHOLDER_REASONING",
           "reviewed_episodes", "review_status"]

#: One row per (episode, review).
REVIEW_COLUMNS = ["episode_id", "review", "reviewer", "has_errors", "n_errors", "agent_error",
                  "user_error", "critical_user_error", "critical_agent_error", "summary",
                  "review_failed"]
#: One row per error a review found.
ERROR_COLUMNS = ["episode_id", "review", "reviewer", "error_index", "source", "severity",
                 "critical", "fault_type", "tags", "error_type", "turn_idx", "reasoning",
                 "correct_behavior", "user_message"]
_REVIEW_DTYPES = {"has_errors": "boolean", "n_errors": "int64", "agent_error": "boolean",
                  "user_error": "boolean", "critical_user_error": "boolean",
                  "critical_agent_error": "boolean", "review_failed": "bool"}
_ERROR_DTYPES = {"error_index": "int64", "critical": "bool", "turn_idx": "Int64"}
#: How the reasoning of tau2's placeholder error starts (a review that could not be made).
PLACEHOLDER_REASONING = "Failed to parse LLM response"


def is_placeholder_error(error: Mapping[str, Any]) -> bool:
    """Whether a stored review error is tau2's placeholder for a review that failed.

    tau2's reviewer, when it cannot parse or validate the judge's reply, stores one error
    at ``turn_idx`` -1 whose reasoning starts :data:`PLACEHOLDER_REASONING` (spec
    ``tau2-format.md`` §12): no message was judged, so it is no error of anyone.

    Examples
    --------
    >>> is_placeholder_error({"turn_idx": -1, "reasoning": "Failed to parse LLM response: x"})
    True
    >>> is_placeholder_error({"turn_idx": 3, "reasoning": "Failed to parse LLM response"})
    False
    """
    turn = error.get("turn_idx")
    reasoning = error.get("reasoning")
    try:
        at_none = turn is not None and not pd.isna(turn) and int(turn) == -1
    except (TypeError, ValueError):
        at_none = False
    return at_none and isinstance(reasoning, str) and \
        reasoning.lstrip().startswith(PLACEHOLDER_REASONING)


@dataclass(frozen=True)
class ReviewTables:
    """The reviews of some episodes and the errors they found.

    Attributes
    ----------
    reviews : pandas.DataFrame
        :data:`REVIEW_COLUMNS`: ``review`` is which review (``review``,
        ``user_only_review``, ``hallucination_check`` or ``judge``), ``reviewer`` who made
        it (``"stored"`` for tau2's, the judge model for the judge's); the flags are as the
        review states them, except ``critical_agent_error`` (an agent error of a critical
        severity), which tau2 does not store. ``review_failed`` is True for a review tau2
        could not make (its placeholder, :func:`is_placeholder_error`); its flags are then
        missing and ``n_errors`` is 0.
    errors : pandas.DataFrame
        :data:`ERROR_COLUMNS`: ``source`` (agent, user, environment, unknown),
        ``severity``, ``critical``, ``fault_type``, ``tags`` (joined with ", "), tau2's
        ``error_type``, the message ``turn_idx``, ``reasoning``, ``correct_behavior`` and
        the quoted ``user_message`` where the review gives them.
    """

    reviews: pd.DataFrame
    errors: pd.DataFrame

    def __iter__(self):  # ``reviews, errors = review_tables(ds)``
        return iter((self.reviews, self.errors))


def _frames(review_rows: list[dict[str, Any]], error_rows: list[dict[str, Any]]
            ) -> ReviewTables:
    reviews = pd.DataFrame(review_rows, columns=REVIEW_COLUMNS)
    for col, dtype in _REVIEW_DTYPES.items():
        reviews[col] = reviews[col].astype(dtype)
    errors = pd.DataFrame(error_rows, columns=ERROR_COLUMNS)
    for col, dtype in _ERROR_DTYPES.items():
        errors[col] = errors[col].astype(dtype)
    for frame in (reviews, errors):
        for col in frame.columns:
            if frame[col].dtype == object or pd.api.types.is_string_dtype(frame[col].dtype):
                if col not in _REVIEW_DTYPES and col not in _ERROR_DTYPES:
                    frame[col] = frame[col].astype(object).where(frame[col].notna(), None)
    return ReviewTables(reviews, errors)


def _add_review(episode_id: str, kind: str, reviewer: str, review: Mapping[str, Any],
                review_rows: list[dict[str, Any]], error_rows: list[dict[str, Any]]) -> None:
    errors = review.get("errors") or []
    if errors and all(isinstance(e, Mapping) and is_placeholder_error(e) for e in errors):
        review_rows.append({
            "episode_id": episode_id, "review": kind, "reviewer": reviewer,
            "has_errors": None, "n_errors": 0, "agent_error": None, "user_error": None,
            "critical_user_error": None, "critical_agent_error": None,
            "summary": review.get("summary"), "review_failed": True})
        return
    # a placeholder beside real errors: the real ones stand, the placeholder is nobody's
    errors = [e for e in errors if not is_placeholder_error(e)]
    critical_agent = False
    # the user-only reviews are about the user simulator: their errors are its errors
    default_source = "user" if kind in ("user_only_review", "hallucination_check") else None
    for i, err in enumerate(errors):
        severity = err.get("severity")
        critical = severity in CRITICAL_SEVERITIES
        tags = list(err.get("error_tags") or ())
        source = err.get("source") or default_source
        critical_agent |= critical and source == "agent"
        error_rows.append({
            "episode_id": episode_id, "review": kind, "reviewer": reviewer, "error_index": i,
            "source": source, "severity": severity, "critical": critical,
            "fault_type": err.get("fault_type") or fault_type_of(tags, source),
            "tags": ", ".join(tags), "error_type": err.get("error_type"),
            "turn_idx": err.get("turn_idx"), "reasoning": err.get("reasoning"),
            "correct_behavior": err.get("correct_behavior"),
            "user_message": err.get("user_message"),
        })
    review_rows.append({
        "episode_id": episode_id, "review": kind, "reviewer": reviewer,
        "has_errors": review.get("has_errors", bool(errors)), "n_errors": len(errors),
        "agent_error": review.get("agent_error"), "user_error": review.get("user_error"),
        "critical_user_error": review.get("critical_user_error"),
        "critical_agent_error": critical_agent, "summary": review.get("summary"),
        "review_failed": False,
    })


def reviews_from_json(episode_ids: Iterable[str], texts: Iterable[str | None], *,
                      reviewer: str = "stored") -> ReviewTables:
    """Review tables from canonical ``reviews_json`` values (None: no review stored).

    Examples
    --------
    >>> text = ('{"review": {"has_errors": true, "errors": [{"source": "user", '
    ...         '"severity": "critical_hindered", "error_tags": ["hallucination"], '
    ...         '"turn_idx": 3, "reasoning": "invented an order id"}]}}')
    >>> reviews, errors = reviews_from_json(["e1", "e2"], [text, None])
    >>> reviews[["episode_id", "review", "n_errors"]].to_dict("records")
    [{'episode_id': 'e1', 'review': 'review', 'n_errors': 1}]
    >>> errors[["source", "critical", "fault_type", "turn_idx"]].to_dict("records")
    [{'source': 'user', 'critical': True, 'fault_type': 'hallucination', 'turn_idx': 3}]
    """
    review_rows: list[dict[str, Any]] = []
    error_rows: list[dict[str, Any]] = []
    for episode_id, text in zip(episode_ids, texts, strict=True):
        if not text:
            continue
        try:
            obj = loads(text)
        except ValueError as exc:
            raise ValueError(f"record {episode_id}, field reviews_json: not JSON ({exc})") \
                from None
        if not isinstance(obj, dict):
            raise ValueError(f"record {episode_id}, field reviews_json: expected the JSON text "
                             f"of an object, got {type(obj).__name__}")
        for kind in ("review", "user_only_review", "hallucination_check", "judge"):
            if isinstance(obj.get(kind), dict):
                _add_review(str(episode_id), kind, reviewer, obj[kind], review_rows,
                            error_rows)
    return _frames(review_rows, error_rows)


def review_tables(ds: Any) -> ReviewTables:
    """The reviews stored with the episodes (tau2's ``review``, ``user_only_review`` and
    ``hallucination_check``), as tidy tables.

    Parameters
    ----------
    ds : datasets.Dataset or pyarrow.Table
        Canonical episodes; episodes without a stored review add no row.

    Returns
    -------
    ReviewTables
        ``reviews`` and ``errors`` (see :class:`ReviewTables`).

    Examples
    --------
    >>> import accordkit as ak
    >>> reviews, errors = ak.review_tables(ak.load("run_reviewed.json"))   # doctest: +SKIP
    >>> errors.groupby(["source", "fault_type"]).size()                     # doctest: +SKIP
    """
    import pyarrow as pa

    from .._internal.arrow import arrow_table

    table = ds if isinstance(ds, pa.Table) else arrow_table(ds)
    if "reviews_json" not in table.column_names:
        return reviews_from_json([], [])
    return reviews_from_json(table.column("episode_id").to_pylist(),
                             table.column("reviews_json").to_pylist())


def user_critical(tables: ReviewTables, episode_ids: Iterable[str]) -> pd.Series:
    """Per episode: whether a review found a critical user-simulator error.

    Returns a boolean Series indexed like ``episode_ids``: True when some error with source
    ``user`` is critical, False when the episode was reviewed and none is, NA when it was
    not reviewed at all (or its every review failed).

    Examples
    --------
    >>> text = ('{"review": {"has_errors": true, "errors": [{"source": "user", '
    ...         '"severity": "critical_helped", "reasoning": "gave away the answer"}]}}')
    >>> t = reviews_from_json(["a", "b"], [text, '{"review": {"has_errors": false}}'])
    >>> user_critical(t, ["a", "b", "c"]).tolist()
    [True, False, <NA>]
    """
    ids = pd.Index(list(episode_ids), name="episode_id")
    reviewed = reviewed_episodes(tables)
    errors = tables.errors
    bad = set(errors.loc[(errors["source"] == "user") & errors["critical"], "episode_id"])
    values = [True if e in bad else (False if e in reviewed else None) for e in ids]
    return pd.Series(pd.array(values, dtype="boolean"), index=ids, name="user_critical")


def review_level(ds: Any, *, errors: bool = False) -> pd.DataFrame:
    """The stored reviews as a score level: the id columns then the review table (or the
    error table, ``errors=True``) without its ``episode_id``; what ``accordkit score``
    stores as the ``review`` and ``review_error`` levels.

    Examples
    --------
    >>> from accordkit.schema.arrow import empty_table
    >>> list(review_level(empty_table()).columns)[-3:]
    ['critical_agent_error', 'summary', 'review_failed']
    """
    import pyarrow as pa

    from .._internal.arrow import arrow_table
    from ..names import ID_COLUMNS

    table = ds if isinstance(ds, pa.Table) else arrow_table(ds)
    tables = review_tables(table)
    frame = tables.errors if errors else tables.reviews
    ids = pd.DataFrame({name: table.column(name).to_pandas() for name in ID_COLUMNS})
    ids = ids.drop_duplicates("episode_id")
    head = ids.set_index("episode_id").reindex(frame["episode_id"]).reset_index()
    head = head[list(ID_COLUMNS)]
    return pd.concat([head.reset_index(drop=True),
                      frame.drop(columns="episode_id").reset_index(drop=True)], axis=1)


def tables_from_levels(reviews: pd.DataFrame, errors: pd.DataFrame) -> ReviewTables:
    """:class:`ReviewTables` from the ``review`` and ``review_error`` score levels (read
    from a score store): their id columns dropped, ``episode_id`` kept.

    Examples
    --------
    >>> t = reviews_from_json([], [])
    >>> tables_from_levels(t.reviews, t.errors).reviews.columns.tolist() == REVIEW_COLUMNS
    True
    """
    if "review_failed" not in reviews.columns:   # a store written before the column
        reviews, errors = _placeholders_out(reviews, errors)
    return _frames(reviews[REVIEW_COLUMNS].to_dict("records"),
                   errors[ERROR_COLUMNS].to_dict("records"))


def _placeholders_out(reviews: pd.DataFrame, errors: pd.DataFrame
                      ) -> tuple[pd.DataFrame, pd.DataFrame]:
    """Review levels stored without ``review_failed``: the placeholder errors dropped, and
    a review left with none of its errors marked failed (as :func:`reviews_from_json`)."""
    placeholder = np.fromiter((is_placeholder_error(e) for e in
                               errors[["turn_idx", "reasoning"]].to_dict("records")),
                              dtype=bool, count=len(errors))
    key = ["episode_id", "review", "reviewer"]
    hit = errors.loc[placeholder, key].drop_duplicates()
    real = errors.loc[~placeholder, key].drop_duplicates()
    failed = hit.merge(real, on=key, how="left", indicator=True)
    failed = failed[failed["_merge"] == "left_only"][key]
    reviews = reviews.merge(failed.assign(review_failed=True), on=key, how="left")
    reviews["review_failed"] = reviews["review_failed"].astype("boolean").fillna(False) \
        .astype(bool)
    left = reviews.merge(errors.loc[~placeholder, key].value_counts().rename("_n").reset_index(),
                         on=key, how="left")
    reviews["n_errors"] = left["_n"].fillna(0).astype("int64").to_numpy()
    for col in ("has_errors", "agent_error", "user_error", "critical_user_error",
                "critical_agent_error"):
        reviews[col] = reviews[col].astype("boolean").mask(reviews["review_failed"])
    return reviews, errors.loc[~placeholder]


def reviewed_episodes(tables: ReviewTables) -> set[str]:
    """The episodes some review covers (a failed review covers nothing).

    Examples
    --------
    >>> ok = '{"review": {"has_errors": false}}'
    >>> bad = ('{"review": {"has_errors": false, "errors": [{"source": "user", '
    ...        '"turn_idx": -1, "reasoning": "Failed to parse LLM response: ..."}]}}')
    >>> sorted(reviewed_episodes(reviews_from_json(["a", "b"], [ok, bad])))
    ['a']
    """
    r = tables.reviews
    return set(r.loc[~r["review_failed"].astype(bool), "episode_id"].astype(str))


def review_status(tables: ReviewTables | None, episode_ids: Iterable[str]) -> pd.Series:
    """Per episode, what its reviews say, as text for a table: the number of errors found,
    ``"not reviewed"`` (no review) or ``"review failed"`` (every review of it failed).

    Examples
    --------
    >>> ok = '{"review": {"has_errors": false}}'
    >>> bad = ('{"review": {"has_errors": false, "errors": [{"source": "user", '
    ...        '"turn_idx": -1, "reasoning": "Failed to parse LLM response: ..."}]}}')
    >>> review_status(reviews_from_json(["a", "b"], [ok, bad]), ["a", "b", "c"]).tolist()
    ['0', 'review failed', 'not reviewed']
    """
    ids = [str(e) for e in episode_ids]
    if tables is None:
        return pd.Series(["not reviewed"] * len(ids), index=ids, name="review_errors",
                         dtype=object)
    reviewed = reviewed_episodes(tables)
    any_review = set(tables.reviews["episode_id"].astype(str))
    counts = tables.errors["episode_id"].astype(str).value_counts()
    values = [str(int(counts.get(e, 0))) if e in reviewed
              else ("review failed" if e in any_review else "not reviewed") for e in ids]
    return pd.Series(values, index=ids, name="review_errors", dtype=object)


def combine_reviews(*tables: ReviewTables | None) -> ReviewTables:
    """Several review tables as one (stored and judged reviews side by side; ``review`` and
    ``reviewer`` tell them apart).

    Examples
    --------
    >>> a = reviews_from_json(["e"], ['{"review": {"has_errors": false}}'])
    >>> len(combine_reviews(a, None, a).reviews)
    2
    """
    parts = [t for t in tables if t is not None]
    if not parts:
        return reviews_from_json([], [])
    return _frames(pd.concat([t.reviews for t in parts]).to_dict("records"),
                   pd.concat([t.errors for t in parts]).to_dict("records"))
