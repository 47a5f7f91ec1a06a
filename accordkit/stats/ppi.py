"""A prediction-powered mean: many judged items plus a few human-labelled ones.

Prediction-powered inference (Angelopoulos, Bates, Fannjiang, Jordan & Zrnic, *Science*
382, 2023) with the power tuning of PPI++ (Angelopoulos, Duchi & Zrnic, arXiv 2311.01453),
as the reference package ``ppi_py`` computes it by default (``ppi_mean_pointestimate``,
``ppi_mean_ci`` with ``lam=None``); written here from the formulas. On ``n`` labelled items
with labels ``Y`` and judge scores ``Ŷ``, and ``N`` unlabelled items with judge scores
``Ŷu``:

1. the PPI estimate ``θ₁ = mean(Ŷu) + mean(Y - Ŷ)``;
2. the power-tuning weight ``λ = 2 cov(Y, Ŷ) / (2 (1 + n/N) var(Ŷ ∪ Ŷu))``, clipped to
   [0, 1], where ``cov`` divides by ``n`` (the centred gradients at ``θ₁`` of the
   reference) and ``var`` is the sample variance (divisor ``n + N - 1``) of all judge
   scores;
3. the estimate ``θ = λ mean(Ŷu) + mean(Y - λŶ)``: ``λ = 0`` is the mean of the labels
   alone, ``λ = 1`` plain PPI;
4. the interval ``θ ± z sqrt(var₀(λŶu)/N + var₀(Y - λŶ)/n)`` (``var₀`` divides by the
   count), ``z = Φ⁻¹(1 - α/2)``.

**Rollouts of one scenario** are not independent: with ``cluster=`` the standard error is
a cluster bootstrap's. Scenarios are drawn with replacement, each with all its labelled and
unlabelled items, and steps 1–3 (λ tuned again) are applied to each resample; the
interval is ``θ ± t se`` with ``se`` the standard deviation of the resamples' estimates and
``t`` the Student quantile with ``G_L - 1`` degrees of freedom, ``G_L`` the scenarios that
have a label (the labelled items' mean error carries most of the variance, and its spread
is estimated from them). The point estimate is the same as without clusters. The
percentile and studentized (bootstrap-t) intervals of the same resamples fell below 93 %
coverage in some of the simulations of ``benchmarks/judge_correction.py`` (few labels, or a
judge that is almost always right); this one holds the level:
``benchmarks/results/judge_correction.md``.
"""

from __future__ import annotations

import math
from collections.abc import Sequence

import numpy as np
import pandas as pd
from scipy import stats as sps

from ._labels import LABEL_COLUMN, LabelledItems, group_frames, join_labels, resample_counts
from ._validate import _check_n_resamples, _check_seed
from .judge_correction import hash_key

__all__ = ["ppi_mean", "ppi_mean_estimate", "PPI_COLUMNS"]

#: result columns of :func:`ppi_mean` after the ``by`` columns
PPI_COLUMNS = ("raw", "estimate", "ci_low", "ci_high", "lam", "n_labelled", "n_unlabelled",
               "n_clusters", "ci_method", "confidence", "note")
#: resamples drawn at once in the cluster bootstrap (bounds the memory of one block)
_BLOCK = 256


def _tuned(y_sum, yh_sum, yy_sum, yhyh_sum, yyh_sum, n, u_sum, uu_sum, big_n):
    """λ and θ of steps 1–3 from the sums of the labelled and unlabelled items (arrays)."""
    with np.errstate(divide="ignore", invalid="ignore"):
        my, myh, mu = y_sum / n, yh_sum / n, u_sum / big_n
        cov = yyh_sum / n - my * myh
        total = n + big_n
        var_all = (yhyh_sum + uu_sum - (yh_sum + u_sum) ** 2 / total) / (total - 1)
        lam = cov / ((1 + n / big_n) * var_all)
    lam = np.where(np.isfinite(lam), np.clip(lam, 0.0, 1.0), 0.0)
    return lam, lam * mu + my - lam * myh


def ppi_mean_estimate(y: np.ndarray, yhat: np.ndarray, yhat_unlabelled: np.ndarray, *,
                      confidence: float = 0.95) -> tuple[float, float, float, float]:
    """``(estimate, ci_low, ci_high, λ)`` of steps 1–4 for independent items.

    When every judge score is the same the variance of step 2 is zero and λ is 0 (the
    labels' mean alone).
    """
    y, yhat, u = (np.asarray(a, dtype=float) for a in (y, yhat, yhat_unlabelled))
    n, big_n = len(y), len(u)
    lam, theta = _tuned(y.sum(), yhat.sum(), (y * y).sum(), (yhat * yhat).sum(),
                        (y * yhat).sum(), n, u.sum(), (u * u).sum(), big_n)
    lam, theta = float(lam), float(theta)
    se = math.sqrt(np.var(lam * u) / big_n + np.var(y - lam * yhat) / n)
    z = sps.norm.ppf(1 - (1 - confidence) / 2)
    return theta, theta - z * se, theta + z * se, lam


