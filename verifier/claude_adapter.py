"""The project's model clients (`providers.chat`: Claude, or a model served over the OpenAI API) as the engine's
`ModelClient`: the judges call a model through it, its failures arrive as the engine's `ModelCallError` with
the message readers see."""

from __future__ import annotations

from dataclasses import dataclass
from decimal import Decimal
from typing import Any

from django.conf import settings

from claimcheck.model_client import ModelCallError
from modelcalls import ModelReply
from providers.chat import ChatConfig, chat_call
from providers.claude import claude_config, cost_usd
from providers.errors import ModelError
from providers.openai import openai_config


@dataclass(frozen=True)
class GardenClaude:
    """The model `config` reaches (Claude, or a served one), priced by `config.prices`."""

    config: ChatConfig

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
        try:
            return chat_call(
                self.config,
                model=model,
                system=system,
                messages=messages,
                max_tokens=max_tokens,
                tools=tools,
                tool_choice=tool_choice,
            )
        except ModelError as error:
            # Raised outside the SDK's context, as the client's own error is: nothing of the request travels.
            raise ModelCallError(error.kind, error.message, error.detail, error.usage) from None

    def cost_usd(self, model: str, input_tokens: int, output_tokens: int) -> Decimal:
        return cost_usd(model, input_tokens, output_tokens, self.config.prices)


def claude_client() -> GardenClaude | None:
    """Claude as the settings describe it, or None when no API key is configured."""
    config = claude_config()
    return GardenClaude(config) if config is not None else None


def served_juror() -> GardenClaude | None:
    """The model served over the OpenAI API that sits as the juror (`OPENAI_JUROR_MODEL`), or None when none is
    configured."""
    return GardenClaude(openai_config()) if settings.OPENAI_JUROR_MODEL else None


def configured_chat_models() -> list[ChatConfig]:
    """The models this deployment calls, to answer or to judge: Claude when its key is set, the served model when
    one writes answers or sits as the juror. The servers load their SDKs as they start (`providers.chat.load`)."""
    configs: list[ChatConfig] = []
    claude = claude_config()
    if claude is not None:
        configs.append(claude)
    if settings.ANSWER_PROVIDER == "openai" or settings.OPENAI_JUROR_MODEL:
        configs.append(openai_config())
    return configs
