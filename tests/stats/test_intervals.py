"""Tests of the interval helpers against scipy."""

from __future__ import annotations

import numpy as np
import pytest
from scipy import stats

from accordkit.stats._intervals import confidence_interval, quantile_linear, robust_se


@pytest.mark.parametrize("p", [0.0, 0.001, 0.025, 0.3, 0.5, 0.975, 0.9999, 1.0])
def test_quantile_matches_scipy(p):
    x = np.sort(np.random.default_rng(0).normal(size=999))
    assert quantile_linear(x, p) == float(stats.quantile(x, p))


def test_quantile_of_nothing_is_nan():
    assert np.isnan(quantile_linear(np.empty(0), 0.5))


def test_nan_resamples_are_left_out():
    theta = np.random.default_rng(1).normal(size=1000)
    with_nan = np.concatenate([theta, [np.nan] * 10])
    kw = dict(method="percentile", confidence=0.9, jackknifes=[], t_se=None, t_df=0)
    assert confidence_interval(0.0, with_nan, **kw) == confidence_interval(0.0, theta, **kw)


def test_bca_undefined_falls_back():
    out = confidence_interval(1.0, np.ones(100), method="bca", confidence=0.95,
                              jackknifes=[np.ones(10)], t_se=None, t_df=9)
    assert (out.low, out.high, out.method, out.note) == (1.0, 1.0, "percentile", "bca-undefined")


def test_t_without_degrees_of_freedom_is_nan():
    out = confidence_interval(1.0, np.empty(0), method="t", confidence=0.95,
                              jackknifes=[], t_se=0.1, t_df=0)
    assert np.isnan(out.low) and out.note == "too-few-clusters"


def test_robust_se_one_stratum_is_cr1():
    e = np.random.default_rng(2).normal(size=12)
    e -= e.mean()
    se, df = robust_se(e)
    assert se == pytest.approx(np.sqrt(12 / 11 * np.sum(e**2)))
    assert df == 11


def test_bca_counts_resamples_a_last_digit_from_the_estimate_as_ties():
    """A resample equal to the estimate in exact arithmetic may come out one unit in the
    last place off, by the order of its sums; BCa's bias correction must not move."""
    from accordkit.stats._intervals import bca_levels

    estimate = 0.1 + 0.2  # 0.30000000000000004
    rng = np.random.default_rng(2)
    theta_b = rng.integers(0, 11, 400) / 10
    theta_b[:60] = estimate
    jack = [rng.random(20)]
    exact = bca_levels(estimate, theta_b, jack, 0.05)
    below, above = theta_b.copy(), theta_b.copy()
    below[:60] = np.nextafter(estimate, 0.0)
    above[:60] = np.nextafter(estimate, 1.0)
    assert bca_levels(estimate, below, jack, 0.05) == exact
    assert bca_levels(estimate, above, jack, 0.05) == exact
