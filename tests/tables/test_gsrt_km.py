"""The goal-shift GSRT table shows Kaplan–Meier medians by default (issue 15)."""

from __future__ import annotations

import pytest

import accordkit as ak
from accordkit.tables.goalshift import GSRT_KM_LABELS, goalshift_gsrt


@pytest.fixture(scope="module")
def shifts(sample_dir):
    return ak.score(ak.load(str(sample_dir / "goalshift")), level="shift")


def test_default_is_the_km_median_with_censoring_counted(shifts):
    km = goalshift_gsrt(shifts, by=["domain"], n_resamples=100, seed=0, method="percentile")
    assert set(km["metric"]) == set(GSRT_KM_LABELS.values())
    assert (km["stat"] == "km_median").all()
    # the same numbers as km_medians, which is tested against textbook KM examples
    direct = ak.km_medians(shifts, by=["domain"], observed_only=False, n_resamples=100,
                           seed=0, method="percentile")
    assert km["estimate"].tolist() == direct["estimate"].tolist()
    assert km["n_censored"].sum() > 0


def test_observed_only_stays_available_and_never_exceeds_km(shifts):
    km = goalshift_gsrt(shifts, by=[], n_resamples=100, seed=0, method="percentile")
    obs = goalshift_gsrt(shifts, by=[], median="observed", n_resamples=100, seed=0,
                         method="percentile")
    for event in ("ack", "tool"):
        k = km.loc[km["metric"] == GSRT_KM_LABELS[event], "estimate"].item()
        o = obs.loc[obs["metric"] == f"GSRT {event} (median)", "estimate"].item()
        assert k >= o          # leaving censored shifts out can only make recovery look fast
    with pytest.raises(ValueError, match="median must be"):
        goalshift_gsrt(shifts, median="mean")
