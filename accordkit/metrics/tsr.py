"""TSR, the task success rate of AgentChangeBench: a weighted mean of three channels.

Spec ``agentchangebench.md`` §3.1. Per episode each channel is *active* with a score in
[0, 1] or *inactive*:

* **action** (base weight 0.45): the task's ``action_sets`` (or, when there are none, one set
  per legacy ``action`` with all its arguments). A set scores 0.5 for a call of an allowed
  tool plus 0.5 when that call's parameters match; the set's score is its best allowed tool;
  the channel is the mean over sets. ``action_mode="best_match"`` (default) looks at every call
  of the tool; ``action_mode="upstream"`` only at the first call of each tool name, as the
  upstream code does. Parameters match when every expected key is present with an equal value
  under Python ``==`` on the parsed JSON (``1 == 1.0``, ``"1" != 1``); extra keys are allowed.
* **nl_assertion** (0.30): met verdicts / number of the task's assertions, from the episode's
  ``nl_verdicts`` (a verdict table is attached to the episodes first by
  :func:`accordkit.verdicts.attach_verdicts`); with no verdicts the channel is inactive
  (as upstream after a judge failure) and ``nl_unjudged`` is set.
* **communicate_info** (0.25): share of required strings found (lowercase substring) in the
  assistant messages' text joined with spaces. tau2 and τ-bench episodes are matched by
  their own benchmarks' rule instead (:data:`PER_MESSAGE_BENCHMARKS`): a string is found
  when it occurs in some single assistant message with that message's commas removed
  (``tau2-format.md`` §7; ``agentchangebench.md`` §3.1 warns not to mix the two), so that
  "$23,553" says "23553" as their own stored checks have it.

When the episode stores ``tsr_details``, a channel is active exactly as recorded there. TSR is
the weighted sum over active channels with the weights renormalised to sum to one; with no
active channel it is 0, as upstream stores it (issue 4: TSR is never NaN because a judge is
missing, e.g. an NL-only task whose verdicts are absent). An episode whose task is unknown
(no ``criteria``, e.g. a results file whose ``tasks`` list lacks it, and no stored
``tsr_details``) has TSR NaN: nothing says which channels its task has.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from typing import Any

import numpy as np
import pandas as pd
import pyarrow as pa
import pyarrow.compute as pc

from .._internal.arrow import one_array
from .._internal.jsontext import loads
from ..benchmarks import ids
from .calls import Transcripts, arrow_to_numpy, group_starts, join_positions, text_codes

__all__ = [
    "ACTION_MODES",
    "check_action_mode",
    "BASE_WEIGHTS",
    "params_match",
    "combine_channels",
    "tsr_channels",
    "tsr_columns",
]

ACTION_MODES = ("best_match", "upstream")


def check_action_mode(action_mode: str) -> None:
    """``ValueError`` when ``action_mode`` is not one of :data:`ACTION_MODES`."""
    if action_mode not in ACTION_MODES:
        raise ValueError(f"action_mode must be one of {ACTION_MODES}, got {action_mode!r}")

#: Benchmarks whose communicate strings are matched message by message, commas removed.
PER_MESSAGE_BENCHMARKS = ids(communicate_rule="per_message")
#: Base channel weights, in the order upstream sums them.
BASE_WEIGHTS = {"action": 0.45, "nl_assertion": 0.30, "communicate_info": 0.25}


def params_match(actual: Any, expected: Any) -> bool:
    """Whether a call's parsed arguments satisfy the expected parameters.

    Every expected key must be present with a value equal under Python ``==``; extra keys
    are allowed; empty or missing expected parameters always match.

    Examples
    --------
    >>> params_match({"amount": 120.0, "memo": "rent"}, {"amount": 120})
    True
    >>> params_match({"amount": "120"}, {"amount": 120})
    False
    """
    if not expected:
        return True
    if not isinstance(expected, Mapping):
        raise ValueError(f"expected parameters must be a JSON object, got {expected!r:.80}")
    if not isinstance(actual, Mapping):
        return False
    return all(key in actual and actual[key] == value for key, value in expected.items())


def combine_channels(action: float, nl: float, communicate: float) -> float:
    """TSR from channel scores; NaN marks an inactive channel, and no active channel gives 0.

    Weights are renormalised over the active channels and summed in upstream's order
    (communicate, action, NL), so stored values are reproduced to the last bit.

    Examples
    --------
    >>> round(combine_channels(0.5, 1.0, float("nan")), 6)   # action and NL renormalised
    0.7
    >>> combine_channels(float("nan"), float("nan"), float("nan"))
    0.0
    """
    scores = {"action": action, "nl_assertion": nl, "communicate_info": communicate}
    active = {k: w for k, w in BASE_WEIGHTS.items() if not math.isnan(scores[k])}
    total = sum(active.values())
    if total <= 0:
        return 0.0
    tsr = 0.0
    for key in ("communicate_info", "action", "nl_assertion"):
        if key in active:
            tsr += active[key] / total * scores[key]
    return tsr


def _combine_vectors(action: np.ndarray, nl: np.ndarray, comm: np.ndarray) -> np.ndarray:
    """Vectorised :func:`combine_channels`, with the same operations in the same order.

    Adding 0.0 for an inactive channel is exact, so the result is bit-identical.
    """
    scores = {"action": action, "nl_assertion": nl, "communicate_info": comm}
    active = {k: ~np.isnan(v) for k, v in scores.items()}
    total = np.zeros(len(action))
    for key, weight in BASE_WEIGHTS.items():
        total = total + np.where(active[key], weight, 0.0)
    tsr = np.zeros(len(action))
    with np.errstate(invalid="ignore", divide="ignore"):
        for key in ("communicate_info", "action", "nl_assertion"):
            term = np.where(active[key], BASE_WEIGHTS[key] / total * scores[key], 0.0)
            tsr = tsr + term
    return np.where(total > 0, tsr, 0.0)


# --------------------------------------------------------------------------- channels


def _col(table: pa.Table, name: str) -> pa.Array:
    return one_array(table.column(name))


def _expected_tools(criteria: pa.Array) -> tuple[np.ndarray, dict[str, Any]]:
    """Number of action sets per episode and one entry per allowed tool: ``ep``, ``set``,
    ``name`` and ``params`` (Arrow text arrays for the last two)."""
    sets = pc.struct_field(criteria, "action_sets")
    legacy = pc.struct_field(criteria, "actions")
    n_sets = arrow_to_numpy(pc.list_value_length(sets), 0).astype(np.int64)
    n_legacy = arrow_to_numpy(pc.list_value_length(legacy), 0).astype(np.int64)
    use_legacy = (n_sets == 0) & (n_legacy > 0)
    set_count = np.where(use_legacy, n_legacy, n_sets)
    set_base = group_starts(set_count)
    eps, set_ids, names, params = [], [], [], []
    # action_sets -> allowed tools
    if n_sets.sum():
        set_ep = arrow_to_numpy(pc.list_parent_indices(sets)).astype(np.int64)
        flat_sets = pc.list_flatten(sets)
        set_pos = np.arange(len(set_ep)) - group_starts(n_sets)[set_ep]
        tools = pc.struct_field(flat_sets, "allowed_tools")
        tool_set = arrow_to_numpy(pc.list_parent_indices(tools)).astype(np.int64)
        flat_tools = pc.list_flatten(tools)
        keep = np.flatnonzero(~use_legacy[set_ep[tool_set]])
        eps.append(set_ep[tool_set][keep])
        set_ids.append((set_base[set_ep] + set_pos)[tool_set][keep])
        take = pa.array(keep, type=pa.int64())
        names.append(pc.struct_field(flat_tools, "function_name").take(take))
        params.append(pc.struct_field(flat_tools, "params_json").take(take))
    if use_legacy.any():
        act_ep = arrow_to_numpy(pc.list_parent_indices(legacy)).astype(np.int64)
        flat = pc.list_flatten(legacy)
        pos = np.arange(len(act_ep)) - group_starts(n_legacy)[act_ep]
        keep = np.flatnonzero(use_legacy[act_ep])
        eps.append(act_ep[keep])
        set_ids.append((set_base[act_ep] + pos)[keep])
        take = pa.array(keep, type=pa.int64())
        names.append(pc.struct_field(flat, "name").take(take))
        params.append(pc.struct_field(flat, "arguments_json").take(take))
    text = pa.string()
    return set_count, {
        "ep": np.concatenate(eps) if eps else np.zeros(0, np.int64),
        "set": np.concatenate(set_ids) if set_ids else np.zeros(0, np.int64),
        "name": pa.concat_arrays([n.cast(text) for n in names]) if names else pa.array([], text),
        "params": pa.concat_arrays([q.cast(text) for q in params]) if params
        else pa.array([], text),
    }


def _action_scores(table: pa.Table, tr: Transcripts, mode: str) -> np.ndarray:
    criteria = _col(table, "criteria")
    set_count, tools = _expected_tools(criteria)
    n = table.num_rows
    scores = np.full(n, np.nan)
    if not set_count.any():
        return scores
    (call_name, tool_name), name_texts = text_codes(pc.fill_null(tr.call_field("name"), ""),
                                                    pc.fill_null(tools["name"], ""))
    (arg,), arg_dict = text_codes(tr.call_arguments)
    (params,), param_dict = text_codes(tools["params"])
    n_names = len(name_texts)
    call_key = tr.call_episode * n_names + call_name
    calls = np.arange(len(call_key))
    if mode == "upstream":  # only the first call of each tool name counts
        calls = np.sort(np.unique(call_key, return_index=True)[1])
    # (allowed tool, call) pairs of the same episode and tool name
    tool_pos, call_pos = join_positions(tools["ep"] * n_names + tool_name, call_key[calls])
    call_pos = calls[call_pos]
    set_scores = np.zeros(int(set_count.sum()))
    if len(tool_pos):
        pair_params, pair_arg = params[tool_pos], arg[call_pos]
        key = (pair_params + 1) * (len(arg_dict) + 1) + pair_arg
        uniq, first, inverse = np.unique(key, return_index=True, return_inverse=True)
        arg_texts = arg_dict.take(pa.array(pair_arg[first])).to_pylist()
        firsts = pair_params[first]  # -1: the tool has no parameters (null)
        param_texts = param_dict.take(pa.array(firsts, mask=firsts < 0)).to_pylist()
        values = np.empty(len(uniq))
        parsed: dict[str, Any] = {}

        def load(text: str | None) -> Any:
            if text is None:
                return None
            if text not in parsed:
                parsed[text] = loads(text)
            return parsed[text]

        for u, j in enumerate(first.tolist()):
            try:
                values[u] = 0.5 + 0.5 * params_match(load(arg_texts[u]), load(param_texts[u]))
            except (ValueError, TypeError) as exc:
                ep = int(tools["ep"][tool_pos[j]])
                raise ValueError(
                    f"file {table.column('source')[ep]}, record "
                    f"{table.column('episode_id')[ep]}, field criteria (action "
                    f"{name_texts[int(tool_name[tool_pos[j]])]}): {exc}") from None
        np.maximum.at(set_scores, tools["set"][tool_pos], values[inverse])
    has = set_count > 0
    set_ep = np.repeat(np.arange(n), set_count)
    sums = np.bincount(set_ep, weights=set_scores, minlength=n)
    scores[has] = sums[has] / set_count[has]
    return scores


def _communicate_scores(table: pa.Table, tr: Transcripts, *, chunk: int = 100_000
                        ) -> np.ndarray:
    n = table.num_rows
    scores = np.full(n, np.nan)
    info = pc.struct_field(_col(table, "criteria"), "communicate_info")
    n_info = arrow_to_numpy(pc.list_value_length(info), 0)
    need_all = np.flatnonzero(n_info > 0)
    if not len(need_all):
        return scores
    content = tr.message_chunks("content")
    has_text = tr.msg_is_assistant & arrow_to_numpy(pc.greater(pc.utf8_length(content), 0), False)
    per_message = np.zeros(n, dtype=bool)
    if "benchmark" in table.column_names:
        per_message = arrow_to_numpy(pc.is_in(table.column("benchmark"),
                                   value_set=pa.array(PER_MESSAGE_BENCHMARKS)), False)
    lower_cache: dict[str, str] = {}
    # In chunks of episodes, so that no joined text array outgrows Arrow's 32-bit offsets.
    for lo in range(0, len(need_all), chunk):
        need = need_all[lo:lo + chunk]
        wanted_ep = np.zeros(n, dtype=bool)
        wanted_ep[need] = True
        rows = np.flatnonzero(has_text & wanted_ep[tr.msg_episode])
        # The assistant texts of each needed episode, joined with single spaces by Arrow.
        counts = np.bincount(tr.msg_episode[rows], minlength=n)[need]
        offsets = pa.array(np.r_[0, np.cumsum(counts)].astype(np.int32))
        lists = pa.ListArray.from_arrays(offsets, tr.message_values("content", rows))
        joined = pc.binary_join(lists, " ").to_pylist()
        messages = lists.to_pylist() if per_message[need].any() else None
        required = info.take(pa.array(need)).to_pylist()
        out = np.empty(len(need))
        for k, (text, req) in enumerate(zip(joined, required, strict=True)):
            if messages is not None and per_message[need[k]]:
                texts = [m.lower().replace(",", "") for m in messages[k]]
            else:
                texts = [text.lower()]
            hits = 0
            for item in req:
                item_low = lower_cache.get(item)
                if item_low is None:
                    item_low = lower_cache[item] = item.lower()
                hits += any(item_low in t for t in texts)
            out[k] = hits / len(req)
        scores[need] = out
    return scores


def _nl_scores(table: pa.Table) -> tuple[np.ndarray, np.ndarray]:
    """NL score per episode (NaN when no verdicts) and the number of the task's assertions."""
    n = table.num_rows
    assertions = pc.struct_field(_col(table, "criteria"), "nl_assertions")
    n_assert = arrow_to_numpy(pc.list_value_length(assertions), 0).astype(np.int64)
    stored = _col(table, "nl_verdicts")
    n_stored = arrow_to_numpy(pc.list_value_length(stored), 0).astype(np.int64)
    met_flat = arrow_to_numpy(pc.struct_field(pc.list_flatten(stored), "met"), False).astype(bool)
    met_parent = arrow_to_numpy(pc.list_parent_indices(stored)).astype(np.int64)
    met = np.bincount(met_parent, weights=met_flat, minlength=n)
    scores = np.full(n, np.nan)
    use = (n_stored > 0) & (n_assert > 0)
    scores[use] = np.minimum(met[use] / n_assert[use], 1.0)
    return scores, n_assert


