"""tau2-bench and AgentChangeBench result files -> canonical episodes.

Both benchmarks write tau2's ``Results`` object: ``{timestamp, info, tasks, simulations}``,
either as one JSON file or as a directory holding ``results.json`` and
``simulations/<id>.json``. AgentChangeBench runs are told apart by their content (goal
sequences in the tasks, a goal-shift judge in ``info``, or a domain user simulator).

Each simulation becomes one record; a simulation that cannot be converted becomes an
:class:`~accordkit.schema.EpisodeValidationError` naming the file, the simulation and the
field, so that the caller can raise or skip it.
"""

from __future__ import annotations

import json
import math
import warnings
from collections import defaultdict
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from functools import cache
from typing import Any

import msgspec

from ....names import REWARD_RANGE
from ....schema import RULES, EpisodeValidationError, check_converted, empty_episode
from .columns import TypedMessages
from .personas import persona_id
from .reviews import stored_reviews
from .typed import DecodedSimulation, Message, Results, Simulation, decode_messages

__all__ = ["is_results_object", "results_to_episodes", "iter_episodes",
           "converted_simulations", "RULES_KEPT", "TYPED_RULES_KEPT"]

ACB_USER_SIMULATORS = {"banking_user_simulator", "airline_user_simulator", "retail_user_simulator"}
#: ``termination_reason`` values of a conversation that ended normally (``completed``; spec
#: ``tau2-format.md`` section 11): the user or the agent ended it, not a limit or an error.
COMPLETED_REASONS = ("user_stop", "agent_stop")
#: The range of the canonical ``seed`` column (int64).
_INT64 = (-(2**63), 2**63 - 1)
#: ``messages`` stored as JSON ``null``, as the typed decoder keeps it (a raw slice).
_NULL = msgspec.Raw(b"null")


def is_results_object(obj: Any) -> bool:
    """Whether a parsed JSON value looks like a tau2 ``Results`` object."""
    if isinstance(obj, Results):
        return isinstance(obj.info, Mapping)
    return (
        isinstance(obj, Mapping)
        and isinstance(obj.get("info"), Mapping)
        and ("simulations" in obj or "tasks" in obj)
    )


def _is_acb(info: Mapping[str, Any], tasks: list[Any]) -> bool:
    if "gsrt_judge_llm" in info:
        return True
    user = info.get("user_info")
    if isinstance(user, Mapping) and isinstance(user.get("implementation"), str) \
            and user["implementation"] in ACB_USER_SIMULATORS:
        return True
    return any(
        isinstance(t, Mapping) and isinstance(t.get("user_scenario"), Mapping)
        and "goal_shifts" in t["user_scenario"] for t in tasks
    )


def _task_set(task_id: str) -> str:
    """AgentChangeBench ships tau2-derived ("old") tasks with numeric ids; the rest are "new"."""
    return "old" if task_id.isdigit() else "new"


class _Context:
    """Where we are in a file, to build precise errors."""

    def __init__(self, source: str, record: str) -> None:
        self.source, self.record = source, record

    def error(self, reason: str, field: str) -> EpisodeValidationError:
        return EpisodeValidationError(reason, source=self.source, record=self.record, field=field)

    def expect(self, value: Any, types: tuple[type, ...], field: str, what: str,
               *, optional: bool = True) -> Any:
        kind = type(value)
        if kind in _json_types(types) and (kind is not float or math.isfinite(value)):
            return value  # the usual case, a value parsed from JSON: no ABC check
        if value is None:
            if optional:
                return None
            raise self.error("missing required value", field)
        if not isinstance(value, types) or (isinstance(value, bool) and bool not in types):
            raise self.error(f"expected {what}, got {type(value).__name__} {value!r:.80}", field)
        if isinstance(value, float) and not math.isfinite(value):
            raise self.error(f"expected a finite number, got {value!r}", field)
        return value


@cache
def _json_types(types: tuple[type, ...]) -> frozenset[type]:
    """The types of parsed JSON values that :meth:`_Context.expect` accepts for ``types``
    (``bool`` only when asked for by name, as there)."""
    return frozenset(kind for kind in (dict, list, str, int, float, bool)
                     if issubclass(kind, types) and (kind is not bool or bool in types))


def _text_encoder() -> Callable[[Any], str]:
    """``json.dumps(value, ensure_ascii=False)``, with its C encoder built once.

    ``JSONEncoder.encode`` builds the C encoder anew on each call, most of its cost on the
    small objects of a transcript (tool-call arguments). One built once gives the same
    text; ``markers=None`` leaves out the check for circular references, which decoded JSON
    cannot have. Without the C accelerator, ``json``'s own encoder is used.
    """
    from json.encoder import c_make_encoder, encode_basestring

    plain = json.JSONEncoder(ensure_ascii=False)
    if c_make_encoder is None:  # pragma: no cover - CPython always has it
        return plain.encode
    chunks = c_make_encoder(None, plain.default, encode_basestring, None, ": ", ", ",
                            False, False, True)

    def encode(value: Any) -> str:
        return "".join(chunks(value, 0))

    return encode


_json_text = _text_encoder()


