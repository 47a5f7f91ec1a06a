"""A judged rate corrected for the judge: the judge's accuracy against human labels, and the
Rogan–Gladen estimate with an interval that carries the calibration set's uncertainty.

A judge says *pass* or *fail* of each item; a few items also have a human label (the truth).
On the labelled items (the calibration set) the judge's **sensitivity** ``q1`` is the share
of true passes it calls pass, its **specificity** ``q0`` the share of true failures it calls
fail. On the other items (the test set, ``n`` of them) it calls a share ``p`` pass. If its
errors do not depend on the item beyond the truth, ``p = q1 θ + (1 - q0)(1 - θ)`` for the
true pass rate ``θ``, so (Rogan & Gladen 1978)::

    θ = (p + q0 - 1) / (q0 + q1 - 1)

The interval is the one of Lee, Zeng, Jeong, Sohn & Lee, "How to correctly report
LLM-as-a-judge evaluations" (arXiv 2511.21140; its code ``confidence_interval`` in
``llm_judge_reporting/calibration.py``), written here from its formulas. With
``z = Φ⁻¹(1 - α/2)`` and ``m0``, ``m1`` the labelled failures and passes:

1. shrink each proportion (Agresti–Coull for ``p``, add-one-each for ``q0`` and ``q1``)::

       p̃ = (n p + z²/2) / (n + z²)     ñ = n + z²
       q̃0 = (m0 q0 + 1) / (m0 + 2)     m̃0 = m0 + 2
       q̃1 = (m1 q1 + 1) / (m1 + 2)     m̃1 = m1 + 2
       θ̃ = (p̃ + q̃0 - 1) / (q̃0 + q̃1 - 1)

2. the delta-method standard error of θ̃, from the three independent proportions::

       se = sqrt(p̃(1-p̃)/ñ + (1-θ̃)² q̃0(1-q̃0)/m̃0 + θ̃² q̃1(1-q̃1)/m̃1) / (q̃0 + q̃1 - 1)

3. a bias adjustment of the centre, the second-order term of θ's expansion in ``q0`` and
   ``q1`` (both in the denominator)::

       dθ = 2 z² (θ̃ q̃1(1-q̃1)/m̃1 - (1-θ̃) q̃0(1-q̃0)/m̃0)

4. the interval ``[θ̃ + dθ - z se, θ̃ + dθ + z se]`` clipped to ``[0, 1]``; the point
   estimate is the unshrunk θ clipped to ``[0, 1]``.

**Rollouts of one scenario** are not independent. With ``cluster=`` each of ``n``, ``m0``
and ``m1`` is replaced by its effective size, the count divided by the design effect of its
proportion: the cluster-robust (CR1) variance of the proportion over ``p(1-p)/count``,
floored at 1. Without clusters (every design effect 1) the interval is the reference's to
the last bit; the coverage with clustered rollouts is measured in
``benchmarks/results/judge_correction.md``.

A judge no better than a coin (``q0 + q1 <= 1``) cannot be corrected: the estimate is NaN,
the interval ``[0, 1]``, and the ``note`` column says so.
"""

from __future__ import annotations

import hashlib
import math
from collections.abc import Sequence

import numpy as np
import pandas as pd
from scipy import stats as sps

from ._labels import LABEL_COLUMN, LabelledItems, group_frames, join_labels, resample_counts
from ._validate import _check_n_resamples, _check_seed

__all__ = ["judge_calibration", "corrected_rate", "rogan_gladen", "rogan_gladen_interval",
           "CALIBRATION_COLUMNS", "CORRECTED_COLUMNS", "WEAK_JUDGE_NOTE"]

#: result columns of :func:`judge_calibration` after the ``by`` columns
CALIBRATION_COLUMNS = ("measure", "estimate", "ci_low", "ci_high", "successes", "n",
                       "n_clusters", "ci_method", "confidence")
#: result columns of :func:`corrected_rate` after the ``by`` columns
CORRECTED_COLUMNS = ("raw", "estimate", "ci_low", "ci_high", "sensitivity", "specificity",
                     "n_test", "n_labelled_pass", "n_labelled_fail", "design_effect",
                     "confidence", "note")
