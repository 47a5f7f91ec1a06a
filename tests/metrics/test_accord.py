"""Hand-computed tests for the AcCoRD episode and preference metrics."""

from __future__ import annotations

import math

import numpy as np
import pandas as pd
import pyarrow as pa
import pytest

from accordkit.metrics.accord import (
    EPISODE_METRICS,
    PREFERENCE_COLUMNS,
    score_episodes,
    score_preferences,
)
from accordkit.schema import EPISODE_FEATURES, EpisodeValidationError
from accordkit.testing import accord_episode, episode_table, message, preference

SCHEMA = EPISODE_FEATURES.arrow_schema


def msg(role, content=None, *, kind=None, calls=0, turn=0):
    return message(role, content, kind=kind, turn=turn,
                   calls=[("search", {}, f"c{i}") for i in range(calls)] or None)


def episode(eid, *, type_ok=None, price_ok=None, **kw):
    return accord_episode(eid, product_type_ok=type_ok, price_ok=price_ok, **kw)


pref = preference
table = episode_table


# --- episode level ---------------------------------------------------------------------


def test_outcome_ignores_unjudged_preferences():
    # 3 judged (T, F, T), 1 missing: outcome 2/3, not 2/4.
    t = table(episode("e", prefs=[pref("a", satisfied=True), pref("b", satisfied=False),
                                  pref("c"), pref("d", satisfied=True)]))
    row = score_episodes(t).iloc[0]
    assert row["n_preferences"] == 4 and row["n_judged"] == 3 and row["n_satisfied"] == 2
    assert row["outcome_score"] == pytest.approx(2 / 3)
    assert row["task_score"] == pytest.approx(2 / 3)
    assert not row["perfect_outcome"]


def test_perfect_outcome_needs_every_judged_preference():
    t = table(episode("e", prefs=[pref("a", satisfied=True), pref("b", "stated", True)]))
    row = score_episodes(t).iloc[0]
    assert row["outcome_score"] == 1.0 and row["perfect_outcome"] and row["task_score"] == 1.0


def test_incomplete_episode_scores_zero_task_and_no_outcome():
    t = table(episode("e", completed=False, prefs=[pref("a", satisfied=True),
                                                   pref("b", satisfied=True)]))
    row = score_episodes(t).iloc[0]
    assert not row["completed"]
    assert math.isnan(row["outcome_score"])
    assert row["task_score"] == 0.0
    assert row["perfect_outcome"] == False  # noqa: E712 - False, never NA
    assert row["n_satisfied"] == 2  # the stored judgments are still counted


def test_zero_preference_episodes():
    t = table(episode("done", prefs=[]), episode("fail", completed=False, prefs=[]))
    with pytest.warns(UserWarning, match=r"1 completed AcCoRD episode\(s\) have no outcome \(done\)"):
        out = score_episodes(t)
    assert out["n_preferences"].tolist() == [0, 0]
    assert math.isnan(out.loc[0, "outcome_score"]) and math.isnan(out.loc[0, "task_score"])
    assert out.loc[0, "perfect_outcome"] == False  # noqa: E712
    assert out.loc[1, "task_score"] == 0.0


def test_unknown_completion_propagates_as_missing():
    t = table(episode("e", completed=None, prefs=[pref("a", satisfied=True)]))
    row = score_episodes(t).iloc[0]
    assert row["completed"] is pd.NA and row["perfect_outcome"] is pd.NA
    assert math.isnan(row["task_score"]) and math.isnan(row["outcome_score"])


def test_preferences_not_recorded_give_missing_counts():
    with pytest.warns(UserWarning, match=r"1 completed AcCoRD episode\(s\) have no outcome \(e\)"):
        row = score_episodes(table(episode("e", prefs=None))).iloc[0]
    assert row["n_preferences"] is pd.NA and row["n_judged"] is pd.NA
    assert math.isnan(row["outcome_score"])


def test_soft_preference_without_value_is_not_judged():
    # A stored judgment against no value cannot be reproduced: left out (spec §4.2).
    t = table(episode("e", prefs=[pref("a", "soft_underspec", True, value=None),
                                  pref("b", satisfied=False)]))
    row = score_episodes(t).iloc[0]
    assert row["n_judged"] == 1 and row["outcome_score"] == 0.0


def test_message_counts():
    messages = [
        msg("assistant", "Hello!", kind="greeting"),            # not an utterance
        msg("user", "I need shoes"),                             # user utterance 1
        msg("assistant", "Which size?", kind="utterance"),       # utterance 1
        msg("user", "   "),                                      # blank: not counted
        msg("assistant", "Thinking...", kind="action", calls=2), # 2 env actions
        msg("tool", "results", kind="observation"),
        msg("assistant", "Found some.", kind=None),              # kind unknown, text: 1
        msg("assistant", "", kind=None, calls=1),                # 1 env action, no text
        msg("user", "ok", calls=1),                              # a user tool call: not env
        msg("assistant", "Done", kind="thought"),                # a thought is not addressed
    ]
    with pytest.warns(UserWarning, match=r"1 completed AcCoRD episode\(s\) have no outcome \(e\)"):
        row = score_episodes(table(episode("e", messages=messages))).iloc[0]
    assert (row["n_env_actions"], row["n_utterances"], row["n_user_utterances"]) == (3, 2, 2)


