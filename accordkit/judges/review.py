"""``review``: a conversation review of our own, in the form of tau2's stored reviews.

One call per episode of a tool-using benchmark (tau2, AgentChangeBench, τ-bench). The judge
sees the user simulator's script, the expected actions, how the run ended and the numbered
conversation, and lists the mistakes: who made each (``agent``, ``user`` simulator or
``environment``/task), its fault type from :data:`accordkit.faults.FAULT_TYPES`, its
severity, the message and the reasoning. One row per episode: ``item`` = ``"review"``,
``verdict`` = the normalised review as JSON (the form of the canonical ``reviews_json``
reviews, see :func:`normalise`) or ``"invalid"``; :func:`review_tables_from_verdicts`
turns a verdict table into the same tables as the stored reviews
(:func:`accordkit.review_tables`), so the two can be compared
(:func:`accordkit.judges.review.compare_reviews`).

An episode that already stores tau2's ``review`` is skipped unless asked
(``--rejudge``). Every text from the episode — the script, the expected actions, how the
run ended (its free-text termination reason) and the conversation — is quoted in its own
fence. Length caps: :data:`MAX_SCRIPT_CHARS` for the script, the transcript's own caps for
the conversation, :data:`MAX_EXPECTED_CHARS` for the expected actions,
:data:`MAX_ENDING_CHARS` for how the run ended.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np
import pandas as pd

from ..benchmarks import judged_by
from ..faults import FAULT_TYPES, SEVERITIES
from ..verdicts.parse import INVALID, parse_json_object
from .calls import ItemRef, JudgeCall, JudgeSpec
from .prompts import fence_code, fill, load_prompt, quote
from .transcript import indexed_lines, one_line

__all__ = ["SPEC", "ITEM", "SOURCES", "MAX_SCRIPT_CHARS", "MAX_EXPECTED_CHARS", "MAX_ENDING_CHARS",
           "normalise",
           "review_tables_from_verdicts", "compare_reviews", "COMPARE_LABELS"]

ITEM = "review"
#: Who a judged mistake can be attributed to.
SOURCES = ("agent", "user", "environment")
#: Longest user-simulator script kept whole in a prompt.
MAX_SCRIPT_CHARS = 8000
#: Longest list of expected actions kept whole.
MAX_EXPECTED_CHARS = 6000
#: Longest "how the run ended" line (termination reason and reward) kept whole.
MAX_ENDING_CHARS = 200
_SEVERITY_OF = {"agent": ("minor", "critical"), "environment": ("minor", "critical"),
                "user": ("minor", "critical_helped", "critical_hindered")}


def _expected(episode: Mapping[str, Any]) -> str:
    crit = episode.get("criteria") or {}
    lines = []
    for act in crit.get("actions") or ():
        lines.append(f"{act.get('name')}({act.get('arguments_json') or '{}'})")
    for aset in crit.get("action_sets") or ():
        tools = " or ".join(f"{t.get('function_name')}({t.get('params_json') or '{}'})"
                            for t in aset.get("allowed_tools") or ())
        lines.append(f"one of: {tools}")
    return "\n".join(one_line(line) for line in lines) or "(none listed)"


def _ending(episode: Mapping[str, Any]) -> str:
    """How the run ended, as quoted data: the termination reason is free text from the
    results file (one line, cut at :data:`MAX_ENDING_CHARS`)."""
    parts = [f"termination {episode.get('termination_reason') or 'unknown'}"]
    if episode.get("reward") is not None:
        parts.append(f"reward {episode['reward']:g}")
    return one_line(", ".join(parts), limit=MAX_ENDING_CHARS)


def build(episode: Mapping[str, Any]) -> list[JudgeCall]:
    """One call per episode that has a conversation."""
    messages = list(episode.get("messages") or ())
    if not messages:
        return []
    tpl = load_prompt("review")
    script = str(episode.get("instructions") or "(no script stored)")
    expected = _expected(episode)
    conversation = indexed_lines(messages)
    ending = _ending(episode)
    code = fence_code(script, expected, ending, conversation)
    user = fill(tpl.user, {
        "script": quote("SCRIPT", script, code, limit=MAX_SCRIPT_CHARS),
        "expected": quote("EXPECTED", expected, code, limit=MAX_EXPECTED_CHARS),
        "ending": quote("ENDING", ending, code),
        "conversation": quote("CONVERSATION", conversation, code),
    })
    return [JudgeCall("review", tpl.id, tpl.version,
                      (("system", fill(tpl.system, {"fence": code})), ("user", user)),
                      (ItemRef(episode["episode_id"], ITEM, None),), fence=code)]


def normalise(obj: Any) -> dict[str, Any] | None:
    """A judge reply's review in the canonical form, or None when it breaks the contract.

    Each error needs a known ``source``, ``fault_type`` and a ``severity`` allowed for its
    source, an integer or null ``turn_idx`` and a ``reasoning``; the result carries tau2's
    review fields (``has_errors``, ``agent_error``, ``user_error``, ``critical_user_error``)
    and each error's fault type also as its one tag.

    Examples
    --------
    >>> out = normalise({"summary": "s", "errors": [{"source": "user",
    ...     "fault_type": "hallucination", "severity": "critical_hindered", "turn_idx": 3,
    ...     "reasoning": "made up an id"}]})
    >>> out["critical_user_error"], out["errors"][0]["error_tags"]
    (True, ['hallucination'])
    >>> normalise({"errors": [{"source": "user", "fault_type": "hallucination",
    ...            "severity": "critical", "reasoning": "r"}]}) is None
    True
    """
    if not isinstance(obj, dict) or not isinstance(obj.get("errors", []), list):
        return None
    summary = obj.get("summary", "")
    if not isinstance(summary, str):
        return None
    errors = []
    for err in obj.get("errors") or []:
        if not isinstance(err, dict):
            return None
        source, fault, severity = err.get("source"), err.get("fault_type"), err.get("severity")
        turn, reasoning = err.get("turn_idx"), err.get("reasoning")
        if source not in SOURCES or fault not in FAULT_TYPES \
                or severity not in _SEVERITY_OF[source] or severity not in SEVERITIES:
            return None
        if turn is not None and (isinstance(turn, bool) or not isinstance(turn, int)):
            return None
        if not isinstance(reasoning, str) or not reasoning.strip():
            return None
        correct = err.get("correct_behavior")
        errors.append({"source": source, "error_type": None, "error_tags": [fault],
                       "fault_type": fault, "severity": severity, "turn_idx": turn,
                       "reasoning": reasoning,
                       "correct_behavior": correct if isinstance(correct, str) else None,
                       "user_message": None})
    user_critical = any(e["source"] == "user" and e["severity"] != "minor" for e in errors)
    return {"summary": summary, "has_errors": bool(errors),
            "agent_error": any(e["source"] == "agent" for e in errors),
            "user_error": any(e["source"] == "user" for e in errors),
            "critical_user_error": user_critical, "cost": None, "errors": errors}


def parse(raw: str, call: JudgeCall) -> list[tuple[str, str]]:
    review = normalise(parse_json_object(raw))
    return [(INVALID if review is None else json.dumps(review, ensure_ascii=False), raw)]


def check_verdict(text: str) -> None:
    """``ValueError`` when a ``review`` verdict is neither ``invalid`` nor a review."""
    try:
        obj = json.loads(text)
    except (TypeError, ValueError):
        raise ValueError(f"not a review (not JSON): {text!r:.60}") from None
    if normalise(obj) is None:
        raise ValueError(f"not a review (an error without a known source, fault type, "
                         f"severity or reasoning): {text!r:.60}")


def _has_stored(episode: Mapping[str, Any]) -> bool:
    text = episode.get("reviews_json")
    if not text:
        return False
    try:
        return isinstance(json.loads(text).get("review"), dict)
    except (ValueError, AttributeError):
        return False


SPEC = JudgeSpec(name="review", benchmarks=judged_by("review"),
                 verdicts=(), build=build, parse=parse, has_stored=_has_stored)


# --------------------------------------------------------------------------- as tables


def review_tables_from_verdicts(verdicts: pd.DataFrame, *, judge_model: str | None = None):
    """The ``review`` judge's verdicts as review tables (:class:`~accordkit.metrics.
    reviews.ReviewTables`, ``review="judge"``, ``reviewer`` = the judge model).

    Rows without a verdict (errors) and ``invalid`` verdicts are left out.

    Examples
    --------
    >>> import pandas as pd
    >>> text = json.dumps(normalise({"summary": "", "errors": []}))
    >>> v = pd.DataFrame({"episode_id": ["e"], "judge": ["review"], "judge_model": ["m"],
    ...                   "item": ["review"], "verdict": [text]})
    >>> review_tables_from_verdicts(v).reviews[["episode_id", "review", "reviewer"]].values
    array([['e', 'judge', 'm']], dtype=object)
    """
    from ..metrics.reviews import reviews_from_json

    rows = verdicts[(verdicts["judge"] == "review") & verdicts["verdict"].notna()
                    & (verdicts["verdict"] != INVALID)]
    if judge_model is not None:
        rows = rows[rows["judge_model"] == judge_model]
    tables = []
    for model, part in rows.groupby("judge_model", sort=True):
        texts = [json.dumps({"judge": json.loads(v)}) for v in part["verdict"]]
        tables.append(reviews_from_json(part["episode_id"].astype(str), texts,
                                        reviewer=str(model)))
    if not tables:
        return reviews_from_json([], [])
    from ..metrics.reviews import ReviewTables

    return ReviewTables(pd.concat([t.reviews for t in tables], ignore_index=True),
                        pd.concat([t.errors for t in tables], ignore_index=True))


#: What :func:`compare_reviews` compares per episode.
COMPARE_LABELS = ("any_error", "agent_error", "user_error", "critical_agent_error",
                  "critical_user_error", *(f"fault_{f}" for f in FAULT_TYPES))


def _episode_labels(tables, kinds: Sequence[str]) -> pd.DataFrame:
    reviews = tables.reviews[tables.reviews["review"].isin(kinds)]
    errors = tables.errors[tables.errors["review"].isin(kinds)]
    # a failed review (tau2's placeholder) reviewed nothing: no pair, not "no error"
    reviews = reviews[~reviews["review_failed"].astype(bool)]
    ids = pd.unique(reviews["episode_id"])
    out = pd.DataFrame(index=pd.Index(ids, name="episode_id"))

    def has(mask: pd.Series) -> np.ndarray:
        return out.index.isin(set(errors.loc[mask, "episode_id"]))

    out["any_error"] = has(errors["source"].notna())
    out["agent_error"] = has(errors["source"] == "agent")
    out["user_error"] = has(errors["source"] == "user")
    out["critical_agent_error"] = has((errors["source"] == "agent") & errors["critical"])
    out["critical_user_error"] = has((errors["source"] == "user") & errors["critical"])
    for fault in FAULT_TYPES:
        out[f"fault_{fault}"] = has(errors["fault_type"] == fault)
    return out


def compare_reviews(stored, judged, *, stored_kinds: Sequence[str] = ("review",),
                    judged_kinds: Sequence[str] = ("judge",)) -> pd.DataFrame:
    """Agreement of two sets of reviews on the episodes both reviewed, per label.

    Parameters
    ----------
    stored, judged : ReviewTables
        E.g. tau2's stored reviews (:func:`accordkit.review_tables`) and the ``review``
        judge's (:func:`review_tables_from_verdicts`); any two sets work.
    stored_kinds, judged_kinds : sequence of str
        Which reviews of each set count (default: tau2's ``review``; the judge's).

    Returns
    -------
    pandas.DataFrame
        One row per label of :data:`COMPARE_LABELS` (whether the episode has any error, an
        agent error, a critical user-simulator error, an error of each fault type):
        ``n_pairs`` episodes reviewed by both, ``rate_stored``, ``rate_judged``,
        ``agreement`` (share of episodes where both say the same) and ``kappa`` (Cohen's
        kappa; NaN when undefined, e.g. both constant).

    Examples
    --------
    >>> from accordkit.metrics.reviews import reviews_from_json
    >>> bad = json.dumps({"review": {"has_errors": True, "errors": [
    ...     {"source": "agent", "severity": "critical", "reasoning": "r"}]}})
    >>> ok = json.dumps({"review": {"has_errors": False}})
    >>> a = reviews_from_json(["x", "y"], [bad, ok])
    >>> b = reviews_from_json(["x", "y"], [bad, bad])
    >>> out = compare_reviews(a, b, judged_kinds=["review"]).set_index("label")
    >>> int(out.loc["agent_error", "n_pairs"]), float(out.loc["agent_error", "agreement"])
    (2, 0.5)
    """
    from .reliability import cohen_kappa

    a = _episode_labels(stored, stored_kinds)
    b = _episode_labels(judged, judged_kinds)
    both = a.index.intersection(b.index)
    rows = []
    for label in COMPARE_LABELS:
        va = a.loc[both, label].to_numpy(dtype=bool)
        vb = b.loc[both, label].to_numpy(dtype=bool)
        n = len(both)
        rows.append({"label": label, "n_pairs": n,
                     "rate_stored": float(va.mean()) if n else np.nan,
                     "rate_judged": float(vb.mean()) if n else np.nan,
                     "agreement": float(np.mean(va == vb)) if n else np.nan,
                     "kappa": cohen_kappa(va.astype(str), vb.astype(str)) if n else np.nan})
    out = pd.DataFrame(rows)
    out["n_pairs"] = out["n_pairs"].astype("int64")
    return out
