"""The reward checks tau2 stores with each simulation, as per-episode pass shares.

tau2-format result files keep, beside the reward, the outcome of every check the reward was
made of (``reward_info``: the database comparison, environment assertions, expected actions,
information to communicate, NL assertions). They are facts of the run, not re-scored here;
:func:`reward_checks` turns them into one number per check and episode so the tables of
stored checks need only the score frame (and a score store), never the transcripts.

It also checks the one rule that ties them to the reward (spec ``tau2-format.md`` §7): the
reward is the product of ``reward_breakdown`` over ``reward_basis``. The basis says which
checks made the reward; the others are diagnostics only.
"""

from __future__ import annotations

import json
from typing import Any

import numpy as np
import pandas as pd

from .._internal.jsontext import loads

__all__ = ["REWARD_CHECKS", "CHECK_COLUMNS", "BASIS_COLUMNS", "BASIS_COMPONENTS",
           "reward_checks", "reward_check_columns", "reward_consistency"]

#: (label, ``reward_info`` key) of every check tau2 stores, in tau2's order. The key is
#: also the score column.
REWARD_CHECKS = (
    ("DB check", "db_check"),
    ("environment assertions", "env_assertions"),
    ("action checks", "action_checks"),
    ("communicate checks", "communicate_checks"),
    ("NL assertions", "nl_assertions"),
)
#: The score columns of :data:`REWARD_CHECKS`.
CHECK_COLUMNS = [key for _, key in REWARD_CHECKS]
#: The ``reward_basis`` component each check is, by score column.
BASIS_COMPONENTS = {"db_check": "DB", "env_assertions": "ENV_ASSERTION",
                    "action_checks": "ACTION", "communicate_checks": "COMMUNICATE",
                    "nl_assertions": "NL_ASSERTION"}
#: ``reward_basis`` (its components joined with "+") and ``reward_consistent``.
BASIS_COLUMNS = ["reward_basis", "reward_consistent"]
#: |reward - product of the breakdown| allowed (tau2's success tolerance).
_TOLERANCE = 1e-6

#: The flag that says an item of each list check was met.
_PASS_KEYS = {"db_check": "db_match", "env_assertions": "met", "action_checks": "action_match",
              "communicate_checks": "met", "nl_assertions": "met"}


def _check_score(value: Any, key: str) -> float:
    """Share of the checks of one kind that passed (NaN when the run has none)."""
    if value is None:
        return np.nan
    if key == "db_check":
        if not isinstance(value, dict):
            return np.nan
        passed = value.get("db_match")
        return np.nan if passed is None else float(bool(passed))
    if not isinstance(value, list) or not value:
        return np.nan
    flags = [item.get(_PASS_KEYS[key]) for item in value if isinstance(item, dict)]
    flags = [f for f in flags if f is not None]
    return sum(1 for f in flags if f) / len(flags) if flags else np.nan