def test_dtypes_and_columns():
    out = score_episodes(table(episode("e", prefs=[pref("a", satisfied=True)])))
    assert tuple(out.columns) == EPISODE_METRICS
    for col in ("completed", "perfect_outcome", "product_type_ok", "price_ok"):
        assert out[col].dtype == "boolean"
    for col in ("n_preferences", "n_satisfied", "n_judged", "n_env_actions", "n_utterances",
                "n_user_utterances"):
        assert out[col].dtype == "Int64"
    assert out["outcome_score"].dtype == np.float64 and out["task_score"].dtype == np.float64


def test_rows_stay_aligned_on_sliced_tables():
    t = table(episode("a", prefs=[pref("x", satisfied=False)]),
              episode("b", prefs=[pref("x", satisfied=True), pref("y", satisfied=True)]),
              episode("c", completed=False, prefs=[pref("x")]))
    part = t.slice(1)  # offsets into the list columns
    out = score_episodes(part)
    assert out["outcome_score"].tolist()[0] == 1.0 and out["task_score"].tolist()[1] == 0.0
    prefs = score_preferences(part)
    assert prefs["row"].tolist() == [0, 0, 1]
    chunked = pa.concat_tables([t.slice(0, 1), t.slice(1)])
    assert score_episodes(chunked)["n_preferences"].tolist() == [1, 2, 1]


# --- shop checks and the type gate -----------------------------------------------------


def test_shop_type_gate():
    prefs = [pref("a", satisfied=True), pref("b", satisfied=True), pref("c", satisfied=False)]
    t = table(episode("wrong", prefs=prefs, type_ok=False, price_ok=True),
              episode("right", prefs=prefs, type_ok=True, price_ok=False),
              episode("unknown", prefs=prefs, type_ok=None),
              episode("trip", prefs=prefs, domain="travel"))
    off = score_episodes(t)
    assert off["outcome_score"].tolist()[:2] == pytest.approx([2 / 3, 2 / 3])
    assert off["product_type_ok"].tolist()[:2] == [False, True]
    assert off["price_ok"].tolist()[:2] == [True, False]
    with pytest.warns(UserWarning, match=r"1 completed AcCoRD episode\(s\) have no outcome \(unknown\)"):
        on = score_episodes(t, shop_type_gate=True)
    assert on.loc[0, "outcome_score"] == 0.0 and on.loc[0, "n_satisfied"] == 0
    assert on.loc[1, "outcome_score"] == pytest.approx(2 / 3)
    assert math.isnan(on.loc[2, "outcome_score"])          # gate cannot be applied
    assert on.loc[3, "outcome_score"] == pytest.approx(2 / 3)  # travel is never gated
    gated = score_preferences(t, shop_type_gate=True)
    assert gated.loc[gated.row == 0, "satisfied"].tolist() == [False, False, False]
    assert gated.loc[gated.row == 2, "satisfied"].isna().all()


def test_gate_leaves_incomplete_episodes_alone():
    t = table(episode("e", completed=False, prefs=[pref("a", satisfied=True)], type_ok=False))
    row = score_episodes(t, shop_type_gate=True).iloc[0]
    assert row["task_score"] == 0.0 and math.isnan(row["outcome_score"])


# --- preference level ------------------------------------------------------------------


def test_preference_targets_and_columns():
    t = table(episode("e0", prefs=[pref("a", "unachievable", True, value="5 stars",
                                        backoff="4 stars"),
                                   pref("b", "triggered", False, value="pool", trigger="pool"),
                                   pref("c", "stated", True, value="red")]),
              episode("e1", completed=False, prefs=[pref("a", "soft_underspec", value=None)]))
    out = score_preferences(t)
    assert tuple(out.columns) == PREFERENCE_COLUMNS
    assert out["row"].tolist() == [0, 0, 0, 1]
    assert out["target"].tolist()[:3] == ["4 stars", "pool", "red"]
    assert pd.isna(out["target"].iloc[3])
    assert out["satisfied"].tolist()[:3] == [True, False, True]
    assert out["satisfied"].isna().tolist() == [False, False, False, True]
    assert out["completed"].tolist() == [True, True, True, False]
    assert out["preference"].tolist()[0] == "na"
    assert out["satisfied"].dtype == "boolean" and out["completed"].dtype == "boolean"


