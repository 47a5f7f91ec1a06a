"""Every Eval Ever (EEE, schema 0.3.0) files: instance sidecars as episodes, aggregate records
as published scores.

EEE (the EvalEval coalition's shared schema) stores one **aggregate record** per evaluated
model (``<uuid>.json``: scores with their uncertainty) and, beside it, an **instance
sidecar** (``<uuid>_samples.jsonl``: one JSON object per item and trial). docs/formats.md
gives the mapping; in short:

* a sidecar line becomes one canonical episode. Lines accordkit wrote
  (:mod:`accordkit.interchange.eee`) carry the episode's canonical fields in ``metadata``
  (:data:`EPISODE_KEY`, :data:`MESSAGES_KEY`) and come back exactly as they were written.
  Other lines are mapped from EEE's own fields: ``sample_id`` is the task, the trial is
  ``metadata.trial`` (or ``metadata.epoch``; EEE has no trial field), the score is the
  reward, ``messages`` the transcript; the benchmark and domain come from the evaluation's
  name (``tau2``, ``tau-bench`` and a domain word), or from ``metadata=`` given to the load;
* an aggregate record read by :func:`accordkit.load` gives no episode (a note says to read it
  with :func:`read_published`, which makes it a tidy frame of published scores).

One bad line is one problem naming the file, the line and the field; the other lines load.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Iterator, Mapping, Sequence
from pathlib import Path
from typing import Any

from ...names import ROLES
from ...schema import EpisodeValidationError, empty_episode
from ..check import TOP, WHOLE_FILE, Part, records_parts
from ..context import ReadContext
from ..inputs import HEAD_BYTES, Input
from .text import decode_text

__all__ = ["EeeFile", "EEE_SCHEMA_VERSION", "TRIAL_KEY", "EPISODE_KEY", "MESSAGES_KEY",
           "ID_KEYS", "is_instance", "is_aggregate", "read_published", "PUBLISHED_COLUMNS",
           "instance_episode"]

#: The EEE schema version accordkit writes and reads.
EEE_SCHEMA_VERSION = "0.3.0"
#: ``metadata`` key of an instance line that holds the trial (EEE has no trial field).
TRIAL_KEY = "trial"
#: ``metadata`` keys of the lines accordkit writes: the canonical episode without its
#: messages and ``source`` (JSON text), and what EEE's messages do not hold of each message.
EPISODE_KEY = "accordkit_episode"
MESSAGES_KEY = "accordkit_messages"
#: Id columns copied as text into every instance line's ``metadata`` (for EEE's own tools).
ID_KEYS = ("benchmark", "domain", "task_id", "scenario_id", "episode_id", "agent_model",
           "method", "user_model", "user_implementation", "persona")

_INSTANCE_MARKS = (b'"sample_id"', b'"interaction_type"', b'"answer_attribution"')
_AGGREGATE_MARKS = (b'"evaluation_results"', b'"eval_library"', b'"source_metadata"',
                    b'"retrieved_timestamp"')
#: Evaluation names of other producers -> accordkit benchmark (first match wins).
_BENCHMARK_WORDS = (("agentchangebench", "agentchangebench"), ("tau2", "tau2"),
                    ("tau-bench", "taubench"), ("taubench", "taubench"),
                    ("tau_bench", "taubench"))
_DOMAIN_WORDS = ("airline", "retail", "telecom", "banking", "shop", "travel")


def _head(input: Input) -> bytes:
    return input.head(HEAD_BYTES).lstrip(b"\xef\xbb\xbf").lstrip()


def is_instance(head: bytes) -> bool:
    """Whether a file's first bytes are an EEE instance line.

    Examples
    --------
    >>> is_instance(b'{"schema_version": "0.3.0", "evaluation_id": "e", "sample_id": "1"}')
    True
    >>> is_instance(b'{"benchmark": "tau2", "episode_id": "x"}')
    False
    """
    first = head.split(b"\n", 1)[0]
    return (first.startswith(b"{") and b'"schema_version"' in first
            and b'"evaluation_id"' in first and any(m in first for m in _INSTANCE_MARKS))


def is_aggregate(head: bytes) -> bool:
    """Whether a file's first bytes are an EEE aggregate record.

    Examples
    --------
    >>> is_aggregate(b'{"schema_version": "0.3.0", "evaluation_id": "e", "eval_library": {}}')
    True
    """
    return (head.startswith(b"{") and b'"schema_version"' in head and b'"evaluation_id"' in head
            and any(m in head for m in _AGGREGATE_MARKS) and not is_instance(head))


class EeeFile:
    """An EEE instance sidecar (episodes) or aggregate record (no episodes; a note)."""

    name = "eee"
    #: what a file gives depends on its neighbour too (a sidecar reads the aggregate beside
    #: it; an aggregate with its sidecar beside it gives nothing): not kept in the cache
    cached = False

    def sniff(self, input: Input) -> bool:
        head = _head(input)
        return is_instance(head) or is_aggregate(head)

    def read(self, input: Input, ctx: ReadContext) -> Iterator[Part]:
        source = input.name
        text, _bad = decode_text(input.read_bytes(), source=source)
        if is_aggregate(_head(input)):
            if _sidecar_beside(input):
                # the companion of a sidecar the same load reads: its episodes come from there
                yield from records_parts([], ctx, source=source)
                return
            ctx.note(f"{source}: an Every Eval Ever aggregate record (published scores, no "
                     "episodes): 0 episodes; read it with accordkit.read_published, and its "
                     "episodes from its _samples.jsonl sidecar")
            yield from records_parts([], ctx, source=source)
            return
        aggregate = _aggregate_beside(input)
        yield from records_parts(_instances(text, source, ctx, aggregate), ctx, source=source,
                                 batch=ctx.options.batch_rows)


def _sidecar_beside(input: Input) -> bool:
    """Whether an aggregate record's ``<uuid>_samples.jsonl`` sidecar is beside it."""
    local = input.local
    return local is not None and local.name.endswith(".json") and \
        local.with_name(local.name[: -len(".json")] + "_samples.jsonl").is_file()