def reward_consistency(info: dict[str, Any]) -> tuple[str | None, bool | None]:
    """A stored ``reward_info``'s basis, and whether its reward is the product of its
    breakdown over that basis.

    Returns ``(basis, consistent)``: ``basis`` is the components joined with ``"+"`` (None
    when the run stored no basis); ``consistent`` is None when the rule cannot be checked:
    no basis or no numeric reward, or an AgentChangeBench reward, which is TSR (the run
    stores ``info.tsr_details``; its basis is a placeholder). A basis component missing
    from the breakdown was not evaluated and counts 1, as in tau2; a breakdown value that is
    not a number makes the record inconsistent.

    Examples
    --------
    >>> reward_consistency({"reward": 0.0, "reward_basis": ["DB", "COMMUNICATE"],
    ...                     "reward_breakdown": {"DB": 0.0, "COMMUNICATE": 1.0}})
    ('DB+COMMUNICATE', True)
    >>> reward_consistency({"reward": 1.0, "reward_basis": ["DB", "COMMUNICATE"],
    ...                     "reward_breakdown": {"DB": 0.0, "COMMUNICATE": 1.0}})
    ('DB+COMMUNICATE', False)
    >>> reward_consistency({"reward": 1.0, "reward_basis": ["DB", "COMMUNICATE"],
    ...                     "reward_breakdown": {"COMMUNICATE": 1.0}})
    ('DB+COMMUNICATE', True)
    """
    basis = info.get("reward_basis")
    if not isinstance(basis, list) or not basis \
            or not all(isinstance(b, str) for b in basis):
        return None, None
    label = "+".join(basis)
    reward = info.get("reward")
    details = info.get("info")
    if isinstance(reward, bool) or not isinstance(reward, int | float) or not np.isfinite(reward) \
            or (isinstance(details, dict) and details.get("tsr_details") is not None):
        return label, None
    breakdown = info.get("reward_breakdown")
    if breakdown is None:
        breakdown = {}
    if not isinstance(breakdown, dict):
        return label, False
    product = 1.0
    for component in basis:
        # a component tau2 did not evaluate (e.g. no expected actions: its evaluator returns
        # reward 1 and no breakdown) is left out of the breakdown and multiplies by 1
        value = breakdown.get(component, 1.0)
        if isinstance(value, bool) or not isinstance(value, int | float):
            return label, False
        product *= value
    return label, bool(abs(product - reward) <= _TOLERANCE)


def reward_check_columns(episode_ids: Any, reward_info_json: Any) -> dict[str, Any]:
    """:func:`reward_checks`' columns, as arrays (same parameters and errors)."""
    rows = []
    bases: list[str | None] = []
    consistent: list[bool | None] = []
    for episode_id, text in zip(episode_ids, reward_info_json, strict=True):
        info: Any = None
        if isinstance(text, str) and text:
            try:
                info = loads(text)
            except json.JSONDecodeError as exc:
                raise ValueError(f"episode {episode_id}: field reward_info_json is not "
                                 f"JSON ({exc.msg})") from exc
        info = info if isinstance(info, dict) else {}
        rows.append([_check_score(info.get(k), k) for k in CHECK_COLUMNS])
        basis, ok = reward_consistency(info)
        bases.append(basis)
        consistent.append(ok)
    scores = np.array(rows, dtype=float).reshape(len(rows), len(CHECK_COLUMNS))
    out: dict[str, Any] = {key: scores[:, k].copy() for k, key in enumerate(CHECK_COLUMNS)}
    unknown = np.array([ok is None for ok in consistent], dtype=bool)
    out["reward_basis"] = pd.Series(bases, dtype=object)
    out["reward_consistent"] = pd.arrays.BooleanArray(
        np.array([bool(ok) for ok in consistent], dtype=bool), unknown)
    return out


def reward_checks(episode_ids: Any, reward_info_json: Any) -> pd.DataFrame:
    """Per-episode pass shares of the checks stored in ``reward_info``.

    Parameters
    ----------
    episode_ids : sequence of str
        The episodes (used to name one whose ``reward_info`` is not JSON).
    reward_info_json : sequence of str or None
        The canonical ``reward_info_json`` column, aligned with ``episode_ids``.

    Returns
    -------
    pandas.DataFrame
        One float column per key of :data:`REWARD_CHECKS`, one row per episode in order:
        ``db_check`` is 1 when the database matched; the list checks are the share of
        items met. NaN where the episode has no such check. Then :data:`BASIS_COLUMNS`:
        ``reward_basis`` and ``reward_consistent`` (boolean, NA when it cannot be checked;
        see :func:`reward_consistency`).

    Raises
    ------
    ValueError
        When a ``reward_info_json`` value is not JSON text, naming the episode.

    Examples
    --------
    >>> info = '{"db_check": {"db_match": true}, "nl_assertions": [{"met": true}, {"met": false}]}'
    >>> reward_checks(["e1", "e2"], [info, None])[CHECK_COLUMNS].round(2).to_dict("list")
    {'db_check': [1.0, nan], 'env_assertions': [nan, nan], 'action_checks': [nan, nan], 'communicate_checks': [nan, nan], 'nl_assertions': [0.5, nan]}
    """
    return pd.DataFrame(reward_check_columns(episode_ids, reward_info_json))
