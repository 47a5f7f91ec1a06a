"""The reliability page's judge section: the judge against human labels (issue 44).

With the report's ``labels`` parameter (a CSV of judged items and a boolean ``label``), the
stored verdicts that are a pass or a fail (``yes``/``no`` of the user-simulator tests,
``met``/``not_met`` of NL assertions, ``1``/``0`` of the outcome judge) are joined to the
labels, and per judge and judge model the page shows the judge's calibration
(:func:`~accordkit.stats.judge_calibration`) and the judged pass rate, raw beside corrected
(:func:`~accordkit.stats.corrected_rate`, :func:`~accordkit.stats.ppi_mean`); the raw
rate's own interval (``judged_low``, ``judged_high``: Agresti–Coull on the test set's
effective size) is the one the judge's word alone supports. The result pages show the same
rates table for their judge (``by`` a configuration). Without labels the pages are
unchanged.

The labels file names each item by ``episode_id``, ``judge`` and ``item`` (and
``turn_idx`` and ``judge_model`` where the verdicts have several); a label for an item no
verdict file holds is left out and counted in the section's note.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import pandas as pd
from scipy import stats as sps

from ..stats import corrected_rate, judge_calibration, ppi_mean

__all__ = ["JudgeTables", "judged_items", "judge_tables", "ID_COLUMNS", "PASS", "FAIL"]

#: the columns that name a judged item, in this order (those the labels file has are used)
ID_COLUMNS = ("episode_id", "judge", "judge_model", "item", "turn_idx")
#: verdict texts that are a pass, and a fail; any other (n/a, a preference, an error) is
#: not a judged pass or fail and is left out
PASS = frozenset({"yes", "met", "1", "true", "pass"})
FAIL = frozenset({"no", "not_met", "0", "false", "fail"})
KEY = "item_key"


@dataclass(frozen=True)
class JudgeTables:
    """The section's tables, and what was left out."""

    calibration: pd.DataFrame
    rates: pd.DataFrame
    notes: tuple[str, ...]


def _key(frame: pd.DataFrame, on: tuple[str, ...]) -> pd.Series:
    parts = [frame[c].astype("string").fillna("") for c in on]
    key = parts[0]
    for part in parts[1:]:
        key = key + "\x1f" + part
    return key.astype(object)


def _raw_interval(rate: pd.Series, n_eff: pd.Series,
                  confidence: float) -> tuple[pd.Series, pd.Series]:
    """The judged rate's own interval, the judge taken at its word: Agresti–Coull on the
    test set's effective size (its count over the design effect), as the corrected
    interval treats the same proportion."""
    z = float(sps.norm.ppf(1 - (1 - confidence) / 2))
    size = n_eff + z * z
    centre = (n_eff * rate + z * z / 2) / size
    half = z * np.sqrt(centre * (1 - centre) / size)
    return (centre - half).clip(0, 1), (centre + half).clip(0, 1)


def judged_items(verdicts: pd.DataFrame) -> pd.DataFrame:
    """The verdict rows that are a pass or a fail, with a boolean ``verdict``."""
    text = verdicts["verdict"].astype("string").str.strip().str.lower()
    keep = text.isin(PASS | FAIL).fillna(False).to_numpy(dtype=bool)
    out = verdicts.loc[keep, [c for c in ID_COLUMNS if c in verdicts.columns]].copy()
    out["verdict"] = text[keep].isin(PASS).to_numpy(dtype=bool)
    return out.reset_index(drop=True)


