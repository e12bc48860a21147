"""What the engine needs of Claude: a client that makes one call (`ClaudeClient`), the reply it returns, how a
call fails (`ClaudeCallError`), what a call cost (`Usage`) and the budget calls are booked against (`Budget`).

The engine does not reach Claude itself: the verifier adapts the project's Claude client (`providers.claude`)
to `ClaudeClient` and hands it in, so the judges and the panel stay plain Python that a test can drive with a
client of its own. `ClaudeReply` and `Usage` have the fields of the garden client's own, and the adapter
(`verifier/claude_adapter.py`) copies them across: the garden may not import the engine, nor the engine the garden's
client, so the port keeps types of its own.
"""

from __future__ import annotations

from dataclasses import dataclass
from decimal import Decimal
from typing import Any, Final, Protocol

# The kind of a reply that came back but cannot be used; the message is the one the Claude client gives readers
# for it (`providers.claude.MALFORMED_MESSAGE`), so a reader sees one message for one failure.
MALFORMED: Final = "malformed"
MALFORMED_MESSAGE: Final = "The answer service sent back a reply that could not be read. Please try again."


@dataclass(frozen=True)
class Usage:
    """What a call consumed and what it cost, as Anthropic bills it."""

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
class ClaudeReply:
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


class ClaudeCallError(Exception):
    """A failed call: `kind` for code, `message` for readers, `detail` for logs (never holds the API key).

    `usage` is what a reply that came back but could not be used was billed; nothing when no reply came.
    """

    def __init__(self, kind: str, message: str, detail: str, usage: Usage = NO_USAGE) -> None:
        super().__init__(kind, message, detail, usage)
        self.kind = kind
        self.message = message
        self.detail = detail
        self.usage = usage

    def __str__(self) -> str:
        return self.message


class ClaudeClient(Protocol):
    """A way to reach Claude."""

    def call(
        self,
        *,
        model: str,
        system: str,
        messages: list[dict[str, Any]],
        max_tokens: int,
        tools: list[dict[str, Any]] | None = None,
        tool_choice: dict[str, Any] | None = None,
    ) -> ClaudeReply:
        """One Messages API request; raises `ClaudeCallError` when it fails."""
        ...

    def cost_usd(self, model: str, input_tokens: int, output_tokens: int) -> Decimal:
        """What `model` charges for these tokens (USD)."""
        ...


class Budget(Protocol):
    """A spending limit that Claude calls are booked against."""

    def book(self, model: str, most: Decimal) -> object | None:
        """Set aside `most` (USD) for one call by `model`; None when what is left cannot cover it."""
        ...

    def settle(self, booking: object, usage: Usage) -> None:
        """Replace a booking by what the call was billed (nothing, when no reply came)."""
        ...
