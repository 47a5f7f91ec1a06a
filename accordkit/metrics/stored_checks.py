"""The reward checks tau2 stores with each simulation, as per-episode pass shares.

tau2-format result files keep, beside the reward, the outcome of every check the reward was
made of (``reward_info``: the database comparison, environment assertions, expected actions,
information to communicate, NL assertions). They are facts of the run, not re-scored here;
:func:`reward_checks` turns them into one number per check and episode so the tables of
stored checks need only the score frame (and a score store), never the transcripts.
"""

from __future__ import annotations

import json
from typing import Any

import msgspec
import numpy as np
import pandas as pd

__all__ = ["REWARD_CHECKS", "CHECK_COLUMNS", "reward_checks"]

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

#: The flag that says an item of each list check was met.
_PASS_KEYS = {"db_check": "db_match", "env_assertions": "met", "action_checks": "action_match",
              "communicate_checks": "met", "nl_assertions": "met"}


#: JSON text -> Python values, as ``json.loads`` gives them, several times faster
_decode = msgspec.json.Decoder().decode


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
        items met. NaN where the episode has no such check.

    Raises
    ------
    ValueError
        When a ``reward_info_json`` value is not JSON text, naming the episode.

    Examples
    --------
    >>> info = '{"db_check": {"db_match": true}, "nl_assertions": [{"met": true}, {"met": false}]}'
    >>> reward_checks(["e1", "e2"], [info, None]).round(2).to_dict("list")
    {'db_check': [1.0, nan], 'env_assertions': [nan, nan], 'action_checks': [nan, nan], 'communicate_checks': [nan, nan], 'nl_assertions': [0.5, nan]}
    """
    rows = []
    for episode_id, text in zip(episode_ids, reward_info_json, strict=True):
        info: Any = None
        if isinstance(text, str) and text:
            try:
                info = _decode(text)
            except msgspec.DecodeError:  # json.loads says what is wrong (and reads NaN)
                try:
                    info = json.loads(text)
                except json.JSONDecodeError as exc:
                    raise ValueError(f"episode {episode_id}: field reward_info_json is not "
                                     f"JSON ({exc.msg})") from exc
        info = info if isinstance(info, dict) else {}
        rows.append([_check_score(info.get(k), k) for k in CHECK_COLUMNS])
    return pd.DataFrame(np.array(rows, dtype=float).reshape(len(rows), len(CHECK_COLUMNS)),
                        columns=CHECK_COLUMNS)
