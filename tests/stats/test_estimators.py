"""Tests of the cluster-level estimators (vectorised equals looped)."""

from __future__ import annotations

import numpy as np
import pytest
from numpy.testing import assert_allclose, assert_equal

from accordkit.stats._estimators import ratio_from_rows
from accordkit.stats._median import MedianEstimator, _weighted_median

C = 30


@pytest.fixture
def rows():
    rng = np.random.default_rng(0)
    codes = np.repeat(np.arange(C), rng.integers(1, 5, C))
    return codes, rng.normal(size=len(codes)), rng.poisson(3, size=len(codes)).astype(float)


def expand(values, codes, weights):
    return np.concatenate([np.repeat(values[codes == c], int(w)) for c, w in enumerate(weights)])


def test_ratio_jackknife_is_leave_one_cluster_out(rows):
    codes, x, _ = rows
    est = ratio_from_rows(x, None, codes, C)
    loop = [x[codes != c].mean() for c in range(C)]
    assert_allclose(est.jackknife(), loop, rtol=1e-12)
    assert_allclose(est.on_counts(1 - np.eye(C)), loop, rtol=1e-12)


def test_ratio_on_counts_equals_expanded_data(rows):
    codes, x, den = rows
    est = ratio_from_rows(x, den, codes, C)
    w = np.random.default_rng(1).integers(0, 3, (20, C)).astype(float)
    w[:, 0] += 1
    loop = [expand(x, codes, r).sum() / expand(den, codes, r).sum() for r in w]
    assert_allclose(est.on_counts(w), loop, rtol=1e-12)


def test_ratio_influence_sums_to_zero(rows):
    codes, x, den = rows
    assert ratio_from_rows(x, den, codes, C).influence().sum() == pytest.approx(0, abs=1e-12)


@pytest.mark.parametrize("discrete", [True, False])
def test_weighted_median_equals_np_median(rows, discrete):
    codes, x, turns = rows
    values = turns if discrete else x
    values = values.copy()
    values[[0, 3]] = np.nan
    est = MedianEstimator(values, codes, C)
    assert est._use_table == discrete
    w = np.random.default_rng(2).integers(0, 4, (50, C)).astype(float)
    w[0] = 0  # an empty resample
    loop = [np.nanmedian(expand(values, codes, r)) if r.any() else np.nan for r in w]
    with np.errstate(all="ignore"):
        assert_allclose(est.on_counts(w), loop, rtol=1e-12)
    assert est.n_censored == 2 and est.n_events == len(values) - 2
    assert est.estimate == np.nanmedian(values)
    per_cluster = [np.nanmedian(values[codes == c]) if np.isfinite(values[codes == c]).any()
                   else np.nan for c in range(C)]
    assert_equal(est.cluster_values(), per_cluster)


def test_windowed_gather_equals_full_gather():
    # resamples whose median falls outside the first-searched window are redone in full
    rng = np.random.default_rng(3)
    codes = np.repeat(np.arange(200), 6)
    values = rng.normal(size=len(codes)) + np.repeat(rng.normal(0, 3, 200), 6)
    est = MedianEstimator(values, codes, 200)
    assert not est._use_table
    w = rng.integers(0, 3, (300, 200)).astype(float)
    w[:50] *= rng.random((50, 200)) < 0.05  # sparse resamples: medians far from the centre
    full = _weighted_median(w[:, est._codes], est._sorted)
    lo, hi = est._window
    outside = (full < est._sorted[lo]) | (full > est._sorted[hi - 1])
    assert 0 < outside.sum() < len(w)
    assert_equal(est.on_counts(w), full)


def test_windowed_table_median_equals_the_whole_table():
    # repeated values: most resampled medians come from the stacked window columns, the
    # rest (sparse resamples far from the centre) from the whole count table
    rng = np.random.default_rng(4)
    codes = np.repeat(np.arange(300), 4)
    values = rng.poisson(np.repeat(rng.uniform(2, 20, 300), 4)).astype(float)
    est = MedianEstimator(values, codes, 300)
    assert est._use_table and est.columns is not None
    assert est.columns.shape[1] < len(est.uniq)
    w = rng.integers(0, 3, (400, 300)).astype(float)
    w[:60] *= rng.random((60, 300)) < 0.03
    w[0] = 0
    full = _weighted_median(w @ est._table, est.uniq)
    got = est.from_totals(w @ est.columns, w)
    first, stop = est._win
    outside = (full < est.uniq[first]) | (full > est.uniq[stop - 1])
    assert 0 < np.count_nonzero(outside & ~np.isnan(full)) < len(w)
    assert_equal(got, full)
    assert_equal(est.on_counts(w), full)
