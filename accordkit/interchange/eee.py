"""Scored episodes -> Every Eval Ever (schema 0.3.0): aggregate records and instance sidecars.

One aggregate record per configuration (benchmark x agent model x method x user model x user
implementation) and, beside it, its instance sidecar, laid out as the EEE datastore lays
them out::

    <root>/data/accordkit-<benchmark>/<developer>/<model>/<uuid>.json
    <root>/data/accordkit-<benchmark>/<developer>/<model>/<uuid>_samples.jsonl

The aggregate holds accordkit's headline metrics of the benchmark (the catalogue's
``comparison_metrics``, and pass^k for k = 1 .. the trials run for tau2-format benchmarks),
one result per domain and metric, each with its cluster-bootstrap interval (tasks are the
clusters) in ``score_details.uncertainty``; a metric a stored LLM judge's verdicts scored
names the judge model in ``metric_config.llm_scoring``. The sidecar holds one line per
episode: the conversation as ``agentic`` messages, the reward as the score, the trial in
``metadata.trial`` (EEE has no trial field) and the canonical episode in ``metadata`` so
that :func:`accordkit.load` gives it back exactly. The sidecar's SHA-256 and row count are
in the aggregate's ``detailed_evaluation_results``.

Writing is deterministic but for ``retrieved_timestamp`` (when the record was made; pass
``timestamp=`` to fix it): the uuid and ``evaluation_id`` are digests of the configuration
and its episode ids.
"""

from __future__ import annotations

import hashlib
import json
import math
import re
import time
import uuid
import warnings
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from importlib.metadata import PackageNotFoundError, version
from pathlib import Path
from typing import Any

import pandas as pd

from .._internal.arrow import arrow_table
from ..benchmarks import entry
from ..ingest.formats.eee import (
    EEE_SCHEMA_VERSION,
    EPISODE_KEY,
    ID_KEYS,
    MESSAGES_KEY,
    TRIAL_KEY,
)
from ..names import CONFIG_COLUMNS
from ..schema import SCHEMA_VERSION
from ..score import score
from ..stats.summarize import summarize
from ..tables.passk import pass_hat_k

__all__ = ["write_eee", "eee_records", "EeeRecord", "RELATIONSHIPS", "JUDGED_METRICS"]

#: EEE's ``evaluator_relationship`` values.
RELATIONSHIPS = ("first_party", "third_party", "collaborative", "other")
#: Headline metric -> the accordkit judge whose verdicts score it (when verdicts are given).
JUDGED_METRICS = {"tsr": "nl_assertions", "n_recovered/n_shifts": "gsrt",
                  "outcome_score": "outcome", "task_score": "outcome"}
_UNSAFE = re.compile(r"[^A-Za-z0-9._-]+")
_NOT_TRANSCRIPT = ("messages", "source")


@dataclass(frozen=True)
class EeeRecord:
    """One configuration in EEE: its aggregate record and its sidecar's lines.

    Attributes
    ----------
    folder : str
        The datastore folder, ``data/<collection>/<developer>/<model>``.
    uuid : str
        The file stem of both files.
    aggregate : dict
        The aggregate record.
    lines : list of str
        The sidecar's lines (JSON text, without newlines).
    """

    folder: str
    uuid: str
    aggregate: dict[str, Any]
    lines: list[str]

    @property
    def aggregate_path(self) -> str:
        return f"{self.folder}/{self.uuid}.json"

    @property
    def samples_path(self) -> str:
        return f"{self.folder}/{self.uuid}_samples.jsonl"

    def samples_bytes(self) -> bytes:
        return "".join(line + "\n" for line in self.lines).encode("utf-8")


def _accordkit_version() -> str:
    try:
        return version("accordkit")
    except PackageNotFoundError:  # pragma: no cover - run from a clone without install
        return "unknown"


def _model_id(agent_model: Any) -> str:
    """The HF-style ``developer/model`` id of an agent model (``unknown/`` when it names no
    developer)."""
    name = str(agent_model) if agent_model else "unknown"
    return name if "/" in name else f"unknown/{name}"


def _component(text: str) -> str:
    return _UNSAFE.sub("-", text).strip("-.") or "unknown"


def _uuid(key: Any) -> str:
    digest = hashlib.sha256(json.dumps(key, sort_keys=True).encode()).digest()
    return str(uuid.UUID(bytes=digest[:16], version=4))


def _metric_name(metric: str | tuple[str, str]) -> str:
    return metric if isinstance(metric, str) else "/".join(metric)


