"""τ-bench (v1) result files -> canonical episodes.

τ-bench (sierra-research/tau-bench, tau2-bench's predecessor) writes one JSON **list** of
run records per run: ``{task_id, trial, reward, traj, info}`` (spec:
``../shared/specs/taubench-v1.md``). The file holds no model, strategy or domain name, so
those come, in this order of priority, from

1. ``metadata`` given by the user (``ak.load(..., metadata={"agent_model": ...})``);
2. the file name, when it follows τ-bench ``run.py``'s pattern
   ``{strategy}-{model}-{temperature}_range_{start}-{end}_user-{user_model}-{user_strategy}_{time}.json``
   (or the common renamed form ``{model}-{domain}.json``);
3. the content: the domain from the tool names and the system prompt.

Mapping: benchmark ``"taubench"``; ``method`` = agent strategy; ``user_implementation`` = user
strategy; messages from ``traj`` (tool calls with their JSON-text arguments, tool results);
``criteria.actions`` and ``criteria.communicate_info`` from ``info.task`` (``actions`` and
``outputs``); ``termination_reason`` from ``info.source`` (``"user"`` -> ``"user_stop"``, a
tool name ``t`` -> ``"tool:t"``) or ``"run_error"`` for a run that raised (its ``traj`` is
empty, so its conversation is one system message carrying the error as an event);
``num_trials`` = the number of distinct trials in the file (τ-bench's ``T``).

``episode_id`` is ``taubench/<file stem>@<digest>/<task>/<trial>``: nothing in a τ-bench file
names its run and released files are often renamed, so two runs saved under the same name in
different folders (``seed1/gpt-4o-airline.json``, ``seed2/gpt-4o-airline.json``) are told
apart by ``<digest>``, the first 8 hex digits of the SHA-256 of the file's parsed content
(:func:`run_id`). It depends on the content only, not on the path the file is loaded by, so
the same file loaded twice gives the same ids (and is counted once).

An empty list ``[]`` is what ``run.py`` writes for an empty task range (and a run killed
before its first task ended): it is read as a run of 0 episodes when its file name follows
``run.py``'s pattern (:func:`is_run_py_name`). By content alone an empty list is nobody's, so
under any other name it stays an error.
"""

from __future__ import annotations

import hashlib
import json
import math
import re
import warnings
from collections.abc import Iterator, Mapping, Sequence
from pathlib import Path
from typing import Any, Literal

import msgspec

from ...schema import EpisodeValidationError, check_converted, empty_episode
from ..check import Part, built_part
from ..context import ReadContext
from ..inputs import Input
from .text import note_replaced

__all__ = ["looks_like_taubench", "read_taubench", "metadata_from_filename", "guess_domain",
           "is_run_py_name", "run_id", "RUN_ERROR", "METADATA_KEYS"]

BENCHMARK = "taubench"
#: termination_reason of a record whose run raised (``info.error``).
RUN_ERROR = "run_error"
#: Keys a user may give in ``metadata`` (any canonical id field of this list).
METADATA_KEYS = ("agent_model", "method", "user_model", "user_implementation", "domain",
                 "split")

_RECORD_KEYS = {"task_id", "reward", "info", "traj", "trial"}
_STRATEGIES = ("tool-calling", "few-shot", "react", "act")
_RUN_PY_NAME = re.compile(
    r"^(?P<method>" + "|".join(re.escape(s) for s in _STRATEGIES) + r"|[a-z][a-z_]*)"
    r"-(?P<agent_model>.+)-(?P<temperature>\d+(?:\.\d+)?)"
    r"_range_(?P<start>-?\d+)-(?P<end>-?\d+)"
    r"_user-(?P<user_model>.+)-(?P<user_implementation>[a-z_]+)_(?P<time>[\w.-]+)$"
)
_DOMAIN_TOOLS = {
    "airline": {"book_reservation", "get_reservation_details", "search_direct_flight",
                "search_onestop_flight", "update_reservation_flights", "cancel_reservation",
                "update_reservation_baggages", "update_reservation_passengers",
                "send_certificate", "list_all_airports", "get_flight_status"},
    "retail": {"get_order_details", "exchange_delivered_order_items",
               "return_delivered_order_items", "cancel_pending_order",
               "modify_pending_order_items", "modify_pending_order_address",
               "modify_pending_order_payment", "find_user_id_by_email",
               "find_user_id_by_name_zip", "get_product_details", "list_all_product_types",
               "modify_user_address"},
}
_DOMAIN_WORDS = {"airline": "airline", "retail": "retail"}