def ppi_mean(
    verdicts: pd.DataFrame,
    labels: pd.DataFrame | str,
    *,
    on: str | Sequence[str] | None = None,
    verdict: str = "verdict",
    label: str = "label",
    by: str | Sequence[str] | None = None,
    cluster: str | None = None,
    confidence: float = 0.95,
    n_resamples: int = 2000,
    seed: int = 0,
) -> pd.DataFrame:
    """A prediction-powered (PPI++) mean and interval from judged and labelled items.

    The labelled items give ``Y`` (the human label) and ``Ŷ`` (the judge's verdict or
    score); the items without a label give ``Ŷu``. The method, and what ``cluster``
    changes, are in this module's docstring; without ``cluster`` the estimate and interval
    are those of ``ppi_py.ppi_mean_pointestimate`` and ``ppi_py.ppi_mean_ci`` (to 1e-9).

    Parameters
    ----------
    verdicts : DataFrame
        One row per judged item: id column(s), the ``verdict`` (a boolean or a number, e.g.
        a judge's score), and the ``by`` and ``cluster`` columns.
    labels : DataFrame or str or path
        Human labels of some of the items (id columns and ``label``, boolean or numeric on
        the verdict's scale), a frame or a CSV file.
    on, verdict, label, by : see :func:`~accordkit.stats.judge_calibration`.
    cluster : str, optional
        The scenario column; with it the interval is a cluster bootstrap.
    confidence : float
        Coverage of the interval.
    n_resamples, seed : int
        The cluster bootstrap's resamples and seed.

    Returns
    -------
    DataFrame
        Per group: ``raw`` (the mean verdict of all items), ``estimate``, ``ci_low``,
        ``ci_high``, ``lam`` (the power-tuning weight), ``n_labelled``, ``n_unlabelled``,
        ``n_clusters``, ``ci_method``, ``confidence`` and ``note`` (why a row is missing).

    Examples
    --------
    >>> import pandas as pd
    >>> import accordkit as ak
    >>> verdicts = pd.DataFrame({"episode_id": range(8),
    ...                          "verdict": [1, 1, 0, 1, 1, 0, 1, 0]})
    >>> labels = pd.DataFrame({"episode_id": range(4), "label": [1, 0, 0, 1]})
    >>> row = ak.ppi_mean(verdicts, labels).iloc[0]
    >>> [round(float(row[c]), 4) for c in ("raw", "estimate", "ci_low", "ci_high", "lam")]
    [0.625, 0.4417, -0.0132, 0.8966, 0.2333]
    """
    items = join_labels(verdicts, labels, on=on, verdict=verdict, label=label, by=by,
                        cluster=cluster, confidence=confidence, binary=False)
    n_resamples = _check_n_resamples(n_resamples)
    seed = _check_seed(seed)
    rows = []
    for key, sub in group_frames(items):
        rows.append((*key, *_ppi_row(items, key, sub, n_resamples, seed)))
    return pd.DataFrame(rows, columns=[*items.by, *PPI_COLUMNS]).astype(
        {"n_labelled": np.int64, "n_unlabelled": np.int64, "n_clusters": np.int64})


def _ppi_row(items: LabelledItems, key: tuple, sub: pd.DataFrame, n_resamples: int,
             seed: int) -> tuple:
    labelled = sub[LABEL_COLUMN].notna().to_numpy()
    v = sub[items.verdict].to_numpy(dtype=float)
    y = sub[LABEL_COLUMN].to_numpy(dtype=float)
    n, big_n = int(labelled.sum()), int((~labelled).sum())
    raw = float(v.mean())
    conf = items.confidence
    if n < 2 or big_n < 1:
        note = "fewer than 2 labelled items" if n < 2 else "no unlabelled item"
        return raw, math.nan, math.nan, math.nan, math.nan, n, big_n, 0, "none", conf, note
    theta, low, high, lam = ppi_mean_estimate(y[labelled], v[labelled], v[~labelled],
                                              confidence=conf)
    if items.cluster is None:
        return raw, theta, low, high, lam, n, big_n, n + big_n, "normal", conf, ""
    inverse = np.unique(sub[items.cluster].astype(str).to_numpy(), return_inverse=True)[1]
    g = int(inverse.max()) + 1
    if g < 2:
        return (raw, theta, math.nan, math.nan, lam, n, big_n, g, "none", conf,
                "fewer than 2 scenarios")
    lab = labelled.astype(float)
    y0 = np.where(labelled, y, 0.0)
    yh = np.where(labelled, v, 0.0)
    u = np.where(labelled, 0.0, v)
    columns = [y0, yh, y0 * y0, yh * yh, y0 * yh, lab, u, u * u, 1 - lab]
    sums = np.stack([np.bincount(inverse, weights=c, minlength=g) for c in columns])
    rng = np.random.default_rng([seed, *(hash_key(k) for k in key)])
    thetas = []
    for start in range(0, n_resamples, _BLOCK):
        size = min(_BLOCK, n_resamples - start)
        drawn = resample_counts(rng, g, size) @ sums.T  # (size, 9)
        ok = (drawn[:, 5] >= 2) & (drawn[:, 8] >= 1)
        thetas.append(_tuned(*(drawn[ok].T))[1])
    theta_b = np.concatenate(thetas)
    note = ""
    if len(theta_b) < n_resamples:
        note = (f"{n_resamples - len(theta_b)} of {n_resamples} resamples had fewer than 2 "
                "labelled or no unlabelled item and were left out")
    labelled_scenarios = len(np.unique(inverse[labelled]))
    if len(theta_b) < 2 or labelled_scenarios < 2:
        return (raw, theta, math.nan, math.nan, lam, n, big_n, g, "none", conf,
                "fewer than 2 scenarios with a label")
    se = float(np.std(theta_b, ddof=1))
    half = float(sps.t.ppf(1 - (1 - conf) / 2, labelled_scenarios - 1)) * se
    low, high = theta - half, theta + half
    return (raw, theta, low, high, lam, n, big_n, g, "cluster bootstrap SE, t", conf, note)

