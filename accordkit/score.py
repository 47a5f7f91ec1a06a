"""``score``: canonical episodes -> tidy metric frames.

This module only dispatches: AcCoRD rows go to :mod:`accordkit.metrics.accord`, goal-shift
rows (AgentChangeBench and plain tau2) to :mod:`accordkit.metrics.goalshift`. Each metric
module receives an Arrow table of its rows and returns a DataFrame aligned with them (one row
per episode) or, for the finer levels, rows carrying the position ``row`` of their episode.
The id columns are added here, so every frame starts with :data:`accordkit.ID_COLUMNS`.
"""

from __future__ import annotations

from functools import lru_cache
from typing import Literal

import datasets
import numpy as np
import pandas as pd
import pyarrow as pa
import pyarrow.compute as pc

from ._internal.arrow import arrow_table
from ._internal.gc import gc_paused
from .benchmarks import scored_by
from .metrics import accord, goalshift
from .names import SCORE_OPTIONS
from .schema import ID_COLUMNS

__all__ = ["score", "LEVELS", "SCORE_OPTIONS", "check_options"]

LEVELS = ("episode", "preference", "shift", "action", "review", "review_error")
#: The benchmarks each metric family scores (the catalogue, :mod:`accordkit.benchmarks`).
ACCORD_BENCHMARKS = scored_by(accord.__name__)
GOALSHIFT_BENCHMARKS = scored_by(goalshift.__name__)


def _id_columns(table: pa.Table) -> dict[str, pd.Series]:
    """The id columns of ``table``'s rows, column by column."""
    return {name: table.column(name).to_pandas() for name in ID_COLUMNS}


def _ids(table: pa.Table) -> pd.DataFrame:
    return pd.DataFrame(_id_columns(table))


def _rows(table: pa.Table, rows: np.ndarray) -> pa.Table:
    """``table``'s rows at the sorted positions ``rows`` (no copy when that is every row)."""
    return table if len(rows) == table.num_rows else table.take(pa.array(rows))


def _rows_of(table: pa.Table, benchmarks: tuple[str, ...]) -> np.ndarray:
    mask = pc.is_in(table.column("benchmark"), value_set=pa.array(benchmarks))
    return np.flatnonzero(pc.fill_null(mask, False).to_numpy(zero_copy_only=False))


def _attach(ids: pd.DataFrame, part: pd.DataFrame, rows: np.ndarray) -> pd.DataFrame:
    """Prefix a metric frame with the id columns of its episodes."""
    if "row" in part.columns:  # finer level: one or more rows per episode
        head = ids.iloc[rows[part["row"].to_numpy()]].reset_index(drop=True)
        body = part.drop(columns="row").reset_index(drop=True)
    else:
        head = ids.iloc[rows].reset_index(drop=True)
        body = part.reset_index(drop=True)
    return pd.concat([head, body], axis=1)


def _empty_scores(table: pa.Table, level: str) -> pd.DataFrame:
    """A frame with no rows and every column (and dtype) ``level`` has for some benchmark.

    The metric functions are run on zero rows, so the dtypes are the ones real scores have.
    That takes about 13 ms, the whole cost of scoring a header-only results file, so the
    frame is made once per level and table schema, and copied.
    """
    return _empty_template(level, table.schema.remove_metadata()).copy()


@lru_cache(maxsize=16)
def _empty_template(level: str, schema: pa.Schema) -> pd.DataFrame:
    none = schema.empty_table()
    ids = _ids(none)
    makers = {"episode": (accord.score_episodes, goalshift.score_episodes),
              "preference": (accord.score_preferences,),
              "shift": (goalshift.score_shifts,)}[level]
    parts = [ids]
    for make in makers:
        part = make(none).drop(columns="row", errors="ignore")
        parts.append(part[[c for c in part.columns
                           if not any(c in p.columns for p in parts)]].reset_index(drop=True))
    return pd.concat(parts, axis=1)


def check_options(options: dict) -> None:
    """``ValueError`` naming an option of ``options`` :func:`score` does not take, or a
    mode that is not one of its choices, whatever episodes there are to score.

    Examples
    --------
    >>> check_options({"tcrr_mode": "upstream", "action_mode": "best_match"})
    >>> check_options({"action_mode": "exact"})
    Traceback (most recent call last):
    ...
    ValueError: action_mode must be one of ('best_match', 'upstream'), got 'exact'
    """
    from .metrics.tcrr import resolve_mode
    from .metrics.tsr import check_action_mode

    unknown = sorted(set(options) - set(SCORE_OPTIONS))
    if unknown:
        raise ValueError(f"unknown scoring option(s) {unknown}; known: "
                         f"{list(SCORE_OPTIONS)}")
    if "tcrr_mode" in options:
        resolve_mode(options["tcrr_mode"])
    if "action_mode" in options:
        check_action_mode(options["action_mode"])