#: resamples drawn at once in a bootstrap (bounds the memory of one block)
_BLOCK = 256
WEAK_JUDGE_NOTE = "judge too weak to correct (sensitivity + specificity <= 1)"
MEASURES = ("sensitivity", "specificity", "accuracy", "kappa")


# --------------------------------------------------------------------------- scalar formulas


def rogan_gladen(p: float, q0: float, q1: float) -> float:
    """The Rogan–Gladen corrected rate ``(p + q0 - 1) / (q0 + q1 - 1)``, clipped to [0, 1];
    NaN when ``q0 + q1 <= 1``."""
    if q0 + q1 <= 1:
        return math.nan
    return min(1.0, max(0.0, (p + q0 - 1) / (q0 + q1 - 1)))


def rogan_gladen_interval(p: float, q0: float, q1: float, n: float, m0: float, m1: float,
                          *, confidence: float = 0.95) -> tuple[float, float]:
    """The interval of Lee et al. (arXiv 2511.21140) for the corrected rate.

    ``p`` is the judged pass rate on ``n`` test items, ``q0`` the specificity on ``m0``
    labelled failures, ``q1`` the sensitivity on ``m1`` labelled passes (the sizes may be
    effective sizes, not whole numbers). Steps 1–4 of the module docstring; ``(0, 1)``
    when the shrunk judge is no better than a coin.
    """
    z = sps.norm.ppf(1 - (1 - confidence) / 2)
    z2 = z * z
    pt = (n * p + z2 / 2) / (n + z2)
    q0t = (m0 * q0 + 1) / (m0 + 2)
    q1t = (m1 * q1 + 1) / (m1 + 2)
    nt, m0t, m1t = n + z2, m0 + 2, m1 + 2
    denom = q0t + q1t - 1
    if denom <= 0:
        return 0.0, 1.0
    theta = (pt + q0t - 1) / denom
    var0 = q0t * (1 - q0t) / m0t
    var1 = q1t * (1 - q1t) / m1t
    shift = 2 * z2 * (theta * var1 - (1 - theta) * var0)
    se = math.sqrt(pt * (1 - pt) / nt + (1 - theta) ** 2 * var0 + theta ** 2 * var1) / denom
    clip = lambda x: min(1.0, max(0.0, x))  # noqa: E731
    return clip(theta + shift - z * se), clip(theta + shift + z * se)


def _design_effect(values: np.ndarray, clusters: np.ndarray | None) -> float:
    """CR1 variance of the mean of 0/1 ``values`` over the binomial one, floored at 1."""
    n = len(values)
    if clusters is None or n < 2:
        return 1.0
    mean = values.mean()
    if mean in (0.0, 1.0):
        return 1.0
    codes, inverse = np.unique(clusters, return_inverse=True)
    g = len(codes)
    if g < 2:
        return 1.0
    resid = np.bincount(inverse, weights=values - mean, minlength=g)
    robust = g / (g - 1) * np.sum(resid ** 2) / n ** 2
    return max(1.0, robust / (mean * (1 - mean) / n))


# --------------------------------------------------------------------------- calibration


def _clopper_pearson(x: float, n: float, confidence: float) -> tuple[float, float]:
    if n == 0:
        return math.nan, math.nan
    a = (1 - confidence) / 2
    low = 0.0 if x == 0 else float(sps.beta.ppf(a, x, n - x + 1))
    high = 1.0 if x == n else float(sps.beta.ppf(1 - a, x + 1, n - x))
    return low, high


def _measures(tp, fn, fp, tn):
    """sensitivity, specificity, accuracy and Cohen's kappa from the four counts (arrays)."""
    with np.errstate(divide="ignore", invalid="ignore"):
        pos, neg = tp + fn, fp + tn
        total = pos + neg
        sens = tp / pos
        spec = tn / neg
        acc = (tp + tn) / total
        chance = ((tp + fp) * pos + (fn + tn) * neg) / total ** 2
        kappa = np.where(chance < 1, (acc - chance) / (1 - chance), np.nan)
    return sens, spec, acc, kappa