def _finite(value: Any) -> bool:
    """Whether ``value`` is a finite number (a bool is not one)."""
    if value is None or isinstance(value, bool | str) or type(value).__name__ == "bool_":
        return False
    try:
        return math.isfinite(float(value))
    except (TypeError, ValueError):
        return False


def eee_records(ds: Any, *, timestamp: float | str | None = None,
                organization: str = "unknown", relationship: str = "third_party",
                verdicts: pd.DataFrame | None = None, method: str = "bca",
                confidence: float = 0.95, n_resamples: int = 10_000,
                seed: int = 0) -> list[EeeRecord]:
    """The EEE aggregate records and sidecars of scored episodes, one per configuration.

    Parameters
    ----------
    ds : datasets.Dataset
        Canonical episodes (:func:`accordkit.load`).
    timestamp : float or str, optional
        ``retrieved_timestamp`` (Unix seconds); now when not given.
    organization : str
        ``source_metadata.source_organization_name``: who publishes the numbers.
    relationship : {"first_party", "third_party", "collaborative", "other"}
        ``evaluator_relationship``: who ran the evaluation, relative to the model's developer.
    verdicts : pandas.DataFrame, optional
        Stored judge verdicts (:func:`accordkit.read_verdicts`), applied as
        :func:`accordkit.score` applies them; their judge models and prompts go in the
        ``llm_scoring`` of the metrics they score.
    method, confidence, n_resamples, seed
        The intervals (:func:`accordkit.summarize`; tasks are the clusters).

    Returns
    -------
    list of EeeRecord
        Sorted by aggregate path.
    """
    if relationship not in RELATIONSHIPS:
        raise ValueError(f"relationship must be one of {list(RELATIONSHIPS)}, "
                         f"got {relationship!r}")
    stamp = str(time.time() if timestamp is None else timestamp)
    rows = arrow_table(ds).to_pylist()
    scores = score(ds, verdicts=verdicts) if rows else pd.DataFrame()
    by_id = {e: i for i, e in enumerate(scores["episode_id"])} if rows else {}
    groups: dict[tuple[Any, ...], list[int]] = {}
    for i, row in enumerate(rows):
        key = (row["benchmark"], *(row[c] for c in CONFIG_COLUMNS))
        groups.setdefault(key, []).append(i)
    settings = {"method": method, "confidence": confidence, "n_resamples": n_resamples,
                "seed": seed}
    out = []
    for key, idx in groups.items():
        group_rows = [rows[i] for i in idx]
        frame = scores.iloc[[by_id[r["episode_id"]] for r in group_rows]].reset_index(
            drop=True)
        out.append(_record(key, group_rows, frame, stamp=stamp, organization=organization,
                           relationship=relationship, verdicts=verdicts, settings=settings))
    return sorted(out, key=lambda r: r.aggregate_path)


def write_eee(ds: Any, root: str | Path, **options: Any) -> list[Path]:
    """Write :func:`eee_records` under ``root`` (the datastore layout); return the aggregate
    files written. ``options`` are those of :func:`eee_records`."""
    root = Path(root)
    written = []
    for rec in eee_records(ds, **options):
        folder = root / rec.folder
        folder.mkdir(parents=True, exist_ok=True)
        (root / rec.samples_path).write_bytes(rec.samples_bytes())
        path = root / rec.aggregate_path
        path.write_text(json.dumps(rec.aggregate, indent=2, ensure_ascii=False) + "\n",
                        encoding="utf-8")
        written.append(path)
    return written


