"""What a model call gave back (`ModelReply`) and what it was billed (`Usage`)."""

from __future__ import annotations

from dataclasses import dataclass
from decimal import Decimal
from typing import Any, Final


@dataclass(frozen=True)
class Usage:
    """What a call consumed and what it cost, as the model's provider bills it."""

    input_tokens: int = 0
    output_tokens: int = 0
    cost_usd: Decimal = Decimal(0)

    def __add__(self, other: Usage) -> Usage:
        return Usage(
            self.input_tokens + other.input_tokens,
            self.output_tokens + other.output_tokens,
            self.cost_usd + other.cost_usd,
        )


NO_USAGE: Final = Usage()


@dataclass(frozen=True)
class ModelReply:
    """What one successful call produced: its text, the input of the tool it called, and what it cost."""

    text: str
    tool_input: dict[str, Any] | None
    model: str
    input_tokens: int
    output_tokens: int
    cost_usd: Decimal
    latency_ms: int
    stop_reason: str | None

    @property
    def usage(self) -> Usage:
        return Usage(self.input_tokens, self.output_tokens, self.cost_usd)

    @classmethod
    def of(
        cls,
        usage: Usage,
        *,
        text: str,
        model: str,
        latency_ms: int,
        stop_reason: str | None,
        tool_input: dict[str, Any] | None = None,
    ) -> ModelReply:
        """A reply billed `usage`."""
        return cls(
            text=text,
            tool_input=tool_input,
            model=model,
            input_tokens=usage.input_tokens,
            output_tokens=usage.output_tokens,
            cost_usd=usage.cost_usd,
            latency_ms=latency_ms,
            stop_reason=stop_reason,
        )
