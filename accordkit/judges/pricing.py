"""Judge prices: explicit per-million-token prices, else litellm's bundled price list.

The price list is litellm's local copy (``LITELLM_LOCAL_MODEL_COST_MAP=True``, set by
``import accordkit``), never fetched. A model missing from it has an unknown price: its
cost is recorded as NaN with one :class:`UnknownPriceWarning`, never an error — except
that a spending cap (``max_cost``) cannot be enforced without a price, so it refuses to
start.
"""

from __future__ import annotations

import math
import warnings
from dataclasses import dataclass

from ._litellm import get_litellm

__all__ = ["Price", "UnknownPriceWarning", "resolve_price", "check_prices", "call_cost"]


class UnknownPriceWarning(UserWarning):
    """The judge model has no known price; its costs are recorded as NaN."""


@dataclass(frozen=True)
class Price:
    """USD per input and per output token, and where the numbers came from."""

    input_per_token: float
    output_per_token: float
    source: str

    def cost(self, input_tokens: int | None, output_tokens: int | None) -> float:
        """USD for one call (NaN when token counts are missing).

        Examples
        --------
        >>> Price(1e-6, 2e-6, "test").cost(1000, 10)
        0.00102
        """
        if input_tokens is None or output_tokens is None:
            return math.nan
        return input_tokens * self.input_per_token + output_tokens * self.output_per_token


def _check(value: float | None, name: str) -> None:
    if value is not None and (not isinstance(value, int | float) or isinstance(value, bool)
                              or not math.isfinite(value) or value < 0):
        raise ValueError(f"{name} must be a non-negative number (USD per million tokens), "
                         f"got {value!r}")


def check_prices(price_in: float | None, price_out: float | None) -> None:
    """``ValueError`` unless both prices are None, or both are finite numbers >= 0 (USD
    per million tokens)."""
    _check(price_in, "price_in")
    _check(price_out, "price_out")
    if (price_in is None) != (price_out is None):
        raise ValueError("give both price_in and price_out (USD per million tokens), or neither")


def resolve_price(model: str, *, price_in: float | None = None,
                  price_out: float | None = None, warn: bool = True) -> Price | None:
    """The price of ``model``: the explicit prices when given, else litellm's price list.

    Parameters
    ----------
    model : str
        litellm model name (``"gpt-4o-mini"``, ``"anthropic/claude-..."``, ``"openai/<served>"``).
    price_in, price_out : float, optional
        USD per million input / output tokens. Give both, or neither.
    warn : bool
        Emit one :class:`UnknownPriceWarning` when the price is unknown.

    Returns
    -------
    Price or None
        ``None`` when the price is unknown.

    Examples
    --------
    >>> resolve_price("my-local-model", price_in=0.5, price_out=1.5).output_per_token
    1.5e-06
    """
    check_prices(price_in, price_out)
    if price_in is not None and price_out is not None:
        return Price(price_in / 1e6, price_out / 1e6, "given")
    try:
        info = get_litellm().get_model_info(model)
        pin, pout = info.get("input_cost_per_token"), info.get("output_cost_per_token")
    except Exception:  # litellm raises a bare Exception for unmapped models
        pin = pout = None
    if isinstance(pin, int | float) and isinstance(pout, int | float):
        return Price(float(pin), float(pout), "litellm price list")
    if warn:
        warnings.warn(f"no known price for judge model {model!r}: its cost is recorded as NaN "
                      "(give price_in/price_out, or --price-in/--price-out, to set one)",
                      UnknownPriceWarning, stacklevel=3)
    return None


def call_cost(price: Price | None, input_tokens: int | None, output_tokens: int | None) -> float:
    """USD for one call, NaN when the price or the token counts are unknown.

    Examples
    --------
    >>> call_cost(None, 10, 10)
    nan
    """
    return math.nan if price is None else price.cost(input_tokens, output_tokens)
