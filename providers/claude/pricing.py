"""What a Claude call costs: prices by model and `cost_usd` (a served model is priced the same way, by its
config's prices)."""

from __future__ import annotations

from collections.abc import Mapping
from decimal import ROUND_HALF_UP, Decimal
from types import MappingProxyType
from typing import Final

# USD per million (input, output) tokens, by model-name prefix; the longest matching prefix wins.
DEFAULT_PRICES: Final[Mapping[str, tuple[Decimal, Decimal]]] = MappingProxyType(
    {
        "claude-haiku": (Decimal("1"), Decimal("5")),
        "claude-3-haiku": (Decimal("0.25"), Decimal("1.25")),
        "claude-3-5-haiku": (Decimal("0.80"), Decimal("4")),
        "claude-sonnet": (Decimal("3"), Decimal("15")),
        "claude-3-5-sonnet": (Decimal("3"), Decimal("15")),
        "claude-3-7-sonnet": (Decimal("3"), Decimal("15")),
        "claude-opus": (Decimal("5"), Decimal("25")),
        "claude-opus-4-0": (Decimal("15"), Decimal("75")),
        "claude-opus-4-1": (Decimal("15"), Decimal("75")),
        "claude-opus-4-2025": (Decimal("15"), Decimal("75")),
        "claude-3-opus": (Decimal("15"), Decimal("75")),
    }
)
# Unknown models are costed high on purpose so spend limits err on the safe side.
FALLBACK_PRICE: Final = (Decimal("15"), Decimal("75"))
CACHE_WRITE_MULTIPLIER: Final = Decimal("1.25")
CACHE_READ_MULTIPLIER: Final = Decimal("0.1")
COST_QUANTUM: Final = Decimal("0.000001")


def price_for(model: str, prices: Mapping[str, tuple[Decimal, Decimal]]) -> tuple[Decimal, Decimal]:
    """USD per million (input, output) tokens for `model`: longest matching prefix, else `FALLBACK_PRICE`."""
    matches = [prefix for prefix in prices if model.startswith(prefix)]
    return prices[max(matches, key=len)] if matches else FALLBACK_PRICE


def cost_usd(
    model: str,
    input_tokens: int,
    output_tokens: int,
    prices: Mapping[str, tuple[Decimal, Decimal]],
    *,
    cache_write_tokens: int = 0,
    cache_read_tokens: int = 0,
) -> Decimal:
    """The cost of one call in USD, to 0.000001; cache writes and reads priced at Anthropic's multipliers."""
    input_price, output_price = price_for(model, prices)
    weighted_input = (
        input_tokens + CACHE_WRITE_MULTIPLIER * cache_write_tokens + CACHE_READ_MULTIPLIER * cache_read_tokens
    )
    total = (weighted_input * input_price + output_tokens * output_price) / Decimal(1_000_000)
    return total.quantize(COST_QUANTUM, rounding=ROUND_HALF_UP)
