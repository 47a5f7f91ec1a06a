"""Inspect logs (``.eval`` and ``.json`` written by inspect_ai) -> canonical episodes.

Read through inspect_ai's own reader (``inspect_ai.log``), an optional extra:
``pip install 'accordkit[inspect]'``; without it, an Inspect log is a problem of its file
that says so. The mapping (docs/formats.md):

* one sample and epoch is one episode: ``task_id`` = the sample's id, ``rollout`` = its
  epoch - 1 (Inspect counts epochs from 1, accordkit's trials from 0), ``num_trials`` = the
  log's epochs; ``episode_id`` = ``inspect/<eval_id>/<sample id>/<epoch>``;
* the benchmark and domain come from the task's name: inspect_evals' tau2 tasks
  (``tau2_airline``, ``inspect_evals/tau2_retail`` ...) are the catalogue's ``tau2`` entry,
  with their domain. A log of another task needs ``metadata={"benchmark": ..., "domain":
  ...}`` given to the load;
* ``agent_model`` = the log's model; ``user_model`` = its ``user`` model role, when it has one;
  ``method`` = its solver;
* the reward is the value of the task's first scorer (the first of the log's scorers that
  the sample has): ``"C"`` (correct) 1, ``"I"`` (incorrect) 0, ``"P"`` (partial) 0.5, ``"N"``
  (no answer) 0, ``True``/``False`` 1/0, a number as it is (it must lie in 0..1). Any other
  value (text, a dict of values) is a problem of that sample naming the scorer;
* messages -> the transcript: role, text, each assistant tool call (id, function, arguments
  as JSON text), each tool result's ``tool_call_id`` and error; a sample that raised gets
  ``termination_reason = "error"`` with the error as an event.

One bad sample is one problem naming the file, the sample and epoch, and the field; the other
samples load.
"""

from __future__ import annotations

import json
import math
import re
from collections.abc import Iterator, Mapping
from typing import Any

from ...schema import EpisodeValidationError, empty_episode
from ..check import TOP, WHOLE_FILE, Part, records_parts
from ..context import ReadContext
from ..inputs import HEAD_BYTES, Input

__all__ = ["InspectLog", "BENCHMARK", "TASKS", "SCORE_VALUES", "score_value", "task_benchmark",
           "sample_episode", "INSTALL_HINT"]

#: What to run when inspect_ai is missing.
INSTALL_HINT = "pip install 'accordkit[inspect]'"
#: The catalogue entry inspect_evals' tau2 tasks are.
BENCHMARK = "tau2"
#: inspect_evals' tau2 task names (without a registry prefix such as ``inspect_evals/``);
#: the domain is the name's last part.
TASKS = re.compile(r"^tau2[_-](?P<domain>airline|retail|telecom)$")
_JSON_LOG = re.compile(rb'^\s*\{\s*"version"\s*:\s*\d+\s*,\s*"status"\s*:')
#: Inspect's letter values -> reward.
SCORE_VALUES = {"C": 1.0, "I": 0.0, "P": 0.5, "N": 0.0}


class InspectLog:
    """An Inspect log file: ``.eval`` (a zip archive) or an Inspect ``.json`` log."""

    name = "inspect"
    cached = True
    version = "1"

    def sniff(self, input: Input) -> bool:
        path = (input.path or input.name).lower()
        head = input.head(HEAD_BYTES)
        if path.endswith(".eval"):
            return True
        # an Inspect JSON log starts {"version": 2, "status": ..., "eval": {...
        return _JSON_LOG.match(head.lstrip(b"\xef\xbb\xbf")) is not None

    def read(self, input: Input, ctx: ReadContext) -> Iterator[Part]:
        source = input.name
        try:
            from inspect_ai.log import read_eval_log, read_eval_log_samples
        except ImportError:
            raise EpisodeValidationError(
                f"an Inspect log: reading it needs inspect_ai, which is not installed "
                f"({INSTALL_HINT})", source=source, record=WHOLE_FILE, field=TOP) from None
        if input.local is None:
            raise EpisodeValidationError("Inspect logs are read from local files",
                                         source=source, record=WHOLE_FILE, field=TOP)
        try:
            header = read_eval_log(str(input.local), header_only=True)
        except Exception as exc:  # noqa: BLE001 - inspect_ai's own errors name no record
            raise EpisodeValidationError(
                f"not a readable Inspect log ({type(exc).__name__}: {str(exc)[:200]})",
                source=source, record=WHOLE_FILE, field=TOP) from None
        names = _names(header, source, ctx.options.metadata or {})
        if header.eval.dataset.sample_ids:     # what `inspect eval` writes: sample by sample
            samples = read_eval_log_samples(str(input.local), all_samples_required=False)
        else:                                   # a log written without them: read whole
            samples = read_eval_log(str(input.local)).samples or []
        yield from records_parts(_episodes(samples, header, names, source, ctx), ctx,
                                 source=source, batch=ctx.options.batch_rows)


def task_benchmark(task: str) -> tuple[str, str] | None:
    """The accordkit benchmark and domain of an Inspect task name, or None.

    Examples
    --------
    >>> task_benchmark("inspect_evals/tau2_airline")
    ('tau2', 'airline')
    >>> task_benchmark("gsm8k") is None
    True
    """
    m = TASKS.match(task.rsplit("/", 1)[-1])
    return (BENCHMARK, m["domain"]) if m else None