#: The rules of :data:`accordkit.schema.RULES` every record built here keeps by
#: construction, which its callers need not check again: every JSON text it stores
#: (arguments, parameters, reward info) is written by ``json`` from an object, or was
#: checked by :func:`_arguments_json` to be the text of one.
RULES_KEPT = tuple(rule for rule in RULES if rule.test == "json_object")
#: What records whose messages came typed keep besides: every message rule (see
#: :mod:`accordkit.ingest.formats.tau2.columns`).
TYPED_RULES_KEPT = RULES_KEPT + tuple(rule for rule in RULES
                                      if rule.path.startswith("messages")
                                      and rule not in RULES_KEPT)


def _arguments_json(value: Any, ctx: _Context, field: str) -> str:
    if isinstance(value, str):
        try:
            parsed = json.loads(value)
        except json.JSONDecodeError as exc:
            raise ctx.error(f"arguments are text but not JSON ({exc.msg})", field) from None
        except RecursionError:
            raise ctx.error("arguments nested too deeply", field) from None
        if not isinstance(parsed, dict):
            raise ctx.error(f"arguments are JSON text but not an object (found "
                            f"{type(parsed).__name__} {value!r:.40})", field)
        return value
    if value is None:
        return "{}"
    if not isinstance(value, Mapping):
        raise ctx.error(f"expected an arguments object, got {type(value).__name__}", field)
    return _json_text(value)


def _text(value: Any, ctx: _Context, field: str) -> str | None:
    return ctx.expect(value, (str,), field, "text")


def _items(value: Any, ctx: _Context, field: str) -> list[Any]:
    """A list that may be absent (null -> empty)."""
    if value is None:
        return []
    return ctx.expect(value, (list,), field, "a list", optional=False)


def _int_or_none(value: Any, ctx: _Context, field: str) -> int | None:
    if value is None:
        return None
    if (isinstance(value, bool) or not isinstance(value, int | float)
            or (isinstance(value, float) and not math.isfinite(value)) or value != int(value)):
        raise ctx.error(f"expected an integer message index, got {value!r:.40}", field)
    return int(value)


def _convert_tool_calls(calls: Any, ctx: _Context, field: str) -> list[dict[str, Any]] | None:
    if calls is None:
        return None
    ctx.expect(calls, (list,), field, "a list of tool calls")
    out = []
    for j, call in enumerate(calls):
        where = f"{field}[{j}]"
        ctx.expect(call, (Mapping,), where, "a tool call object", optional=False)
        name = ctx.expect(call.get("name"), (str,), f"{where}.name", "a tool name", optional=False)
        out.append(
            {
                "id": _text(call.get("id"), ctx, f"{where}.id"),
                "name": name,
                "arguments_json": _arguments_json(call.get("arguments"), ctx, f"{where}.arguments"),
                "requestor": _text(call.get("requestor"), ctx, f"{where}.requestor"),
            }
        )
    return out


def _event(msg: Mapping[str, Any], ctx: _Context, field: str) -> tuple[str | None, str | None]:
    meta = msg.get("meta_event")
    if meta is None:
        return None, None
    ctx.expect(meta, (Mapping,), f"{field}.meta_event", "a meta_event object")
    payload = dict(meta)
    if msg.get("meta_error") is not None:
        payload["meta_error"] = msg.get("meta_error")
    return _text(meta.get("event"), ctx, f"{field}.meta_event.event"), _json_text(payload)


def _convert_message(msg: Any, idx: int, ctx: _Context, *,
                     field: str | None = None) -> list[dict[str, Any]]:
    field = field or f"messages[{idx}]"
    ctx.expect(msg, (Mapping,), field, "a message object", optional=False)
    role = msg.get("role")
    if role not in ("system", "user", "assistant", "tool"):
        raise ctx.error(f"unknown role {role!r}; expected system, user, assistant or tool",
                        f"{field}.role")
    if role == "tool" and "tool_messages" in msg and msg.get("id") is None:
        # A MultiToolMessage: flatten, keeping the source position.
        subs = ctx.expect(msg["tool_messages"], (list,), f"{field}.tool_messages",
                          "a list of tool messages", optional=False)
        out = []
        for k, sub in enumerate(subs):
            # A nested multi-tool message gives several results (or none): keep every one.
            out.extend(_convert_message(sub, idx, ctx, field=f"{field}.tool_messages[{k}]"))
        for k, rec in enumerate(out):
            rec["sub_idx"] = k
        return out
    content = msg.get("content")
    if content is not None and not isinstance(content, str):
        raise ctx.error(f"expected text content, got {type(content).__name__}", f"{field}.content")
    event, event_json = _event(msg, ctx, field)
    error = msg.get("error") if role == "tool" else None
    ctx.expect(error, (bool,), f"{field}.error", "true or false")
    return [
        {
            "role": role,
            "content": content,
            "turn_idx": idx,
            "sub_idx": 0,
            "kind": None,
            "tool_calls": _convert_tool_calls(msg.get("tool_calls"), ctx, f"{field}.tool_calls"),
            "tool_call_id": _text(msg.get("id"), ctx, f"{field}.id") if role == "tool" else None,
            "error": error,
            "event": event,
            "event_json": event_json,
        }
    ]