def _aggregate_beside(input: Input) -> dict[str, Any] | None:
    """The aggregate record a sidecar ``<uuid>_samples.jsonl`` belongs to (``<uuid>.json``
    in the same folder), when it is there and is one."""
    local = input.local
    if local is None or not local.name.endswith("_samples.jsonl"):
        return None
    path = local.with_name(local.name[: -len("_samples.jsonl")] + ".json")
    try:
        obj = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None
    return obj if isinstance(obj, dict) and "evaluation_results" in obj else None


def _instances(text: str, source: str, ctx: ReadContext,
               aggregate: Mapping[str, Any] | None) -> Iterator[tuple[str, Any]]:
    """``(line n, canonical record)`` of a sidecar; a bad line is a problem of its own."""
    override = dict(ctx.options.metadata or {})
    for n, line in enumerate(text.split("\n"), start=1):
        if not line.strip():
            continue
        where = f"line {n}"
        try:
            obj = json.loads(line)
        except (ValueError, RecursionError) as exc:
            ctx.problem(EpisodeValidationError(f"invalid JSON ({exc})", source=source,
                                               record=where, field=TOP))
            continue
        try:
            yield where, instance_episode(obj, source=source, record=where,
                                          aggregate=aggregate, metadata=override)
        except EpisodeValidationError as exc:
            ctx.problem(exc)


def _problem(reason: str, source: str, record: str, field: str) -> EpisodeValidationError:
    return EpisodeValidationError(reason, source=source, record=record, field=field)