def _names(header: Any, source: str, given: Mapping[str, Any]) -> dict[str, Any]:
    """The canonical fields every episode of the log shares."""
    spec = header.eval
    found = task_benchmark(str(spec.task)) or (None, None)
    benchmark = given.get("benchmark") or found[0]
    domain = given.get("domain") or found[1]
    if not benchmark or not domain:
        raise EpisodeValidationError(
            f"the Inspect task {spec.task!r} is not one accordkit knows (inspect_evals' tau2 "
            "tasks are); give its benchmark and domain with metadata={'benchmark': ..., "
            "'domain': ...}", source=source, record=WHOLE_FILE, field="eval.task")
    roles = spec.model_roles or {}
    user = roles.get("user")
    user_model = getattr(user, "model", None) if user is not None else None
    scorers = [s.name for s in (spec.scorers or [])]
    names = {"benchmark": benchmark, "domain": domain, "agent_model": spec.model,
             "method": spec.solver, "user_model": user_model,
             "num_trials": int(spec.config.epochs or 1), "eval_id": spec.eval_id,
             "scorers": scorers}
    unknown = sorted(set(given) - set(empty_episode()))
    if unknown:
        raise EpisodeValidationError(f"unknown canonical field(s) {unknown} in metadata=",
                                     source=source, record=WHOLE_FILE, field="(metadata)")
    names["given"] = {k: v for k, v in given.items() if k not in ("benchmark", "domain")}
    return names


def score_value(value: Any, *, where: str = "value") -> float:
    """The reward of an Inspect score value (the module docstring states the rule).

    Examples
    --------
    >>> score_value("C"), score_value("I"), score_value(0.25), score_value(True)
    (1.0, 0.0, 0.25, 1.0)
    """
    if isinstance(value, bool):
        return float(value)
    if isinstance(value, str) and value in SCORE_VALUES:
        return SCORE_VALUES[value]
    if isinstance(value, int | float):
        if not math.isfinite(value) or not 0.0 <= value <= 1.0:
            raise ValueError(f"{where}: a numeric score must lie in 0..1, got {value!r}")
        return float(value)
    raise ValueError(f"{where}: expected 'C', 'I', 'P', 'N', a bool or a number in 0..1, "
                     f"got {value!r:.60}")


def _episodes(samples: Any, header: Any, names: Mapping[str, Any], source: str,
              ctx: ReadContext) -> Iterator[tuple[str, Any]]:
    for sample in samples:
        where = f"sample {sample.id} epoch {sample.epoch}"
        try:
            yield where, sample_episode(sample, names, source=source, record=where)
        except EpisodeValidationError as exc:
            ctx.problem(exc)


def _text(message: Any) -> str | None:
    text = getattr(message, "text", None)
    if isinstance(text, str):
        return text
    content = getattr(message, "content", None)
    return content if isinstance(content, str) else None


def sample_episode(sample: Any, names: Mapping[str, Any], *, source: str,
                   record: str) -> dict[str, Any]:
    """One Inspect sample (one epoch) as a canonical episode (see the module docstring)."""
    rec = empty_episode()
    benchmark, domain = names["benchmark"], names["domain"]
    task = str(sample.id)
    rec.update(
        benchmark=benchmark, domain=domain, task_id=task,
        scenario_id=f"{benchmark}/{domain}/{task}", rollout=int(sample.epoch) - 1,
        episode_id=f"inspect/{names['eval_id']}/{task}/{sample.epoch}",
        agent_model=names["agent_model"], method=names["method"],
        user_model=names["user_model"], num_trials=names["num_trials"],
        instructions=sample.input if isinstance(sample.input, str) else None,
        source=source,
    )
    rec["reward"] = _reward(sample, names["scorers"], source, record)
    messages = [_message(m, i) for i, m in enumerate(sample.messages or [])]
    if sample.error is not None:
        rec["termination_reason"] = "error"
        messages.append({"role": "system", "content": None, "turn_idx": len(messages),
                         "sub_idx": 0, "kind": None, "tool_calls": None, "tool_call_id": None,
                         "error": True, "event": "error",
                         "event_json": json.dumps({"message": str(sample.error.message)},
                                                  ensure_ascii=False)})
    rec["messages"] = messages
    rec.update(names["given"])
    return rec


def _reward(sample: Any, scorers: list[str], source: str, record: str) -> float | None:
    scores = sample.scores or {}
    if not scores:
        if sample.error is not None:
            return None
        raise EpisodeValidationError("the sample has no score", source=source, record=record,
                                     field="scores")
    name = next((s for s in scorers if s in scores), next(iter(scores)))
    try:
        return score_value(scores[name].value, where=f"scores.{name}.value")
    except ValueError as exc:
        raise EpisodeValidationError(str(exc).split(": ", 1)[1], source=source, record=record,
                                     field=f"scores.{name}.value") from None


def _message(message: Any, i: int) -> dict[str, Any]:
    role = message.role
    calls = None
    if role == "assistant" and getattr(message, "tool_calls", None):
        calls = [{"id": c.id, "name": c.function,
                  "arguments_json": json.dumps(c.arguments, ensure_ascii=False),
                  "requestor": "assistant"} for c in message.tool_calls]
    error = getattr(message, "error", None)
    return {"role": role, "content": _text(message), "turn_idx": i, "sub_idx": 0, "kind": None,
            "tool_calls": calls,
            "tool_call_id": getattr(message, "tool_call_id", None) if role == "tool" else None,
            "error": (error is not None) if role == "tool" else None,
            "event": None, "event_json": None}
