"""``compare_modes``: file-level goal-shift metrics, accordkit's definitions beside upstream's.

For every source file (``source`` column) the frame shows each file-level metric as accordkit
computes it by default (``default``) and as the upstream AgentChangeBench code reports it
(``upstream``), with ``upstream_mode`` naming which upstream computation:

``compute_metrics``
    ``agent_metrics.compute_metrics`` of calissaman/AgentChangeBench at a6a9157 (what
    ``tau2 view`` prints): cached TSR means (-1 when any simulation lacks ``tsr_details``),
    pooled TUE, TCRR pooled across conversations by turn number, GSRT from the cached judge
    output (-1 when any simulation lacks it; medians never produced), 0.0 for empty ratios.
``tcrr_b2cc83c``
    TCRR with the rules of anoexpected/AgentChangeBench at b2cc83c (also pooled).
``first_call_rescored``
    TSR re-scored here with the upstream first-call action rule instead of best match.
``gsrt_py``
    ``gsrt.compute_gsrt_enhanced_metrics`` on the cached judge output: recovered and
    transferred shifts counted for the first simulation of each task only.

Metrics with no upstream counterpart have ``upstream`` NaN.
"""

from __future__ import annotations

import warnings

import numpy as np
import pandas as pd
import pyarrow as pa
import pyarrow.compute as pc

from .._internal.arrow import one_array, one_chunk
from ..benchmarks import ids
from .calls import Transcripts
from .goalshift import score_episodes
from .gsrt import shift_rows
from .passk import pass_hat_k_means
from .tcrr import resolve_mode, tcrr_counts
from .tsr import tsr_channels
from .tue import tue_points

__all__ = ["compare_modes", "COMPARE_COLUMNS"]

COMPARE_COLUMNS = ["source", "domain", "agent_model", "metric", "default", "upstream",
                   "upstream_mode", "n_episodes"]
#: The benchmarks whose upstream definitions are compared (the catalogue's ``mode_comparison``).
_GOALSHIFT = ids(mode_comparison=True)


def _table(ds) -> pa.Table:
    if isinstance(ds, pa.Table):
        table = ds
    else:
        from .._internal.arrow import arrow_table

        table = arrow_table(ds)
    mask = pc.fill_null(pc.is_in(table.column("benchmark"), value_set=pa.array(_GOALSHIFT)),
                        False)
    return table.filter(mask)


def _ratio(num: float, den: float, *, empty: float = np.nan) -> float:
    return float(num) / float(den) if den else empty


def _nanmean(values: pd.Series | np.ndarray) -> float:
    arr = np.asarray(values, dtype=float)
    arr = arr[~np.isnan(arr)]
    return float(arr.mean()) if len(arr) else np.nan


def _median(values: np.ndarray) -> float:
    arr = values[~np.isnan(values)]
    return float(np.median(arr)) if len(arr) else np.nan


def _stored_tsr(table: pa.Table, rows: np.ndarray) -> dict[str, float]:
    details = one_array(table.column("tsr_details")).take(pa.array(rows))
    if details.null_count or not len(rows):
        return dict.fromkeys(("tsr", "tsr_action", "tsr_nl", "tsr_communicate"), -1.0)
    out = {"tsr": float(np.mean(pc.struct_field(details, "overall_tsr").to_numpy(
        zero_copy_only=False)))}
    for name, key in (("tsr_action", "action"), ("tsr_nl", "nl_assertion"),
                      ("tsr_communicate", "communicate_info")):
        vals = pc.drop_null(pc.struct_field(details, key)).to_numpy(zero_copy_only=False)
        out[name] = float(np.mean(vals)) if len(vals) else 0.0
    return out


