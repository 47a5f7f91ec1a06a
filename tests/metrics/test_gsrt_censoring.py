"""messages_after_shift: the right-censoring time of each goal shift."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pyarrow as pa
import pytest

from accordkit.metrics.gsrt import SHIFT_COLUMNS, shift_rows
from accordkit.schema import EPISODE_FEATURES
from accordkit.synth.goalshift import build_episode, judge_output, message

SAMPLE = Path(__file__).resolve().parents[2] / "data" / "sample" / "goalshift"


def _table(n_messages: int, shifts: list[dict]) -> pa.Table:
    roles = ["user", "assistant"] * (n_messages // 2) + ["user"] * (n_messages % 2)
    msgs = [message(r, f"m{i}") for i, r in enumerate(roles)]
    rec = build_episode(msgs, gsrt_judge=judge_output(0, "x", shifts))
    return pa.Table.from_pylist([rec], schema=EPISODE_FEATURES.arrow_schema)


def test_messages_after_shift_is_last_index_minus_shift():
    table = _table(8, [dict(turn=2, from_goal="x", to_goal="y", ack_turn=3),
                       dict(turn=5, from_goal="y", to_goal="z")])
    shifts, _ = shift_rows(table)
    assert "messages_after_shift" in SHIFT_COLUMNS
    # messages 0..7: the last index is 7
    assert shifts["messages_after_shift"].tolist() == [5, 2]
    assert shifts["gsrt_ack"].iloc[0] <= shifts["messages_after_shift"].iloc[0]
    assert bool(shifts["censored_ack"].iloc[1])


def test_sample_times_never_exceed_the_censoring_time():
    if not SAMPLE.exists():
        pytest.skip(f"sample data not found at {SAMPLE}")
    import accordkit as ak

    shifts = ak.score(ak.load(SAMPLE), level="shift")
    after = shifts["messages_after_shift"].to_numpy(dtype=float, na_value=np.nan)
    assert not np.isnan(after).any()
    for col in ("gsrt_ack", "gsrt_tool", "gsrt_outcome"):
        t = shifts[col].to_numpy(dtype=float)
        ok = ~np.isnan(t)
        assert (t[ok] <= after[ok]).all()
