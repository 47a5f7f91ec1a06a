"""Pass rates (Table 6 analog) and agreement between judge models, by hand."""

from __future__ import annotations

import math

import pandas as pd
import pytest

from accordkit.judges.reliability import agreement, cohen_kappa, pass_rates


def frame(model, verdicts, *, item="test000", turns=None, eid="e"):
    turns = turns if turns is not None else list(range(len(verdicts)))
    return pd.DataFrame({"episode_id": eid, "judge": "usersim_tests", "judge_model": model,
                         "item": item, "turn_idx": pd.array(turns, dtype="Int32"),
                         "verdict": pd.array(verdicts, dtype="string")})


def test_pass_rates_count_yes_over_yes_plus_no():
    v = pd.concat([frame("a", ["yes", "yes", "no", "n/a", "invalid", None]),
                   frame("a", ["n/a", "n/a"], item="test005"),
                   frame("b", ["no"])], ignore_index=True)
    out = pass_rates(v).set_index(["judge_model", "item"])
    row = out.loc[("a", "test000")]
    assert (row["n_yes"], row["n_no"], row["n_na"], row["n_invalid"], row["n_error"]) == \
        (2, 1, 1, 1, 1)
    assert row["pass_rate"] == pytest.approx(2 / 3)
    assert row["na_share"] == pytest.approx(1 / 4)
    assert math.isnan(out.loc[("a", "test005"), "pass_rate"])      # only n/a: undefined
    assert out.loc[("a", "test005"), "na_share"] == 1.0
    assert out.loc[("b", "test000"), "pass_rate"] == 0.0
    assert str(out["n_yes"].dtype) == "Int64" and str(out["pass_rate"].dtype) == "float64"


def test_pass_rates_by_extra_column_and_other_judges_ignored():
    v = pd.concat([frame("a", ["yes", "no"]).assign(domain="shop"),
                   frame("a", ["yes"]).assign(domain="travel", turn_idx=pd.array([9], "Int32")),
                   frame("a", ["1"]).assign(judge="outcome", domain="shop")], ignore_index=True)
    out = pass_rates(v, by=["domain", "judge_model"])
    assert out[["domain", "pass_rate"]].values.tolist() == [["shop", 0.5], ["travel", 1.0]]


def test_cohen_kappa_hand_computed():
    # both raters: yes 3, no 2, n/a 1 -> p_e = (9 + 4 + 1) / 36; they agree on 4 of 6
    a = ["yes", "yes", "yes", "no", "no", "n/a"]
    b = ["yes", "yes", "no", "no", "yes", "n/a"]
    p_o, p_e = 4 / 6, 14 / 36
    assert cohen_kappa(a, b) == pytest.approx((p_o - p_e) / (1 - p_e))
    assert cohen_kappa(["yes", "no"], ["no", "yes"]) == pytest.approx(-1.0)
    assert math.isnan(cohen_kappa([], []))
    with pytest.raises(ValueError, match="judged 2 and 1 items"):
        cohen_kappa(["yes", "no"], ["yes"])


def test_agreement_pairs_items_and_excludes_invalid():
    v = pd.concat([frame("a", ["yes", "yes", "no", "n/a", "invalid"]),
                   frame("b", ["yes", "no", "no", "n/a", "yes"]),
                   frame("b", ["yes"], turns=[99])], ignore_index=True)   # b only: unpaired
    out = agreement(v, "a", "b").set_index("item")
    assert out.loc["test000", "n_pairs"] == 4 and out.loc["test000", "n_excluded"] == 1
    assert out.loc["test000", "agreement"] == 0.75
    # a: yes 2, no 1, n/a 1; b: yes 1, no 2, n/a 1 -> p_e = (2+2+1)/16
    assert out.loc["test000", "kappa"] == pytest.approx((0.75 - 5 / 16) / (1 - 5 / 16))
    assert out.loc["all", "n_pairs"] == 4


def test_agreement_errors():
    v = frame("a", ["yes"])
    with pytest.raises(ValueError, match="no usersim_tests verdicts from judge model 'b'"):
        agreement(v, "a", "b")
    with pytest.raises(ValueError, match="are the same"):
        agreement(v, "a", "a")
    with pytest.raises(ValueError, match=r"lacks column\(s\) \['turn_idx'\]"):
        agreement(v.drop(columns="turn_idx"), "a", "b")
