"""tau2 result files with the shapes published runs have (spec ``tau2-format.md`` §12), made
from a real released file: the public files themselves stay outside the repository."""

from __future__ import annotations

import copy
import json
from pathlib import Path
from typing import Any

#: How deep the hostile arguments nest (issue 41: 500 levels load, then broke the diff).
DEEP = 500


def read(template: Path) -> dict[str, Any]:
    return json.loads(Path(template).read_text(encoding="utf-8"))


def write(raw: dict[str, Any], path: Path) -> Path:
    path.write_text(json.dumps(raw), encoding="utf-8")
    return path


def renumbered(raw: dict[str, Any]) -> dict[str, Any]:
    """Every simulation names the next task of the file (as leaderboard uploads made with a
    modified runner do): its stored checks and reward stay those of the task it ran."""
    out = copy.deepcopy(raw)
    ids = [t["id"] for t in out["tasks"]]
    following = dict(zip(ids, ids[1:] + ids[:1], strict=True))
    for sim in out["simulations"]:
        sim["task_id"] = following[sim["task_id"]]
    return out


def without_calls(raw: dict[str, Any], sims: list[int] | None = None) -> dict[str, Any]:
    """The simulations ``sims`` (all by default) with every tool call and tool message
    removed, as a run whose agent never called a tool."""
    out = copy.deepcopy(raw)
    for i, sim in enumerate(out["simulations"]):
        if sims is not None and i not in sims:
            continue
        kept = []
        for msg in sim["messages"]:
            if msg.get("role") == "tool":
                continue
            msg = dict(msg, tool_calls=None)
            if msg.get("role") in ("assistant", "user") and not msg.get("content"):
                msg["content"] = "..."
            kept.append(msg)
        for k, msg in enumerate(kept):
            msg["turn_idx"] = k
        sim["messages"] = kept
    return out


def acceptable_outcomes(raw: dict[str, Any], task_id: str) -> dict[str, Any]:
    """Task ``task_id`` written as the fork writes it: ``actions: null`` and several
    acceptable action lists (its own actions, and them without the last)."""
    out = copy.deepcopy(raw)
    for task in out["tasks"]:
        if task["id"] == task_id:
            ec = task["evaluation_criteria"]
            actions = ec["actions"]
            ec["actions"] = None
            ec["acceptable_outcomes"] = [{"actions": actions}, {"actions": actions[:-1]}]
    return out


def nested(depth: int) -> dict[str, Any]:
    value: dict[str, Any] = {}
    for _ in range(depth):
        value = {"k": value}
    return value


def deep_arguments(raw: dict[str, Any], sim: int, depth: int = DEEP) -> dict[str, Any]:
    """Simulation ``sim``'s first tool call with arguments nested ``depth`` levels deep
    (beside its own arguments)."""
    out = copy.deepcopy(raw)
    for msg in out["simulations"][sim]["messages"]:
        if msg.get("tool_calls"):
            msg["tool_calls"][0]["arguments"] = dict(msg["tool_calls"][0]["arguments"],
                                                    deep=nested(depth))
            return out
    raise ValueError(f"simulation {sim} has no tool call")


def strip_checks(raw: dict[str, Any]) -> dict[str, Any]:
    out = copy.deepcopy(raw)
    for sim in out["simulations"]:
        (sim.get("reward_info") or {}).pop("action_checks", None)
    return out


def stored_matches(raw: dict[str, Any]) -> dict[tuple[str, int], bool]:
    """``(simulation id, check index) -> action_match`` as the file stores them."""
    return {(sim["id"], i): check["action_match"]
            for sim in raw["simulations"]
            for i, check in enumerate((sim.get("reward_info") or {}).get("action_checks") or ())}
