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

**Rollouts of one scenario** are not independent: with ``cluster=`` the interval is a
studentized cluster bootstrap (bootstrap-t). Scenarios are drawn with replacement, each
with all its labelled and unlabelled items; in each resample λ is tuned again, the
estimate of step 3 computed, and divided, less the data's estimate, by the resample's own
cluster-robust (CR1) standard error, ``sqrt(G/(G-1) Σ_c (a_c/n + λ b_c/N)²)`` over the
``G`` scenarios with ``a_c = Σ_c (Y - λŶ) - n_c mean(Y - λŶ)`` and ``b_c = Σ_c Ŷu - N_c
mean(Ŷu)`` (with one item per scenario it is step 4's standard error times
``sqrt(G/(G-1))``). The interval is ``[θ - t_hi se, θ - t_lo se]`` with ``t_lo``, ``t_hi``
the resamples' quantiles and ``se`` the data's CR1 standard error. The point estimate is the
same as without clusters. (The percentile interval of the same resamples fell below 93 %
coverage in some of the simulations of ``benchmarks/judge_correction.py``; the studentized
one holds the level: ``benchmarks/results/judge_correction.md``.)
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
    # per-scenario sums x_c = (ΣY, ΣŶ, n_c, ΣŶu, N_c) and their products, for the CR1
    # standard error of each resample: k' (Σ w_c x_c x_c') k
    x = sums[[0, 1, 5, 6, 8]].T
    upper = np.triu_indices(5)
    products = (x[:, :, None] * x[:, None, :])[:, upper[0], upper[1]]
    se = float(_cr1_se(sums.sum(axis=1)[None, :], products.sum(axis=0)[None, :], g)[0])
    rng = np.random.default_rng([seed, *(hash_key(k) for k in key)])
    stats = []
    for start in range(0, n_resamples, _BLOCK):
        size = min(_BLOCK, n_resamples - start)
        weights = resample_counts(rng, g, size)
        drawn = weights @ sums.T  # (size, 9)
        ok = (drawn[:, 5] >= 2) & (drawn[:, 8] >= 1)
        theta_b = _tuned(*(drawn[ok].T))[1]
        with np.errstate(divide="ignore", invalid="ignore"):
            t = (theta_b - theta) / _cr1_se(drawn[ok], weights[ok] @ products, g)
        stats.append(t[np.isfinite(t)])
    t_b = np.concatenate(stats)
    note = ""
    if len(t_b) < n_resamples:
        note = (f"{n_resamples - len(t_b)} of {n_resamples} resamples had fewer than 2 "
                "labelled or no unlabelled item, or no spread, and were left out")
    a = (1 - conf) / 2
    if not len(t_b) or not se > 0:
        return (raw, theta, math.nan, math.nan, lam, n, big_n, g, "none", conf,
                "no spread across scenarios: no interval")
    q_low, q_high = np.quantile(t_b, [a, 1 - a]).tolist()
    low, high = theta - q_high * se, theta - q_low * se
    return (raw, theta, low, high, lam, n, big_n, g, "cluster bootstrap-t", conf, note)


def _cr1_se(drawn: np.ndarray, products: np.ndarray, g: int) -> np.ndarray:
    """The CR1 standard error of the PPI++ estimate of each resample (λ held at the
    resample's own value). ``drawn`` holds the resamples' sums (the nine columns of
    :func:`_ppi_row`), ``products`` the weighted sums of the products of the per-scenario
    sums ``x_c = (ΣY, ΣŶ, n_c, ΣŶu, N_c)`` (upper triangle, row by row)."""
    n, big_n = drawn[:, 5], drawn[:, 8]
    lam, _ = _tuned(*drawn.T)
    with np.errstate(divide="ignore", invalid="ignore"):
        rect = (drawn[:, 0] - lam * drawn[:, 1]) / n
        mean_u = drawn[:, 6] / big_n
        # the influence of scenario c is x_c · k: (ΣY - λΣŶ - n_c r̄)/n + λ(ΣŶu - N_c ū)/N
        k = np.stack([1 / n, -lam / n, -rect / n, lam / big_n, -lam * mean_u / big_n], axis=1)
    upper = np.triu_indices(5)
    m = np.zeros((len(drawn), 5, 5))
    m[:, upper[0], upper[1]] = products
    m[:, upper[1], upper[0]] = products
    var = g / (g - 1) * np.einsum("bi,bij,bj->b", k, m, k)
    return np.sqrt(np.maximum(var, 0.0))