def instance_episode(obj: Any, *, source: str, record: str,
                     aggregate: Mapping[str, Any] | None = None,
                     metadata: Mapping[str, Any] | None = None) -> dict[str, Any]:
    """One EEE instance line as a canonical episode.

    Parameters
    ----------
    obj : dict
        The parsed line.
    source, record : str
        The file and the line (named in errors).
    aggregate : dict, optional
        The aggregate record beside the sidecar (model name, scaffold).
    metadata : mapping, optional
        Canonical id fields that override what the line says (``benchmark``, ``domain``,
        ``agent_model`` ...): how a line of an evaluation accordkit cannot name is read.

    Raises
    ------
    EpisodeValidationError
        Naming the field that is missing or of the wrong type.
    """
    if not isinstance(obj, dict):
        raise _problem(f"expected an EEE instance object, found {type(obj).__name__}",
                       source, record, TOP)
    for key in ("evaluation_id", "sample_id", "evaluation", "model_id"):
        if key not in obj:
            raise _problem(f"missing required EEE field {key!r}", source, record, key)
    meta = obj.get("metadata") or {}
    if not isinstance(meta, dict):
        raise _problem("must be an object of text values", source, record, "metadata")
    evaluation = obj["evaluation"]
    if not isinstance(evaluation, dict):
        raise _problem("must be an object with 'score'", source, record, "evaluation")
    given = dict(metadata or {})
    unknown = sorted(set(given) - set(empty_episode()))
    if unknown:
        raise _problem(f"unknown canonical field(s) {unknown} in metadata=", source, record,
                       "(metadata)")
    if EPISODE_KEY in meta:
        rec = _accordkit_episode(obj, meta, source, record)
        rec.update(given)
    else:
        rec = _other_episode(obj, meta, source, record, aggregate, given)
    rec["source"] = source
    return rec


def _json_text(meta: Mapping[str, Any], key: str, source: str, record: str) -> Any:
    raw = meta.get(key)
    if not isinstance(raw, str):
        raise _problem("must be JSON text (as accordkit writes it)", source, record,
                       f"metadata.{key}")
    try:
        return json.loads(raw)
    except ValueError as exc:
        raise _problem(f"invalid JSON ({exc})", source, record, f"metadata.{key}") from None


def _accordkit_episode(obj: Mapping[str, Any], meta: Mapping[str, Any], source: str,
                       record: str) -> dict[str, Any]:
    """A line accordkit wrote: the canonical fields back exactly; the transcript's text from
    EEE's ``messages``, the rest of each message from :data:`MESSAGES_KEY`."""
    episode = _json_text(meta, EPISODE_KEY, source, record)
    extras = _json_text(meta, MESSAGES_KEY, source, record)
    if not isinstance(episode, dict):
        raise _problem("must hold an episode object", source, record, f"metadata.{EPISODE_KEY}")
    messages = obj.get("messages") or []
    if not isinstance(messages, list) or not isinstance(extras, list) \
            or len(extras) != len(messages):
        raise _problem(f"{len(extras) if isinstance(extras, list) else 'no'} message extras "
                       f"for {len(messages) if isinstance(messages, list) else 'no'} messages",
                       source, record, f"metadata.{MESSAGES_KEY}")
    rec = empty_episode()
    rec.update({k: v for k, v in episode.items() if k in rec})
    out = []
    for i, (message, extra) in enumerate(zip(messages, extras, strict=True)):
        if not isinstance(message, dict) or not isinstance(extra, dict):
            raise _problem("expected an object", source, record, f"messages[{i}]")
        out.append({**extra, "role": message.get("role"), "content": message.get("content")})
    rec["messages"] = out
    return rec


def _benchmark_of(names: Iterable[str]) -> tuple[str | None, str | None]:
    """The accordkit benchmark and domain an evaluation's names speak of, if any."""
    benchmark = domain = None
    for name in names:
        low = name.lower()
        if benchmark is None:
            benchmark = next((b for word, b in _BENCHMARK_WORDS if word in low), None)
        if domain is None:
            domain = next((d for d in _DOMAIN_WORDS if d in low), None)
    return benchmark, domain