def looks_like_taubench(obj: Any) -> bool:
    """Whether a parsed JSON value is a τ-bench result list.

    A non-empty list whose first object has ``task_id`` and ``traj`` or ``info`` (τ-bench's
    ``EnvRunResult``) and none of the canonical ``episode_id`` / ``benchmark`` keys.

    Examples
    --------
    >>> looks_like_taubench([{"task_id": 0, "trial": 0, "reward": 1.0, "traj": [], "info": {}}])
    True
    >>> looks_like_taubench([{"benchmark": "tau2", "episode_id": "x"}])
    False
    """
    if not isinstance(obj, list) or not obj:
        return False
    first = next((o for o in obj if isinstance(o, Mapping)), None)
    return (first is not None and "task_id" in first and ("traj" in first or "info" in first)
            and "episode_id" not in first and "benchmark" not in first)


def _stem(name: str) -> str:
    stem = Path(name).name
    return stem[:-5] if stem.lower().endswith(".json") else stem


def is_run_py_name(name: str) -> bool:
    """Whether a file name (or path) follows τ-bench ``run.py``'s naming pattern.

    Examples
    --------
    >>> is_run_py_name("runs/tool-calling-gpt-4o-0.0_range_0-0_user-gpt-4o-llm_0614.json")
    True
    >>> is_run_py_name("gpt-4o-airline.json")
    False
    """
    return _RUN_PY_NAME.match(_stem(name)) is not None


def run_id(obj: Any, source: str) -> str:
    """The run part of a τ-bench ``episode_id``: ``<file stem>@<digest of the content>``.

    The digest is the first 8 hex digits of the SHA-256 of the parsed content written as
    compact JSON with sorted keys, so it does not depend on the path the file is loaded by
    nor on how it is indented, and two runs that share a file name differ.

    Examples
    --------
    >>> run_id([{"task_id": 0, "trial": 0}], "seed1/gpt-4o-airline.json")
    'gpt-4o-airline@0e72fb66'
    >>> run_id([{"trial": 0, "task_id": 0}], "/elsewhere/gpt-4o-airline.json")
    'gpt-4o-airline@0e72fb66'
    """
    try:
        data = msgspec.json.encode(obj, order="sorted")
    except (TypeError, ValueError, OverflowError, msgspec.EncodeError):
        # not JSON-like (a value built in Python, not read from a file): a slower stand-in
        data = json.dumps(obj, separators=(",", ":"), default=repr).encode("ascii")
    digest = hashlib.sha256(data).hexdigest()[:8]
    return f"{Path(source).stem or 'run'}@{digest}"


