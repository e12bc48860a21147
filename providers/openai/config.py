"""How to reach a model served over the OpenAI API: `OpenAIConfig`, and `openai_config()`, the settings' one."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from decimal import Decimal
from types import MappingProxyType
from typing import Final

# Sent when no key is configured: local servers (Ollama, vLLM, llama.cpp, LM Studio) want none, and the SDK
# refuses to start without one.
NO_KEY: Final = "no-key"
# The prefix every model name starts with: a model no price names costs nothing, as a team's own server does.
FREE: Final[Mapping[str, tuple[Decimal, Decimal]]] = MappingProxyType({"": (Decimal(0), Decimal(0))})


@dataclass(frozen=True)
class OpenAIConfig:
    """How to reach the endpoint; the API key is left out of `repr()`. `prices` are USD per million (input,
    output) tokens by model-name prefix, the longest matching prefix winning, as Claude's are."""

    api_key: str = field(repr=False)
    base_url: str | None = None
    timeout_seconds: float = 60.0
    max_retries: int = 2
    prices: Mapping[str, tuple[Decimal, Decimal]] = field(default_factory=lambda: FREE, hash=False)

    def __post_init__(self) -> None:
        if self.timeout_seconds <= 0:
            raise ValueError("timeout_seconds must be positive")
        if self.max_retries < 0:
            raise ValueError("max_retries must be zero or more")


def openai_config() -> OpenAIConfig:
    """The endpoint the settings name (`OPENAI_BASE_URL`, `OPENAI_API_KEY`, `OPENAI_PRICES`)."""
    # Imported here, not above, so that the client stays plain Python.
    from django.conf import settings

    return OpenAIConfig(
        api_key=settings.OPENAI_API_KEY or NO_KEY,
        base_url=settings.OPENAI_BASE_URL or None,
        timeout_seconds=settings.OPENAI_TIMEOUT_SECONDS,
        max_retries=settings.OPENAI_MAX_RETRIES,
        prices=MappingProxyType({**FREE, **settings.OPENAI_PRICES}),
    )
