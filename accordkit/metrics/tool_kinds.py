"""Which tools change state: read, write and generic tools, by name.

tau2 tags each tool of a domain as read, write, think or generic, but result files rarely
carry the tool definitions (``info.environment_info.tool_defs`` is null in every released
file we have), and τ-bench and AgentChangeBench files never do. The action diff needs the
distinction all the same (an unrequested *write* is an error, an extra lookup is not), so it
is made from the tool's name, by a rule that holds for every tool of the airline, retail,
telecom and banking domains:

* **generic**: hand-offs and helpers that touch no data (:data:`GENERIC_TOOLS`:
  ``transfer_to_human_agents``, ``think``, ``calculate``, ...);
* **read**: a name starting with a lookup verb (:data:`READ_PREFIXES`: ``get_``,
  ``search_``, ``list_``, ``find_``, ``check_``, ...);
* **write**: every other tool (``book_reservation``, ``toggle_data``, ``lock_card``, ...).

A run whose tools break the rule can say so with ``tool_kinds={"name": "read", ...}``.
"""

from __future__ import annotations

from collections.abc import Mapping

__all__ = ["TOOL_KINDS", "READ_PREFIXES", "GENERIC_TOOLS", "TRANSFER_TOOLS", "tool_kind",
           "check_tool_kinds"]

#: The kinds a tool can have.
TOOL_KINDS = ("read", "write", "generic")
#: Name prefixes of tools that only look things up.
READ_PREFIXES = ("get_", "search_", "list_", "find_", "lookup_", "check_", "view_", "show_",
                 "read_", "fetch_", "query_", "verify_", "run_", "count_")
#: Tools that neither read nor write the domain's data.
GENERIC_TOOLS = frozenset({"transfer_to_human_agents", "transfer_to_human", "think",
                           "calculate", "respond", "done"})
#: Tools that hand the user over to a human (the conversation is over for the agent).
TRANSFER_TOOLS = frozenset({"transfer_to_human_agents", "transfer_to_human"})


def tool_kind(name: str | None, overrides: Mapping[str, str] | None = None) -> str:
    """The kind of the tool called ``name``: ``"read"``, ``"write"`` or ``"generic"``.

    Parameters
    ----------
    name : str
        The tool's name.
    overrides : mapping of str to str, optional
        Kinds given by the caller for some names; they win over the rule.

    Examples
    --------
    >>> tool_kind("get_user_details"), tool_kind("book_reservation")
    ('read', 'write')
    >>> tool_kind("transfer_to_human_agents"), tool_kind("think")
    ('generic', 'generic')
    >>> tool_kind("log_event", {"log_event": "generic"})
    'generic'
    """
    if overrides and name in overrides:
        return overrides[name]
    if not name:
        return "generic"
    if name in GENERIC_TOOLS:
        return "generic"
    return "read" if name.startswith(READ_PREFIXES) else "write"


def check_tool_kinds(tool_kinds: object) -> dict[str, str]:
    """``tool_kinds`` as a dict, or a ``ValueError`` naming the entry that is not a kind.

    Examples
    --------
    >>> check_tool_kinds(None)
    {}
    >>> check_tool_kinds({"x": "delete"})
    Traceback (most recent call last):
    ...
    ValueError: tool_kinds['x'] must be one of ('read', 'write', 'generic'), got 'delete'
    """
    if tool_kinds is None:
        return {}
    if not isinstance(tool_kinds, Mapping):
        raise TypeError(f"tool_kinds must be a mapping of tool name to kind, got "
                        f"{type(tool_kinds).__name__}")
    for key, kind in tool_kinds.items():
        if kind not in TOOL_KINDS:
            raise ValueError(f"tool_kinds[{key!r}] must be one of {TOOL_KINDS}, got {kind!r}")
    return dict(tool_kinds)