def _upstream_gsrt(shifts: pd.DataFrame, has_judge: np.ndarray, rows: np.ndarray
                   ) -> dict[str, float]:
    """GSRT block of upstream ``compute_metrics`` (a6a9157)."""
    if not len(rows) or not has_judge[rows].all():
        return {"n_shifts": -1.0, "recovery_rate": -1.0, "transfer_rate": -1.0,
                "never_recovered_rate": -1.0, "gsrt_ack": np.nan, "gsrt_tool": np.nan,
                "gsrt_outcome": np.nan}
    part = shifts[shifts["row"].isin(rows) & (shifts["shift_source"] == "judge")]
    total = len(part)
    rec = int(part["recovered"].fillna(False).sum())
    trn = int(part["transferred"].fillna(False).sum())
    per_sim = part.groupby("row")["recovered"].agg(["size", "sum"])
    never = int(((per_sim["size"] > 0) & (per_sim["sum"] == 0)).sum())
    return {"n_shifts": float(total), "recovery_rate": _ratio(rec, total, empty=0.0),
            "transfer_rate": _ratio(trn, total, empty=0.0),
            "never_recovered_rate": _ratio(never, len(rows), empty=0.0),
            "gsrt_ack": np.nan, "gsrt_tool": np.nan, "gsrt_outcome": np.nan}


def _gsrt_py(shifts: pd.DataFrame, has_judge: np.ndarray, task_ids: list, rows: np.ndarray
             ) -> dict[str, float]:
    """``gsrt.compute_gsrt_enhanced_metrics`` on cached judge output (first-trial merge)."""
    judged = [r for r in rows.tolist() if has_judge[r]]
    first_of_task: dict[str, int] = {}
    for r in judged:
        first_of_task.setdefault(task_ids[r], r)
    part = shifts[shifts["row"].isin(judged) & (shifts["shift_source"] == "judge")]
    total = len(part)
    first = part["row"].isin(list(first_of_task.values()))
    rec = int(part.loc[first, "recovered"].fillna(False).sum())
    trn = int(part.loc[first, "transferred"].fillna(False).sum())
    return {"n_shifts": float(total), "recovery_rate": _ratio(rec, total, empty=0.0),
            "transfer_rate": _ratio(trn, total, empty=0.0),
            "never_recovered_rate": _ratio(total - rec, total, empty=0.0),
            "gsrt_ack": _median(part["gsrt_ack"].to_numpy(dtype=float)),
            "gsrt_tool": _median(part["gsrt_tool"].to_numpy(dtype=float)),
            "gsrt_outcome": _median(part["gsrt_outcome"].to_numpy(dtype=float))}