def _record(key: tuple[Any, ...], rows: list[dict[str, Any]], frame: pd.DataFrame, *,
            stamp: str, organization: str, relationship: str,
            verdicts: pd.DataFrame | None, settings: Mapping[str, Any]) -> EeeRecord:
    benchmark, agent_model, method, user_model, user_impl = key
    bench = entry(benchmark)
    model_id = _model_id(agent_model)
    developer, model = model_id.split("/")[0], model_id.split("/")[-1]
    collection = f"accordkit-{benchmark}"
    folder = f"data/{_component(collection)}/{_component(developer)}/{_component(model)}"
    file_uuid = _uuid([list(map(str, key)), sorted(str(r["episode_id"]) for r in rows)])
    evaluation_id = f"{collection}/{model_id}/{file_uuid}"
    results = _results(bench, frame, verdicts, settings)
    score_metric = _score_metric(bench)
    result_ids = {r["evaluation_result_id"] for r in results}
    lines = [_line(row, frame.iloc[i], bench, evaluation_id, model_id, score_metric,
                   result_ids) for i, row in enumerate(rows)]
    details = {"deployment_type": "unknown", "model_availability": "unknown"}
    details.update({name: str(value) for name, value in (
        ("agent_scaffold", method), ("user_model", user_model),
        ("user_implementation", user_impl)) if value is not None})
    rec = EeeRecord(folder, file_uuid, {}, lines)
    aggregate = {
        "schema_version": EEE_SCHEMA_VERSION,
        "evaluation_id": evaluation_id,
        "retrieved_timestamp": stamp,
        "source_metadata": {
            "source_name": f"accordkit re-scoring of {bench.name} episodes",
            "source_type": "evaluation_run",
            "source_organization_name": organization,
            "evaluator_relationship": relationship,
        },
        "eval_library": {
            "name": "accordkit", "version": _accordkit_version(),
            "additional_details": {"episodes_from": bench.upstream,
                                   "episode_schema": SCHEMA_VERSION},
        },
        "model_info": {"name": str(agent_model) if agent_model else "unknown",
                       "id": model_id, "developer": developer,
                       "additional_details": details},
        "evaluation_results": results,
        "detailed_evaluation_results": {
            "format": "jsonl", "file_path": rec.samples_path, "hash_algorithm": "sha256",
            "checksum": hashlib.sha256(rec.samples_bytes()).hexdigest(),
            "total_rows": len(lines),
        },
    }
    return EeeRecord(folder, file_uuid, aggregate, lines)


def _score_metric(bench: Any) -> str:
    """The metric each episode's EEE ``score`` is: the reward, else the first headline
    metric that is a column."""
    if bench.reward_range is not None:
        return "reward"
    return next(m for m in bench.comparison_metrics if isinstance(m, str))


def _caught(run: Any) -> tuple[Any, list[str]]:
    """``run()``, with the warnings it emits returned as text (they go in the record)."""
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        value = run()
    return value, [str(w.message) for w in caught]


def _results(bench: Any, frame: pd.DataFrame, verdicts: pd.DataFrame | None,
             settings: Mapping[str, Any]) -> list[dict[str, Any]]:
    metrics = [m for m in bench.comparison_metrics
               if all(c in frame.columns for c in ((m,) if isinstance(m, str) else m))]
    ci_text = (f"cluster bootstrap ({settings['method']}), clusters = tasks (scenario_id)")
    table, notes = _caught(lambda: summarize(
        frame, metrics, by=["domain"], cluster="scenario_id", method=settings["method"],
        confidence=settings["confidence"], n_resamples=settings["n_resamples"],
        seed=settings["seed"]))
    judged = _judges(frame, verdicts)
    out = []
    for _, row in table.iterrows():
        name = str(row["metric"])
        if not _finite(row["estimate"]):
            continue
        out.append(_result(bench, str(row["domain"]), name, row, notes, ci_text,
                           judged.get(JUDGED_METRICS.get(name, ""))))
    if bench.tau2_format and "success" in frame.columns:
        passk, pnotes = _caught(lambda: pass_hat_k(
            frame, by=["domain"], ci=True, method=settings["method"],
            confidence=settings["confidence"], n_resamples=settings["n_resamples"],
            seed=settings["seed"]))
        for _, row in passk.iterrows():
            if not _finite(row["pass_hat_k"]):
                continue
            out.append(_passk_result(bench, row, pnotes, ci_text, settings))
    return sorted(out, key=lambda r: (r["evaluation_name"], r["evaluation_result_id"]))


def _ci(low: Any, high: Any, level: float, method: str) -> dict[str, Any] | None:
    if not (_finite(low) and _finite(high)):
        return None
    return {"lower": float(low), "upper": float(high), "confidence_level": float(level),
            "method": method}


def _source_data(bench: Any, domain: str) -> dict[str, Any]:
    return {"dataset_name": f"{bench.name} {domain}", "source_type": "other",
            "additional_details": {"upstream": bench.upstream, "benchmark": bench.id,
                                   "domain": domain}}