def _other_episode(obj: Mapping[str, Any], meta: Mapping[str, Any], source: str, record: str,
                   aggregate: Mapping[str, Any] | None,
                   given: Mapping[str, Any]) -> dict[str, Any]:
    """A line another producer wrote, mapped from EEE's own fields (docs/formats.md)."""
    names = [str(obj.get("evaluation_name") or ""), str(obj.get("evaluation_id") or "")]
    model = aggregate.get("model_info", {}) if isinstance(aggregate, Mapping) else {}
    details = model.get("additional_details") if isinstance(model, Mapping) else None
    details = details if isinstance(details, Mapping) else {}
    benchmark, domain = _benchmark_of([str(meta.get("benchmark") or ""), *names])
    benchmark = given.get("benchmark") or benchmark
    domain = given.get("domain") or meta.get("domain") or domain
    sample = obj["sample_id"]
    if not isinstance(sample, str) or not sample:
        raise _problem("must be non-empty text", source, record, "sample_id")
    score = obj["evaluation"].get("score")
    if isinstance(score, bool) or not isinstance(score, int | float):
        raise _problem(f"must be a number, got {score!r:.40}", source, record,
                       "evaluation.score")
    trial_text = meta.get(TRIAL_KEY, meta.get("epoch"))
    rollout = None
    if trial_text is not None:
        try:
            rollout = int(str(trial_text))
        except ValueError:
            raise _problem(f"the trial must be a whole number, got {trial_text!r:.40}", source,
                           record, f"metadata.{TRIAL_KEY}") from None
    rec = empty_episode()
    rec.update(
        benchmark=benchmark, domain=domain, task_id=sample,
        scenario_id=f"{benchmark}/{domain}/{sample}" if benchmark and domain else None,
        rollout=rollout,
        episode_id=f"eee/{obj['evaluation_id']}/{sample}/{record.split()[-1]}",
        agent_model=str(obj["model_id"]),
        method=details.get("agent_scaffold") if isinstance(details.get("agent_scaffold"),
                                                           str) else None,
        reward=float(score),
        messages=_messages(obj.get("messages"), source, record),
    )
    rec.update({k: v for k, v in given.items() if k not in ("benchmark", "domain")})
    return _needs_names(rec, source, record)


def _needs_names(rec: dict[str, Any], source: str, record: str) -> dict[str, Any]:
    """Leave a missing benchmark or domain to the schema's check, with what to do."""
    for field in ("benchmark", "domain"):
        if rec[field] is None:
            raise _problem(
                f"cannot tell the accordkit {field} of this evaluation from its name; give it "
                f"with metadata={{'{field}': ...}} (accordkit knows tau2, tau-bench and "
                "AgentChangeBench evaluations)", source, record, "evaluation_name")
    return rec


def _messages(messages: Any, source: str, record: str) -> list[dict[str, Any]]:
    if messages is None:
        return []
    if not isinstance(messages, list):
        raise _problem("must be a list of messages", source, record, "messages")
    out = []
    for i, m in enumerate(messages):
        where = f"messages[{i}]"
        if not isinstance(m, dict):
            raise _problem("expected a message object", source, record, where)
        role = m.get("role")
        if role not in ROLES:
            raise _problem(f"role must be one of {list(ROLES)}, got {role!r:.40}", source,
                           record, f"{where}.role")
        calls = []
        for j, call in enumerate(m.get("tool_calls") or []):
            if not isinstance(call, dict) or not isinstance(call.get("name"), str):
                raise _problem("a tool call needs a name", source, record,
                               f"{where}.tool_calls[{j}]")
            args = call.get("arguments")
            calls.append({"id": call.get("id"), "name": call["name"],
                          "arguments_json": json.dumps(args if args is not None else {},
                                                       ensure_ascii=False),
                          "requestor": "assistant" if role == "assistant" else role})
        ids = m.get("tool_call_id")
        out.append({"role": role, "content": m.get("content"),
                    "turn_idx": m.get("turn_idx", i), "sub_idx": 0, "kind": None,
                    "tool_calls": calls or None,
                    "tool_call_id": ids[0] if isinstance(ids, list) and ids else None,
                    "error": None, "event": None, "event_json": None})
    return out


# --------------------------------------------------------------------------- published

#: The columns of :func:`read_published`, in order.
PUBLISHED_COLUMNS = (
    "file", "evaluation_id", "model_id", "model_name", "developer", "agent_scaffold",
    "source_name", "source_organization", "evaluator_relationship", "source_type",
    "eval_library", "eval_library_version", "retrieved_timestamp", "evaluation_name",
    "evaluation_result_id", "benchmark", "domain", "dataset_name", "metric_id",
    "metric_name", "k", "lower_is_better", "min_score", "max_score", "score", "ci_low",
    "ci_high", "confidence_level", "ci_method", "standard_error", "num_samples",
    "num_bootstrap_samples", "judge_models", "details_json",
)