def metadata_from_filename(name: str) -> dict[str, str]:
    """Agent model, strategy, user model and user strategy encoded in a τ-bench file name.

    Parameters
    ----------
    name : str
        File name or path. ``run.py`` names files
        ``{strategy}-{model}-{temperature}_range_{start}-{end}_user-{user_model}-{user_strategy}_{time}.json``;
        released files are often renamed ``{model}-{domain}.json``, which gives the model
        and the domain.

    Returns
    -------
    dict
        Some of ``agent_model``, ``method``, ``user_model``, ``user_implementation``,
        ``domain``; empty when the name follows neither pattern.

    Examples
    --------
    >>> metadata_from_filename("tool-calling-gpt-4o-0.0_range_0-50_user-gpt-4o-llm_0614120000.json")
    ... # doctest: +NORMALIZE_WHITESPACE
    {'method': 'tool-calling', 'agent_model': 'gpt-4o', 'user_model': 'gpt-4o',
     'user_implementation': 'llm'}
    >>> metadata_from_filename("gpt-4o-airline.json")
    {'agent_model': 'gpt-4o', 'domain': 'airline'}
    >>> metadata_from_filename("results.json")
    {}
    """
    stem = _stem(name)
    m = _RUN_PY_NAME.match(stem)
    if m:
        return {k: m.group(k) for k in ("method", "agent_model", "user_model",
                                       "user_implementation")}
    for domain in _DOMAIN_WORDS:
        suffix = f"-{domain}"
        if stem.endswith(suffix) and len(stem) > len(suffix):
            return {"agent_model": stem[: -len(suffix)], "domain": domain}
    return {}


def guess_domain(records: list[Any]) -> str | None:
    """The domain whose tool names (or name in the system prompt) the records use most.

    Examples
    --------
    >>> guess_domain([{"info": {"task": {"actions": [{"name": "get_order_details"}]}}}])
    'retail'
    >>> guess_domain([{"traj": []}]) is None
    True
    """
    votes = dict.fromkeys(_DOMAIN_TOOLS, 0)
    prompt_votes = dict.fromkeys(_DOMAIN_TOOLS, 0)
    for rec in records:
        if not isinstance(rec, Mapping):
            continue
        names: list[Any] = []
        info = rec.get("info")
        task = info.get("task") if isinstance(info, Mapping) else None
        if isinstance(task, Mapping) and isinstance(task.get("actions"), list):
            names += [a.get("name") for a in task["actions"] if isinstance(a, Mapping)]
        traj = rec.get("traj")
        for msg in traj if isinstance(traj, list) else ():
            if not isinstance(msg, Mapping):
                continue
            if msg.get("role") == "tool":
                names.append(msg.get("name"))
            elif msg.get("role") == "system" and isinstance(msg.get("content"), str):
                text = msg["content"].lower()
                for domain, word in _DOMAIN_WORDS.items():
                    prompt_votes[domain] += word in text
        for domain, tools in _DOMAIN_TOOLS.items():
            votes[domain] += sum(n in tools for n in names)
    for tally in (votes, prompt_votes):
        best = max(tally, key=tally.get)
        if tally[best] and list(tally.values()).count(tally[best]) == 1:
            return best
    return None


class _Ctx:
    def __init__(self, source: str, record: str) -> None:
        self.source, self.record = source, record

    def error(self, reason: str, field: str) -> EpisodeValidationError:
        return EpisodeValidationError(reason, source=self.source, record=self.record,
                                      field=field)


def _json_args(value: Any, ctx: _Ctx, field: str) -> str:
    if value is None:
        return "{}"
    if isinstance(value, str):
        try:
            json.loads(value)
        except json.JSONDecodeError as exc:
            raise ctx.error(f"arguments are text but not JSON ({exc.msg})", field) from None
        return value
    if isinstance(value, Mapping):
        return json.dumps(value, ensure_ascii=False)
    raise ctx.error(f"expected JSON text or an object, got {type(value).__name__}", field)


def _text(value: Any, ctx: _Ctx, field: str) -> str | None:
    if value is not None and not isinstance(value, str):
        raise ctx.error(f"expected text, got {type(value).__name__} {value!r:.60}", field)
    return value


