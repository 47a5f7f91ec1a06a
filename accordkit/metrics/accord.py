"""AcCoRD metrics per episode and per preference (spec ``accord.md`` §4).

The formulas and which of them are the paper's are in ``docs/metrics-accord.md``.

Pure functions over an Arrow table of canonical AcCoRD episodes; no I/O, no LLM calls.
Everything is vectorised over the flattened ``preferences`` and ``messages`` lists
(:func:`pyarrow.compute.list_flatten` / ``list_parent_indices`` and :func:`numpy.bincount`).

Per episode e with completion ``c_e`` and judged preferences ``J_e`` (``satisfied`` not null):

* ``outcome_score`` = ``#{p in J_e: y_p} / |J_e|`` when ``c_e`` and ``J_e`` is non-empty, else NaN;
* ``perfect_outcome`` = ``c_e and outcome_score == 1`` (False when the outcome is undefined);
* ``task_score`` = ``outcome_score`` when completed, 0 when not.

Group point estimates (completion rate, outcome, per-dynamic scores, ...) are made by
:func:`accordkit.tables.paper.accord_table` (``ak.accord_table``), a layer up: the metrics
know nothing of tables or statistics.
"""

from __future__ import annotations

import warnings

import numpy as np
import pandas as pd
import pyarrow as pa
import pyarrow.compute as pc

from ..schema import DYNAMICS, EpisodeValidationError
from ._checks import check_episode_table

__all__ = [
    "score_episodes",
    "score_preferences",
    "EPISODE_METRICS",
    "PREFERENCE_COLUMNS",
]

#: Columns of :func:`score_episodes`, in order.
EPISODE_METRICS = (
    "completed", "outcome_score", "perfect_outcome", "task_score", "n_preferences",
    "n_satisfied", "n_judged", "product_type_ok", "price_ok", "n_env_actions",
    "n_utterances", "n_user_utterances",
)
#: Columns of :func:`score_preferences`, in order.
PREFERENCE_COLUMNS = ("row", "pref_id", "preference", "slot", "dynamic", "target", "satisfied",
                      "completed")

_REQUIRED = ("episode_id", "domain", "completed", "preferences", "messages", "product_type_ok",
             "price_ok")


# ---------------------------------------------------------------------------------------
# Input handling
# ---------------------------------------------------------------------------------------


def _column(table: pa.Table, name: str) -> pa.ChunkedArray:
    # Kept chunked: list_parent_indices numbers rows across chunks, and combining the
    # messages column would copy it.
    return table.column(name)


def _bools(arr: pa.Array | pa.ChunkedArray) -> tuple[np.ndarray, np.ndarray]:
    """(is_valid, value) numpy bool arrays of a boolean Arrow array."""
    valid = pc.is_valid(arr).to_numpy(zero_copy_only=False)
    value = pc.fill_null(arr, False).to_numpy(zero_copy_only=False)
    return valid.astype(bool), value.astype(bool)


def _where(table: pa.Table, row: int) -> dict[str, str | None]:
    src = table.column("source")[row].as_py() if "source" in table.column_names else None
    return {"source": src, "record": str(table.column("episode_id")[row].as_py())}


class _Flat:
    """The preferences of every episode, flattened (one entry per (episode, preference))."""

    def __init__(self, table: pa.Table) -> None:
        lists = _column(table, "preferences")
        self.n_rows = table.num_rows
        self.list_valid = pc.is_valid(lists).to_numpy(zero_copy_only=False).astype(bool)
        self.parent = pc.list_parent_indices(lists).to_numpy(zero_copy_only=False)
        flat = pc.list_flatten(lists)
        self.fields = {name: pc.struct_field(flat, name) for name in
                       ("pref_id", "name", "slot", "value", "dynamic", "backoff", "trigger",
                        "satisfied")}
        self._check_dynamics(table)
        dyn = self.fields["dynamic"]
        self.target = pc.if_else(
            pc.equal(dyn, "unachievable"), self.fields["backoff"],
            pc.if_else(pc.equal(dyn, "triggered"), self.fields["trigger"], self.fields["value"]))
        self.sat_valid, self.sat_value = _bools(self.fields["satisfied"])

    def _check_dynamics(self, table: pa.Table) -> None:
        dyn = self.fields["dynamic"]
        ok = pc.fill_null(pc.is_in(dyn, value_set=pa.array(DYNAMICS)), False)
        bad = np.flatnonzero(~ok.to_numpy(zero_copy_only=False).astype(bool))
        if len(bad):
            k = int(bad[0])
            row = int(self.parent[k])
            pos = k - int(np.searchsorted(self.parent, row))
            raise EpisodeValidationError(
                f"unknown dynamic {dyn[k].as_py()!r}; expected one of {DYNAMICS}",
                field=f"preferences[{pos}].dynamic", **_where(table, row))

    def episode_ids(self, table: pa.Table) -> np.ndarray:
        ids = _column(table, "episode_id").to_numpy(zero_copy_only=False)
        return ids[self.parent]