def _typed_messages(typed: list[Message], ctx: _Context) -> TypedMessages:
    """A simulation's typed messages with their arguments' JSON text and events, checked
    (types were checked by the decoder); :meth:`TypedMessages.records` gives the dicts."""
    arguments: list[str] = []
    events: dict[int, tuple[str | None, str | None]] = {}
    for idx, msg in enumerate(typed):
        if msg.tool_calls is not None:
            for j, call in enumerate(msg.tool_calls):
                value = call.arguments
                arguments.append(_json_text(value) if type(value) is dict else _arguments_json(
                    value, ctx, f"messages[{idx}].tool_calls[{j}].arguments"))
        if msg.meta_event is not None:
            events[idx] = _event(msg, ctx, f"messages[{idx}]")
    return TypedMessages(typed, arguments, events)


def _convert_criteria(ec: Any, ctx: _Context) -> dict[str, Any]:
    """A known task's criteria; ``evaluation_criteria: null`` is a task with no checks
    (empty criteria, so TSR is 0 as upstream), not an unknown task (null criteria)."""
    if ec is None:
        ec = {}
    field = "task.evaluation_criteria"
    ctx.expect(ec, (Mapping,), field, "an object")
    sets = []
    for i, aset in enumerate(_items(ec.get("action_sets"), ctx, f"{field}.action_sets")):
        where = f"{field}.action_sets[{i}]"
        ctx.expect(aset, (Mapping,), where, "an action set object", optional=False)
        tools = []
        for j, tool in enumerate(_items(aset.get("allowed_tools"), ctx,
                                        f"{where}.allowed_tools")):
            twhere = f"{where}.allowed_tools[{j}]"
            ctx.expect(tool, (Mapping,), twhere, "an allowed tool object", optional=False)
            tools.append(
                {
                    "function_name": ctx.expect(tool.get("function_name"), (str,),
                                                f"{twhere}.function_name", "a tool name",
                                                optional=False),
                    "params_json": _arguments_json(tool.get("params"), ctx, f"{twhere}.params"),
                }
            )
        sets.append({"action_id": _text(aset.get("action_id"), ctx, f"{where}.action_id"),
                     "allowed_tools": tools})
    actions = []
    for i, act in enumerate(_items(ec.get("actions"), ctx, f"{field}.actions")):
        where = f"{field}.actions[{i}]"
        ctx.expect(act, (Mapping,), where, "an action object", optional=False)
        compare = act.get("compare_args")
        ctx.expect(compare, (list,), f"{where}.compare_args", "a list of argument names")
        actions.append(
            {
                "action_id": _text(act.get("action_id"), ctx, f"{where}.action_id"),
                "requestor": _text(act.get("requestor"), ctx, f"{where}.requestor"),
                "name": ctx.expect(act.get("name"), (str,), f"{where}.name", "a tool name",
                                   optional=False),
                "arguments_json": _arguments_json(act.get("arguments"), ctx, f"{where}.arguments"),
                "compare_args": [str(c) for c in compare] if compare is not None else None,
            }
        )
    # a fork's task that lists acceptable_outcomes (several action lists) and no actions
    # has expected actions, none of them known: null, not an empty list
    unknown = ec.get("actions") is None and bool(ec.get("acceptable_outcomes"))
    return {
        "action_sets": sets,
        "actions": None if unknown else actions,
        "communicate_info": _str_list(ec.get("communicate_info"), ctx, f"{field}.communicate_info"),
        "nl_assertions": _str_list(ec.get("nl_assertions"), ctx, f"{field}.nl_assertions"),
        "env_assertions_json": None if ec.get("env_assertions") is None
        else _json_text(ec.get("env_assertions")),
        "reward_basis": _str_list(ec.get("reward_basis"), ctx, f"{field}.reward_basis"),
    }


def _str_list(value: Any, ctx: _Context, field: str) -> list[str] | None:
    if value is None:
        return None
    ctx.expect(value, (list,), field, "a list of strings", optional=False)
    for i, item in enumerate(value):
        ctx.expect(item, (str,), f"{field}[{i}]", "a string", optional=False)
    return list(value)


def _nl_verdicts(items: Any, ctx: _Context, field: str) -> list[dict[str, Any]] | None:
    if items is None:
        return None
    ctx.expect(items, (list,), field, "a list of NL assertion verdicts", optional=False)
    out = []
    for i, item in enumerate(items):
        ctx.expect(item, (Mapping,), f"{field}[{i}]", "a verdict object", optional=False)
        out.append(
            {
                "assertion": _text(item.get("nl_assertion"), ctx, f"{field}[{i}].nl_assertion"),
                "met": ctx.expect(item.get("met"), (bool,), f"{field}[{i}].met", "true or false"),
                "justification": _text(item.get("justification"), ctx,
                                       f"{field}[{i}].justification"),
            }
        )
    return out


_TSR_FIELD = "reward_info.info.tsr_details"
#: (key, field named in errors) of the stored TSR details: channel scores, the weights used
#: (keyed ``weight_<channel>``), and which channels the task has
_TSR_SCORES = tuple((key, f"{_TSR_FIELD}.{key}")
                    for key in ("overall_tsr", "action", "nl_assertion", "communicate_info"))
