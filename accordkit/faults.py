"""The fault taxonomy of conversation reviews: who was at fault, what kind of fault, how bad.

Plain names, free of any dependency, shared by the stored reviews (tau2's ``review``,
``user_only_review`` and ``hallucination_check``), the ``review`` judge and the error
analysis tables. ``docs/why-it-failed.md`` explains each entry.

**Fault sources** (:data:`FAULT_SOURCES`): ``agent`` (the system under test), ``user`` (the
user simulator), ``environment`` (the task, its expected outcome or the tools: a task that
cannot be done as written, a wrong expected action, a tool that fails) and ``unknown``
(tau2's reviewer may say so).

**Fault types** (:data:`FAULT_TYPES`), in the order a review error's tags are read (its
fault type is the first that any of its tags maps to):

================== ======================================= ==============================
fault type         what went wrong                         τ-bench / tau2 names mapped here
================== ======================================= ==============================
wrong_tool         a tool that should not have been        τ-bench ``called_wrong_tool``;
                   called, or the wrong one                tau2 ``irrelevant_tool_call``
wrong_argument     the right tool with a wrong or          τ-bench ``used_wrong_tool_argument``;
                   malformed argument                      tau2 ``tool_call_argument_error``,
                                                           ``tool_call_schema_error``
goal_partly_done   part of the goal left undone, or the    τ-bench ``goal_partially_completed``;
                   conversation ended early                tau2 ``missed_required_action``,
                                                           ``premature_termination``
policy_violation   a rule of the domain policy or of the   tau2 ``guideline_violation``;
                   simulator's guidelines broken           ``revealed_info_early`` of the
                                                           agent (told before the policy
                                                           allowed it)
wrong_order        steps taken in an order the policy or   tau2 ``wrong_sequence``
                   the task forbids
hallucination      information stated that the             tau2 ``hallucination``
                   conversation or tools never gave
misunderstanding   a request or instruction misread        tau2 ``incorrect_interpretation``
inconsistent       behaviour that contradicts earlier      tau2 ``inconsistent_behavior``
                   turns
revealed_too_early the user simulator gave information     tau2 ``revealed_info_early``
                   before it was asked for                 of the user simulator
interruption       a turn-taking error (voice runs)        tau2 ``interruption_error``
other              none of the above                       τ-bench ``other``; tau2 ``other``
                                                           and any tag not listed
================== ======================================= ==============================

A tag is read with the error's source where it names different faults for different
sources (:data:`SOURCE_TAG_FAULTS`): tau2's reviewer tags an agent that gives information
ahead of the step its policy puts first ``revealed_info_early`` too, and that is the agent
breaking its policy, not the user simulator revealing the task.

**Severities** (:data:`SEVERITIES`), tau2's: ``minor`` (no effect on the outcome),
``critical`` (an agent error that caused the failure or broke the policy; a user error that
changed the outcome, in ``user_only_review``), ``critical_helped`` (a user error that made
the task easier than intended) and ``critical_hindered`` (a user error that made it harder
or impossible). An error is *critical* when its severity is one of
:data:`CRITICAL_SEVERITIES`.
"""

from __future__ import annotations

__all__ = ["FAULT_SOURCES", "FAULT_TYPES", "SEVERITIES", "CRITICAL_SEVERITIES", "TAG_FAULTS",
           "TAUBENCH_FAULTS", "SOURCE_TAG_FAULTS", "REVIEW_KINDS", "fault_type_of"]

FAULT_SOURCES = ("agent", "user", "environment", "unknown")
FAULT_TYPES = ("wrong_tool", "wrong_argument", "goal_partly_done", "policy_violation",
               "wrong_order", "hallucination", "misunderstanding", "inconsistent",
               "revealed_too_early", "interruption", "other")
SEVERITIES = ("minor", "critical", "critical_helped", "critical_hindered")
CRITICAL_SEVERITIES = ("critical", "critical_helped", "critical_hindered")
#: The reviews a tau2 simulation may store, and ``judge`` (accordkit's review judge).
REVIEW_KINDS = ("review", "user_only_review", "hallucination_check", "judge")

#: tau2's error tags -> fault type.
TAG_FAULTS = {
    "irrelevant_tool_call": "wrong_tool",
    "tool_call_argument_error": "wrong_argument",
    "tool_call_schema_error": "wrong_argument",
    "missed_required_action": "goal_partly_done",
    "premature_termination": "goal_partly_done",
    "guideline_violation": "policy_violation",
    "wrong_sequence": "wrong_order",
    "hallucination": "hallucination",
    "incorrect_interpretation": "misunderstanding",
    "inconsistent_behavior": "inconsistent",
    "revealed_info_early": "revealed_too_early",
    "interruption_error": "interruption",
    "other": "other",
}
#: (tag, source) -> fault type, where a tag names a different fault for that source.
SOURCE_TAG_FAULTS = {
    ("revealed_info_early", "agent"): "policy_violation",
}
#: τ-bench's automatic error identification fault types -> fault type.
TAUBENCH_FAULTS = {
    "called_wrong_tool": "wrong_tool",
    "used_wrong_tool_argument": "wrong_argument",
    "goal_partially_completed": "goal_partly_done",
    "other": "other",
}


def fault_type_of(tags: list[str] | tuple[str, ...], source: str | None = None) -> str:
    """The fault type of a review error with these tags (``other`` when none maps), read
    with the error's ``source`` (who erred) where a tag means different faults for
    different sources (:data:`SOURCE_TAG_FAULTS`).

    A tag is read in lower case with spaces and hyphens as underscores; tau2 and τ-bench
    names and the fault types themselves are all understood.

    Examples
    --------
    >>> fault_type_of(["guideline_violation", "tool_call_argument_error"])
    'wrong_argument'
    >>> fault_type_of(["Wrong Sequence"]), fault_type_of(["called_wrong_tool"])
    ('wrong_order', 'wrong_tool')
    >>> fault_type_of([]), fault_type_of(["made_up_tag"])
    ('other', 'other')
    >>> fault_type_of(["revealed_info_early"], "user"), fault_type_of(["revealed_info_early"],
    ...                                                                 "agent")
    ('revealed_too_early', 'policy_violation')
    """
    found = set()
    for tag in tags:
        key = str(tag).strip().lower().replace("-", "_").replace(" ", "_")
        fault = SOURCE_TAG_FAULTS.get((key, source)) or TAG_FAULTS.get(key) \
            or TAUBENCH_FAULTS.get(key) or (key if key in FAULT_TYPES else None)
        if fault is not None:
            found.add(fault)
    return next((f for f in FAULT_TYPES if f in found), "other")
