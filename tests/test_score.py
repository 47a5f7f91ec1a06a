"""accordkit.score's dispatch: the frame of a source with no episode of the level's kind."""

from __future__ import annotations

import sys
import warnings

import pandas as pd
import pytest

import accordkit as ak
from accordkit.schema import ID_COLUMNS


@pytest.fixture(scope="module")
def samples(sample_dir):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return ak.load([sample_dir / "accord", sample_dir / "goalshift"], cache=False)


@pytest.mark.parametrize("level", ["episode", "preference", "shift"])
def test_no_episodes_give_every_column_of_the_level(samples, level):
    frame = ak.score(samples.select([]), level=level)
    filled = ak.score(samples, level=level)
    assert len(frame) == 0 and list(frame.columns[:len(ID_COLUMNS)]) == list(ID_COLUMNS)
    assert set(frame.columns) == set(filled.columns)


@pytest.mark.parametrize("level", ["episode", "preference", "shift"])
def test_the_empty_frame_is_made_once_and_given_as_a_copy(samples, level):
    made = sys.modules["accordkit.score"]._empty_template
    empty = samples.select([])
    first = ak.score(empty, level=level)
    pd.testing.assert_frame_equal(  # the same as made afresh, dtypes included
        first, made.__wrapped__(level, samples.data.table.schema.remove_metadata()))
    first["added"] = []
    first[first.columns[0]] = first[first.columns[0]].astype("float64")
    again = ak.score(empty, level=level)
    assert "added" not in again.columns and again[again.columns[0]].dtype != "float64"
    assert made.cache_info().hits >= 1


def test_a_bad_mode_is_refused_whatever_episodes_there_are(sample_dir):
    """AcCoRD episodes use neither mode: a typo in one used to pass unseen."""
    ds = ak.load(sample_dir / "accord")
    with pytest.raises(ValueError, match="tcrr_mode must be one of"):
        ak.score(ds, tcrr_mode="pooled")
    with pytest.raises(ValueError, match="action_mode must be one of"):
        ak.score(ds, action_mode="exact")