def test_unknown_dynamic_names_record_and_field():
    t = table(episode("ok", prefs=[pref("a")]),
              episode("accord/shop/s/m/react/1", prefs=[pref("a"), pref("b", "sudden")]))
    with pytest.raises(EpisodeValidationError,
                       match=r"record accord/shop/s/m/react/1, field preferences\[1\]\.dynamic"):
        score_episodes(t)


def test_missing_columns_and_wrong_input():
    with pytest.raises(ValueError, match=r"\['completed'\]"):
        score_episodes(table(episode("e")).drop_columns(["completed"]))
    with pytest.raises(TypeError, match="pyarrow.Table"):
        score_episodes(pd.DataFrame())
    with pytest.raises(TypeError, match="shop_type_gate"):
        score_episodes(table(episode("e")), shop_type_gate="yes")


# --- stored verdicts -------------------------------------------------------------------


def verdicts(rows):
    return pd.DataFrame(rows, columns=["episode_id", "judge", "item", "verdict",
                                       "judge_model"])


def test_verdicts_fill_missing_judgments_and_stored_wins():
    t = table(episode("e", prefs=[pref("a"), pref("b", satisfied=True), pref("c"),
                                  pref("d")], type_ok=None, price_ok=None))
    v = verdicts([
        ("e", "outcome", "a", "1", "j"),        # fills a
        ("e", "outcome", "b", "0", "j"),        # stored True wins
        ("e", "outcome", "c", "invalid", "j"),  # invalid: still not judged
        ("e", "usersim_tests", "d", "yes", "j"),  # another judge: ignored
        ("e", "outcome", "product_type", "0", "j"),
        ("e", "outcome", "price", "1", "j"),
        ("other", "outcome", "zz", "1", "j"),   # an episode not in the table: ignored
    ])
    row = score_episodes(t, verdicts=v).iloc[0]
    assert (row["n_judged"], row["n_satisfied"]) == (2, 2)
    assert row["outcome_score"] == 1.0
    assert row["product_type_ok"] == False and row["price_ok"] == True  # noqa: E712
    gated = score_episodes(t, verdicts=v, shop_type_gate=True).iloc[0]
    assert gated["outcome_score"] == 0.0
    prefs = score_preferences(t, verdicts=v)
    assert prefs["satisfied"].tolist()[:2] == [True, True]
    assert prefs["satisfied"].isna().tolist() == [False, False, True, True]


def test_verdict_errors():
    t = table(episode("e", prefs=[pref("a")]))
    with pytest.raises(ValueError, match="conflicting outcome verdicts for episode 'e', item 'a'"):
        score_episodes(t, verdicts=verdicts([("e", "outcome", "a", "1", "m1"),
                                             ("e", "outcome", "a", "0", "m2")]))
    with pytest.raises(ValueError, match="names item 'size'"):
        score_episodes(t, verdicts=verdicts([("e", "outcome", "size", "1", "m")]))
    with pytest.raises(ValueError, match="verdict 'maybe' is not one of"):
        score_episodes(t, verdicts=verdicts([("e", "outcome", "a", "maybe", "m")]))
    with pytest.raises(ValueError, match=r"lack the columns \['verdict'\]"):
        score_episodes(t, verdicts=pd.DataFrame({"episode_id": [], "judge": [], "item": []}))
    # Agreeing duplicates (a re-run) are fine.
    ok = score_episodes(t, verdicts=verdicts([("e", "outcome", "a", "1", "m"),
                                              ("e", "outcome", "a", "1", "m")]))
    assert ok.loc[0, "outcome_score"] == 1.0


def test_completed_episodes_without_an_outcome_are_warned_about():
    # spec §4.4: Task = TCR x Outcome only holds when every completed episode has an
    # outcome; one with no judged preference leaves both means, an incomplete one counts 0
    import pyarrow as pa
    import pytest

    from accordkit.metrics.accord import score_episodes
    from accordkit.schema import EPISODE_FEATURES, empty_episode

    def rec(i, completed, prefs):
        return empty_episode() | {
            "episode_id": f"accord/shop/s{i}/m/react/0", "domain": "shop",
            "completed": completed, "preferences": prefs,
            "messages": [{"role": "assistant", "content": "Hi", "turn_idx": 0}]}

    judged = [{"pref_id": "p0", "name": "size", "value": "m", "dynamic": "hard_underspec",
               "satisfied": True}]
    table = pa.Table.from_pylist([rec(0, True, judged), rec(1, True, []), rec(2, False, [])],
                                 schema=EPISODE_FEATURES.arrow_schema)
    with pytest.warns(UserWarning, match=r"1 completed AcCoRD episode\(s\) have no outcome "
                                         r"\(accord/shop/s1/m/react/0\)"):
        out = score_episodes(table)
    assert out["task_score"].tolist()[0] == 1.0 and out["task_score"].tolist()[2] == 0.0
    assert pd.isna(out["task_score"].iloc[1])