def _message(msg: Any, idx: int, ctx: _Ctx) -> dict[str, Any]:
    field = f"traj[{idx}]"
    if not isinstance(msg, Mapping):
        raise ctx.error(f"expected a message object, got {type(msg).__name__}", field)
    role = msg.get("role")
    if role not in ("system", "user", "assistant", "tool"):
        raise ctx.error(f"unknown role {role!r}; expected system, user, assistant or tool",
                        f"{field}.role")
    calls = None
    raw_calls = msg.get("tool_calls")
    if raw_calls is not None:
        if not isinstance(raw_calls, list):
            raise ctx.error(f"expected a list of tool calls, got {type(raw_calls).__name__}",
                            f"{field}.tool_calls")
        calls = []
        for j, call in enumerate(raw_calls):
            where = f"{field}.tool_calls[{j}]"
            fn = call.get("function") if isinstance(call, Mapping) else None
            if not isinstance(fn, Mapping):
                raise ctx.error("a tool call needs a 'function' object", f"{where}.function")
            name = fn.get("name")
            if not isinstance(name, str) or not name:
                raise ctx.error("a tool call needs a string name", f"{where}.function.name")
            calls.append({"id": _text(call.get("id"), ctx, f"{where}.id"), "name": name,
                          "arguments_json": _json_args(fn.get("arguments"), ctx,
                                                       f"{where}.function.arguments"),
                          "requestor": "assistant"})
    return {
        "role": role,
        "content": _text(msg.get("content"), ctx, f"{field}.content"),
        "turn_idx": idx,
        "sub_idx": 0,
        "kind": None,
        "tool_calls": calls,
        "tool_call_id": (_text(msg.get("tool_call_id"), ctx, f"{field}.tool_call_id")
                         if role == "tool" else None),
        "error": None,
        "event": None,
        "event_json": None,
    }


def _criteria(task: Mapping[str, Any], ctx: _Ctx) -> dict[str, Any]:
    actions = task.get("actions")
    if actions is None:
        actions = []
    if not isinstance(actions, list):
        raise ctx.error(f"expected a list, got {type(actions).__name__}", "info.task.actions")
    out_actions = []
    for i, act in enumerate(actions):
        where = f"info.task.actions[{i}]"
        if not isinstance(act, Mapping) or not isinstance(act.get("name"), str):
            raise ctx.error("an expected action needs a string name", f"{where}.name")
        out_actions.append({"action_id": str(i), "requestor": "assistant", "name": act["name"],
                            "arguments_json": _json_args(act.get("kwargs"), ctx,
                                                         f"{where}.kwargs"),
                            "compare_args": None})
    outputs = task.get("outputs")
    if outputs is not None and (not isinstance(outputs, list)
                                or not all(isinstance(o, str) for o in outputs)):
        raise ctx.error("expected a list of strings", "info.task.outputs")
    return {"action_sets": [], "actions": out_actions, "communicate_info": outputs,
            "nl_assertions": None, "env_assertions_json": None, "reward_basis": None}


def _int(value: Any, ctx: _Ctx, field: str) -> int:
    if value is None:
        raise ctx.error("missing required value", field)
    if isinstance(value, bool) or not isinstance(value, int):
        raise ctx.error(f"expected an integer, got {value!r:.40}", field)
    return value


def _number(value: Any, ctx: _Ctx, field: str) -> float | None:
    if value is None:
        return None
    if (isinstance(value, bool) or not isinstance(value, int | float)
            or not math.isfinite(value)):
        raise ctx.error(f"expected a number, got {value!r:.40}", field)
    return float(value)