_TSR_WEIGHTS = tuple((key, f"weight_{key}", f"{_TSR_FIELD}.weights_used.{key}")
                     for key in ("action", "nl_assertion", "communicate_info"))
_TSR_FLAGS = tuple((key, f"{_TSR_FIELD}.{key}")
                   for key in ("has_actions", "has_nl_assertions", "has_communicate_info"))
_NUMBER = (int, float)


def _tsr_details(details: Any, ctx: _Context) -> dict[str, Any] | None:
    if details is None:
        return None
    ctx.expect(details, (Mapping,), _TSR_FIELD, "an object")
    weights = details.get("weights_used") or {}
    ctx.expect(weights, (Mapping,), f"{_TSR_FIELD}.weights_used", "an object")
    out: dict[str, Any] = {}
    for key, where in _TSR_SCORES:
        value = ctx.expect(details.get(key), _NUMBER, where, "a number")
        out[key] = None if value is None else float(value)
    for key, name, where in _TSR_WEIGHTS:
        value = ctx.expect(weights.get(key), _NUMBER, where, "a number")
        out[name] = None if value is None else float(value)
    for key, where in _TSR_FLAGS:
        out[key] = ctx.expect(details.get(key), (bool,), where, "true or false")
    return out


def _gsrt_judge(raw: Any, ctx: _Context) -> dict[str, Any] | None:
    if raw is None:
        return None
    field = "reward_info.info.gsrt_v2"
    ctx.expect(raw, (Mapping,), field, "an object")
    start = raw.get("start_goal") or {}
    ctx.expect(start, (Mapping,), f"{field}.start_goal", "an object")
    shifts = raw.get("user_goal_shifts")
    shifts = [] if shifts is None else shifts
    ctx.expect(shifts, (list,), f"{field}.user_goal_shifts", "a list")
    out = []
    for i, s in enumerate(shifts):
        where = f"{field}.user_goal_shifts[{i}]"
        ctx.expect(s, (Mapping,), where, "a shift object", optional=False)
        out.append(
            {
                "turn": _int_or_none(s.get("turn"), ctx, f"{where}.turn"),
                "from_goal": _text(s.get("from"), ctx, f"{where}.from"),
                "to_goal": _text(s.get("to"), ctx, f"{where}.to"),
                "agent_responded": ctx.expect(s.get("agent_responded"), (bool,),
                                              f"{where}.agent_responded", "true or false"),
                "agent_turn": _int_or_none(s.get("agent_turn"), ctx, f"{where}.agent_turn"),
                "ack_turn": _int_or_none(s.get("acknowledgment_turn"), ctx,
                                         f"{where}.acknowledgment_turn"),
                "tool_turn": _int_or_none(s.get("tool_turn"), ctx, f"{where}.tool_turn"),
                "outcome_turn": _int_or_none(s.get("outcome_turn"), ctx, f"{where}.outcome_turn"),
                "transferred": bool(ctx.expect(s.get("transferred_to_human"), (bool,),
                                               f"{where}.transferred_to_human", "true or false")),
            }
        )
    return {
        "start_turn": _int_or_none(start.get("turn"), ctx, f"{field}.start_goal.turn"),
        "start_goal": _text(start.get("goal"), ctx, f"{field}.start_goal.goal"),
        "shifts": out,
    }


def _instructions(value: Any) -> str | None:
    if value is None or isinstance(value, str):
        return value
    return _json_text(value)


def _task_lookup(tasks: list[Any], sims: list[Any], source: str) -> dict[int, Any]:
    """Map each simulation (by position) to its task definition.

    A task id that is defined twice with different content (seen in real files) is matched
    to simulations in file order, with a warning.
    """
    by_id: dict[str, list[Any]] = defaultdict(list)
    for t in tasks:
        if isinstance(t, Mapping) and t.get("id") is not None:
            by_id[str(t["id"])].append(t)
    seen: dict[str, int] = defaultdict(int)
    out: dict[int, Any] = {}
    missing: dict[str, int] = defaultdict(int)
    for i, sim in enumerate(sims):
        if not isinstance(sim, Mapping | Simulation) or isinstance(sim.get("task_id"), bool) \
                or not isinstance(sim.get("task_id"), str | int):
            continue
        tid = str(sim.get("task_id"))
        defs = by_id.get(tid)
        if not defs:
            missing[tid] += 1
            continue
        k = seen[tid]
        seen[tid] += 1
        out[i] = defs[min(k, len(defs) - 1)]
    for tid, defs in by_id.items():
        if len(defs) > 1 and any(d != defs[0] for d in defs[1:]):
            warnings.warn(
                f"{source}: task {tid!r} is defined {len(defs)} times with different content; "
                "its simulations are matched to the definitions in file order",
                stacklevel=5,
            )
    if missing:
        ids = sorted(missing)
        shown = ", ".join(repr(t) for t in ids[:5]) + (f" and {len(ids) - 5} more"
                                                       if len(ids) > 5 else "")
        warnings.warn(
            f"{source}: {sum(missing.values())} simulation(s) name a task id missing from "
            f"'tasks' ({shown}); they are loaded without criteria, goals or persona",
            stacklevel=5,
        )
    return out