def read_published(sources: str | Path | Sequence[str | Path], *,
                   errors: str = "raise") -> Any:
    """Every Eval Ever aggregate records as a tidy frame of published scores.

    One row per record and evaluation result: who published it (``source_name``,
    ``source_organization``, ``evaluator_relationship``), the model (``model_id``, the HAL
    leaderboard's ``agent_scaffold`` when given), the evaluation and its metric, the score
    and, when the record gives it, its uncertainty (``ci_low``, ``ci_high``,
    ``confidence_level``, ``ci_method``, ``standard_error``, ``num_samples``,
    ``num_bootstrap_samples``). ``benchmark`` and ``domain`` name the accordkit benchmark the
    evaluation is (``tau2``, ``taubench``, ...; null when it is none of them), so the frame
    sits beside your own run's table ("your run vs the published numbers").

    Parameters
    ----------
    sources : path, folder or list of them
        Aggregate ``.json`` files; a folder gives every ``.json`` below it that is an
        aggregate record (sidecars and other files are passed over).
    errors : {"raise", "skip"}
        ``"raise"``: a file that is not a valid aggregate record raises an
        :class:`~accordkit.schema.EpisodeValidationError` naming file, record and field.
        ``"skip"``: such a file is left out with a warning naming it; the others are read.

    Returns
    -------
    pandas.DataFrame
        The columns of :data:`PUBLISHED_COLUMNS`, sorted by file and result.
    """
    import warnings

    import pandas as pd

    if errors not in ("raise", "skip"):
        raise ValueError(f"errors must be 'raise' or 'skip', got {errors!r}")
    rows: list[dict[str, Any]] = []
    for path in _published_files(sources):
        try:
            rows.extend(_published_rows(path))
        except EpisodeValidationError as exc:
            if errors == "raise":
                raise
            warnings.warn(f"skipped: {exc}", UserWarning, stacklevel=2)
    frame = pd.DataFrame(rows, columns=list(PUBLISHED_COLUMNS))
    return frame.astype({"k": "Int64", "num_samples": "Int64",
                         "num_bootstrap_samples": "Int64"})


def _published_files(sources: str | Path | Sequence[str | Path]) -> list[Path]:
    items = [sources] if isinstance(sources, str | Path) else list(sources)
    out: list[Path] = []
    for item in items:
        path = Path(item)
        if path.is_dir():
            for found in sorted(path.rglob("*.json")):
                with found.open("rb") as fh:
                    head = fh.read(HEAD_BYTES).lstrip(b"\xef\xbb\xbf").lstrip()
                if is_aggregate(head):
                    out.append(found)
        elif path.is_file():
            out.append(path)
        else:
            raise EpisodeValidationError("no such file or folder", source=str(path),
                                         record=WHOLE_FILE, field=TOP)
    return out


def _text(value: Any) -> str | None:
    return value if isinstance(value, str) else None


def _number(value: Any) -> float | None:
    return float(value) if isinstance(value, int | float) and not isinstance(value, bool) \
        else None


