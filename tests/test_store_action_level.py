"""The score store holds the action diff (level ``"action"``) as ``ak.score`` gives it."""

from __future__ import annotations

import json

import pandas as pd
import pytest

import accordkit as ak
from accordkit.store import IncompleteStoreError, read_manifest


@pytest.mark.filterwarnings("ignore::UserWarning")
def test_action_level_round_trip(tmp_path, tau2_dir):
    sources = [str(p) for p in sorted(tau2_dir.glob("*.json"))]
    ak.write_scores(sources, tmp_path / "store")
    want = ak.score(ak.load(sources), level="action")
    assert len(want) and want.equals(ak.action_diff(ak.load(sources)))
    got = ak.read_scores(tmp_path / "store", level="action")
    pd.testing.assert_frame_equal(got, want)
    assert read_manifest(tmp_path / "store")["levels"]["action"]


def test_store_written_before_the_action_level_is_refused_for_it(tmp_path, sample_dir):
    ak.write_scores(str(sample_dir / "goalshift"), tmp_path / "store")
    path = tmp_path / "store" / "manifest.json"
    manifest = json.loads(path.read_text())
    del manifest["levels"]["action"], manifest["sha256"]["action"]
    path.write_text(json.dumps(manifest))
    with pytest.raises(IncompleteStoreError, match="before the 'action' level existed"):
        ak.read_scores(tmp_path / "store", level="action")
    # the other levels read as before
    assert len(ak.read_scores(tmp_path / "store", level="episode"))


def test_review_levels_round_trip(tmp_path):
    from accordkit.metrics.reviews import tables_from_levels

    from .ingest.formats.test_tau2_reviews import HALLUCINATION, REVIEW, USER_ONLY, _results, _sim

    path = tmp_path / "run_reviewed.json"
    path.write_text(json.dumps(_results([
        _sim("s1", review=REVIEW, user_only_review=USER_ONLY),
        _sim("s2", trial=1, hallucination_check=HALLUCINATION), _sim("s3", trial=2)])))
    ak.write_scores(str(path), tmp_path / "store")
    ds = ak.load(path)
    for level in ("review", "review_error"):
        want = ak.score(ds, level=level)
        got = ak.read_scores(tmp_path / "store", level=level)
        pd.testing.assert_frame_equal(got, want)
        assert got["benchmark"].unique().tolist() == ["tau2"]
    tables = tables_from_levels(ak.read_scores(tmp_path / "store", level="review"),
                                ak.read_scores(tmp_path / "store", level="review_error"))
    reviews, errors = ak.review_tables(ds)
    pd.testing.assert_frame_equal(tables.reviews, reviews)
    pd.testing.assert_frame_equal(tables.errors, errors)
    assert len(errors) == 4