def _note_acceptable_outcomes(tasks: Any, source: str) -> None:
    """Say once per file that tasks list ``acceptable_outcomes`` instead of ``actions`` (a
    tau2 fork: several acceptable action lists), which the loader does not read."""
    if not isinstance(tasks, list):
        return
    ids = []
    for task in tasks:
        ec = task.get("evaluation_criteria") if isinstance(task, Mapping) else None
        if isinstance(ec, Mapping) and ec.get("acceptable_outcomes") and not ec.get("actions"):
            ids.append(task.get("id"))
    if ids:
        warnings.warn(
            f"{source}: {len(ids)} task(s) list acceptable_outcomes (several acceptable action "
            f"lists, a tau2 fork) and no actions (first: {ids[0]!r}); accordkit reads no "
            "expected actions from them: the action diff uses the gold actions their "
            "simulations' stored action_checks hold, and has none for a simulation that "
            "stores none", stacklevel=3)


def results_to_episodes(obj: Any, *, source: str) -> list[dict[str, Any] | EpisodeValidationError]:
    """Convert a parsed tau2 / AgentChangeBench ``Results`` object into canonical records.

    The list form of :func:`iter_episodes` (same parameters, same errors).
    """
    return list(iter_episodes(obj, source=source))


def iter_episodes(obj: Any, *, source: str) -> Iterator[dict[str, Any] | EpisodeValidationError]:
    """Convert a tau2 / AgentChangeBench ``Results`` object into canonical records, one at a time.

    Parameters
    ----------
    obj : dict or Results
        The parsed JSON of a results file, or its typed decoding
        (:func:`accordkit.ingest.formats.tau2.typed.decode_results`).
    source : str
        The file it came from, used in ``source`` and in error messages.

    Yields
    ------
    dict or EpisodeValidationError
        One entry per simulation: a canonical record, or the error that stopped it.

    Raises
    ------
    EpisodeValidationError
        When the object as a whole is not a results object (raised on the first ``next``).
    """
    for label, item, typed in converted_simulations(obj, source=source):
        if not isinstance(item, EpisodeValidationError):
            ctx = _Context(source, label)
            try:
                check_converted(item, ctx.error, whole="(simulation)", messages_typed=typed)
            except EpisodeValidationError as exc:
                item = exc
            except RecursionError:
                item = ctx.error("data nested too deeply to read", "(simulation)")
        yield item


def converted_simulations(obj: Any, *, source: str, shared_criteria: bool = False,
                          columnar: bool = False
                          ) -> Iterator[tuple[str, dict[str, Any] | EpisodeValidationError, bool]]:
    """Convert a ``Results`` object's simulations without checking the records built.

    The unchecked form of :func:`iter_episodes`, for a caller that checks whole tables of
    records at once (:func:`accordkit.ingest.check.table_problems`, the rules
    :func:`~accordkit.schema.check_converted` applies to one record). With
    ``shared_criteria=True`` the trials of a task share one converted ``criteria`` object
    (converted once), for a caller that turns the records into Arrow at once. With
    ``columnar=True`` a record whose messages came typed holds them as one
    :class:`~accordkit.ingest.formats.tau2.columns.TypedMessages`, for a caller that builds the
    messages column with :func:`~accordkit.ingest.formats.tau2.columns.messages_column`.

    Yields
    ------
    tuple of (str, dict or EpisodeValidationError, bool)
        The simulation's name in errors (its id, else ``simulations[i]``), its record or the
        error that stopped it, and whether its messages came from the typed decoder.
    """
    if isinstance(obj, Results):
        obj = obj.as_object()
    if not is_results_object(obj):
        raise EpisodeValidationError(
            "not a tau2/AgentChangeBench results file: expected a JSON object with 'info' and "
            "'simulations'", source=source, field="(top level)")
    for note in getattr(obj, "notes", ()):  # what reading a dir-format run replaced
        warnings.warn(note, stacklevel=2)
    file_ctx = _Context(source, "(file header)")
    info = obj["info"]
    tasks = obj.get("tasks") or []
    sims = obj.get("simulations")
    sims = [] if sims is None else sims
    file_ctx.expect(tasks, (list,), "tasks", "a list of tasks")
    file_ctx.expect(sims, (list,), "simulations", "a list of simulations")
    env = file_ctx.expect(info.get("environment_info"), (Mapping,), "info.environment_info",
                          "an object", optional=False)
    domain = file_ctx.expect(env.get("domain_name"), (str,), "info.environment_info.domain_name",
                             "a domain name", optional=False)
    if not domain.strip():
        raise file_ctx.error("missing required value", "info.environment_info.domain_name")
    agent = file_ctx.expect(info.get("agent_info"), (Mapping,), "info.agent_info",
                            "an object") or {}
    user = file_ctx.expect(info.get("user_info"), (Mapping,), "info.user_info", "an object") or {}
    num_trials = file_ctx.expect(info.get("num_trials"), (int,), "info.num_trials",
                                 "an integer")
    benchmark = "agentchangebench" if _is_acb(info, tasks) else "tau2"
    task_for = _task_lookup(tasks, sims, source)
    _note_acceptable_outcomes(tasks, source)
    numbered = null_trials(sims)
    if numbered:
        warnings.warn(
            f"{source}: {len(numbered)} simulation(s) have no trial (tau2's single-task runner "
            "leaves it null); they are numbered within their task in file order",
            stacklevel=2)
    #: each task's converted criteria, shared by the records of its trials
    criteria: dict[Any, Any] | None = {} if shared_criteria else None
    for i, sim in enumerate(sims):
        if isinstance(sim, EpisodeValidationError):  # an unreadable dir-format sim file
            yield str(sim.record), sim, False
            continue
        label = (sim.get("id") if isinstance(sim, Mapping | Simulation) and sim.get("id")
                 else f"simulations[{i}]")
        ctx = _Context(source, str(label))
        try:
            rec, typed = _convert_simulation(sim, task_for.get(i), ctx, benchmark=benchmark,
                                             domain=domain, agent=agent, user=user,
                                             num_trials=num_trials, criteria=criteria,
                                             columnar=columnar, trial=numbered.get(i))
        except EpisodeValidationError as exc:
            yield ctx.record, exc, False
        except RecursionError:
            yield ctx.record, ctx.error("data nested too deeply to read", "(simulation)"), False
        except (KeyboardInterrupt, MemoryError):
            raise
        except Exception as exc:  # noqa: BLE001 - one simulation never stops the others
            yield ctx.record, ctx.error(f"could not be converted ({type(exc).__name__}: {exc})",
                                        "(simulation)"), False
        else:
            yield ctx.record, rec, typed