def _published_rows(path: Path) -> list[dict[str, Any]]:
    source = str(path)
    try:
        obj = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError, RecursionError) as exc:
        raise EpisodeValidationError(f"could not be read as JSON ({exc})", source=source,
                                     record=WHOLE_FILE, field=TOP) from None
    if not isinstance(obj, dict):
        raise EpisodeValidationError("not an EEE aggregate record (expected an object)",
                                     source=source, record=WHOLE_FILE, field=TOP)
    for key in ("evaluation_id", "model_info", "evaluation_results"):
        if key not in obj:
            raise EpisodeValidationError(f"missing required EEE field {key!r}", source=source,
                                         record=WHOLE_FILE, field=key)
    results = obj["evaluation_results"]
    if not isinstance(results, list):
        raise EpisodeValidationError("must be a list", source=source, record=WHOLE_FILE,
                                     field="evaluation_results")
    model = obj["model_info"] if isinstance(obj["model_info"], dict) else {}
    model_details = model.get("additional_details") or {}
    meta = obj.get("source_metadata") or {}
    library = obj.get("eval_library") or {}
    common = {
        "file": source, "evaluation_id": _text(obj["evaluation_id"]),
        "model_id": _text(model.get("id")), "model_name": _text(model.get("name")),
        "developer": _text(model.get("developer")),
        "agent_scaffold": _text(model_details.get("agent_scaffold")
                                if isinstance(model_details, dict) else None),
        "source_name": _text(meta.get("source_name")),
        "source_organization": _text(meta.get("source_organization_name")),
        "evaluator_relationship": _text(meta.get("evaluator_relationship")),
        "source_type": _text(meta.get("source_type")),
        "eval_library": _text(library.get("name")),
        "eval_library_version": _text(library.get("version")),
        "retrieved_timestamp": _text(obj.get("retrieved_timestamp")),
    }
    rows = []
    for i, result in enumerate(results):
        where = f"evaluation_results[{i}]"
        if not isinstance(result, dict):
            raise EpisodeValidationError("expected an object", source=source, record=where,
                                         field=TOP)
        details = result.get("score_details")
        score = _number(details.get("score")) if isinstance(details, dict) else None
        if score is None:
            raise EpisodeValidationError("must be a number", source=source, record=where,
                                         field="score_details.score")
        config = result.get("metric_config") if isinstance(result.get("metric_config"),
                                                             dict) else {}
        extra = config.get("additional_details") if isinstance(
            config.get("additional_details"), dict) else {}
        data = result.get("source_data") if isinstance(result.get("source_data"),
                                                       dict) else {}
        name = _text(result.get("evaluation_name"))
        guessed_benchmark, guessed_domain = _benchmark_of(
            [name or "", _text(data.get("dataset_name")) or "", common["evaluation_id"] or ""])
        unc = details.get("uncertainty") if isinstance(details.get("uncertainty"), dict) else {}
        ci = unc.get("confidence_interval") if isinstance(unc.get("confidence_interval"),
                                                          dict) else {}
        se = unc.get("standard_error") if isinstance(unc.get("standard_error"), dict) else {}
        params = config.get("metric_parameters") if isinstance(
            config.get("metric_parameters"), dict) else {}
        scoring = config.get("llm_scoring") if isinstance(config.get("llm_scoring"),
                                                          dict) else {}
        judges = [j.get("model_info", {}).get("id") for j in scoring.get("judges") or []
                  if isinstance(j, dict) and isinstance(j.get("model_info"), dict)]
        k = params.get("k")
        rows.append({
            **common,
            "evaluation_name": name,
            "evaluation_result_id": _text(result.get("evaluation_result_id")),
            "benchmark": _text(extra.get("benchmark")) or guessed_benchmark,
            "domain": _text(extra.get("domain")) or guessed_domain,
            "dataset_name": _text(data.get("dataset_name")),
            "metric_id": _text(config.get("metric_id")),
            "metric_name": _text(config.get("metric_name")),
            "k": int(k) if isinstance(k, int) and not isinstance(k, bool) else None,
            "lower_is_better": config.get("lower_is_better")
            if isinstance(config.get("lower_is_better"), bool) else None,
            "min_score": _number(config.get("min_score")),
            "max_score": _number(config.get("max_score")),
            "score": score,
            "ci_low": _number(ci.get("lower")), "ci_high": _number(ci.get("upper")),
            "confidence_level": _number(ci.get("confidence_level")),
            "ci_method": _text(ci.get("method")),
            "standard_error": _number(se.get("value")),
            "num_samples": unc.get("num_samples") if isinstance(unc.get("num_samples"), int)
            else None,
            "num_bootstrap_samples": unc.get("num_bootstrap_samples")
            if isinstance(unc.get("num_bootstrap_samples"), int) else None,
            "judge_models": ", ".join(j for j in judges if isinstance(j, str)) or None,
            "details_json": json.dumps(details.get("details"), sort_keys=True)
            if isinstance(details.get("details"), dict) else None,
        })
    return rows
