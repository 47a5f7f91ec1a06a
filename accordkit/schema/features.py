"""The canonical episode features (one row per conversation, for every benchmark), the error
that names a record's problem, and the empty record adapters start from."""

from __future__ import annotations

from typing import Any

from datasets import Features, List, Value

__all__ = ["EPISODE_FEATURES", "SCHEMA_VERSION", "LATER_COLUMNS", "EpisodeValidationError",
           "empty_episode",
           "REQUIRED_TEXT"]

#: Bumped when a column is added, removed or changes meaning (3: ``reviews_json``).
SCHEMA_VERSION = "accordkit.episode/3"

_str = Value("string")
_bool = Value("bool")
_i32 = Value("int32")
_i64 = Value("int64")
_f64 = Value("float64")

TOOL_CALL = {
    "id": _str,
    "name": _str,
    "arguments_json": _str,
    "requestor": _str,
}

MESSAGE = {
    "role": _str,
    "content": _str,
    "turn_idx": _i32,
    "sub_idx": _i32,
    "kind": _str,
    "tool_calls": List(TOOL_CALL),
    "tool_call_id": _str,
    "error": _bool,
    "event": _str,
    "event_json": _str,
}

PREFERENCE = {
    "pref_id": _str,
    "name": _str,
    "slot": _str,
    "value": _str,
    "dynamic": _str,
    "backoff": _str,
    "trigger": _str,
    "satisfied": _bool,
}

CRITERIA = {
    "action_sets": List(
        {
            "action_id": _str,
            "allowed_tools": List({"function_name": _str, "params_json": _str}),
        }
    ),
    "actions": List(
        {
            "action_id": _str,
            "requestor": _str,
            "name": _str,
            "arguments_json": _str,
            "compare_args": List(_str),
        }
    ),
    "communicate_info": List(_str),
    "nl_assertions": List(_str),
    "env_assertions_json": _str,
    "reward_basis": List(_str),
}

NL_VERDICT = {"assertion": _str, "met": _bool, "justification": _str}

TSR_DETAILS = {
    "overall_tsr": _f64,
    "action": _f64,
    "nl_assertion": _f64,
    "communicate_info": _f64,
    "weight_action": _f64,
    "weight_nl_assertion": _f64,
    "weight_communicate_info": _f64,
    "has_actions": _bool,
    "has_nl_assertions": _bool,
    "has_communicate_info": _bool,
}

GSRT_SHIFT = {
    "turn": _i32,
    "from_goal": _str,
    "to_goal": _str,
    "agent_responded": _bool,
    "agent_turn": _i32,
    "ack_turn": _i32,
    "tool_turn": _i32,
    "outcome_turn": _i32,
    "transferred": _bool,
}

GSRT_JUDGE = {
    "start_turn": _i32,
    "start_goal": _str,
    "shifts": List(GSRT_SHIFT),
}

EPISODE_FEATURES = Features(
    {
        # --- identity -------------------------------------------------------------
        "benchmark": _str,
        "domain": _str,
        "scenario_id": _str,
        "task_id": _str,
        "task_set": _str,
        "rollout": _i32,
        "episode_id": _str,
        "agent_model": _str,
        "method": _str,
        "user_model": _str,
        "user_implementation": _str,
        "persona": _str,
        "persona_text": _str,
        "source": _str,
        "config": _str,
        "split": _str,
        "seed": _i64,
        "instructions": _str,
        # --- transcript -----------------------------------------------------------
        "messages": List(MESSAGE),
        # --- AcCoRD -----------------------------------------------------------------
        "preferences": List(PREFERENCE),
        "completed": _bool,
        "outcome_json": _str,
        "product_type_ok": _bool,
        "price_ok": _bool,
        # --- AgentChangeBench / tau2 ----------------------------------------------
        "goals": List(_str),
        "required_shifts": _i32,
        "num_trials": _i32,
        "criteria": CRITERIA,
        "termination_reason": _str,
        "reward": _f64,
        "reward_basis": List(_str),
        "reward_breakdown_json": _str,
        "nl_verdicts": List(NL_VERDICT),
        "tsr_details": TSR_DETAILS,
        "gsrt_judge": GSRT_JUDGE,
        "reward_info_json": _str,
        "reviews_json": _str,
        "agent_cost": _f64,
        "user_cost": _f64,
    }
)

#: Columns added to the schema after canonical files were first written: a canonical table
#: (parquet, hub dataset) without them is read with the column null, not refused.
LATER_COLUMNS = ("reviews_json",)

#: The id columns every record must carry as non-empty text.
REQUIRED_TEXT = ("benchmark", "domain", "scenario_id", "task_id", "episode_id", "source")


class EpisodeValidationError(ValueError):
    """A record does not match the canonical episode schema.

    The message names the source file, the record and the field.

    Attributes
    ----------
    source, record, field : str or None
        Where the problem is: file path, record id (or index) and field path.
    reason : str
        What was expected.
    """

    def __init__(self, reason: str, *, source: str | None = None, record: str | None = None,
                 field: str | None = None) -> None:
        self.source, self.record, self.field, self.reason = source, record, field, reason
        where = ", ".join(
            f"{k} {v}" for k, v in (("file", source), ("record", record), ("field", field)) if v
        )
        super().__init__(f"{where}: {reason}" if where else reason)


# its public home (tracebacks and doctests name it so)
EpisodeValidationError.__module__ = "accordkit.schema"


def empty_episode() -> dict[str, Any]:
    """Return a record with every canonical column set to ``None``.

    Adapters start from it so that a record always has every column.

    Examples
    --------
    >>> rec = empty_episode()
    >>> sorted(rec) == sorted(EPISODE_FEATURES)
    True
    """
    return dict.fromkeys(EPISODE_FEATURES)