def _record(obj: Any, pos: int, ctx: _Ctx, meta: Mapping[str, Any], run: str,
            num_trials: int | None) -> dict[str, Any]:
    if not isinstance(obj, Mapping):
        raise ctx.error(f"expected a run record object, got {type(obj).__name__}", "(record)")
    task_id = _int(obj.get("task_id"), ctx, "task_id")
    trial = _int(obj.get("trial"), ctx, "trial")
    ctx.record = f"task {task_id} trial {trial} (item {pos})"
    if "traj" not in obj:
        raise ctx.error("missing required value: a τ-bench record needs 'traj'", "traj")
    traj = obj["traj"]
    if not isinstance(traj, list):
        raise ctx.error(f"expected a list of messages, got {type(traj).__name__}", "traj")
    info = obj.get("info") if obj.get("info") is not None else {}
    if not isinstance(info, Mapping):
        raise ctx.error(f"expected an object, got {type(info).__name__}", "info")
    reward = _number(obj.get("reward"), ctx, "reward")
    messages = [_message(m, i, ctx) for i, m in enumerate(traj)]
    error = info.get("error")
    if error is not None:
        termination = RUN_ERROR
        if not messages:
            payload = {"error": str(error), "traceback": info.get("traceback")}
            messages = [{"role": "system", "content": None, "turn_idx": 0, "sub_idx": 0,
                         "kind": None, "tool_calls": None, "tool_call_id": None,
                         "error": True, "event": RUN_ERROR,
                         "event_json": json.dumps(payload, ensure_ascii=False)}]
        if reward is None:
            reward = 0.0
    else:
        src = _text(info.get("source"), ctx, "info.source")
        termination = None if src is None else ("user_stop" if src == "user" else f"tool:{src}")
    if not messages:
        raise ctx.error("empty conversation: 'traj' is empty and 'info' has no 'error'",
                        "traj")
    task = info.get("task")
    if task is not None and not isinstance(task, Mapping):
        raise ctx.error(f"expected an object, got {type(task).__name__}", "info.task")
    reward_info = info.get("reward_info")
    if reward_info is not None and not isinstance(reward_info, Mapping):
        raise ctx.error(f"expected an object, got {type(reward_info).__name__}",
                        "info.reward_info")
    breakdown = None
    if isinstance(reward_info, Mapping) and isinstance(reward_info.get("info"), Mapping):
        breakdown = {k: v for k, v in reward_info["info"].items()
                     if k in ("r_actions", "r_outputs")}
    domain = meta["domain"]
    rec = empty_episode()
    rec.update(
        benchmark=BENCHMARK,
        domain=domain,
        scenario_id=f"{BENCHMARK}/{domain}/{task_id}",
        task_id=str(task_id),
        rollout=trial,
        episode_id=f"{BENCHMARK}/{run}/{task_id}/{trial}",
        agent_model=meta.get("agent_model"),
        method=meta.get("method"),
        user_model=meta.get("user_model"),
        user_implementation=meta.get("user_implementation"),
        source=ctx.source,
        split=meta.get("split"),
        instructions=_text(task.get("instruction"), ctx, "info.task.instruction")
        if task else None,
        messages=messages,
        num_trials=num_trials,
        criteria=_criteria(task, ctx) if task else None,
        termination_reason=termination,
        reward=reward,
        reward_breakdown_json=json.dumps(breakdown) if breakdown else None,
        reward_info_json=json.dumps(reward_info, ensure_ascii=False) if reward_info else None,
        user_cost=_number(info.get("user_cost"), ctx, "info.user_cost"),
    )
    check_converted(rec, ctx.error, whole="(record)")
    return rec