def _result(bench: Any, domain: str, name: str, row: pd.Series, notes: list[str],
            ci_text: str, judge: dict[str, Any] | None) -> dict[str, Any]:
    uncertainty: dict[str, Any] = {"num_samples": int(row["n_events"]),
                                   "num_bootstrap_samples": int(row["n_resamples"])}
    ci = _ci(row["ci_low"], row["ci_high"], row["confidence"],
             f"{ci_text}; interval used: {row['ci_method']}")
    if ci is not None:
        uncertainty["confidence_interval"] = ci
    details = {"n_clusters": str(int(row["n_clusters"])), "n_rows": str(int(row["n_rows"])),
               "seed": str(int(row["seed"])), "stat": str(row["stat"])}
    mine = [n for n in notes if repr(name) in n]
    if mine:
        details["interval_notes"] = " | ".join(mine)
    config: dict[str, Any] = {
        "evaluation_description": f"accordkit's {name} on {bench.name} {domain}",
        "metric_id": f"accordkit.{name}", "metric_name": name,
        "metric_kind": "mean" if row["stat"] == "mean" else str(row["stat"]),
        "metric_unit": "proportion", "lower_is_better": False, "score_type": "continuous",
        "min_score": 0.0, "max_score": 1.0,
        "additional_details": {"benchmark": bench.id, "domain": domain,
                               "accordkit_metric": name},
    }
    if judge is not None:
        config["llm_scoring"] = judge
    return {
        "evaluation_result_id": f"{bench.id}.{domain}.{name}",
        "evaluation_name": f"{bench.id}.{domain}",
        "source_data": _source_data(bench, domain),
        "metric_config": config,
        "score_details": {"score": float(row["estimate"]), "details": details,
                          "uncertainty": uncertainty},
    }


def _passk_result(bench: Any, row: pd.Series, notes: list[str], ci_text: str,
                  settings: Mapping[str, Any]) -> dict[str, Any]:
    domain, k = str(row["domain"]), int(row["k"])
    uncertainty: dict[str, Any] = {"num_samples": int(row["n_tasks"]),
                                   "num_bootstrap_samples": int(settings["n_resamples"])}
    ci = _ci(row["ci_low"], row["ci_high"], settings["confidence"],
             f"{ci_text}; interval used: {row['ci_method']}")
    if ci is not None:
        uncertainty["confidence_interval"] = ci
    details = {"n_tasks": str(int(row["n_tasks"])), "n_episodes": str(int(row["n_episodes"])),
               "n_excluded": str(int(row["n_excluded"])), "pass_at_k": repr(float(
                   row["pass_at_k"])), "trial_field": f"metadata.{TRIAL_KEY}",
               "seed": str(int(settings["seed"]))}
    if notes:
        details["interval_notes"] = " | ".join(notes)
    return {
        "evaluation_result_id": f"{bench.id}.{domain}.pass_hat_k.{k}",
        "evaluation_name": f"{bench.id}.{domain}",
        "source_data": _source_data(bench, domain),
        "metric_config": {
            "evaluation_description": f"pass^{k} on {bench.name} {domain}: the chance that "
                                      f"{k} trials of a task all succeed, averaged over tasks",
            "metric_id": "pass_hat_k", "metric_name": f"pass^{k}", "metric_kind": "pass_rate",
            "metric_unit": "proportion", "metric_parameters": {"k": k},
            "lower_is_better": False, "score_type": "continuous", "min_score": 0.0,
            "max_score": 1.0,
            "additional_details": {"benchmark": bench.id, "domain": domain,
                                   "accordkit_metric": "pass_hat_k"},
        },
        "score_details": {"score": float(row["pass_hat_k"]), "details": details,
                          "uncertainty": uncertainty},
    }


def _judges(frame: pd.DataFrame, verdicts: pd.DataFrame | None) -> dict[str, dict[str, Any]]:
    """judge -> the ``llm_scoring`` of the metrics its verdicts on these episodes scored."""
    if verdicts is None or verdicts.empty or "judge_model" not in verdicts:
        return {}
    mine = verdicts[verdicts["episode_id"].isin(set(frame["episode_id"]))]
    out: dict[str, dict[str, Any]] = {}
    for judge, part in mine.groupby("judge", sort=True):
        models = sorted({str(m) for m in part["judge_model"].dropna()})
        prompts = sorted({(str(p), str(v)) for p, v in zip(
            part.get("prompt_id", pd.Series(dtype=object)).dropna(),
            part.get("prompt_version", pd.Series(dtype=object)).dropna(), strict=False)})
        if not models:
            continue
        out[str(judge)] = {
            "judges": [{"model_info": {"name": m, "id": _model_id(m), "additional_details": {
                "deployment_type": "unknown", "model_availability": "unknown"}}}
                for m in models],
            "input_prompt": _prompt_text(prompts, str(judge)),
            "additional_details": {"accordkit_judge": str(judge),
                                   "prompts": ", ".join(f"{p}@{v}" for p, v in prompts)},
        }
    return out