def judge_calibration(
    verdicts: pd.DataFrame,
    labels: pd.DataFrame | str,
    *,
    on: str | Sequence[str] | None = None,
    verdict: str = "verdict",
    label: str = "label",
    by: str | Sequence[str] | None = None,
    cluster: str | None = None,
    method: str | None = None,
    confidence: float = 0.95,
    n_resamples: int = 2000,
    seed: int = 0,
) -> pd.DataFrame:
    """The judge's sensitivity, specificity, accuracy and Cohen's kappa against human labels.

    Parameters
    ----------
    verdicts : DataFrame
        One row per judged item: its id column(s), the judge's boolean ``verdict`` (True is
        pass), and the ``by`` and ``cluster`` columns.
    labels : DataFrame or str or path
        The human labels: the id column(s) and a boolean ``label`` (True is pass), as a
        frame or a CSV file. Every labelled item must have a verdict.
    on : str or list of str, optional
        The id columns to join on; by default those of ``episode_id``, ``item_id`` that
        both have.
    verdict, label : str
        The verdict column of ``verdicts`` and the label column of ``labels``.
    by : str or list of str, optional
        One calibration per group (e.g. per judge or per benchmark).
    cluster : str, optional
        The scenario column: items of one scenario are resampled together.
    method : {"exact", "bootstrap"}, optional
        ``"exact"``: Clopper–Pearson intervals for the three proportions (items
        independent, so not with ``cluster``), and a percentile bootstrap for kappa.
        ``"bootstrap"``: percentile intervals from ``n_resamples`` resamples of the items,
        or of the scenarios with ``cluster``. Default: exact without ``cluster``,
        bootstrap with it.
    confidence : float
        Coverage of the intervals.
    n_resamples, seed : int
        The bootstrap's resamples and seed (the same input and seed give the same table).

    Returns
    -------
    DataFrame
        Tidy long: per group and measure (``sensitivity``: the share of true passes called
        pass; ``specificity``: of true failures called fail; ``accuracy``; ``kappa``) the
        ``estimate``, ``ci_low``, ``ci_high``, ``successes`` and ``n`` (the measure's
        numerator and denominator, for kappa the agreements and the items), the labelled
        ``n_clusters``, the ``ci_method`` and the ``confidence``. A measure whose
        denominator is empty (no labelled failure, say) is NaN.

    Examples
    --------
    >>> import pandas as pd
    >>> import accordkit as ak
    >>> verdicts = pd.DataFrame({"episode_id": list("abcdefgh"),
    ...                          "verdict": [1, 1, 1, 0, 0, 0, 1, 0]})
    >>> labels = pd.DataFrame({"episode_id": list("abcdef"),
    ...                        "label": [True, True, False, False, False, True]})
    >>> table = ak.judge_calibration(verdicts, labels)
    >>> table[["measure", "estimate", "successes", "n"]].round(3)
           measure  estimate  successes  n
    0  sensitivity     0.667          2  3
    1  specificity     0.667          2  3
    2     accuracy     0.667          4  6
    3        kappa     0.333          4  6
    """
    items = join_labels(verdicts, labels, on=on, verdict=verdict, label=label, by=by,
                        cluster=cluster, confidence=confidence, binary=True)
    n_resamples = _check_n_resamples(n_resamples)
    seed = _check_seed(seed)
    if method is None:
        method = "exact" if cluster is None else "bootstrap"
    if method not in ("exact", "bootstrap"):
        raise ValueError(f"`method` must be 'exact' or 'bootstrap'; got {method!r}")
    if method == "exact" and cluster is not None:
        raise ValueError("`method='exact'` assumes independent items; with `cluster` use "
                         "method='bootstrap' (scenarios resampled whole)")
    rows = []
    for key, sub in group_frames(items):
        sub = sub[sub[LABEL_COLUMN].notna()]
        rows.extend(_calibration_rows(items, key, sub, method, n_resamples, seed))
    out = pd.DataFrame(rows, columns=[*items.by, *CALIBRATION_COLUMNS])
    return out.astype({"successes": np.int64, "n": np.int64, "n_clusters": np.int64})


