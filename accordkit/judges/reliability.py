"""Judge reliability from stored verdicts: pass rates (AcCoRD Table 6) and agreement.

Pure functions on the verdict table: no I/O, no LLM calls.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import pandas as pd

from ..verdicts.parse import INVALID

__all__ = ["pass_rates", "agreement", "cohen_kappa"]


def _check_columns(frame: pd.DataFrame, needed: Sequence[str], what: str) -> None:
    missing = [c for c in needed if c not in frame.columns]
    if missing:
        raise ValueError(f"{what}: the verdict table lacks column(s) {missing}")


def pass_rates(verdicts: pd.DataFrame, *, by: str | Sequence[str] = ("judge_model",),
               judge: str = "usersim_tests") -> pd.DataFrame:
    """Pass rate per unit test and group: ``yes / (yes + no)``, with the n/a share.

    Parameters
    ----------
    verdicts : DataFrame
        A verdict table (other judges' rows are ignored).
    by : str or sequence of str
        Grouping columns besides the test (``item``); add e.g. ``domain`` after merging it
        in from the episodes.
    judge : str
        The yes / no / n/a judge to summarise.

    Returns
    -------
    DataFrame
        ``*by``, ``item``, ``n_yes``, ``n_no``, ``n_na``, ``n_invalid``, ``n_error`` (Int64),
        ``pass_rate`` (NaN when no yes/no verdict) and ``na_share`` = n/a / (yes + no + n/a)
        (float64).

    Examples
    --------
    >>> v = pd.DataFrame({"judge": "usersim_tests", "judge_model": "m", "item": "test000",
    ...                   "verdict": ["yes", "yes", "no", "n/a"], "error": None})
    >>> pass_rates(v)[["item", "n_yes", "n_no", "pass_rate", "na_share"]]
          item  n_yes  n_no  pass_rate  na_share
    0  test000      2     1   0.666667      0.25
    """
    by = [by] if isinstance(by, str) else list(by)
    _check_columns(verdicts, [*by, "judge", "item", "verdict"], "pass_rates")
    rows = verdicts[verdicts["judge"] == judge]
    keys = [*by, "item"]
    verdict = rows["verdict"]
    counts = pd.DataFrame({
        "n_yes": (verdict == "yes").fillna(False),
        "n_no": (verdict == "no").fillna(False),
        "n_na": (verdict == "n/a").fillna(False),
        "n_invalid": (verdict == INVALID).fillna(False),
        "n_error": verdict.isna(),
    }).astype("int64")
    out = pd.concat([rows[keys].reset_index(drop=True), counts.reset_index(drop=True)], axis=1)
    out = out.groupby(keys, sort=True, dropna=False).sum().reset_index()
    for col in ("n_yes", "n_no", "n_na", "n_invalid", "n_error"):
        out[col] = out[col].astype("Int64")
    decided = (out["n_yes"] + out["n_no"]).astype("float64")
    judged = (decided + out["n_na"].astype("float64"))
    with np.errstate(invalid="ignore", divide="ignore"):
        out["pass_rate"] = np.where(decided > 0, out["n_yes"].astype("float64") / decided,
                                    np.nan)
        out["na_share"] = np.where(judged > 0, out["n_na"].astype("float64") / judged, np.nan)
    return out


def cohen_kappa(a: Sequence[str], b: Sequence[str]) -> float:
    """Cohen's kappa of two raters' labels on the same items.

    ``(p_o - p_e) / (1 - p_e)`` with ``p_o`` the observed agreement and ``p_e`` the agreement
    expected from each rater's label frequencies. NaN when undefined (no items, or both
    raters used one and the same label throughout, so ``p_e = 1``).

    Examples
    --------
    >>> cohen_kappa(["yes", "yes", "no", "no"], ["yes", "no", "no", "no"])
    0.5
    >>> cohen_kappa(["yes", "yes"], ["yes", "yes"])
    nan
    """
    a = np.asarray(a, dtype=object)
    b = np.asarray(b, dtype=object)
    if a.shape != b.shape:
        raise ValueError(f"cohen_kappa: the raters judged {a.size} and {b.size} items")
    if a.size == 0:
        return float("nan")
    p_o = float(np.mean(a == b))
    labels = sorted(set(a.tolist()) | set(b.tolist()))
    p_e = float(sum(np.mean(a == k) * np.mean(b == k) for k in labels))
    if np.isclose(p_e, 1.0):
        return float("nan")
    return (p_o - p_e) / (1.0 - p_e)


def agreement(verdicts: pd.DataFrame, model_a: str, model_b: str, *,
              judge: str = "usersim_tests", by: str | Sequence[str] = ()) -> pd.DataFrame:
    """Agreement between two judge models on the items both judged, per test and overall.

    Items are paired on ``episode_id``, ``item`` and ``turn_idx``. Pairs where either
    verdict is ``invalid`` or missing (error) are left out and counted in ``n_excluded``.

    Parameters
    ----------
    verdicts : DataFrame
        A verdict table holding both models' rows.
    model_a, model_b : str
        The two ``judge_model`` values.
    judge : str
        Which judge's verdicts to compare.
    by : str or sequence of str
        Extra grouping columns (present in the verdict table).

    Returns
    -------
    DataFrame
        ``*by``, ``item`` (a test id, or ``"all"`` for every item pooled), ``n_pairs``,
        ``n_excluded`` (Int64), ``agreement`` (share of identical verdicts) and ``kappa``
        (Cohen's kappa) as float64, NaN when undefined.

    Examples
    --------
    >>> v = pd.DataFrame({"episode_id": "e", "judge": "usersim_tests", "item": "test000",
    ...                   "turn_idx": [1, 3, 1, 3], "judge_model": ["a", "a", "b", "b"],
    ...                   "verdict": ["yes", "no", "yes", "yes"]})
    >>> agreement(v, "a", "b")[["item", "n_pairs", "agreement"]]
          item  n_pairs  agreement
    0  test000        2        0.5
    1      all        2        0.5
    """
    by = [by] if isinstance(by, str) else list(by)
    _check_columns(verdicts, [*by, "episode_id", "judge", "judge_model", "item", "turn_idx",
                              "verdict"], "agreement")
    if model_a == model_b:
        raise ValueError(f"agreement: model_a and model_b are the same ({model_a!r})")
    rows = verdicts[verdicts["judge"] == judge]
    present = set(rows["judge_model"].dropna().unique())
    for m in (model_a, model_b):
        if m not in present:
            raise ValueError(f"agreement: no {judge} verdicts from judge model {m!r}; "
                             f"found {sorted(present)}")
    key = [*by, "episode_id", "item", "turn_idx"]
    a = rows[rows["judge_model"] == model_a][[*key, "verdict"]]
    b = rows[rows["judge_model"] == model_b][[*key, "verdict"]]
    pairs = a.merge(b, on=key, how="inner", suffixes=("_a", "_b"))
    valid = (pairs["verdict_a"].notna() & pairs["verdict_b"].notna()
             & (pairs["verdict_a"] != INVALID) & (pairs["verdict_b"] != INVALID))
    valid = valid.fillna(False).astype(bool)
    pairs = pairs.assign(_valid=valid.to_numpy())
    out = []

    def summarise(group: pd.DataFrame, labels: dict) -> dict:
        ok = group[group["_valid"]]
        va, vb = ok["verdict_a"].astype(str).to_numpy(), ok["verdict_b"].astype(str).to_numpy()
        return {**labels, "n_pairs": len(ok), "n_excluded": int((~group["_valid"]).sum()),
                "agreement": float(np.mean(va == vb)) if len(ok) else float("nan"),
                "kappa": cohen_kappa(va, vb)}

    groups = pairs.groupby(by, sort=True, dropna=False) if by else [((), pairs)]
    for gkey, group in groups:
        labels = dict(zip(by, gkey if isinstance(gkey, tuple) else (gkey,), strict=True))
        for item, sub in group.groupby("item", sort=True):
            out.append(summarise(sub, {**labels, "item": item}))
        out.append(summarise(group, {**labels, "item": "all"}))
    frame = pd.DataFrame(out, columns=[*by, "item", "n_pairs", "n_excluded", "agreement",
                                       "kappa"])
    frame["n_pairs"] = frame["n_pairs"].astype("Int64")
    frame["n_excluded"] = frame["n_excluded"].astype("Int64")
    frame["agreement"] = frame["agreement"].astype("float64")
    frame["kappa"] = frame["kappa"].astype("float64")
    return frame
