"""Tests of seeds and cluster-resampling counts."""

from __future__ import annotations

import numpy as np
import pytest
from numpy.testing import assert_equal

from accordkit.stats import _resample
from accordkit.stats._resample import (
    assignment_chunks,
    cell_rng,
    count_chunks,
    resample_totals,
    stable_key,
    swap_chunks,
)


def test_cell_rng_depends_on_seed_and_key_only():
    key = stable_key(["agent_model", "domain"], [np.str_("gpt"), "shop"])
    a = cell_rng(0, key).random(5)
    assert_equal(a, cell_rng(0, (("agent_model", "gpt"), ("domain", "shop"))).random(5))
    assert not np.array_equal(a, cell_rng(1, key).random(5))
    assert not np.array_equal(a, cell_rng(0, (("agent_model", "gpt"),)).random(5))


def test_stable_key_uses_native_types():
    assert stable_key(["n"], [np.int64(3)]) == (("n", 3),)
    assert repr(stable_key(["n"], [np.float64(0.5)])) == "(('n', 0.5),)"


def test_counts_are_scipy_draws():
    # the same generator gives the indices scipy.stats.bootstrap draws
    n, b = 17, 50
    (counts,) = count_chunks([(cell_rng(1, ()), np.arange(n))], n, b)
    idx = cell_rng(1, ()).integers(0, n, (b, n))
    expected = np.stack([np.bincount(row, minlength=n) for row in idx])
    assert_equal(counts, expected)


def test_chunks_equal_one_big_draw(monkeypatch):
    n, b = 13, 101
    (whole,) = count_chunks([(cell_rng(2, ()), np.arange(n))], n, b)
    monkeypatch.setattr(_resample, "CHUNK_ELEMENTS", 7 * n)  # blocks of 7 resamples
    blocks = list(count_chunks([(cell_rng(2, ()), np.arange(n))], n, b))
    assert len(blocks) == 15
    assert_equal(np.concatenate(blocks), whole)
    blocks = list(count_chunks([(cell_rng(2, ()), np.arange(n))], n, b, chunk_elements=n))
    assert len(blocks) == b
    assert_equal(np.concatenate(blocks), whole)


def test_strata_keep_their_cluster_counts():
    members = [np.array([0, 2, 4]), np.array([1, 3]), np.array([5, 6, 7, 8])]
    streams = [(cell_rng(3, (("h", h),)), m) for h, m in enumerate(members)]
    (counts,) = count_chunks(streams, 9, 400)
    for m in members:
        assert_equal(counts[:, m].sum(axis=1), len(m))
    assert counts.sum(axis=1).tolist() == [9] * 400


def test_swap_and_assignment_chunks():
    (swaps,) = swap_chunks(cell_rng(4, ()), 6, 1000)
    assert set(np.unique(swaps)) == {0.0, 1.0} and swaps.shape == (1000, 6)
    (assign,) = assignment_chunks(cell_rng(5, ()), 4, 3, 500)
    assert_equal(assign.sum(axis=1), 4)
    assert assign.shape == (500, 7)


def test_many_clusters_are_counted_row_by_row_with_the_same_counts(monkeypatch):
    # above the threshold each resample is tallied on its own: same draws, same counts
    n, b = 40, 30
    perm = np.random.default_rng(0).permutation(n)
    for streams in ([(cell_rng(6, ()), np.arange(n))],
                    [(cell_rng(7, ()), np.sort(perm[:15])), (cell_rng(8, ()), np.sort(perm[15:]))]):
        (block,) = count_chunks(streams, n, b)
        monkeypatch.setattr(_resample, "_ROW_COUNT_MIN_CLUSTERS", 10)
        streams = [(cell_rng(s, ()), m) for s, (_, m) in zip((6,) if len(streams) == 1
                                                             else (7, 8), streams, strict=True)]
        (rows,) = count_chunks(streams, n, b)
        monkeypatch.undo()
        assert_equal(rows, block)
        assert rows.sum(axis=1).tolist() == [n] * b


@pytest.mark.parametrize("n, b", [(13, 101), (5000, 29), (70_000, 3)])
def test_resample_totals_are_the_products_of_the_counts(monkeypatch, n, b):
    """The same draws, multiplied block by block, give the whole counts matrix's product;
    so do blocks of four resamples, whose last block has one row (101, 29, 3 resamples)."""
    rng = np.random.default_rng(7)
    columns = np.column_stack([rng.integers(0, 4, n), rng.random(n)])
    (whole,) = count_chunks([(cell_rng(2, ()), np.arange(n))], n, b,
                            chunk_elements=n * b)
    (totals,) = resample_totals([(cell_rng(2, ()), np.arange(n))], n, b, [columns])
    assert totals.shape == (b, 2)
    assert_equal(totals[:, 0], whole @ columns[:, 0])  # integer sums: exact in any order
    np.testing.assert_allclose(totals, whole @ columns, rtol=1e-14)
    monkeypatch.setattr(_resample, "CACHE_ELEMENTS", 4 * n)  # blocks of 4, last of 1 row
    (small,) = resample_totals([(cell_rng(2, ()), np.arange(n))], n, b, [columns])
    np.testing.assert_allclose(small, totals, rtol=1e-14)


def test_a_blocks_totals_do_not_depend_on_the_other_blocks():
    """A statistic's products are the same alone and beside others, bit for bit: BLAS sums
    a product of six columns in another order than one of two (OpenBLAS, AVX-512)."""
    rng = np.random.default_rng(11)
    n = 300
    blocks = [np.column_stack([rng.random(n), rng.integers(1, 9, n)]) for _ in range(5)]
    (alone,) = resample_totals([(cell_rng(5, ()), np.arange(n))], n, 1000, blocks[:1])
    together = resample_totals([(cell_rng(5, ()), np.arange(n))], n, 1000, blocks)
    assert len(together) == 5
    assert_equal(together[0], alone)


def test_resample_totals_keep_the_strata():
    members = [np.array([0, 2, 4]), np.array([1, 3])]
    streams = [(cell_rng(3, (("h", h),)), m) for h, m in enumerate(members)]
    ones = np.ones((5, 1))
    (totals,) = resample_totals(streams, 5, 300, [np.column_stack([ones, [1, 0, 1, 0, 1]])])
    assert_equal(totals[:, 0], 5.0)   # every resample has all five clusters
    assert_equal(totals[:, 1], 3.0)   # and three of them from the first stratum