def compare_modes(ds) -> pd.DataFrame:
    """Each file-level goal-shift metric under accordkit's default and the upstream modes.

    Parameters
    ----------
    ds : datasets.Dataset or pyarrow.Table
        Canonical episodes; AgentChangeBench / tau2 rows are used, grouped by ``source``.

    Returns
    -------
    pandas.DataFrame
        Tidy, one row per (source, metric, upstream mode): :data:`COMPARE_COLUMNS`.
        ``default`` is NaN where accordkit's value is undefined (e.g. no tool calls);
        ``upstream`` holds what the upstream code reports, sentinels (-1) and 0.0 for empty
        ratios included.

    Examples
    --------
    >>> import accordkit as ak
    >>> table = ak.compare_modes(ak.load("run.json"))              # doctest: +SKIP
    >>> table[table.metric == "tcrr"]                              # doctest: +SKIP
    """
    table = one_chunk(_table(ds), keep=("messages",))
    if not table.num_rows:
        return pd.DataFrame(columns=COMPARE_COLUMNS)
    tr = Transcripts(table)
    default = score_episodes(table)
    # what upstream's compute_metrics re-scores: TSR by its first-call action rule and its
    # pooled TCRR (only these columns are read, so the rest of score_episodes is not run)
    first_call = pd.concat(
        [tsr_channels(table, action_mode="upstream", transcripts=tr),
         tcrr_counts(table, mode=resolve_mode("upstream_a6a9157"), transcripts=tr)], axis=1)
    b2 = tcrr_counts(table, mode="upstream_b2cc83c", transcripts=tr)
    shifts, _ = shift_rows(table, transcripts=tr)
    has_judge = one_array(table.column("gsrt_judge")).is_valid().to_numpy(
        zero_copy_only=False)
    sources = pc.fill_null(table.column("source"), "").to_pylist()
    domains = table.column("domain").to_pylist()
    models = table.column("agent_model").to_pylist()
    task_ids = table.column("task_id").to_pylist()
    scenario = table.column("scenario_id").to_pylist()
    out: list[dict] = []
    order = list(dict.fromkeys(sources))
    src_arr = np.asarray(sources, dtype=object)
    for src in order:
        rows = np.flatnonzero(src_arr == src)
        d, f, b = default.iloc[rows], first_call.iloc[rows], b2.iloc[rows]
        head = {"source": src, "domain": domains[rows[0]], "agent_model": models[rows[0]],
                "n_episodes": len(rows)}

        def add(metric: str, dval: float, uval: float, mode: str = "compute_metrics",
                head: dict = head) -> None:
            out.append({**head, "metric": metric, "default": float(dval),
                        "upstream": float(uval), "upstream_mode": mode})

        reward = d["reward"].to_numpy(dtype=float)
        add("avg_reward", _nanmean(reward), _nanmean(reward))
        add("avg_agent_cost", _nanmean(d["agent_cost"]), _nanmean(d["agent_cost"]))
        passk = pd.DataFrame({"scenario_id": [scenario[r] for r in rows],
                              "success": d["success"].to_numpy(),
                              "termination_reason": d["termination_reason"].to_numpy(),
                              "num_trials": d["num_trials"].to_numpy()})
        with warnings.catch_warnings():
            # Checkpoints have uneven trials; the k range shows the cap.
            warnings.simplefilter("ignore", UserWarning)
            ours = pass_hat_k_means(passk)
            theirs = pass_hat_k_means(passk.drop(columns="termination_reason"))
        for k, ov in zip(ours["k"], ours["pass_hat_k"], strict=True):
            uv = theirs.loc[theirs["k"] == k, "pass_hat_k"]
            add(f"pass_hat_{k}", ov, uv.iloc[0] if len(uv) else np.nan)
        stored = _stored_tsr(table, rows)
        for metric in ("tsr", "tsr_action", "tsr_nl", "tsr_communicate"):
            add(metric, _nanmean(d[metric]), stored[metric])
        for metric in ("tsr", "tsr_action"):
            add(metric, _nanmean(d[metric]), _nanmean(f[metric]), "first_call_rescored")
        calls = int(d["n_tool_calls"].sum())
        correct = int(d["n_correct_calls"].sum())
        valid = int(d["n_valid_param_calls"].sum())
        t_def, p_def = _ratio(correct, calls), _ratio(valid, calls)
        t_up, p_up = _ratio(correct, calls, empty=0.0), _ratio(valid, calls, empty=0.0)
        add("tue", tue_points(t_def, p_def), tue_points(t_up, p_up))
        add("tool_correctness", t_def, t_up)
        add("param_validity", p_def, p_up)
        add("n_tool_calls", calls, calls)
        red, tot = int(d["n_redundant_calls"].sum()), int(d["n_tcrr_calls"].sum())
        for mode, frame in (("compute_metrics", f), ("tcrr_b2cc83c", b)):
            ured, utot = int(frame["n_redundant_calls"].sum()), int(frame["n_tcrr_calls"].sum())
            add("tcrr", _ratio(red, tot), _ratio(ured, utot, empty=0.0), mode)
            add("n_redundant_calls", red, ured, mode)
            add("n_tcrr_calls", tot, utot, mode)
        part = shifts[shifts["row"].isin(rows)]
        judged = part[part["recovered"].notna()]
        n_known = len(judged)
        n_rec = int(judged["recovered"].sum())
        with_source = (d["shift_source"] != "none").any()
        ours_g = {"n_shifts": float(len(part)) if with_source else np.nan,
                  "recovery_rate": _ratio(n_rec, n_known),
                  "transfer_rate": _ratio(int(judged["transferred"].sum()), n_known),
                  "never_recovered_rate": _ratio(n_known - n_rec, n_known),
                  "gsrt_ack": _median(part["gsrt_ack"].to_numpy(dtype=float)),
                  "gsrt_tool": _median(part["gsrt_tool"].to_numpy(dtype=float)),
                  "gsrt_outcome": _median(part["gsrt_outcome"].to_numpy(dtype=float))}
        up_g = _upstream_gsrt(shifts, has_judge, rows)
        py_g = _gsrt_py(shifts, has_judge, task_ids, rows)
        for metric, value in ours_g.items():
            add(metric, value, up_g[metric])
            add(metric, value, py_g[metric], "gsrt_py")
        add("n_sims_without_judge", float((~has_judge[rows]).sum()), np.nan, "none")
    return pd.DataFrame(out, columns=COMPARE_COLUMNS)