def _calibration_rows(items: LabelledItems, key: tuple, sub: pd.DataFrame, method: str,
                      n_resamples: int, seed: int) -> list[tuple]:
    y = sub[LABEL_COLUMN].to_numpy()
    v = sub[items.verdict].to_numpy()
    if items.cluster is None:
        inverse = np.arange(len(sub))
    else:
        inverse = np.unique(sub[items.cluster].astype(str).to_numpy(), return_inverse=True)[1]
    g = int(inverse.max()) + 1 if len(sub) else 0
    cells = np.stack([np.bincount(inverse, weights=(y == 1) & (v == 1), minlength=g),
                      np.bincount(inverse, weights=(y == 1) & (v == 0), minlength=g),
                      np.bincount(inverse, weights=(y == 0) & (v == 1), minlength=g),
                      np.bincount(inverse, weights=(y == 0) & (v == 0), minlength=g)])
    tp, fn, fp, tn = cells.sum(axis=1)
    estimates = [float(e) for e in _measures(tp, fn, fp, tn)]
    counts = [(tp, tp + fn), (tn, fp + tn), (tp + tn, len(sub)), (tp + tn, len(sub))]
    conf = items.confidence
    boot = None
    if g >= 2:
        rng = np.random.default_rng([seed, *(hash_key(k) for k in key)])
        boot = np.concatenate([
            np.stack(_measures(*(resample_counts(rng, g, size) @ cells.T).T), axis=1)
            for size in np.diff([*range(0, n_resamples, _BLOCK), n_resamples])])
    out = []
    a = (1 - conf) / 2
    for j, name in enumerate(MEASURES):
        x, n = counts[j]
        if method == "exact" and name != "kappa":
            low, high = _clopper_pearson(x, n, conf)
            ci_method = "Clopper-Pearson"
        elif boot is None or np.isnan(estimates[j]):
            low, high, ci_method = math.nan, math.nan, "none"
        else:
            finite = boot[:, j][np.isfinite(boot[:, j])]
            low, high = (np.quantile(finite, [a, 1 - a]).tolist() if len(finite)
                         else (math.nan, math.nan))
            ci_method = ("cluster bootstrap percentile" if items.cluster
                         else "bootstrap percentile")
        out.append((*key, name, estimates[j], low, high, int(x), int(n), g, ci_method, conf))
    return out


def hash_key(value: object) -> int:
    """A stable non-negative integer for a group's key (seeds each group's generator)."""
    text = str(value).encode("utf-8")
    return int.from_bytes(hashlib.blake2b(text, digest_size=8).digest(), "big")


# --------------------------------------------------------------------------- corrected rate


