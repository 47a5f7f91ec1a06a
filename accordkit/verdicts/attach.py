"""The rule by which stored judge verdicts fill the episodes' canonical fields.

:func:`attach_verdicts` is the one place where verdict rows become episode data (the metrics
read only the canonical fields); :func:`gsrt_from_verdicts` and
:func:`nl_verdicts_from_verdicts` give the same values by episode id. Pure functions of a
verdict table (:mod:`accordkit.judges.verdicts` reads and writes it) and the episodes.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from typing import Any

import pandas as pd
import pyarrow as pa

from .parse import INVALID, gsrt_struct

__all__ = ["attach_verdicts", "gsrt_from_verdicts", "nl_verdicts_from_verdicts", "EPISODE_FIELDS",
           "CHECK_ITEMS"]


def gsrt_from_verdicts(verdicts: pd.DataFrame, *, judge_model: str | None = None) -> dict:
    """Canonical ``gsrt_judge`` structs by ``episode_id`` from ``gsrt`` rows with a verdict.

    The rule of :func:`attach_verdicts`: invalid and error rows are left out (the episode
    then has no judge output); rows of several judge models that disagree need
    ``judge_model``.

    Examples
    --------
    >>> import pandas as pd
    >>> v = pd.DataFrame({"episode_id": ["e1"], "judge": ["gsrt"], "item": ["shifts"],
    ...                   "verdict": ['{"start_goal": {"turn": 1, "goal": "a"}, '
    ...                               '"user_goal_shifts": []}']})
    >>> gsrt_from_verdicts(v)
    {'e1': {'start_turn': 1, 'start_goal': 'a', 'shifts': []}}
    """
    rows = _usable(verdicts, judge_model)
    rows = rows.loc[rows["judge"] == "gsrt"].sort_values("episode_id", kind="stable")
    return dict(zip(rows["episode_id"], rows["value"], strict=True))


def nl_verdicts_from_verdicts(verdicts: pd.DataFrame, *, judge_model: str | None = None,
                              assertions: dict[str, list[str]] | None = None) -> dict:
    """Canonical ``nl_verdicts`` lists by ``episode_id`` from ``nl_assertions`` rows.

    The rule of :func:`attach_verdicts`: an episode is returned only when each of its
    assertions (``assertions[episode_id]`` when given, else indices up to the largest one
    judged) has a met / not_met verdict, as upstream drops the NL channel when its judge
    fails. ``assertions`` (episode id -> assertion texts) fills the ``assertion`` field; it is
    null otherwise.

    Examples
    --------
    >>> import pandas as pd
    >>> v = pd.DataFrame({"episode_id": ["e1", "e1"], "judge": ["nl_assertions"] * 2,
    ...                   "item": ["0", "1"], "verdict": ["met", "not_met"], "raw": [None, None]})
    >>> [e["met"] for e in nl_verdicts_from_verdicts(v)["e1"]]
    [True, False]
    """
    rows = _usable(verdicts, judge_model)
    rows = rows.loc[rows["judge"] == "nl_assertions"]
    out = {}
    for eid, group in rows.groupby("episode_id", sort=True):
        by_item = _nl_items(eid, group)
        texts = (assertions or {}).get(eid)
        entries = _nl_entries(by_item, texts if texts else [None] * (max(by_item) + 1))
        if entries is not None:
            out[eid] = entries
    return out


# --------------------------------------------------------------------------- episode fields

#: Judges whose verdicts become episode fields, and the field(s) they fill.
EPISODE_FIELDS: dict[str, tuple[str, ...]] = {
    "outcome": ("preferences.satisfied", "product_type_ok", "price_ok"),
    "nl_assertions": ("nl_verdicts",),
    "gsrt": ("gsrt_judge",),
}
#: Outcome-judge items that are shop checks rather than preferences, and their fields.
CHECK_ITEMS = {"product_type": "product_type_ok", "price": "price_ok"}
_BOOL_LABELS = {"outcome": {"1": True, "0": False}, "nl_assertions": {"met": True,
                                                                        "not_met": False}}


def _usable(verdicts: pd.DataFrame, judge_model: str | None) -> pd.DataFrame:
    """The verdict rows that fill episode fields, one per (episode, judge, item), parsed.

    Columns ``episode_id``, ``judge``, ``item``, ``value`` (bool, or a ``gsrt_judge``
    struct) and ``raw``.
    """
    if not isinstance(verdicts, pd.DataFrame):
        raise TypeError(f"verdicts must be a pandas DataFrame (the verdict table of "
                        f"accordkit.judge or read_verdicts), got {type(verdicts).__name__}")
    missing = [c for c in ("episode_id", "judge", "item", "verdict") if c not in verdicts]
    if missing:
        raise ValueError(f"verdicts lack the columns {missing} (expected the judge verdict "
                         "table: episode_id, judge, item, verdict, ...)")
    verdicts = verdicts.reset_index(drop=True)  # rows are named by position
    v = verdicts.loc[verdicts["judge"].isin(list(EPISODE_FIELDS))]
    models = (v["judge_model"].astype("string") if "judge_model" in v
              else pd.Series(pd.NA, index=v.index, dtype="string"))
    if judge_model is not None:
        v, models = v.loc[models == judge_model], models.loc[models == judge_model]
    text = v["verdict"].astype("string").str.strip()
    keep = text.notna() & (text.str.lower() != INVALID)    # error rows and "invalid": missing
    rows = []
    for idx in v.index[keep.to_numpy(dtype=bool)]:
        judge, label = str(v.at[idx, "judge"]), str(text.at[idx])
        where = (f"verdicts row {idx!r} (episode {v.at[idx, 'episode_id']!r}, judge {judge}, "
                 f"item {v.at[idx, 'item']!r})")
        if judge == "gsrt":
            try:
                value: Any = gsrt_struct(label)
            except ValueError as exc:
                raise ValueError(f"{where}: {exc}") from None
            label = json.dumps(value, sort_keys=True)
        else:
            labels = _BOOL_LABELS[judge]
            if label.lower() not in labels:
                raise ValueError(f"{where}: {judge} verdict {label!r} is not one of "
                                 f"{sorted([*labels, INVALID])}")
            value = labels[label.lower()]
        rows.append((str(v.at[idx, "episode_id"]), judge, str(v.at[idx, "item"]), label, value,
                     models.at[idx], v.at[idx, "raw"] if "raw" in v else None))
    out = pd.DataFrame(rows, columns=["episode_id", "judge", "item", "label", "value",
                                      "judge_model", "raw"])
    distinct = out.drop_duplicates(["episode_id", "judge", "item", "label"])
    clash = distinct.loc[distinct.duplicated(["episode_id", "judge", "item"], keep=False)]
    if len(clash):
        first = clash.iloc[0]
        names = sorted(map(str, clash.loc[(clash["episode_id"] == first["episode_id"])
                                          & (clash["judge"] == first["judge"])
                                          & (clash["item"] == first["item"]),
                                          "judge_model"].unique()))
        versions = ""
        if "prompt_version" in verdicts:
            seen = verdicts.loc[(verdicts["episode_id"] == first["episode_id"])
                                & (verdicts["judge"] == first["judge"])
                                & (verdicts["item"] == first["item"]), "prompt_version"]
            versions = f", prompt versions {sorted(map(str, seen.dropna().unique()))}"
        raise ValueError(
            f"conflicting {first['judge']} verdicts for episode {first['episode_id']!r}, item "
            f"{first['item']!r} (judge models {names}{versions}): keep the rows of one judge "
            "model and prompt version, e.g. v[v.judge_model == ...] (attach_verdicts takes "
            "judge_model=)")
    return distinct.drop(columns=["label", "judge_model"]).reset_index(drop=True)


def _fill_outcome(table: pa.Table, rows_of: dict[str, list[int]], v: pd.DataFrame) -> pa.Table:
    prefs = table.column("preferences").to_pylist()
    checks = {c: table.column(c).to_pylist() for c in CHECK_ITEMS.values()}
    for (eid, item), value in zip(zip(v["episode_id"], v["item"], strict=True), v["value"],
                                  strict=True):
        for r in rows_of.get(eid, ()):
            if item in CHECK_ITEMS:
                col = checks[CHECK_ITEMS[item]]
                if col[r] is None:
                    col[r] = bool(value)
                continue
            matches = [p for p in prefs[r] or () if p.get("pref_id") == item]
            if not matches:
                raise ValueError(
                    f"outcome verdict for episode {eid!r} names item {item!r}, which is "
                    f"neither a pref_id of that episode nor one of {sorted(CHECK_ITEMS)}")
            for p in matches:
                if p.get("satisfied") is None:
                    p["satisfied"] = bool(value)
    table = _set(table, "preferences", prefs)
    for name, values in checks.items():
        table = _set(table, name, values)
    return table


def _fill_nl(table: pa.Table, rows_of: dict[str, list[int]], v: pd.DataFrame) -> pa.Table:
    stored = table.column("nl_verdicts").to_pylist()
    criteria = table.column("criteria").to_pylist()
    for eid, group in v.groupby("episode_id", sort=False):
        by_item = _nl_items(eid, group)
        for r in rows_of.get(eid, ()):
            texts = list((criteria[r] or {}).get("nl_assertions") or ())
            if not stored[r] and texts:  # stored verdicts win
                stored[r] = _nl_entries(by_item, texts)
    return _set(table, "nl_verdicts", stored)


def _nl_items(eid: str, group: pd.DataFrame) -> dict[int, tuple[bool, object]]:
    """Assertion index -> (met, raw reply) of one episode's usable ``nl_assertions`` rows."""
    by_item = {}
    for item, value, raw in zip(group["item"], group["value"], group["raw"], strict=True):
        try:
            by_item[int(item)] = (bool(value), raw)
        except ValueError:
            raise ValueError(f"nl_assertions verdict for episode {eid!r}: item {item!r} is "
                             "not an assertion index") from None
    return by_item