def score(
    ds: datasets.Dataset,
    *,
    level: Literal["episode", "preference", "shift", "action", "review",
                   "review_error"] = "episode",
    shop_type_gate: bool = False,
    tcrr_mode: str = "episode",
    action_mode: str = "best_match",
    verdicts: pd.DataFrame | None = None,
) -> pd.DataFrame:
    """Re-score episodes with accordkit's metric implementations.

    Parameters
    ----------
    ds : datasets.Dataset
        Canonical episodes (:func:`accordkit.load`).
    level : {"episode", "preference", "shift", "action", "review", "review_error"}
        ``"episode"``: one row per episode with every metric that applies to its benchmark
        (others are absent or NaN, never 0). ``"preference"``: one row per AcCoRD
        (episode, preference). ``"shift"``: one row per goal shift. ``"action"``: the
        action diff, one row per expected action and per unrequested write
        (:func:`accordkit.action_diff` with ``errors="skip"``: an episode it cannot make is
        left out, named in a warning and in the frame's ``attrs["left_out"]``). ``"review"`` / ``"review_error"``: the reviews
        stored with the episodes and the errors they found
        (:func:`accordkit.review_tables`), with the id columns.
    shop_type_gate : bool
        AcCoRD shop: score the outcome 0 when the product type is wrong (spec §4.2).
    tcrr_mode : {"episode", "upstream_a6a9157", "upstream_b2cc83c", "upstream"}
        How redundant tool calls are counted (see ``docs/metrics-goalshift.md``).
    action_mode : {"best_match", "upstream"}
        How calls are matched against expected actions for TSR's action channel.
    verdicts : pandas.DataFrame, optional
        Stored judge verdicts (:func:`accordkit.judge`) to use where the episodes hold none,
        attached by :func:`accordkit.verdicts.attach_verdicts` (its rule for invalid,
        missing and conflicting rows); ``gsrt`` verdicts reach the shift level too.

    Returns
    -------
    pandas.DataFrame
        Tidy frame: the id columns (:data:`accordkit.ID_COLUMNS`) then metric columns.
        With no episodes of the level's kind (e.g. a header-only results file), an empty
        frame with every column the level has, each with the dtype it has when filled.

    Examples
    --------
    >>> import accordkit as ak
    >>> scores = ak.score(ak.load("data/sample/accord"))            # doctest: +SKIP
    >>> prefs = ak.score(ak.load("data/sample/accord"), level="preference")  # doctest: +SKIP
    """
    if level not in LEVELS:
        raise ValueError(f"level must be one of {LEVELS}, got {level!r}")
    check_options({"tcrr_mode": tcrr_mode, "action_mode": action_mode})
    with gc_paused():
        return _score(ds, level=level, shop_type_gate=shop_type_gate, tcrr_mode=tcrr_mode,
                      action_mode=action_mode, verdicts=verdicts)


def _score(ds: datasets.Dataset, *, level: str, shop_type_gate: bool, tcrr_mode: str,
           action_mode: str, verdicts: pd.DataFrame | None) -> pd.DataFrame:
    table = arrow_table(ds)
    if level == "action":  # from the transcripts and the tasks alone: no verdict reaches it
        from .metrics.action_diff import action_diff

        # a derived analysis: an episode it cannot make is named and left out, never the
        # end of the others' rows (or of the headline scores scored beside them)
        return action_diff(table, errors="skip")
    if level in ("review", "review_error"):  # stored reviews (judged ones are verdicts)
        from .metrics.reviews import review_level

        return review_level(table, errors=level == "review_error")
    if verdicts is not None:  # the one join of verdict rows into episode fields
        from .verdicts.attach import attach_verdicts

        table = attach_verdicts(table, verdicts)
    accord_rows = _rows_of(table, ACCORD_BENCHMARKS)
    goal_rows = _rows_of(table, GOALSHIFT_BENCHMARKS)
    if level == "episode" and len(goal_rows) == table.num_rows and table.num_rows:
        # goal-shift episodes only (every results file): one frame of the ids and metrics
        cols = goalshift.episode_columns(table, tcrr_mode=tcrr_mode, action_mode=action_mode)
        return pd.DataFrame({**_id_columns(table), **cols})
    ids = _ids(table)
    parts = []
    if level in ("episode", "preference") and len(accord_rows):
        sub = _rows(table, accord_rows)
        fn = accord.score_episodes if level == "episode" else accord.score_preferences
        parts.append(_attach(ids, fn(sub, shop_type_gate=shop_type_gate), accord_rows))
    if level in ("episode", "shift") and len(goal_rows):
        sub = _rows(table, goal_rows)
        if level == "episode":
            frame = goalshift.score_episodes(sub, tcrr_mode=tcrr_mode, action_mode=action_mode)
        else:
            frame = goalshift.score_shifts(sub)
        parts.append(_attach(ids, frame, goal_rows))
    if not parts:
        return _empty_scores(table, level)
    if len(parts) == 1:
        return parts[0]
    # Keep episode order as loaded.
    order = np.concatenate([accord_rows, goal_rows]) if level == "episode" else None
    out = pd.concat(parts, ignore_index=True, sort=False)
    if order is not None:
        out = out.iloc[np.argsort(order, kind="stable")].reset_index(drop=True)
    # Columns of one benchmark are missing for the other's rows: concat fills them with NaN.
    # Text columns keep one missing marker (None), as each part has them.
    for col in [c for c in out.columns if pd.api.types.is_object_dtype(out[c].dtype)]:
        out[col] = out[col].astype(object).where(out[col].notna(), None)
    return out