def _prompt_text(prompts: Sequence[tuple[str, str]], judge: str) -> str:
    """The judging prompt template(s) (system and user text) the verdicts name."""
    from ..judges.prompts import load_prompt

    texts = []
    for prompt_id, _version in prompts or [(judge, "")]:
        try:
            template = load_prompt(prompt_id)
        except (KeyError, ValueError):
            texts.append(f"(prompt {prompt_id!r} is not one of accordkit's packaged prompts)")
            continue
        texts.append(f"[system]\n{template.system}\n[user]\n{template.user}")
    return "\n\n".join(texts)


def _eee_messages(messages: list[dict[str, Any]]) -> tuple[list[dict[str, Any]], list[Any]]:
    """Canonical messages -> EEE messages, and what EEE's messages do not hold of each."""
    eee, extras = [], []
    for i, m in enumerate(messages):
        calls = []
        for j, call in enumerate(m.get("tool_calls") or []):
            calls.append({"id": call.get("id") or f"call-{i}-{j}", "name": call.get("name") or "",
                          "arguments": _text_arguments(call.get("arguments_json"))})
        message: dict[str, Any] = {"turn_idx": i, "role": m.get("role") or "",
                                   "content": m.get("content")}
        if calls:
            message["tool_calls"] = calls
        if m.get("tool_call_id") is not None:
            message["tool_call_id"] = [str(m["tool_call_id"])]
        eee.append(message)
        extras.append({k: v for k, v in m.items() if k not in ("role", "content")})
    return eee, extras


def _text_arguments(text: Any) -> dict[str, str] | None:
    """Tool-call arguments as EEE wants them (every value text: JSON for the others)."""
    try:
        args = json.loads(text) if isinstance(text, str) else None
    except ValueError:
        return None
    if not isinstance(args, dict):
        return None
    return {str(k): v if isinstance(v, str) else json.dumps(v, ensure_ascii=False)
            for k, v in args.items()}


def _line(row: dict[str, Any], scores: pd.Series, bench: Any, evaluation_id: str,
          model_id: str, score_metric: str, result_ids: set[str]) -> str:
    messages, extras = _eee_messages(row.get("messages") or [])
    value = scores.get(score_metric)
    meta = {k: str(row[k]) for k in ID_KEYS if row.get(k) is not None}
    if row.get("rollout") is not None:
        meta[TRIAL_KEY] = str(row["rollout"])
    if not _finite(value):
        meta["score_missing"] = f"{score_metric} is not recorded; score 0 stands in"
        value = 0.0
    correct = scores.get(bench.binary_metric)
    meta[EPISODE_KEY] = json.dumps({k: v for k, v in row.items() if k not in _NOT_TRANSCRIPT},
                                   ensure_ascii=False, separators=(",", ":"))
    meta[MESSAGES_KEY] = json.dumps(extras, ensure_ascii=False, separators=(",", ":"))
    criteria = row.get("criteria") or {}
    reference = [f"{a.get('name')} {a.get('arguments_json')}"
                 for a in criteria.get("actions") or []]
    reference += [str(c) for c in criteria.get("communicate_info") or []]
    domain = row.get("domain")
    result_id = f"{bench.id}.{domain}.{score_metric}"
    line: dict[str, Any] = {
        "schema_version": EEE_SCHEMA_VERSION,
        "evaluation_id": evaluation_id,
        "model_id": model_id,
        "evaluation_name": f"{bench.id}.{domain}",
    }
    if result_id in result_ids:
        line["evaluation_result_id"] = result_id
    n_calls = sum(len(m.get("tool_calls") or []) for m in messages)
    line.update({
        "sample_id": str(row.get("task_id")),
        "interaction_type": "agentic",
        "input": {"raw": row.get("instructions") or "", "reference": reference},
        "output": None,
        "messages": messages,
        "answer_attribution": [],
        "evaluation": {"score": float(value),
                       "is_correct": bool(correct) if correct is not None
                       and not pd.isna(correct) else False,
                       "num_turns": len(messages) or None, "tool_calls_count": n_calls},
        "metadata": meta,
    })
    return json.dumps(line, ensure_ascii=False, separators=(",", ":"))