# --------------------------------------------------------------------------- the field map


#: How problems name each scope of :class:`Field`: the prefix of its fields.
SCOPES = {
    "simulation": "",
    "reward_info": "reward_info.",
    "reward_info.info": "reward_info.info.",
    "task": "task.",
    "user_scenario": "task.user_scenario.",
    "goal_shifts": "task.user_scenario.goal_shifts.",
    "agent": "info.agent_info.",
    "user": "info.user_info.",
}


@dataclass(frozen=True)
class Field:
    """One canonical column filled from a simulation, declared as data.

    Attributes
    ----------
    column : str
        The canonical column (:data:`accordkit.schema.EPISODE_FEATURES`).
    scope : str
        Where ``key`` is looked up: a key of :data:`SCOPES` (the simulation, its
        ``reward_info``, its task, the file's ``info.agent_info`` ...).
    key : str
        The key within the scope (``""``: the scope's object itself).
    convert : callable
        ``convert(value, ctx, field)``: the column's value, or an error naming ``field`` (the
        scope's prefix and the key, as problems name it).
    per_task : bool
        Made once per task definition and shared by the task's trials.
    field : str
        How problems name it (set from ``scope`` and ``key``).
    """

    column: str
    scope: str
    key: str
    convert: Callable[[Any, _Context, str], Any]
    per_task: bool = False
    field: str = ""

    def __post_init__(self) -> None:
        prefix = SCOPES[self.scope]
        object.__setattr__(self, "field", prefix + self.key if self.key else prefix.rstrip("."))


def _number(value: Any, ctx: _Context, field: str) -> float | None:
    v = ctx.expect(value, (int, float), field, "a number")
    return None if v is None else float(v)


def _reward(value: Any, ctx: _Context, field: str) -> float | None:
    """The reward, a number within the benchmark's range (tau2 and AgentChangeBench rewards
    lie in [0, 1]: :data:`accordkit.names.REWARD_RANGE`)."""
    reward = _number(value, ctx, field)
    low, high = REWARD_RANGE
    if reward is not None and not low <= reward <= high:
        raise ctx.error(f"expected a reward in [{low:g}, {high:g}] (the range of tau2 and "
                        f"AgentChangeBench rewards), got {value!r:.40}", field)
    return reward


def _object_json(value: Any, ctx: _Context, field: str) -> str | None:
    ctx.expect(value, (Mapping,), field, "an object")
    return None if value is None else _json_text(value)


def _integer(value: Any, ctx: _Context, field: str) -> int | None:
    return ctx.expect(value, (int,), field, "an integer")


def _whole_json(value: Any, ctx: _Context, field: str) -> str | None:
    return _json_text(value) if value else None


def _verdicts(reward_info: Mapping[str, Any], ctx: _Context, field: str) -> Any:
    """The NL-assertion verdicts: ``reward_info.nl_assertions``, else the stored TSR
    details' ``nl_assertion_details`` (AgentChangeBench)."""
    verdicts = reward_info.get("nl_assertions")
    info = reward_info.get("info") or {}
    if verdicts is None and info.get("tsr_details"):
        return _nl_verdicts(info["tsr_details"].get("nl_assertion_details"), ctx,
                            "reward_info.info.tsr_details.nl_assertion_details")
    return _nl_verdicts(verdicts, ctx, "reward_info.nl_assertions")


def _criteria(value: Any, ctx: _Context, field: str) -> Any:
    return _convert_criteria(value, ctx)