def read_taubench(obj: Any, *, source: str, errors: Literal["raise", "skip"] = "raise",
                  metadata: Mapping[str, Any] | None = None
                  ) -> list[dict[str, Any] | EpisodeValidationError]:
    """Convert a parsed τ-bench result list into canonical records.

    Parameters
    ----------
    obj : list
        The parsed JSON of a τ-bench result file.
    source : str
        The file it came from (its name is read for metadata; used in errors).
    errors : {"raise", "skip"}
        ``"raise"``: raise the first record's problem. ``"skip"``: return it in place of
        the record, so the caller can report it and keep the others.
    metadata : mapping, optional
        Values for :data:`METADATA_KEYS` that override what the file name and content
        suggest (e.g. ``{"agent_model": "gpt-4o", "domain": "airline"}``).

    Returns
    -------
    list
        One entry per record: a canonical episode, or (``errors="skip"``) the
        :class:`~accordkit.schema.EpisodeValidationError` naming file, record and field.
        Empty for an empty list whose file name follows ``run.py``'s pattern.

    Raises
    ------
    EpisodeValidationError
        ``obj`` is not a τ-bench list (an empty list counts as one only under a ``run.py``
        file name), the domain cannot be determined, ``metadata`` has an unknown key, or
        (``errors="raise"``) a record is bad.
    """
    if errors not in ("raise", "skip"):
        raise ValueError(f"errors must be 'raise' or 'skip', got {errors!r}")
    empty_run = isinstance(obj, list) and not obj and is_run_py_name(source)
    if not looks_like_taubench(obj) and not empty_run:
        hint = (" (an empty list is read as a run of 0 episodes only when its file name "
                "follows run.py's pattern)" if obj == [] else "")
        raise EpisodeValidationError("not a τ-bench result file: expected a list of "
                                     "{task_id, trial, reward, traj, info} records" + hint,
                                     source=source, record="(whole file)", field="(top level)")
    given = dict(metadata or {})
    unknown = sorted(set(given) - set(METADATA_KEYS))
    if unknown:
        raise EpisodeValidationError(f"unknown metadata key(s) {unknown}; expected some of "
                                     f"{list(METADATA_KEYS)}", source=source,
                                     record="(whole file)", field="(metadata)")
    if empty_run:
        return []
    meta: dict[str, Any] = metadata_from_filename(source)
    meta.update({k: v for k, v in given.items() if v is not None})
    if not meta.get("domain"):
        meta["domain"] = guess_domain(obj)
    if not meta.get("domain"):
        raise EpisodeValidationError(
            "cannot tell the τ-bench domain from the file name, tools or system prompt; "
            "give it with metadata={'domain': ...} (accordkit report: --set 'metadata={domain: ...}')", source=source,
            record="(whole file)", field="domain")
    if not meta.get("agent_model"):
        warnings.warn(
            f"{source}: the τ-bench file name does not say the agent model (not run.py's "
            "pattern nor {model}-{domain}.json), so agent_model is unknown; runs of several "
            "such files are one configuration in the tables, pooled; give the model with "
            "metadata={'agent_model': ...} (accordkit report: --set 'metadata={agent_model: ...}')", stacklevel=3)
    trials = {o.get("trial") for o in obj if isinstance(o, Mapping)
              and isinstance(o.get("trial"), int) and not isinstance(o.get("trial"), bool)}
    run = run_id(obj, source)
    out: list[dict[str, Any] | EpisodeValidationError] = []
    for pos, item in enumerate(obj):
        ctx = _Ctx(source, f"item {pos}")
        try:
            out.append(_record(item, pos, ctx, meta, run, len(trials) or None))
        except EpisodeValidationError as exc:
            if errors == "raise":
                raise
            out.append(exc)
    return out


class TaubenchDocument:
    """A parsed τ-bench result list (read by the ``json`` reader); the load's ``metadata=``
    fills what the file does not name.

    A τ-bench list is recognised by its content. An empty list ``[]`` has none, so it is
    claimed (:meth:`claims_empty`) only when its file name follows τ-bench ``run.py``'s
    pattern, which is what ``run.py`` writes for an empty task range; it loads as 0 episodes,
    with a note.
    """

    name = "taubench"

    def sniff(self, obj: Any) -> bool:
        return looks_like_taubench(obj)

    def claims_empty(self, source: str) -> bool:
        """Whether an empty JSON list read from ``source`` is a τ-bench run (by its name)."""
        return is_run_py_name(source)

    def read(self, obj: Any, input: Input, ctx: ReadContext,
             bad_lines: Sequence[int]) -> Iterator[Part]:
        source = input.name
        items = read_taubench(obj, source=source, errors="skip", metadata=ctx.options.metadata)
        for err in (i for i in items if isinstance(i, EpisodeValidationError)):
            ctx.problem(err)
        records = [i for i in items if isinstance(i, dict)]
        part = built_part(records, [str(r["episode_id"]) for r in records], source=source)
        if not obj:
            ctx.note(f"{source}: an empty τ-bench result list (run.py writes [] for an empty "
                     "task range or a run stopped before its first task ended): 0 episodes")
        if bad_lines:
            note_replaced(ctx, source, bad_lines, part.table)
        yield part