def tsr_channels(table: pa.Table, *, action_mode: str = "best_match",
                 transcripts: Transcripts | None = None) -> pd.DataFrame:
    """TSR and its channels for every episode of ``table``.

    Parameters
    ----------
    table : pyarrow.Table
        Canonical episodes.
    action_mode : {"best_match", "upstream"}
        How calls are matched against the action sets (module docstring).
    transcripts : Transcripts, optional
        Prebuilt flattened view of ``table``.

    Returns
    -------
    pandas.DataFrame
        ``tsr``, ``tsr_action``, ``tsr_nl``, ``tsr_communicate`` (float; NaN = inactive) and
        ``nl_unjudged`` (boolean: the task has NL assertions but the channel was not scored).

    Examples
    --------
    >>> import pyarrow as pa
    >>> from accordkit.schema import EPISODE_FEATURES
    >>> from accordkit.testing import build_episode, criteria, message
    >>> rec = build_episode(
    ...     [message("assistant", calls=[("lock_card", {"card_id": "K9"})]),
    ...      message("assistant", calls=[("lock_card", {"card_id": "K1"})]),
    ...      message("assistant", "Card K1 is locked.")],
    ...     criteria=criteria(action_sets=[[("lock_card", {"card_id": "K1"})]],
    ...                       communicate_info=["locked"]))
    >>> table = pa.Table.from_pylist([rec], schema=EPISODE_FEATURES.arrow_schema)
    >>> tsr_channels(table)[["tsr", "tsr_action"]].iloc[0].tolist()
    [1.0, 1.0]
    >>> tsr_channels(table, action_mode="upstream")[["tsr", "tsr_action"]].iloc[0].tolist()
    [0.6785714285714286, 0.5]
    """
    tr = transcripts if transcripts is not None else Transcripts(table)
    return pd.DataFrame(tsr_columns(table, action_mode=action_mode, transcripts=tr))