#: The simple columns of a simulation's record, in the order they are checked (the first
#: problem found is the one reported). Identity, messages and persona are made apart (see
#: :func:`_convert_simulation`); ``completed`` follows ``termination_reason``.
FIELDS: tuple[Field, ...] = (
    Field("reward", "reward_info", "reward", _reward),
    Field("reward_breakdown_json", "reward_info", "reward_breakdown", _object_json),
    Field("tsr_details", "reward_info.info", "tsr_details",
          lambda v, ctx, f: _tsr_details(v, ctx)),
    Field("agent_model", "agent", "llm", _text),
    Field("method", "agent", "implementation", _text),
    Field("user_model", "user", "llm", _text),
    Field("user_implementation", "user", "implementation", _text),
    Field("seed", "simulation", "seed", lambda v, ctx, f: _seed(v, ctx)),
    Field("instructions", "user_scenario", "instructions", lambda v, ctx, f: _instructions(v),
          per_task=True),
    Field("goals", "goal_shifts", "goals", _str_list, per_task=True),
    Field("required_shifts", "goal_shifts", "required_shifts", _integer),
    Field("criteria", "task", "evaluation_criteria", _criteria, per_task=True),
    Field("termination_reason", "simulation", "termination_reason", _text),
    Field("reward_basis", "reward_info", "reward_basis", _str_list),
    Field("nl_verdicts", "reward_info", "", _verdicts),
    Field("gsrt_judge", "reward_info.info", "gsrt_v2", lambda v, ctx, f: _gsrt_judge(v, ctx)),
    Field("reward_info_json", "reward_info", "", _whole_json),
    Field("reviews_json", "simulation", "", lambda sim, ctx, f: _reviews(sim, ctx)),
    Field("agent_cost", "simulation", "agent_cost", _number),
    Field("user_cost", "simulation", "user_cost", _number),
)


def _convert_simulation(sim: Any, task: Any, ctx: _Context, *, benchmark: str, domain: str,
                        agent: Mapping[str, Any], user: Mapping[str, Any],
                        num_trials: Any, criteria: dict[Any, Any] | None = None,
                        columnar: bool = False, trial: int | None = None,
                        ) -> tuple[dict[str, Any], bool]:
    """One simulation's canonical record, and whether its messages came typed.

    ``criteria`` memoizes what is made of a task (the :data:`FIELDS` made ``per_task`` and
    its persona) by task object: the trials of a task share them; a task whose values fail
    is converted, and fails, again for each trial. ``columnar``: typed messages stay one
    :class:`TypedMessages` (see :func:`converted_simulations`). ``trial`` numbers a
    simulation whose ``trial`` is null (see :func:`null_trials`).
    """
    if not isinstance(sim, Simulation):
        ctx.expect(sim, (Mapping,), "(simulation)", "a simulation object", optional=False)
    sim_id = ctx.expect(sim.get("id"), (str,), "id", "a simulation id", optional=False)
    task_id = sim.get("task_id")
    if task_id is None:
        raise ctx.error("missing required value", "task_id")
    if isinstance(task_id, bool) or not isinstance(task_id, str | int):
        raise ctx.error(f"expected a task id, got {task_id!r:.40}", "task_id")
    task_id = str(task_id)
    rollout = sim.get("trial")
    if rollout is None:
        if trial is None:
            raise ctx.error("missing required value", "trial")
        rollout = trial
    if isinstance(rollout, bool) or not isinstance(rollout, int):
        raise ctx.error(f"expected an integer trial, got {rollout!r:.40}", "trial")
    flat, typed = _messages(sim, ctx, columnar=columnar)
    reward_info = sim.get("reward_info")
    ctx.expect(reward_info, (Mapping,), "reward_info", "an object")
    reward_info = reward_info or {}
    ctx.expect(reward_info.get("action_checks"), (list,), "reward_info.action_checks",
               "a list of action checks")
    ri_info = reward_info.get("info") or {}
    ctx.expect(ri_info, (Mapping,), "reward_info.info", "an object")
    if task is not None:
        ctx.expect(task, (Mapping,), "task", "a task object")
    task = task or {}
    scenario = task.get("user_scenario") or {}
    ctx.expect(scenario, (Mapping,), "task.user_scenario", "an object")
    shifts = scenario.get("goal_shifts") or {}
    ctx.expect(shifts, (Mapping,), "task.user_scenario.goal_shifts", "an object")
    memo = {} if criteria is None else criteria
    persona_text = _text(scenario.get("persona"), ctx, "task.user_scenario.persona")
    persona = _per_task(memo, task, "persona",
                        lambda: persona_id(persona_text, domain=domain, task_id=task_id))
    scopes = {"simulation": sim, "reward_info": reward_info, "reward_info.info": ri_info,
              "task": task, "user_scenario": scenario, "goal_shifts": shifts,
              "agent": agent, "user": user}
    task_set = _task_set(task_id) if benchmark == "agentchangebench" else None
    rec = empty_episode()
    rec.update(
        benchmark=benchmark, domain=domain, task_id=task_id, task_set=task_set,
        scenario_id=(f"agentchangebench/{domain}/{task_set}/{task_id}"
                     if benchmark == "agentchangebench" else f"tau2/{domain}/{task_id}"),
        rollout=rollout, episode_id=f"{benchmark}/{sim_id}", persona=persona,
        persona_text=None if persona_text is None or persona_text.strip() == persona
        else persona_text,
        source=ctx.source, messages=flat, num_trials=num_trials)
    for field in FIELDS:
        rec[field.column] = _field_value(field, scopes, ctx, memo, task)
    # tau2's notion of a finished conversation (spec section 11), not AcCoRD's outcome; only
    # AcCoRD rows reach the AcCoRD metrics that read it (accordkit.score dispatches by benchmark)
    ending = rec["termination_reason"]
    rec["completed"] = None if ending is None else ending in COMPLETED_REASONS
    return rec, typed


