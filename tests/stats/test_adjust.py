"""Tests of the p-value adjustments and tie groups against hand-computed values."""

from __future__ import annotations

import numpy as np
from numpy.testing import assert_allclose

from accordkit.stats._adjust import adjust_pvalues, holm, tie_groups


def test_holm_by_hand():
    # sorted: 0.01*4=0.04, 0.02*3=0.06, 0.03*2=0.06, 0.04*1 -> max 0.06
    assert_allclose(holm(np.array([0.04, 0.01, 0.03, 0.02])), [0.06, 0.04, 0.06, 0.06])
    assert_allclose(holm(np.array([0.5, 0.6])), [1.0, 1.0])


def test_bh_by_hand():
    # sorted p * m / rank: 0.01*4/1=0.04, 0.02*4/2=0.04, 0.03*4/3=0.04, 0.04*4/4=0.04
    assert_allclose(adjust_pvalues([0.04, 0.01, 0.03, 0.02], "bh"), [0.04] * 4)
    # 0.001*3=0.003, 0.04*3/2=0.06, 0.05*3/3=0.05 -> running min from the top: 0.05
    assert_allclose(adjust_pvalues([0.05, 0.001, 0.04], "bh"), [0.05, 0.003, 0.05])


def test_nan_is_left_out_of_the_family():
    out = adjust_pvalues([0.01, np.nan, 0.04], "holm")
    assert_allclose(out, [0.02, np.nan, 0.04])
    assert np.isnan(adjust_pvalues([np.nan], "bh")).all()
    assert_allclose(adjust_pvalues([0.3, 0.01], "none"), [0.3, 0.01])


def test_tie_groups_follow_leaders():
    p = {frozenset("ab"): 0.5, frozenset("ac"): 0.01, frozenset("ad"): 0.001,
         frozenset("bc"): 0.3, frozenset("bd"): 0.02, frozenset("cd"): 0.2}
    groups = tie_groups(list("abcd"), lambda x, y: p[frozenset((x, y))], 0.05)
    # c is tied with b but not with the leader a, so it leads group 2 (with d)
    assert groups == {"a": 1, "b": 1, "c": 2, "d": 2}


def test_all_distinct():
    groups = tie_groups(["x", "y", "z"], lambda a, b: 0.0, 0.05)
    assert groups == {"x": 1, "y": 2, "z": 3}
