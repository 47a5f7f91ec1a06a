"""The names of the canonical schema: benchmarks, roles, dynamics, kinds, id columns.

Plain tuples, kept apart from :mod:`accordkit.schema` (which re-exports them) so that code
that needs only names, such as the tables of the reports and the score store, does not
import ``datasets`` (about 0.5 s in each notebook kernel).
"""

from __future__ import annotations

__all__ = ["BENCHMARKS", "ROLES", "DYNAMICS", "KINDS", "ID_COLUMNS", "CONFIG_COLUMNS",
           "SCORE_OPTIONS", "REWARD_RANGE"]

#: ``"taubench"`` is τ-bench v1 (sierra-research/tau-bench): its own id because its files,
#: success rule inputs and pass^k convention differ from tau2's (docs/tau2.md).
BENCHMARKS = ("accord", "agentchangebench", "tau2", "taubench")
#: The range of the ``reward`` column: tau2, AgentChangeBench and τ-bench rewards are products
#: or weighted means of checks scored 0 to 1 (AcCoRD episodes carry no reward). A reward
#: outside it (1e308 in a damaged file) is a problem of its record, never a mean of 9e306.
REWARD_RANGE = (0.0, 1.0)
ROLES = ("system", "user", "assistant", "tool")
DYNAMICS = ("stated", "hard_underspec", "soft_underspec", "unachievable", "triggered")
#: Message kinds. ``None`` is allowed too (tau2 messages carry no kind).
KINDS = ("greeting", "utterance", "thought", "action", "observation")

#: Columns that identify an episode; every scores frame starts with them.
ID_COLUMNS = (
    "benchmark",
    "domain",
    "scenario_id",
    "task_id",
    "rollout",
    "episode_id",
    "agent_model",
    "method",
    "user_model",
    "user_implementation",
    "persona",
)

#: Columns that together name one agent configuration: the agent model, the agent
#: implementation (``method``: tau2 ``info.agent_info.implementation``, AcCoRD react/uncreact),
#: the user-simulator model and the user-simulator implementation. Tables, pass^k and
#: comparisons group by ``domain`` x these unless asked otherwise. Group with
#: ``dropna=False``: a canonical dataset may leave some of them null.
CONFIG_COLUMNS = ("agent_model", "method", "user_model", "user_implementation")

#: The keyword options of :func:`accordkit.score` that choose how a metric is computed: a
#: score store records them, and a report from a store must use the same.
SCORE_OPTIONS = ("tcrr_mode", "action_mode", "shop_type_gate")