def _field_value(field: Field, scopes: Mapping[str, Any], ctx: _Context,
                 memo: dict[Any, Any], task: Mapping[str, Any]) -> Any:
    """The value of one :class:`Field` of a simulation."""
    where = scopes[field.scope]
    value = where.get(field.key) if field.key else where
    if not field.per_task:
        return field.convert(value, ctx, field.field)
    if not task:
        # no task definition: no criteria (not empty ones); the task's other values made
        return None if field.scope == "task" else field.convert(value, ctx, field.field)
    key = (id(task), field.column)  # tasks live as long as the object being converted
    if key not in memo:
        memo[key] = field.convert(value, ctx, field.field)
    return memo[key]


def _messages(sim: Any, ctx: _Context, *, columnar: bool) -> tuple[Any, bool]:
    """A simulation's canonical messages, and whether they came typed."""
    messages = sim.get("messages")
    if isinstance(messages, msgspec.Raw) and len(messages) == 4 and messages == _NULL:
        messages = None  # the typed decoder keeps a stored null as its raw bytes
    if messages is None:
        if sim.get("ticks") is not None:
            raise ctx.error("full-duplex (voice) runs store 'ticks' instead of messages; "
                            "they are not supported yet", "messages")
        raise ctx.error("missing required value", "messages")
    typed = None
    if isinstance(sim, DecodedSimulation):  # decoded with the file, in one pass
        typed = messages
    elif isinstance(messages, msgspec.Raw):
        typed = decode_messages(messages)
        messages = json.loads(bytes(messages)) if typed is None else typed
    ctx.expect(messages, (list,), "messages", "a list of messages", optional=False)
    if not messages:
        raise ctx.error("empty conversation: no messages", "messages")
    if typed is not None:
        flat = _typed_messages(typed, ctx)
        return (flat if columnar else flat.records()), True
    out: list[dict[str, Any]] = []
    for idx, msg in enumerate(messages):
        out.extend(_convert_message(msg, idx, ctx))
    return out, False


def null_trials(sims: Sequence[Any]) -> dict[int, int]:
    """Trials for the simulations whose ``trial`` is null, by position: numbered within their
    task in file order (0, 1, ...), skipping the numbers other simulations of the task hold.

    tau2 declares ``trial`` optional, and its single-task runner leaves it null on every
    simulation (spec ``tau2-format.md`` section 5).

    Examples
    --------
    >>> null_trials([{"task_id": "1", "trial": None}, {"task_id": "1", "trial": 0},
    ...              {"task_id": "1", "trial": None}, {"task_id": 2, "trial": None}])
    {0: 1, 2: 2, 3: 0}
    """
    taken: dict[str, set[Any]] = defaultdict(set)
    for sim in sims:
        if isinstance(sim, Mapping | Simulation) and sim.get("trial") is not None:
            taken[str(sim.get("task_id"))].add(sim.get("trial"))
    out: dict[int, int] = {}
    next_of: dict[str, int] = defaultdict(int)
    for i, sim in enumerate(sims):
        if not isinstance(sim, Mapping | Simulation) or sim.get("trial") is not None:
            continue
        task = str(sim.get("task_id"))
        n = next_of[task]
        while n in taken[task]:
            n += 1
        out[i], next_of[task] = n, n + 1
    return out


def _reviews(sim: Any, ctx: _Context) -> str | None:
    """The simulation's stored reviews (:mod:`.reviews`), errors named in this file."""
    try:
        return stored_reviews(sim)
    except EpisodeValidationError as exc:
        raise ctx.error(exc.reason, str(exc.field)) from None


def _seed(value: Any, ctx: _Context) -> int | None:
    """The simulation's seed; one outside int64 is stored as null, with a note.

    The seed is metadata (no metric reads it), so a value the canonical ``int64`` column
    cannot hold does not cost the episode: it becomes null and a warning names the file,
    the simulation and the field (the loader turns it into a note of the load).
    """
    seed = ctx.expect(value, (int,), "seed", "an integer")
    if seed is not None and not _INT64[0] <= seed <= _INT64[1]:
        warnings.warn(f"file {ctx.source}, record {ctx.record}, field seed: integer {seed} "
                      "does not fit in int64; the seed is stored as null (the episode is kept)",
                      stacklevel=4)
        return None
    return seed


def _per_task(memo: dict[Any, Any], task: Mapping[str, Any], name: str,
              make: Callable[[], Any]) -> Any:
    """``make()``, made once per task (kept only when it succeeds, so a task whose value
    fails fails again, naming each of its simulations)."""
    if not task:  # no task (a fresh empty mapping, whose id may be reused)
        return make()
    key = (id(task), name)  # tasks live as long as the object being converted
    if key not in memo:
        memo[key] = make()
    return memo[key]