# ---------------------------------------------------------------------------------------
# Core computation shared by both levels
# ---------------------------------------------------------------------------------------


class _Scored:
    def __init__(self, table: pa.Table, *, shop_type_gate: bool) -> None:
        check_episode_table(table, _REQUIRED, what="AcCoRD scoring")
        if not isinstance(shop_type_gate, bool):
            raise TypeError(f"shop_type_gate must be True or False, got {shop_type_gate!r}")
        n = table.num_rows
        self.n = n
        self.flat = flat = _Flat(table)
        self.checks = {c: _bools(_column(table, c)) for c in ("product_type_ok", "price_ok")}
        self.comp_valid, self.comp_value = _bools(_column(table, "completed"))
        completed = self.comp_valid & self.comp_value
        shop = pc.fill_null(pc.equal(_column(table, "domain"), "shop"), False) \
            .to_numpy(zero_copy_only=False).astype(bool)
        tvalid, tvalue = self.checks["product_type_ok"]
        gated = shop_type_gate & shop & completed
        self.gate_fail = gated & tvalid & ~tvalue      # wrong product type: outcome 0
        self.gate_unknown = gated & ~tvalid            # type not recorded: outcome undefined
        parent = flat.parent
        target_ok = pc.is_valid(flat.target).to_numpy(zero_copy_only=False).astype(bool)
        self.judged = flat.sat_valid & target_ok & ~self.gate_unknown[parent]
        self.satisfied = self.judged & flat.sat_value & ~self.gate_fail[parent]

    def episode_frame(self, table: pa.Table) -> pd.DataFrame:
        n, flat = self.n, self.flat
        parent = flat.parent
        n_judged = np.bincount(parent, weights=self.judged, minlength=n)
        n_sat = np.bincount(parent, weights=self.satisfied, minlength=n)
        n_pref = np.bincount(parent, minlength=n).astype(float)
        has_list = flat.list_valid
        completed = self.comp_valid & self.comp_value
        with np.errstate(invalid="ignore", divide="ignore"):
            outcome = np.where(completed & (n_judged > 0), n_sat / n_judged, np.nan)
        outcome = np.where(self.gate_fail, 0.0, outcome)
        outcome = np.where(self.gate_unknown | ~has_list, np.nan, outcome)
        perfect = completed & (outcome == 1.0)
        task = np.where(self.comp_valid & ~self.comp_value, 0.0, outcome)
        task = np.where(self.comp_valid, task, np.nan)
        counts = _message_counts(table)

        def ints(x: np.ndarray, valid: np.ndarray) -> pd.arrays.IntegerArray:
            return pd.arrays.IntegerArray(np.where(valid, x, 0).astype(np.int64), ~valid)

        def flags(valid: np.ndarray, value: np.ndarray) -> pd.arrays.BooleanArray:
            return pd.arrays.BooleanArray(value.copy(), ~valid)

        frame = pd.DataFrame({
            "completed": flags(self.comp_valid, self.comp_value),
            "outcome_score": outcome.astype(float),
            "perfect_outcome": flags(self.comp_valid, perfect),
            "task_score": task.astype(float),
            "n_preferences": ints(n_pref, has_list),
            "n_satisfied": ints(n_sat, has_list),
            "n_judged": ints(n_judged, has_list),
            "product_type_ok": flags(*self.checks["product_type_ok"]),
            "price_ok": flags(*self.checks["price_ok"]),
        })
        for name, (values, valid) in counts.items():
            frame[name] = ints(values, valid)
        return frame

    def preference_frame(self) -> pd.DataFrame:
        flat = self.flat
        completed = pd.arrays.BooleanArray(self.comp_value[flat.parent].copy(),
                                           ~self.comp_valid[flat.parent])
        return pd.DataFrame({
            "row": flat.parent.astype(np.int64),
            "pref_id": _strings(flat.fields["pref_id"]),
            "preference": _strings(flat.fields["name"]),
            "slot": _strings(flat.fields["slot"]),
            "dynamic": _strings(flat.fields["dynamic"]),
            "target": _strings(flat.target),
            "satisfied": pd.arrays.BooleanArray(self.satisfied.copy(), ~self.judged),
            "completed": completed,
        })


