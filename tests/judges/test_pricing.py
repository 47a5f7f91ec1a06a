"""Prices: explicit, from litellm's bundled list, or unknown (NaN, one warning)."""

from __future__ import annotations

import math

import pytest

from accordkit.judges._litellm import get_litellm
from accordkit.judges.pricing import Price, UnknownPriceWarning, call_cost, resolve_price


def test_explicit_prices_are_per_million_tokens():
    p = resolve_price("anything", price_in=2.0, price_out=8.0)
    assert p == Price(2e-6, 8e-6, "given")
    assert p.cost(1_000_000, 500_000) == pytest.approx(6.0)


def test_known_model_from_litellm_price_list():
    litellm = get_litellm()

    p = resolve_price("gpt-4o-mini")
    info = litellm.model_cost["gpt-4o-mini"]
    assert (p.input_per_token, p.output_per_token) == (info["input_cost_per_token"],
                                                       info["output_cost_per_token"])


def test_unknown_model_warns_and_costs_nan():
    with pytest.warns(UnknownPriceWarning, match="openai/my-local-model"):
        assert resolve_price("openai/my-local-model") is None
    assert math.isnan(call_cost(None, 10, 10))


@pytest.mark.parametrize("kwargs, match", [
    ({"price_in": 1.0}, "give both"),
    ({"price_in": -1.0, "price_out": 1.0}, "price_in must be a non-negative"),
    ({"price_in": 1.0, "price_out": float("nan")}, "price_out must be a non-negative"),
])
def test_bad_prices(kwargs, match):
    with pytest.raises(ValueError, match=match):
        resolve_price("m", **kwargs)