def judge_tables(verdicts: pd.DataFrame | None, *, labels: str | Path,
                 episodes: pd.DataFrame | None = None, by: str | Sequence[str] = (),
                 cluster: str | None = "scenario_id", confidence: float = 0.95,
                 n_resamples: int = 2000, seed: int = 0) -> JudgeTables:
    """Calibration and raw-beside-corrected rates per judge and judge model.

    ``episodes`` gives each episode's ``cluster`` (its scenario) and the ``by`` columns
    (e.g. the configuration): with ``by``, each group of episodes is calibrated on its own
    labels and corrected on its own verdicts (a judge may err differently on different
    agents), so each group needs labelled passes and failures of its own. ``cluster``
    ``"episode_id"`` resamples the items of one episode together (when ``episodes`` has no
    scenario). Raises ``ValueError`` naming the labels file when it lacks ``episode_id``,
    ``judge``, ``item`` or ``label``, or when a label is not a boolean, and naming a ``by``
    column ``episodes`` lacks.
    """
    if episodes is None:
        episodes = pd.DataFrame({"episode_id": []})
    by = [by] if isinstance(by, str) else list(by)
    absent = [c for c in by if c not in episodes.columns]
    if absent:
        raise ValueError(f"judge tables by {absent}: the episodes have no such column "
                         f"(they have {sorted(map(str, episodes.columns))[:20]})")
    path = Path(labels)
    if not path.is_file():
        raise FileNotFoundError(f"labels file {str(path)!r} does not exist")
    frame_l = pd.read_csv(path)
    missing = [c for c in ("episode_id", "judge", "item", "label") if c not in frame_l.columns]
    if missing:
        raise ValueError(f"labels file {str(path)!r} lacks the columns {missing}; it needs "
                         "episode_id, judge, item (turn_idx, judge_model where the verdicts "
                         "have several) and label")
    if verdicts is None or not len(verdicts):
        what = ("no verdict files" if verdicts is None else
                "the verdict files hold no verdict of this judge")
        return JudgeTables(pd.DataFrame(), pd.DataFrame(),
                           (f"{what}: nothing to calibrate against the labels",))
    items = judged_items(verdicts)
    on = tuple(c for c in ID_COLUMNS if c in frame_l.columns and c in items.columns)
    named = _key(frame_l, on)
    if named.duplicated().any():
        raise ValueError(f"labels file {str(path)!r} labels the item(s) "
                         f"{named[named.duplicated()].unique()[:5].tolist()} more than once")
    # a label applies to every verdict of the item it names (each judge model's, each
    # turn's, unless the file names them)
    items[KEY] = _key(items, tuple(c for c in ID_COLUMNS if c in items))
    base = pd.DataFrame({"_named": _key(items, on), KEY: items[KEY]})
    notes = []
    known = named.isin(base["_named"])
    if not known.all():
        notes.append(f"{int((~known).sum())} of {len(frame_l)} labels name no judged pass or "
                     f"fail of the verdict files and were left out")
    frame_l = (pd.DataFrame({"_named": named[known], "label": frame_l.loc[known, "label"]})
               .merge(base, on="_named", how="inner")[[KEY, "label"]])
    if cluster == "episode_id":
        wanted = by
    elif cluster is not None and cluster in episodes.columns:
        wanted = [cluster, *(c for c in by if c != cluster)]
    else:
        cluster, wanted = None, by
    if wanted:
        scen = episodes[["episode_id", *wanted]].drop_duplicates("episode_id")
        items = items.merge(scen, on="episode_id", how="left")
        unscored = ~items["episode_id"].isin(scen["episode_id"])
        if cluster in wanted:
            unscored |= items[cluster].isna()
        if unscored.any():
            notes.append(f"{int(unscored.sum())} verdicts of episodes not in the report's "
                         "sources were left out")
            items = items.loc[~unscored]
            frame_l = frame_l.loc[frame_l[KEY].isin(items[KEY])]
    by = [*by, *(c for c in ("judge", "judge_model") if c in items.columns)]
    calibration = judge_calibration(items, frame_l, on=KEY, by=by, cluster=cluster,
                                     confidence=confidence, n_resamples=n_resamples, seed=seed)
    rates = corrected_rate(items, frame_l, on=KEY, by=by, cluster=cluster,
                           confidence=confidence)
    ppi = ppi_mean(items, frame_l, on=KEY, by=by, cluster=cluster, confidence=confidence,
                   n_resamples=n_resamples, seed=seed)
    rates = rates.rename(columns={"raw": "judged_rate", "estimate": "corrected",
                                  "ci_low": "corrected_low", "ci_high": "corrected_high"})
    ppi = ppi[[*by, "estimate", "ci_low", "ci_high", "n_labelled"]].rename(
        columns={"estimate": "ppi", "ci_low": "ppi_low", "ci_high": "ppi_high"})
    rates = rates.merge(ppi, on=by, how="left")
    rates["judged_low"], rates["judged_high"] = _raw_interval(
        rates["judged_rate"], rates["n_test"] / rates["design_effect"], confidence)
    columns = [*by, "judged_rate", "judged_low", "judged_high", "corrected", "corrected_low", "corrected_high", "ppi",
               "ppi_low", "ppi_high", "sensitivity", "specificity", "n_test", "n_labelled",
               "design_effect", "note"]
    return JudgeTables(calibration, rates[columns], tuple(notes))