def _nl_entries(by_item: Mapping[int, tuple[bool, object]],
                texts: Sequence[str | None]) -> list[dict] | None:
    """``nl_verdicts`` entries for the assertions ``texts``; ``None`` when one has no verdict
    (an incomplete set leaves the NL channel unjudged)."""
    if any(i not in by_item for i in range(len(texts))):
        return None
    return [{"assertion": text, "met": by_item[i][0], "justification": _justification(by_item[i][1])}
            for i, text in enumerate(texts)]


def _fill_gsrt(table: pa.Table, rows_of: dict[str, list[int]], v: pd.DataFrame) -> pa.Table:
    stored = table.column("gsrt_judge").to_pylist()
    for eid, value in zip(v["episode_id"], v["value"], strict=True):
        for r in rows_of.get(eid, ()):
            if stored[r] is None:
                stored[r] = value
    return _set(table, "gsrt_judge", stored)


def _justification(raw: object) -> str | None:
    try:
        found = json.loads(raw).get("justification")  # type: ignore[arg-type]
    except (TypeError, ValueError, AttributeError):
        return None
    return found if isinstance(found, str) else None


def _set(table: pa.Table, name: str, values: list) -> pa.Table:
    i = table.schema.get_field_index(name)
    return table.set_column(i, table.schema.field(i), pa.array(values, type=table.schema.field(i).type))