def corrected_rate(
    verdicts: pd.DataFrame,
    labels: pd.DataFrame | str,
    *,
    on: str | Sequence[str] | None = None,
    verdict: str = "verdict",
    label: str = "label",
    by: str | Sequence[str] | None = None,
    cluster: str | None = None,
    confidence: float = 0.95,
) -> pd.DataFrame:
    """The judged pass rate corrected for the judge's errors (Rogan–Gladen), with the
    interval of Lee et al. (arXiv 2511.21140) that carries both the test set's and the
    calibration set's uncertainty.

    The labelled items are the calibration set (they give the sensitivity and
    specificity); the judged items without a label are the test set (their judged rate is
    ``p``). The formulas, and how ``cluster`` enters them, are in this module's docstring.

    Parameters
    ----------
    verdicts : DataFrame
        One row per judged item: id column(s), boolean ``verdict`` (True is pass), and the
        ``by`` and ``cluster`` columns.
    labels : DataFrame or str or path
        Human labels of some of the items (id columns and a boolean ``label``), a frame or
        a CSV file.
    on, verdict, label, by : see :func:`judge_calibration`.
    cluster : str, optional
        The scenario column: each proportion's sample size becomes its effective size
        (count over the cluster-robust design effect).
    confidence : float
        Coverage of the interval.

    Returns
    -------
    DataFrame
        Per group: ``raw`` (the judged rate of the test set), ``estimate`` (corrected,
        clipped to [0, 1]), ``ci_low``, ``ci_high``, ``sensitivity``, ``specificity``,
        ``n_test``, ``n_labelled_pass``, ``n_labelled_fail``, ``design_effect`` (of the
        test set's rate; 1 without ``cluster``), ``confidence`` and ``note`` (empty, or why
        the estimate is clipped or missing).

    Examples
    --------
    A lenient judge (it passes 3 of 10 true failures) calls 14 of 20 unlabelled items
    pass; corrected, the rate is lower, and ten labels of each kind leave it uncertain:

    >>> import pandas as pd
    >>> import accordkit as ak
    >>> verdicts = pd.DataFrame({"episode_id": range(40), "verdict": [1] * 9 + [0]
    ...                          + [1] * 3 + [0] * 7 + [1] * 14 + [0] * 6})
    >>> labels = pd.DataFrame({"episode_id": range(20),
    ...                        "label": [True] * 10 + [False] * 10})
    >>> table = ak.corrected_rate(verdicts, labels)
    >>> table[["raw", "sensitivity", "specificity", "estimate", "ci_low", "ci_high"]].round(3)
       raw  sensitivity  specificity  estimate  ci_low  ci_high
    0  0.7          0.9          0.7     0.667   0.178      1.0
    """
    items = join_labels(verdicts, labels, on=on, verdict=verdict, label=label, by=by,
                        cluster=cluster, confidence=confidence, binary=True)
    rows = []
    for key, sub in group_frames(items):
        rows.append((*key, *_corrected_row(items, sub)))
    return pd.DataFrame(rows, columns=[*items.by, *CORRECTED_COLUMNS]).astype(
        {"n_test": np.int64, "n_labelled_pass": np.int64, "n_labelled_fail": np.int64})


def _corrected_row(items: LabelledItems, sub: pd.DataFrame) -> tuple:
    labelled = sub[LABEL_COLUMN].notna().to_numpy()
    v = sub[items.verdict].to_numpy()
    y = sub[LABEL_COLUMN].to_numpy()
    clusters = (sub[items.cluster].astype(str).to_numpy() if items.cluster else None)
    test = v[~labelled]
    pos = labelled & (y == 1)
    neg = labelled & (y == 0)
    n, m1, m0 = len(test), int(pos.sum()), int(neg.sum())
    conf = items.confidence
    nan = math.nan
    if n == 0 or m0 == 0 or m1 == 0:
        what = ("no unlabelled item to correct" if n == 0 else
                "no labelled item to calibrate on" if m0 == m1 == 0 else
                "no labelled " + ("failure" if m0 == 0 else "pass") + " to calibrate on")
        raw = float(test.mean()) if n else nan
        q1 = float(v[pos].mean()) if m1 else nan
        q0 = float(1 - v[neg].mean()) if m0 else nan
        return raw, nan, nan, nan, q1, q0, n, m1, m0, nan, conf, what
    p = float(test.mean())
    q1 = float(v[pos].mean())
    q0 = float(1 - v[neg].mean())

    def sub_c(mask: np.ndarray) -> np.ndarray | None:
        return None if clusters is None else clusters[mask]

    d_test = _design_effect(test, sub_c(~labelled))
    d_pos = _design_effect(v[pos], sub_c(pos))
    d_neg = _design_effect(1 - v[neg], sub_c(neg))
    if q0 + q1 <= 1:
        return p, nan, 0.0, 1.0, q1, q0, n, m1, m0, d_test, conf, WEAK_JUDGE_NOTE
    raw_theta = (p + q0 - 1) / (q0 + q1 - 1)
    note = ""
    if not 0 <= raw_theta <= 1:
        note = f"corrected rate {raw_theta:.3f} clipped to [0, 1]"
    low, high = rogan_gladen_interval(p, q0, q1, n / d_test, m0 / d_neg, m1 / d_pos,
                                      confidence=conf)
    return p, rogan_gladen(p, q0, q1), low, high, q1, q0, n, m1, m0, d_test, conf, note
