"""What the engine needs of a model (Claude, or a served one as the served juror): a client that makes one call
(`ModelClient`) and how a call fails (`ModelCallError`). The reply, what it cost and the budget it is booked
against are `modelcalls`' (`ModelReply`, `Usage`, `Budget`), the one definition the project's model clients give
too.

The engine does not reach Claude itself: the verifier adapts the project's model clients (`providers.chat`) to
`ModelClient` and hands it in (`verifier/claude_adapter.py`), so the judges and the panel stay plain Python that a
test can drive with a client of its own.
"""

from __future__ import annotations

from decimal import Decimal
from typing import Any, Final, Protocol

from modelcalls import NO_USAGE, ModelReply, Usage

# The kind of a reply that came back but cannot be used; the message is the one the Claude client gives readers
# for it (`providers.errors.MALFORMED_MESSAGE`), so a reader sees one message for one failure.
MALFORMED: Final = "malformed"
MALFORMED_MESSAGE: Final = "The answer service sent back a reply that could not be read. Please try again."


class ModelCallError(Exception):
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


class ModelClient(Protocol):
    """A way to reach a model: Claude, or a served one through the same Messages-shaped call."""

    def call(
        self,
        *,
        model: str,
        system: str,
        messages: list[dict[str, Any]],
        max_tokens: int,
        tools: list[dict[str, Any]] | None = None,
        tool_choice: dict[str, Any] | None = None,
    ) -> ModelReply:
        """One Messages API request; raises `ModelCallError` when it fails."""
        ...

    def cost_usd(self, model: str, input_tokens: int, output_tokens: int) -> Decimal:
        """What `model` charges for these tokens (USD)."""
        ...