def _strings(arr: pa.Array | pa.ChunkedArray) -> np.ndarray:
    return arr.to_numpy(zero_copy_only=False)


def _message_counts(table: pa.Table) -> dict[str, tuple[np.ndarray, np.ndarray]]:
    """Env actions, agent utterances and user utterances per episode (spec §4.7)."""
    n = table.num_rows
    lists = _column(table, "messages")
    valid = pc.is_valid(lists).to_numpy(zero_copy_only=False).astype(bool)
    parent = pc.list_parent_indices(lists).to_numpy(zero_copy_only=False)
    flat = pc.list_flatten(lists)
    role = pc.struct_field(flat, "role")
    kind = pc.struct_field(flat, "kind")
    content = pc.struct_field(flat, "content")
    calls = pc.fill_null(pc.list_value_length(pc.struct_field(flat, "tool_calls")), 0)
    nonempty = pc.fill_null(pc.greater(pc.utf8_length(pc.utf8_trim_whitespace(content)), 0),
                            False)
    assistant = pc.fill_null(pc.equal(role, "assistant"), False)
    user = pc.fill_null(pc.equal(role, "user"), False)
    utter_kind = pc.fill_null(pc.equal(kind, "utterance"), False)
    utter = pc.and_(assistant, pc.or_(utter_kind, pc.and_(pc.is_null(kind), nonempty)))

    def per_episode(weights: pa.ChunkedArray) -> np.ndarray:
        w = weights.to_numpy(zero_copy_only=False).astype(np.int64)
        return np.bincount(parent, weights=w, minlength=n).astype(np.int64)

    env = per_episode(pc.if_else(assistant, calls, 0))
    return {"n_env_actions": (env, valid),
            "n_utterances": (per_episode(utter), valid),
            "n_user_utterances": (per_episode(pc.and_(user, nonempty)), valid)}


# ---------------------------------------------------------------------------------------
# Public functions
# ---------------------------------------------------------------------------------------


def _with_verdicts(table: pa.Table, verdicts: pd.DataFrame | None) -> pa.Table:
    if verdicts is None or not isinstance(table, pa.Table):
        return table  # a non-table is reported by the input check
    from ..verdicts.attach import attach_verdicts

    return attach_verdicts(table, verdicts)


def score_episodes(table: pa.Table, *, shop_type_gate: bool = False,
                   verdicts: pd.DataFrame | None = None) -> pd.DataFrame:
    """AcCoRD metrics per episode, aligned with the rows of ``table``.

    Parameters
    ----------
    table : pyarrow.Table
        Canonical AcCoRD episodes (:data:`accordkit.schema.EPISODE_FEATURES` columns; at least
        ``episode_id``, ``domain``, ``completed``, ``preferences``, ``messages``,
        ``product_type_ok``, ``price_ok``).
    shop_type_gate : bool
        Shop only: a completed episode whose product type is wrong scores outcome 0 (its judged
        preferences count as unsatisfied); when the type check is not recorded the outcome is
        undefined (NaN). Default off: ``product_type_ok`` is reported apart (spec §4.2).
    verdicts : pandas.DataFrame, optional
        Stored judge verdicts, attached first by
        :func:`accordkit.verdicts.attach_verdicts` (``outcome`` rows fill
        ``satisfied``, ``product_type_ok`` and ``price_ok`` where the episode has none; its
        docstring gives the rule). The metrics themselves read only the episode fields.

    Returns
    -------
    pandas.DataFrame
        One row per table row, same order, columns :data:`EPISODE_METRICS`: ``completed``
        (boolean), ``outcome_score`` (judged preferences satisfied / judged, completed
        episodes only, else NaN), ``perfect_outcome`` (boolean; False when the outcome is
        undefined), ``task_score`` (outcome when completed, 0 when not; NaN when completion
        is unknown or a completed episode has no outcome), ``n_preferences``, ``n_satisfied``,
        ``n_judged``, ``product_type_ok``, ``price_ok``, ``n_env_actions`` (tool calls on
        assistant messages), ``n_utterances`` (assistant messages of kind ``utterance``, or of
        no kind with non-empty text; the greeting is not counted), ``n_user_utterances`` (user
        messages with non-empty text). Counts are ``Int64``, flags ``boolean``, scores
        float64.

    Examples
    --------
    >>> import pyarrow as pa
    >>> from accordkit.schema import EPISODE_FEATURES, empty_episode
    >>> rec = empty_episode() | {
    ...     "episode_id": "accord/shop/x/m/react/0", "domain": "shop", "completed": True,
    ...     "messages": [{"role": "assistant", "content": "Hi", "turn_idx": 0,
    ...                   "kind": "greeting"}],
    ...     "preferences": [{"pref_id": "p0", "name": "size", "value": "m",
    ...                      "dynamic": "hard_underspec", "satisfied": True},
    ...                     {"pref_id": "p1", "name": "color", "value": "red",
    ...                      "dynamic": "stated", "satisfied": False}]}
    >>> table = pa.Table.from_pylist([rec], schema=EPISODE_FEATURES.arrow_schema)
    >>> score_episodes(table)[["completed", "outcome_score", "task_score", "n_utterances"]]
       completed  outcome_score  task_score  n_utterances
    0       True            0.5         0.5             0
    """
    table = _with_verdicts(table, verdicts)
    frame = _Scored(table, shop_type_gate=shop_type_gate).episode_frame(table)
    _warn_undefined_outcomes(table, frame)
    return frame