def tsr_columns(table: pa.Table, *, action_mode: str, transcripts: Transcripts
                ) -> dict[str, Any]:
    """:func:`tsr_channels`' columns, as arrays (one row per episode of ``table``)."""
    check_action_mode(action_mode)
    tr = transcripts
    action = _action_scores(table, tr, action_mode)
    comm = _communicate_scores(table, tr)
    nl, n_assert = _nl_scores(table)

    details = _col(table, "tsr_details")
    has_details = arrow_to_numpy(details.is_valid()).astype(bool)
    if has_details.any():
        for key, flag, scores in (("action", "has_actions", action),
                                  ("nl_assertion", "has_nl_assertions", nl),
                                  ("communicate_info", "has_communicate_info", comm)):
            stored_flag = pc.struct_field(details, flag)
            known = arrow_to_numpy(stored_flag.is_valid()).astype(bool) & has_details
            active = arrow_to_numpy(stored_flag, False).astype(bool)
            stored_score = arrow_to_numpy(pc.struct_field(details, key), np.nan).astype(float)
            # Recorded inactive: inactive. Recorded active but not re-computable here (no
            # criteria or verdicts in the record): the stored channel score.
            scores[known & ~active] = np.nan
            fill = known & active & np.isnan(scores)
            scores[fill] = stored_score[fill]
    tsr = _combine_vectors(action, nl, comm)
    tsr[~arrow_to_numpy(_col(table, "criteria").is_valid()).astype(bool) & ~has_details] = np.nan
    unjudged = (n_assert > 0) & np.isnan(nl)
    return {"tsr": tsr, "tsr_action": action, "tsr_nl": nl, "tsr_communicate": comm,
            "nl_unjudged": pd.arrays.BooleanArray(unjudged, np.zeros(len(unjudged), bool))}