def attach_verdicts(ds: Any, verdicts: pd.DataFrame, *, judge_model: str | None = None) -> Any:
    """Copy stored judge verdicts into the episodes' canonical fields.

    The one place where verdict rows become episode data; the metrics read only the
    canonical fields. The rule, the same for every judge:

    * **Stored values win**: a verdict fills a field only where the episode has none
      (``satisfied`` null, ``nl_verdicts`` null or empty, ``gsrt_judge`` null, ...).
    * **Missing**: rows without a verdict (``error`` rows) and ``invalid`` verdicts fill
      nothing, so the field stays missing (not judged). ``nl_verdicts`` is filled only when
      every assertion of the task has a verdict; otherwise the NL channel stays unjudged.
    * **Conflicting**: rows for the same (episode, judge, item) that agree count once; rows
      that disagree (e.g. two judge models) raise ``ValueError`` unless ``judge_model``
      names the model to use.
    * Rows of judges without an episode field (``usersim_tests``) and of episodes not in
      ``ds`` are ignored; an unknown verdict label, unreadable goal-shift JSON, an outcome
      item that is neither a ``pref_id`` of its episode nor ``product_type`` / ``price``,
      or an NL item that is not an assertion index raise ``ValueError`` naming the row.

    ============== ================================ =================================
    judge          item                             fills
    ============== ================================ =================================
    outcome        ``pref_id``                      ``preferences[].satisfied``
    outcome        ``product_type`` / ``price``     ``product_type_ok`` / ``price_ok``
    nl_assertions  assertion index                  ``nl_verdicts``
    gsrt           ``shifts``                       ``gsrt_judge``
    ============== ================================ =================================

    Parameters
    ----------
    ds : datasets.Dataset or pyarrow.Table
        Canonical episodes (:func:`accordkit.load`).
    verdicts : pandas.DataFrame
        The verdict table (:func:`accordkit.judge`, :func:`read_verdicts`); at least the
        columns ``episode_id``, ``judge``, ``item``, ``verdict``.
    judge_model : str, optional
        Use only the rows of this judge model.

    Returns
    -------
    datasets.Dataset or pyarrow.Table
        The episodes with the fields filled, of the same type as ``ds``.

    Examples
    --------
    >>> import pyarrow as pa
    >>> from accordkit.schema import EPISODE_FEATURES
    >>> table = EPISODE_FEATURES.arrow_schema.empty_table()
    >>> no_verdicts = pd.DataFrame(columns=["episode_id", "judge", "item", "verdict"])
    >>> attach_verdicts(table, no_verdicts).num_rows
    0
    """
    from .._internal.arrow import arrow_table
    from ..schema.arrow import episode_dataset

    table = ds if isinstance(ds, pa.Table) else arrow_table(ds)
    v = _usable(verdicts, judge_model)
    ids = table.column("episode_id").to_pylist()
    wanted = set(v["episode_id"])
    rows_of: dict[str, list[int]] = {}
    for r, eid in enumerate(ids):
        if eid in wanted:
            rows_of.setdefault(eid, []).append(r)
    v = v.loc[v["episode_id"].isin(list(rows_of))]
    for judge, fill in (("outcome", _fill_outcome), ("nl_assertions", _fill_nl),
                        ("gsrt", _fill_gsrt)):
        part = v.loc[v["judge"] == judge]
        if len(part):
            table = fill(table, rows_of, part)
    return table if isinstance(ds, pa.Table) else episode_dataset(table)
