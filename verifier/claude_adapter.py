"""The project's Claude client (`providers.claude`) as the engine's `ClaudeClient`: the judges call Claude
through it, its failures arrive as the engine's `ClaudeCallError` with the message readers see."""

from __future__ import annotations

from dataclasses import dataclass
from decimal import Decimal
from typing import Any

from claimcheck.claude_client import ClaudeCallError, ClaudeReply, Usage
from providers.claude import ClaudeConfig, ClaudeError, call_claude, claude_config, cost_usd


@dataclass(frozen=True)
class GardenClaude:
    """Claude as `config` reaches it, priced by `config.prices`."""

    config: ClaudeConfig

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
        try:
            reply = call_claude(
                self.config,
                model=model,
                system=system,
                messages=messages,
                max_tokens=max_tokens,
                tools=tools,
                tool_choice=tool_choice,
            )
        except ClaudeError as error:
            billed = Usage(error.usage.input_tokens, error.usage.output_tokens, error.usage.cost_usd)
            # Raised outside the SDK's context, as the client's own error is: nothing of the request travels.
            raise ClaudeCallError(error.kind, error.message, error.detail, billed) from None
        return ClaudeReply(
            text=reply.text,
            tool_input=reply.tool_input,
            model=reply.model,
            input_tokens=reply.input_tokens,
            output_tokens=reply.output_tokens,
            cost_usd=reply.cost_usd,
            latency_ms=reply.latency_ms,
            stop_reason=reply.stop_reason,
        )

    def cost_usd(self, model: str, input_tokens: int, output_tokens: int) -> Decimal:
        return cost_usd(model, input_tokens, output_tokens, self.config.prices)


def claude_client() -> GardenClaude | None:
    """Claude as the settings describe it, or None when no API key is configured."""
    config = claude_config()
    return GardenClaude(config) if config is not None else None