def _warn_undefined_outcomes(table: pa.Table, frame: pd.DataFrame) -> None:
    """One warning when completed episodes have no outcome (no judged preference, or an
    unknown type check under the gate): they leave the outcome and task-score means while
    incomplete episodes count 0, so Task = TCR x Outcome (spec §4.4) no longer holds."""
    undefined = (frame["completed"].fillna(False).to_numpy(dtype=bool)
                 & np.isnan(frame["outcome_score"].to_numpy()))
    if not undefined.any():
        return
    rows = np.flatnonzero(undefined)
    ids = table.column("episode_id").take(pa.array(rows[:3])).to_pylist()
    more = f" and {len(rows) - 3} more" if len(rows) > 3 else ""
    warnings.warn(
        f"{len(rows)} completed AcCoRD episode(s) have no outcome ({', '.join(map(str, ids))}"
        f"{more}): no judged preference (or, with shop_type_gate, no recorded type check). "
        "Their outcome and task score are NaN and left out of those means, while incomplete "
        "episodes count 0 in the task score, so Task = TCR x Outcome no longer holds; judge "
        "their preferences (accordkit judge) or leave them out", stacklevel=4)


def score_preferences(table: pa.Table, *, shop_type_gate: bool = False,
                      verdicts: pd.DataFrame | None = None) -> pd.DataFrame:
    """One row per (episode, preference) of the AcCoRD episodes in ``table``.

    Parameters
    ----------
    table : pyarrow.Table
        Canonical AcCoRD episodes, as for :func:`score_episodes`.
    shop_type_gate, verdicts
        As for :func:`score_episodes`; the per-preference ``satisfied`` is the judgment the
        episode metrics use.

    Returns
    -------
    pandas.DataFrame
        Columns :data:`PREFERENCE_COLUMNS`: ``row`` (0-based position of the episode in
        ``table``), ``pref_id``, ``preference`` (name), ``slot``, ``dynamic``, ``target`` (the
        backoff for ``unachievable``, the trigger for ``triggered``, the value otherwise),
        ``satisfied`` (boolean, NA when not judged: no judgment, no target value, or the type
        gate cannot be applied) and the episode's ``completed``.

    Examples
    --------
    >>> import pyarrow as pa
    >>> from accordkit.schema import EPISODE_FEATURES, empty_episode
    >>> rec = empty_episode() | {
    ...     "episode_id": "e", "domain": "travel", "completed": False,
    ...     "messages": [{"role": "user", "content": "Hi", "turn_idx": 0}],
    ...     "preferences": [{"pref_id": "p0", "name": "hotel.stars", "value": "5 stars",
    ...                      "dynamic": "unachievable", "backoff": "4 stars"}]}
    >>> table = pa.Table.from_pylist([rec], schema=EPISODE_FEATURES.arrow_schema)
    >>> score_preferences(table)[["row", "dynamic", "target", "satisfied", "completed"]]
       row       dynamic   target  satisfied  completed
    0    0  unachievable  4 stars       <NA>      False
    """
    table = _with_verdicts(table, verdicts)
    return _Scored(table, shop_type_gate=shop_type_gate).preference_frame()
